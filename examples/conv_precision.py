"""A convolution kernel whose precision was copied from dot code (PAL002, PAL003)."""
import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

DIMS = ("NHWC", "HWIO", "NHWC")


def conv_kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv_general_dilated(
        x_ref[...], w_ref[...], window_strides=(1, 1), padding="SAME",
        dimension_numbers=DIMS,
        precision=(lax.Precision.DEFAULT, lax.Precision.HIGHEST),
    )


def conv_high_kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv(x_ref[...], w_ref[...], (1, 1), "SAME", precision=lax.Precision.HIGH)


def conv(x, w):
    out = jax.ShapeDtypeStruct(x.shape[:-1] + (w.shape[-1],), x.dtype)
    a = pl.pallas_call(conv_kernel, out_shape=out)(x, w)
    b = pl.pallas_call(conv_high_kernel, out_shape=out)(x, w)
    return a + b
