"""pl.kernel(out_type=..., mesh=...)(body): the factory form called with the body."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
SCRATCH = [pltpu.VMEM(X.shape, X.dtype), pltpu.VMEM(W.shape, W.dtype), pltpu.VMEM(X.shape, X.dtype)]
MESH = pltpu.create_tensorcore_mesh("core", num_cores=1)


def body(x_hbm, w_hbm, o_hbm, x_ref, w_ref, o_ref):
    pltpu.sync_copy(x_hbm, x_ref)
    pltpu.sync_copy(w_hbm, w_ref)
    o_ref[...] = lax.conv_general_dilated(
        x_ref[...],
        w_ref[...],
        (1, 1),
        "SAME",
        precision=(lax.Precision.HIGHEST, lax.Precision.DEFAULT),
    )
    pltpu.sync_copy(o_ref, o_hbm)


def run():
    f = pl.kernel(out_type=X, mesh=MESH, scratch_types=SCRATCH)(body)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
