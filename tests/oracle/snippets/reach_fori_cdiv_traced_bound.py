"""A fori_loop bounded by pl.cdiv of a traced value: a while_loop, which keeps every carry element."""

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

    def body(i, c):
        return (c[0] + x, c[1])

    out = lax.fori_loop(
        0, pl.cdiv(x_ref[0, 0, 0, 0].astype(jnp.int32), 4), body, (x, conv(x, w_ref[...]))
    )
    o_ref[...] = out[0]


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
