"""`mode is Mode.CONV` with `mode=Mode.CONV` bound by a partial: the conv is traced."""

import enum
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


class Mode(enum.Enum):
    IDENTITY = 0
    CONV = 1


def kernel(x_ref, w_ref, o_ref, *, mode):
    if mode is Mode.CONV:
        o_ref[...] = conv(x_ref[...], w_ref[...])
    else:
        o_ref[...] = x_ref[...]


def run():
    f = pl.pallas_call(functools.partial(kernel, mode=Mode.CONV), out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
