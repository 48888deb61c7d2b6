"""`out = fori_loop(...)` and only `out[0]` is read; the conv's element 1 is not: dropped."""

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
    w = w_ref[...]

    def body(i, carry):
        return carry[0] * 0.5, conv(carry[0], w)

    out = lax.fori_loop(0, 3, body, (x, x))
    o_ref[...] = out[0]


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
