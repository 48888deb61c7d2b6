"""A conv given precision=Cfg.PRECISION, a plain class constant (HIGHEST, DEFAULT): traced, per-operand."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
P = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


class Cfg:
    PRECISION = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv_general_dilated(
        x_ref[...], w_ref[...], (1, 1), "SAME", precision=Cfg.PRECISION
    )


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
