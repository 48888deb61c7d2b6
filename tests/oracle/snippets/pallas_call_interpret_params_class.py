"""pl.pallas_call(interpret=pltpu.InterpretParams): the class itself, not an instance, is truthy: interpret mode, no Mosaic."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

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
    f = pl.pallas_call(kernel, out_shape=X, interpret=pltpu.InterpretParams)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
