"""pl.pallas_call(functools.partial(kernel, ...)) with `kernel` one of two functions, only one reaching the conv (not the one picked here): not provably traced."""

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
P = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=P)


def conv_kernel(x_ref, w_ref, o_ref, *, scale):
    o_ref[...] = conv(x_ref[...], w_ref[...]) * scale


def plain_kernel(x_ref, w_ref, o_ref, *, scale):
    o_ref[...] = x_ref[...] * scale


def forward(x, w, use_conv):
    if use_conv:  # noqa: SIM108
        kernel = conv_kernel
    else:
        kernel = plain_kernel
    return pl.pallas_call(functools.partial(kernel, scale=2.0), out_shape=X)(x, w)


def run():
    return jax.export.export(jax.jit(lambda x, w: forward(x, w, False)), platforms=["tpu"])(X, W)
