import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def add_one_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def add_one(x: jax.Array) -> jax.Array:
    return pl.pallas_call(
        add_one_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        name="ядро🙂", compiler_params=pltpu.CompilerParams(opt_level=2),
    )(x)
