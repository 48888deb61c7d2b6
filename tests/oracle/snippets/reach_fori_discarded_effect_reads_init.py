"""The loop's result is discarded; the body writes the carry element the conv starts: live."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
P = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=P)


def kernel(x_ref, w_ref, o_ref):
    x = x_ref[...]
    o_ref[...] = x

    def body(i, carry):
        acc, feat = carry

        @pl.when(i == 0)
        def _():
            o_ref[...] = feat

        return acc + x, feat

    lax.fori_loop(0, 2, body, (jnp.zeros_like(x), conv(x, w_ref[...])))


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
