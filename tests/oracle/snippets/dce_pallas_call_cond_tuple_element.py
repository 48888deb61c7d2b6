"""pl.pallas_call: a lax.cond branch returns (conv, x * 2) and only the second output
is used: dead."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
PER_OPERAND = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def kernel(x_ref, w_ref, o_ref):
    x = x_ref[...]

    def with_conv():
        return lax.conv_general_dilated(x, w_ref[...], (1, 1), "SAME", precision=PER_OPERAND), x * 2

    def without():
        return x, x * 3

    _a, b = lax.cond(pl.program_id(0) == 0, with_conv, without)
    o_ref[...] = b


def run():
    f = pl.pallas_call(kernel, out_shape=X, grid=(1,))
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
