"""pl.pallas_call: the conv is in a fori_loop body whose result is never used: dead,
removed by DCE (together with the loop)."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
PER_OPERAND = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def kernel(x_ref, w_ref, o_ref):
    def step(i, carry):
        return carry + lax.conv_general_dilated(
            x_ref[...], w_ref[...], (1, 1), "SAME", precision=PER_OPERAND
        )

    _unused = lax.fori_loop(0, 2, step, x_ref[...])
    o_ref[...] = x_ref[...]


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
