"""The kernel is chosen by a flag pallas-ls cannot see (an environment variable, unset
here): the conv kernel is one alternative, not provably the one lowered."""

import os

import jax
import jax.numpy as jnp
from jax import lax
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


def plain(x_ref, w_ref, o_ref):
    o_ref[...] = x_ref[...]


def run():
    body = kernel if os.environ.get("PALLAS_LS_SNIPPET_CONV") == "1" else plain
    f = pl.pallas_call(body, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
