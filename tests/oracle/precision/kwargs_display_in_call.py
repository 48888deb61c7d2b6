"""`**{...}` written in the conv call gives precision='tensorfloat32'."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
ARGS = (X, W)


def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv_general_dilated(
        x_ref[...],
        w_ref[...],
        **{"window_strides": (1, 1), "padding": "SAME", "precision": "tensorfloat32"},
    )


def f(x, w):
    return pl.pallas_call(kernel, out_shape=X)(x, w)
