"""pl.pallas_call: the conv goes to a helper that never reads that parameter: the conv is
dead and DCE removes it."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
PER_OPERAND = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def combine(unused, x):
    return x * 2


def kernel(x_ref, w_ref, o_ref):
    y = lax.conv_general_dilated(x_ref[...], w_ref[...], (1, 1), "SAME", precision=PER_OPERAND)
    o_ref[...] = combine(y, x_ref[...])


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
