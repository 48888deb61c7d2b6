"""A `ClassVar` `LAYERS = 0` read on a frozen dataclass instance: the loop is empty."""

import dataclasses
import functools
import typing

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
P = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=P)


@dataclasses.dataclass(frozen=True)
class Config:
    LAYERS: typing.ClassVar[int] = 0
    scale: float = 1.0


def kernel(x_ref, w_ref, o_ref, *, cfg):
    y = x_ref[...]
    for _ in range(cfg.LAYERS):
        y = conv(y, w_ref[...])
    o_ref[...] = y


def run():
    f = pl.pallas_call(functools.partial(kernel, cfg=Config()), out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
