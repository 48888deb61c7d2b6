"""Valid code: opt_level on a SparseCore kernel, uniform conv precision. No findings."""
import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.mosaic import OptLevel
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

mesh = plsc.VectorSubcoreMesh(core_axis_name="core", subcore_axis_name="subcore")


@pl.kernel(
    out_type=jax.ShapeDtypeStruct((16, 128), "float32"),
    mesh=mesh,
    compiler_params=pltpu.CompilerParams(opt_level=OptLevel.O2),
)
def gather(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def conv_kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv(x_ref[...], w_ref[...], (1, 1), "SAME", precision=lax.Precision.HIGHEST)


def conv(x, w):
    return pl.pallas_call(conv_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x, w)
