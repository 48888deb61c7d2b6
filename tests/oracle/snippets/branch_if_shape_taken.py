"""The conv is under `if x_ref.shape[2] == 8:` and the input has 8 rows: traced.
pallas-ls cannot see the shape and stays silent (not provable)."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)


def kernel(x_ref, w_ref, o_ref):
    if x_ref.shape[2] == 8:
        o_ref[...] = lax.conv_general_dilated(
            x_ref[...],
            w_ref[...],
            (1, 1),
            "SAME",
            precision=(lax.Precision.HIGHEST, lax.Precision.DEFAULT),
        )
    else:
        o_ref[...] = x_ref[...]


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
