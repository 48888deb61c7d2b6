"""The kernel returns the conv's result: JAX stops after tracing it ("should return
None"), before Mosaic lowers the conv, so the conv error never fires."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)


def conv(x, w):
    return lax.conv_general_dilated(
        x, w, (1, 1), "SAME", precision=(lax.Precision.HIGHEST, lax.Precision.DEFAULT)
    )


def kernel(x_ref, w_ref, o_ref):
    y = conv(x_ref[...], w_ref[...])
    o_ref[...] = y
    return y


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
