"""An unused conv in a fori_loop body bounded through a local name read from a ref (`length = n_ref[0]`): a while loop, kept whole."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

N = jax.ShapeDtypeStruct((1,), jnp.int32)
X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
P = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=P)


def kernel(n_ref, x_ref, w_ref, o_ref):
    o_ref[...] = x_ref[...]

    def body(i, carry):
        _unused = conv(x_ref[...], w_ref[...])
        o_ref[...] += x_ref[...]
        return carry

    length = n_ref[0]
    lax.fori_loop(0, lax.div(length + 1, 2), body, 0)


def run():
    f = pl.pallas_call(
        kernel,
        out_shape=X,
        in_specs=[
            pl.BlockSpec(memory_space=pltpu.SMEM),
            pl.BlockSpec((1, 1, 8, 128), lambda: (0, 0, 0, 0)),
            pl.BlockSpec((1, 1, 3, 3), lambda: (0, 0, 0, 0)),
        ],
    )
    return jax.export.export(jax.jit(f), platforms=["tpu"])(N, X, W)
