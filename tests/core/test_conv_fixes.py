"""Which conv-precision fix is preferred (the one `--fix` and fix-all apply)."""

from __future__ import annotations

import pytest

from pallas_ls.core.engine import analyse
from pallas_ls.core.textedit import apply_edits

KERNEL = """\
import jax
from jax import lax
from jax.experimental import pallas as pl


def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv(x_ref[...], w_ref[...], (1, 1), "SAME", precision={precision})


f = pl.pallas_call(kernel, out_shape=None)
"""


@pytest.mark.parametrize(
    ("precision", "preferred"),
    [
        # the preset named DEFAULT meant the default precision: dropping it keeps that
        ('"DEFAULT"', "precision=None"),
        ("lax.DotAlgorithmPreset.DEFAULT", "precision=None"),
        # HIGH asked for more than the default: HIGHEST is the nearest that lowers
        ("lax.Precision.HIGH", "lax.Precision.HIGHEST"),
        ('"bfloat16_3x"', "lax.Precision.HIGHEST"),
    ],
)
def test_preferred_fix(precision: str, preferred: str) -> None:
    source = KERNEL.format(precision=precision)
    [finding] = analyse(source, "/virtual/k.py")
    assert finding.code == "PAL003"
    fix = finding.preferred_fix
    assert fix is not None
    fixed = apply_edits(source, list(fix.edits))
    conv_line = next(line for line in fixed.splitlines() if "lax.conv(" in line)
    if preferred == "precision=None":
        assert "precision" not in conv_line, conv_line
    else:
        assert f"precision={preferred}" in conv_line, conv_line
    assert analyse(fixed, "/virtual/k.py") == []
