"""The kernel is a @staticmethod of a plain class, given as `ConvOp.kernel`: traced."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
P = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


class ConvOp:
    @staticmethod
    def kernel(x_ref, w_ref, o_ref):
        o_ref[...] = lax.conv_general_dilated(x_ref[...], w_ref[...], (1, 1), "SAME", precision=P)


def run():
    f = pl.pallas_call(ConvOp.kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
