"""The module sets 'tensorfloat32' with `jax.config.update`, and the wrapper enters
`jax.default_matmul_precision('float32')` around the call: the context wins."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

jax.config.update("jax_default_matmul_precision", "tensorfloat32")

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
ARGS = (X, W)


def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv_general_dilated(x_ref[...], w_ref[...], (1, 1), "SAME")


def f(x, w):
    with jax.default_matmul_precision("float32"):
        return pl.pallas_call(kernel, out_shape=X)(x, w)
