"""The only read of the conv is in a `match` case a module constant does not take: dropped."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
P = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=P)


MODE = "a"


def kernel(x_ref, w_ref, o_ref):
    x = x_ref[...]
    y = conv(x, w_ref[...])
    match MODE:
        case "a":
            o_ref[...] = x
        case "b":
            o_ref[...] = y


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
