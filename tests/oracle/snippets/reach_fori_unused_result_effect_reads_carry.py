"""A fori_loop result held in a name nothing reads, whose body stores carry element 1 to the output ref under pl.when: the effect keeps the loop and what it reads, so the conv that initialises element 1 is lowered."""

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

    def body(i, c):
        @pl.when(i == 3)
        def _():
            o_ref[...] = c[1]

        return (c[0] + x, c[1])

    out = lax.fori_loop(0, 4, body, (x, conv(x, w_ref[...])))


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
