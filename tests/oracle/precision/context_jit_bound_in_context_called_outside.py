"""`g = jax.jit(pl.pallas_call(...))` built under a 'tensorfloat32' context and called after it:
the conv takes the default (None)."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
ARGS = (X, W)


def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv_general_dilated(x_ref[...], w_ref[...], (1, 1), "SAME")


def f(x, w):
    with jax.default_matmul_precision("tensorfloat32"):
        g = jax.jit(pl.pallas_call(kernel, out_shape=X))
    return g(x, w)
