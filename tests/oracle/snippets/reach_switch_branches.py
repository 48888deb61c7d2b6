"""pl.pallas_call: lax.switch on a traced index with its branches in a tuple: every
branch is lowered."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
PER_OPERAND = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def kernel(x_ref, w_ref, o_ref):
    def copy_branch():
        o_ref[...] = x_ref[...]

    def conv_branch():
        o_ref[...] = lax.conv_general_dilated(
            x_ref[...], w_ref[...], (1, 1), "SAME", precision=PER_OPERAND
        )

    lax.switch(pl.program_id(0), (copy_branch, conv_branch))


def run():
    f = pl.pallas_call(kernel, out_shape=X, grid=(1,))
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
