"""`@pl.when(should_run)` with should_run = False on the non-causal way (taken here): the body is never traced; pallas-ls does not know which way."""

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


def kernel(x_ref, w_ref, o_ref, *, causal):
    o_ref[...] = x_ref[...]
    if causal:  # noqa: SIM108 (as in flash attention's dq kernel)
        should_run = x_ref[0, 0, 0, 0] > 0
    else:
        should_run = False

    @pl.when(should_run)
    def _():
        o_ref[...] = conv(x_ref[...], w_ref[...])


def forward(x, w, causal):
    return pl.pallas_call(functools.partial(kernel, causal=causal), out_shape=X)(x, w)


def run():
    return jax.export.export(jax.jit(lambda x, w: forward(x, w, False)), platforms=["tpu"])(X, W)
