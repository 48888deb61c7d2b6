"""A conv given `precision=cfg.precision`, from a frozen dataclass whose default is
`lax.Precision.HIGH`."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
ARGS = (X, W)


@dataclasses.dataclass(frozen=True)
class ConvConfig:
    precision: lax.Precision = lax.Precision.HIGH


def kernel(x_ref, w_ref, o_ref, *, cfg):
    o_ref[...] = lax.conv_general_dilated(
        x_ref[...], w_ref[...], (1, 1), "SAME", precision=cfg.precision
    )


def f(x, w):
    body = functools.partial(kernel, cfg=ConvConfig())
    return pl.pallas_call(body, out_shape=X)(x, w)
