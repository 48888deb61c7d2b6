"""The conv is vmapped inside the kernel: the batch rule re-binds it, Mosaic reaches it."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
PER_OPERAND = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=PER_OPERAND)


def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = jax.vmap(conv, in_axes=(0, None))(x_ref[...][None], w_ref[...])[0]


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
