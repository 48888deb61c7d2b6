"""A kernel factory returns a closure; the per-operand precision is the factory's argument."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)


def make_kernel(precision):
    def kernel(x_ref, w_ref, o_ref):
        o_ref[...] = lax.conv_general_dilated(
            x_ref[...], w_ref[...], (1, 1), "SAME", precision=precision
        )

    return kernel


def run():
    f = pl.pallas_call(make_kernel((lax.Precision.HIGHEST, lax.Precision.DEFAULT)), out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
