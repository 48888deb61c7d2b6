"""A TensorCore matmul kernel that asks for an explicit Mosaic opt_level (PAL001)."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.mosaic import OptLevel
from jax.experimental.pallas import tpu as pltpu


def matmul_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)


@functools.partial(jax.jit, static_argnames=("block",))
def matmul(x, y, block=128):
    return pl.pallas_call(
        matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), jnp.float32),
        grid=(x.shape[0] // block,),
        in_specs=[
            pl.BlockSpec((block, x.shape[1]), lambda i: (i, 0)),
            pl.BlockSpec((x.shape[1], y.shape[1]), lambda i: (0, 0)),
        ],
        out_specs=pl.BlockSpec((block, y.shape[1]), lambda i: (i, 0)),
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel",),
            opt_level=OptLevel.O3,  # only SparseCore kernels accept this
        ),
    )(x, y)
