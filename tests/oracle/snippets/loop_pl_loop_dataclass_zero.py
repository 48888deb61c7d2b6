"""`@pl.loop(0, cfg.refine)` with a frozen dataclass whose `refine` is 0: the body is never traced."""

import dataclasses
import functools

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
    refine: int = 0


def kernel(x_ref, w_ref, o_ref, *, cfg):
    o_ref[...] = x_ref[...]

    @pl.loop(0, cfg.refine)
    def _(i):
        o_ref[...] = conv(o_ref[...], w_ref[...])


def run():
    f = pl.pallas_call(functools.partial(kernel, cfg=Config()), out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
