"""An unused conv in a @pl.loop body with a traced bound: a while loop, kept whole."""

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

    @pl.loop(0, n_ref[0])
    def _(i):
        _unused = conv(x_ref[...], w_ref[...])
        o_ref[...] += x_ref[...]


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
