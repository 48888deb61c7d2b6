"""An unused conv in a fori_loop body bounded by `x_ref.shape[0] // bk`, bk bound by a partial: a static bound, so a scan, pruned; pallas-ls does not know bk and must not take the loop for a while loop."""

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


def kernel(x_ref, w_ref, o_ref, *, bk):
    o_ref[...] = x_ref[...]

    def body(i, carry):
        _unused = conv(x_ref[...], w_ref[...])
        o_ref[...] += x_ref[...]
        return carry

    lax.fori_loop(0, x_ref.shape[3] // bk, body, 0, unroll=True)


def forward(x, w, bk):
    return pl.pallas_call(functools.partial(kernel, bk=bk), out_shape=X)(x, w)


def run():
    return jax.export.export(jax.jit(lambda x, w: forward(x, w, 64)), platforms=["tpu"])(X, W)
