"""pl.pallas_call: the conv result is bound to `y`, then `y` is rebound before any use:
the conv is dead and DCE removes it."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
PER_OPERAND = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def kernel(x_ref, w_ref, o_ref):
    y = lax.conv_general_dilated(x_ref[...], w_ref[...], (1, 1), "SAME", precision=PER_OPERAND)
    y = x_ref[...]
    o_ref[...] = y


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
