"""interpret=InterpretParams() from its jax._src module (the same class as
pltpu.InterpretParams): TPU interpret mode, no Mosaic."""

import jax
import jax.numpy as jnp
from jax import lax
from jax._src.pallas.mosaic.interpret import interpret_pallas_call as mosaic_interpret
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)


def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv_general_dilated(
        x_ref[...],
        w_ref[...],
        (1, 1),
        "SAME",
        precision=(lax.Precision.HIGHEST, lax.Precision.DEFAULT),
    )


def run():
    f = pl.pallas_call(kernel, out_shape=X, interpret=mosaic_interpret.InterpretParams())
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
