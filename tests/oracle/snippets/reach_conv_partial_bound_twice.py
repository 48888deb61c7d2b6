"""A functools.partial of the conv binds `window_strides` and `padding`, and the call passes
them again by position: TypeError when the kernel is traced, before Mosaic lowers anything."""

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)

conv = functools.partial(
    lax.conv_general_dilated,
    window_strides=(1, 1),
    padding="SAME",
    precision=(lax.Precision.HIGHEST, lax.Precision.DEFAULT),
)


def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = conv(x_ref[...], w_ref[...], (1, 1), "SAME")


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
