"""The JAX API surface the rules care about, by qualified name (all public spellings and the
`jax._src` paths they alias). Grounded in pallas-semantics.md, sections A and C."""

from __future__ import annotations

PL = "jax.experimental.pallas"
TPU = "jax.experimental.pallas.tpu"
SC = "jax.experimental.pallas.tpu_sc"

# A kernel entry point called through an attribute is spelled with one of these names
# (`pl.pallas_call`, `pl.kernel`, `pl.core_map`, `functools.partial(...)`): a call of any
# other attribute (`jnp.dot`, `pl.BlockSpec`, `x.astype`) is never one.
ENTRY_ATTRS = frozenset({"pallas_call", "kernel", "core_map", "partial"})


def _names(canonical: str, *spellings: str) -> dict[str, str]:
    return dict.fromkeys(spellings, canonical)


API: dict[str, str] = {
    **_names(
        "pallas_call",
        f"{PL}.pallas_call",
        "jax._src.pallas.pallas_call.pallas_call",
    ),
    **_names("kernel", f"{PL}.kernel", "jax._src.pallas.helpers.kernel"),
    **_names("core_map", f"{PL}.core_map", "jax._src.pallas.core.core_map"),
    **_names(
        "tpu.CompilerParams",
        f"{TPU}.CompilerParams",
        f"{TPU}.core.CompilerParams",
        "jax._src.pallas.mosaic.core.CompilerParams",
    ),
    **_names(
        "gpu.CompilerParams",
        f"{PL}.triton.CompilerParams",
        f"{PL}.mosaic_gpu.CompilerParams",
        f"{PL}.gpu.CompilerParams",
        "jax._src.pallas.triton.core.CompilerParams",
        "jax._src.pallas.mosaic_gpu.core.CompilerParams",
    ),
    **_names(
        "mesh.tc",
        f"{TPU}.TensorCoreMesh",
        f"{TPU}.create_tensorcore_mesh",
        f"{TPU}.core.TensorCoreMesh",
        f"{TPU}.core.create_tensorcore_mesh",
        "jax._src.pallas.mosaic.core.TensorCoreMesh",
        "jax._src.pallas.mosaic.core.create_tensorcore_mesh",
    ),
    **_names(
        "mesh.sc",
        f"{SC}.VectorSubcoreMesh",
        f"{SC}.ScalarSubcoreMesh",
        "jax._src.pallas.mosaic.sc_core.VectorSubcoreMesh",
        "jax._src.pallas.mosaic.sc_core.ScalarSubcoreMesh",
    ),
    **_names(
        "mesh.gpu",
        f"{PL}.mosaic_gpu.Mesh",
        f"{PL}.mosaic_gpu.WarpMesh",
        f"{PL}.mosaic_gpu.WarpgroupMesh",
        "jax._src.pallas.mosaic_gpu.core.Mesh",
        "jax._src.pallas.mosaic_gpu.core.WarpMesh",
    ),
    **_names(
        "InterpretParams",
        f"{TPU}.InterpretParams",
        f"{PL}.InterpretParams",
        "jax._src.pallas.mosaic.interpret.params.InterpretParams",
        "jax._src.pallas.mosaic.interpret.interpret_pallas_call.InterpretParams",
    ),
    **_names(
        "force_tpu_interpret_mode",
        f"{TPU}.force_tpu_interpret_mode",
        "jax._src.pallas.mosaic.interpret.interpret_pallas_call.force_tpu_interpret_mode",
    ),
    **_names(
        "set_tpu_interpret_mode",
        f"{TPU}.set_tpu_interpret_mode",
        "jax._src.pallas.mosaic.interpret.interpret_pallas_call.set_tpu_interpret_mode",
    ),
    **_names(
        "OptLevel",
        "jax.experimental.mosaic.OptLevel",
        f"{TPU}.core.OptLevel",
        "jax._src.tpu_custom_call.OptLevel",
    ),
    **_names("Precision", "jax.lax.Precision", "jax._src.lax.lax.Precision"),
    **_names("DotAlgorithm", "jax.lax.DotAlgorithm", "jax._src.lax.lax.DotAlgorithm"),
    **_names(
        "DotAlgorithmPreset", "jax.lax.DotAlgorithmPreset", "jax._src.lax.lax.DotAlgorithmPreset"
    ),
    **_names("partial", "functools.partial"),
    **_names("dataclasses.replace", "dataclasses.replace"),
    **_names("when", f"{PL}.when", "jax._src.pallas.helpers.when"),
    **_names("loop", f"{PL}.loop", "jax._src.pallas.helpers.loop"),
}

