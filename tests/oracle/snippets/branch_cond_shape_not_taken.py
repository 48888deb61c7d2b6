"""pl.pallas_call: lax.cond on a shape test that is False for this input: a Python bool
when traced, so Mosaic lowers only the false branch, and the conv's is not lowered."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
PER_OPERAND = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def kernel(x_ref, w_ref, o_ref):
    def conv_branch():
        o_ref[...] = lax.conv_general_dilated(
            x_ref[...], w_ref[...], (1, 1), "SAME", precision=PER_OPERAND
        )

    def copy_branch():
        o_ref[...] = x_ref[...]

    lax.cond(x_ref.shape[2] > 100, conv_branch, copy_branch)


def run():
    f = pl.pallas_call(kernel, out_shape=X, grid=(1,))
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
