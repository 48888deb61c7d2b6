"""A generator of kernel calls made under the context runs where it is consumed: after it."""

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
    with jax.default_matmul_precision("high"):
        outs = (pl.pallas_call(kernel, out_shape=X)(a, w) for a in [x])
    return next(outs)
