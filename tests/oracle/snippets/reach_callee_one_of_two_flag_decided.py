"""The helper is picked by a module constant the analysis reads (USE_CONV = True): only the conv helper reaches the call."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
P = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)

USE_CONV = True


def with_conv(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv_general_dilated(x_ref[...], w_ref[...], (1, 1), "SAME", precision=P)


def plain(x_ref, w_ref, o_ref):
    o_ref[...] = x_ref[...]


def kernel(x_ref, w_ref, o_ref):
    if USE_CONV:  # noqa: SIM108
        body = with_conv
    else:
        body = plain
    body(x_ref, w_ref, o_ref)


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
