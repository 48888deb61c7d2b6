"""The rule registry: one code per rule, each bound to one error record."""

from __future__ import annotations

from pallas_ls.core.model import immutable
from pallas_ls.core.records import Record, load_records

OPT_LEVEL_RECORD = "4498015edb3d4ca7"
CONV_PRECISION_RECORD = "8e3e4ba5386a1f7c"

# First JAX release with CompilerParams.opt_level (commit e6299e2, tag jax-v0.11.0).
OPT_LEVEL_MIN_JAX = (0, 11, 0)
# First JAX release assumed to carry the Pallas Mosaic conv lowering rule; no release up to
# 0.11.0 has it (pallas-semantics.md, section E). One constant, so it is easy to move.
CONV_RULE_MIN_JAX = (0, 12, 0)


@immutable
class Rule:
    """A rule code, bound to the error record it reports."""

    code: str
    name: str
    record_id: str
    summary: str
    jax_versions: str

    @property
    def record(self) -> Record:
        return load_records().get(self.record_id)


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule(
            "PAL001",
            "opt-level-on-tensorcore-kernel",
            OPT_LEVEL_RECORD,
            "`pltpu.CompilerParams(opt_level=...)` (any value but None) reaches a kernel that is "
            "provably a TensorCore kernel lowered with Mosaic: any `pl.pallas_call`, or "
            "`pl.kernel` / `pl.core_map` over a TensorCore mesh. JAX raises when the kernel is "
            "lowered (first call, export or compile). SparseCore meshes accept opt_level.",
            ">= 0.11.0",
        ),
        Rule(
            "PAL002",
            "per-operand-conv-precision",
            CONV_PRECISION_RECORD,
            "A convolution inside a Mosaic TPU (TensorCore) kernel has a per-operand precision: "
            "a 2-tuple of different `lax.Precision` members or precision strings, a "
            "`lax.DotAlgorithm` whose operand types differ, or "
            "`lax.conv_general_dilated_patches`/`conv_general_dilated_local` with HIGH or "
            "HIGHEST, which pair the precision with DEFAULT internally.",
            f">= {'.'.join(map(str, CONV_RULE_MIN_JAX))}",
        ),
        Rule(
            "PAL003",
            "unsupported-conv-precision",
            CONV_PRECISION_RECORD,
            "A convolution inside a Mosaic TPU (TensorCore) kernel has a uniform precision that "
            "the Mosaic conv rule does not lower: HIGH (also 'high', 'tensorfloat32', "
            "'bfloat16_3x'), a `lax.DotAlgorithmPreset`, or a `lax.DotAlgorithm`. Only "
            "DEFAULT and HIGHEST lower; this is the check right after the per-operand one in "
            "the same JAX function (`_parse_precision_attr`, see the record's source), and it "
            "raises `NotImplementedError: Unsupported conv precision: HIGH` (or the value's "
            "name).",
            f">= {'.'.join(map(str, CONV_RULE_MIN_JAX))}",
        ),
        Rule(
            "PAL004",
            "opt-level-needs-newer-jax",
            OPT_LEVEL_RECORD,
            "`opt_level=` is passed to `pltpu.CompilerParams` (or its `.replace`) but the "
            "target JAX predates it (< 0.11.0): the constructor raises `TypeError: "
            "CompilerParams.__init__() got an unexpected keyword argument 'opt_level'` "
            "when it runs.",
            "< 0.11.0",
        ),
    )
}


def expand_codes(codes: list[str] | frozenset[str]) -> tuple[set[str], list[str]]:
    """Split user-given codes or prefixes into the rule codes they name and the unknown ones."""
    known: set[str] = set()
    unknown: list[str] = []
    for raw in codes:
        code = raw.strip().upper()
        if not code:
            continue
        if code == "ALL":
            known.update(RULES)
            continue
        matched = {c for c in RULES if c.startswith(code)}
        if matched:
            known.update(matched)
        else:
            unknown.append(raw)
    return known, unknown
