"""Two buffers, the body stores into both and reads neither: dropped."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
P = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=P)


def kernel(x_ref, w_ref, o_ref):
    x = x_ref[...]

    def body(s_ref, t_ref):
        s_ref[...] = conv(x, w_ref[...])
        t_ref[...] = x

    pl.run_scoped(body, pltpu.VMEM(X.shape, X.dtype), pltpu.VMEM(X.shape, X.dtype))
    o_ref[...] = x


def run():
    f = pl.pallas_call(kernel, out_shape=X)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
