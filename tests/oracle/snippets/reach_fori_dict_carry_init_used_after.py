"""A static fori_loop over a dict carry: the conv initialises an entry that is read after the loop."""

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
        return {"acc": c["acc"] + x, "feat": c["feat"]}

    out = lax.fori_loop(0, 4, body, {"acc": jnp.zeros_like(x), "feat": conv(x, w_ref[...])})
    o_ref[...] = out["acc"] + out["feat"]


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
