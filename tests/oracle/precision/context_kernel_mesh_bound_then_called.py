"""A conv given no precision in a `pl.kernel` over a TensorCore mesh, bound to `k` and
called under `jax.default_matmul_precision('tensorfloat32')`."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
ARGS = (X, W)


def body(x_hbm, w_hbm, o_hbm, xv, wv):
    pltpu.sync_copy(x_hbm, xv)
    pltpu.sync_copy(w_hbm, wv)
    xv[...] = lax.conv_general_dilated(xv[...], wv[...], (1, 1), "SAME")
    pltpu.sync_copy(xv, o_hbm)


def f(x, w):
    k = pl.kernel(
        body,
        out_type=X,
        mesh=pltpu.create_tensorcore_mesh("core", num_cores=1),
        scratch_types=[pltpu.VMEM(X.shape, X.dtype), pltpu.VMEM(W.shape, W.dtype)],
    )
    with jax.default_matmul_precision("tensorfloat32"):
        return k(x, w)
