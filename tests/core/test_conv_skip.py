"""The conv rule skips reachability when no convolution can be reached: the module never
spells a conv function's name and imports no module of the user's."""

from __future__ import annotations

import pathlib

import pytest
from conftest import expect_compiled

from pallas_ls.core import kernels
from pallas_ls.core.engine import analyse
from pallas_ls.core.incremental import IncrementalModule
from pallas_ls.core.model import Config
from pallas_ls.core.resolve import parse_module
from pallas_ls.core.rules.conv_precision import _no_convolution_reachable
from pallas_ls.core.workspace import Workspace
from tests.core.expectations import FIXTURES

PATCHED = "patches a method of a compiled class, which compiled callers do not see"

MATMUL = """import functools

import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def body(x_ref, y_ref, o_ref):
    o_ref[...] = jnp.dot(x_ref[...], y_ref[...])


def run(x, y):
    return pl.pallas_call(
        body, out_shape=x, compiler_params=pltpu.CompilerParams(opt_level=2)
    )(x, y)
"""

HELPER = """from jax import lax


def block(x, w):
    return lax.conv_general_dilated(
        x, w, (1, 1), "SAME", precision=(lax.Precision.DEFAULT, lax.Precision.HIGHEST)
    )
"""

USES_HELPER = """from jax.experimental import pallas as pl

from .ops import block


def body(x_ref, w_ref, o_ref):
    o_ref[...] = block(x_ref[...], w_ref[...])


def run(x, w):
    return pl.pallas_call(body, out_shape=x)(x, w)
"""


@pytest.fixture
def reached_calls(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Sites reachability was computed for (a rule's exception would be swallowed by the
    engine's per-rule isolation, so the calls are counted instead)."""
    if expect_compiled():
        pytest.skip(PATCHED)
    calls: list[object] = []
    real = kernels.KernelFinder.reached

    def counting(self: kernels.KernelFinder, site: kernels.KernelSite) -> list[kernels.Reached]:
        calls.append(site)
        return real(self, site)

    monkeypatch.setattr(kernels.KernelFinder, "reached", counting)
    return calls


def test_a_module_without_convolutions_skips_reachability(reached_calls: list[object]) -> None:
    assert [f.code for f in analyse(MATMUL, "/nowhere/mm.py")] == ["PAL001"]
    assert reached_calls == []
    conv = MATMUL.replace("jnp.dot(", "jnp.correlate(")  # a conv word: the rule looks
    analyse(conv, "/nowhere/mm.py")
    assert len(reached_calls) == 1


def test_a_conv_in_a_helper_module_is_still_found(tmp_path: pathlib.Path) -> None:
    """The kernel module never spells "conv": the conv sits in a module it imports."""
    pkg = tmp_path / "kern"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "ops.py").write_text(HELPER, encoding="utf-8")
    main = pkg / "main.py"
    main.write_text(USES_HELPER, encoding="utf-8")
    assert "conv" not in USES_HELPER
    findings = analyse(USES_HELPER, str(main), Config(), Workspace(str(tmp_path)))
    assert [f.code for f in findings] == ["PAL002"]


@pytest.mark.parametrize("name", ["pal002_positive.py", "pal002_negative.py"])
def test_every_conv_fixture_spells_a_conv_word(name: str) -> None:
    """The fixtures the conv rule is tested on do not take the shortcut."""
    source = (FIXTURES / name).read_text(encoding="utf-8")
    assert not _no_convolution_reachable(parse_module(source, str(FIXTURES / name)))


STDLIB_KERNELS = """import functools
import math
import os

from jax import lax
from jax.experimental import pallas as pl

SCALE = math.sqrt(2.0) * float(os.environ.get("SCALE", "1"))


def scaled(y, factor):
    return y * factor + SCALE


def first(x_ref, w_ref, o_ref, *, sm_scale):
    y = lax.conv(x_ref[...], w_ref[...], (1, 1), "SAME", precision="highest")
    o_ref[...] = scaled(y, sm_scale)


def second(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0  # edited


def run(x, w):
    body = functools.partial(first, sm_scale=1.0 / math.sqrt(64))
    return pl.pallas_call(body, out_shape=x)(x, w) + pl.pallas_call(second, out_shape=x)(x)
"""


def test_an_edit_elsewhere_keeps_a_kernel_that_reads_the_standard_library(
    reached_calls: list[object],
) -> None:
    """`math.sqrt(...)` and `os.environ` are no workspace modules: a kernel whose analysis
    evaluates them keeps its cached result when another kernel is edited (they once made
    every such kernel count as depending on other files, and every edit re-checked it)."""
    state = IncrementalModule("/nowhere/k.py")
    config = Config()
    analyse(STDLIB_KERNELS, "/nowhere/k.py", config, state=state)
    first_pass = len(reached_calls)
    assert first_pass >= 1
    edited = STDLIB_KERNELS.replace("# edited", "# edited again")
    analyse(edited, "/nowhere/k.py", config, state=state)
    # only the edited kernel is looked at again
    assert [site.body_name for site in reached_calls[first_pass:]] == ["second"]  # type: ignore[attr-defined]