# Convolution binders: canonical name -> positional index of `precision` (None: keyword only).
CONV_PRECISION_INDEX: dict[str, int | None] = {
    "jax.lax.conv_general_dilated": 9,
    "jax.lax.conv": 4,
    "jax.lax.conv_with_general_padding": 6,
    "jax.lax.conv_transpose": 7,
    "jax.lax.conv_general_dilated_patches": 7,
    "jax.lax.conv_general_dilated_local": 8,
    "jax.numpy.correlate": None,
}
# Their parameters in order (JAX 0.10.2's signatures): a `functools.partial` of one called
# with an argument given twice, or one it does not take, raises TypeError when traced.
CONV_PARAMS: dict[str, tuple[str, ...]] = {
    "jax.lax.conv_general_dilated": (
        "lhs",
        "rhs",
        "window_strides",
        "padding",
        "lhs_dilation",
        "rhs_dilation",
        "dimension_numbers",
        "feature_group_count",
        "batch_group_count",
        "precision",
        "preferred_element_type",
        "out_sharding",
    ),
    "jax.lax.conv": (
        "lhs",
        "rhs",
        "window_strides",
        "padding",
        "precision",
        "preferred_element_type",
    ),
    "jax.lax.conv_with_general_padding": (
        "lhs",
        "rhs",
        "window_strides",
        "padding",
        "lhs_dilation",
        "rhs_dilation",
        "precision",
        "preferred_element_type",
    ),
    "jax.lax.conv_transpose": (
        "lhs",
        "rhs",
        "strides",
        "padding",
        "rhs_dilation",
        "dimension_numbers",
        "transpose_kernel",
        "precision",
        "preferred_element_type",
        "use_consistent_padding",
    ),
    "jax.lax.conv_general_dilated_patches": (
        "lhs",
        "filter_shape",
        "window_strides",
        "padding",
        "lhs_dilation",
        "rhs_dilation",
        "dimension_numbers",
        "precision",
        "preferred_element_type",
    ),
    "jax.lax.conv_general_dilated_local": (
        "lhs",
        "rhs",
        "window_strides",
        "padding",
        "filter_shape",
        "lhs_dilation",
        "rhs_dilation",
        "dimension_numbers",
        "precision",
    ),
    "jax.numpy.correlate": ("a", "v", "mode", "precision", "preferred_element_type"),
}
CONV_ALIASES = {
    "jax._src.lax.convolution.conv_general_dilated": "jax.lax.conv_general_dilated",
    "jax._src.lax.convolution.conv": "jax.lax.conv",
    "jax._src.lax.convolution.conv_with_general_padding": "jax.lax.conv_with_general_padding",
    "jax._src.lax.convolution.conv_transpose": "jax.lax.conv_transpose",
    "jax._src.lax.other.conv_general_dilated_patches": "jax.lax.conv_general_dilated_patches",
    "jax._src.lax.other.conv_general_dilated_local": "jax.lax.conv_general_dilated_local",
}
# The last part of every name that canonical() maps to a convolution binder: a call
# `x.attr(...)` whose attr is not among these is no convolution, whatever x is.
CONV_LAST_NAMES = frozenset(
    name.rsplit(".", 1)[-1]
    for name in (
        *CONV_PRECISION_INDEX,
        *CONV_ALIASES,
        *(k for k, v in API.items() if v in CONV_PRECISION_INDEX),
    )
)
# These pair the user's precision with DEFAULT internally: anything but DEFAULT is per-operand.
PAIRS_WITH_DEFAULT = {"jax.lax.conv_general_dilated_patches", "jax.lax.conv_general_dilated_local"}

# Modules whose import shows GPU Pallas code.
GPU_MODULES = (f"{PL}.triton", f"{PL}.mosaic_gpu", f"{PL}.gpu", f"{PL}.fuser")
TPU_MODULES = (TPU, SC)

PRECISION_MEMBERS = ("DEFAULT", "HIGH", "HIGHEST")
# lax.py's string table (case-sensitive).
PRECISION_STRINGS = {
    "highest": "HIGHEST",
    "float32": "HIGHEST",
    "high": "HIGH",
    "bfloat16_3x": "HIGH",
    "tensorfloat32": "HIGH",
    "default": "DEFAULT",
    "bfloat16": "DEFAULT",
    "fastest": "DEFAULT",
}
DOT_ALGORITHM_PRESETS = frozenset(
    {
        "DEFAULT",
        "ANY_F8_ANY_F8_F32",
        "ANY_F8_ANY_F8_F32_FAST_ACCUM",
        "ANY_F8_ANY_F8_ANY",
        "ANY_F8_ANY_F8_ANY_FAST_ACCUM",
        "F16_F16_F16",
        "F16_F16_F32",
        "BF16_BF16_BF16",
        "BF16_BF16_F32",
        "BF16_BF16_F32_X3",
        "BF16_BF16_F32_X6",
        "BF16_BF16_F32_X9",
        "TF32_TF32_F32",
        "TF32_TF32_F32_X3",
        "F32_F32_F32",
        "F64_F64_F64",
    }
)
DTYPE_MODULES = ("jax.numpy", "numpy", "ml_dtypes", "jax.dtypes")
DTYPE_NAMES = frozenset(
    {
        "float8_e4m3fn",
        "float8_e5m2",
        "float8_e4m3b11fnuz",
        "float8_e4m3fnuz",
        "float8_e5m2fnuz",
        "bfloat16",
        "float16",
        "float32",
        "float64",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint32",
    }
)
# CompilerParams positional order in JAX >= 0.11.0 (opt_level is index 16).
COMPILER_PARAMS_FIELDS = (
    "dimension_semantics",
    "allow_input_fusion",
    "vmem_limit_bytes",
    "collective_id",
    "has_side_effects",
    "flags",
    "internal_scratch_in_bytes",
    "serialization_format",
    "disable_bounds_checks",
    "disable_semaphore_checks",
    "skip_device_barrier",
    "allow_collective_id_without_custom_barrier",
    "shape_invariant_numerics",
    "use_tc_tiling_on_sc",
    "needs_layout_passes",
    "fuse_transposed_lhs_in_matmul",
    "opt_level",
)


def canonical(qualname: str | None) -> str | None:
    if qualname is None:
        return None
    if qualname in API:
        return API[qualname]
    return CONV_ALIASES.get(qualname, qualname if qualname in CONV_PRECISION_INDEX else None)
