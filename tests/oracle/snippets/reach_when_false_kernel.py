"""pl.kernel (no DCE) with the conv under @pl.when(False): never traced, so the kernel
lowers with Mosaic without reaching the conv."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
PER_OPERAND = (lax.Precision.HIGHEST, lax.Precision.DEFAULT)

SCRATCH = [pltpu.VMEM(X.shape, X.dtype), pltpu.VMEM(W.shape, W.dtype), pltpu.VMEM(X.shape, X.dtype)]


def body(x_hbm, w_hbm, o_hbm, x_ref, w_ref, o_ref):
    pltpu.sync_copy(x_hbm, x_ref)
    pltpu.sync_copy(w_hbm, w_ref)

    @pl.when(False)
    def _():
        o_ref[...] = lax.conv_general_dilated(
            x_ref[...], w_ref[...], (1, 1), "SAME", precision=PER_OPERAND
        )

    pltpu.sync_copy(x_ref, o_hbm)


def run():
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=1)
    f = pl.kernel(body, out_type=X, mesh=mesh, scratch_types=SCRATCH)
    return jax.export.export(jax.jit(f), platforms=["tpu"])(X, W)
