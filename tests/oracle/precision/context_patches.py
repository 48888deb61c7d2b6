"""conv_general_dilated_patches given no precision hands None on to its conv."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
ARGS = (X, W)
OUT = jax.ShapeDtypeStruct((1, 9, 8, 128), jnp.float32)


def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv_general_dilated_patches(x_ref[...], (3, 3), (1, 1), "SAME")


def f(x, w):
    with jax.default_matmul_precision("high"):
        return pl.pallas_call(kernel, out_shape=OUT)(x, w)
