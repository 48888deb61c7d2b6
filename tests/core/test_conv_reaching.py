"""The conv rule follows only the kernel sites whose top-level statement has a chain of
module-level names to a statement that spells a convolution (core/relevance.py); the
others cannot reach one. Skipping them must never change a result: every program the
project knows gives the same findings with the shortcut and without it."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
from conftest import expect_compiled

from pallas_ls.core import kernels
from pallas_ls.core.engine import analyse
from pallas_ls.core.model import Config, Finding
from pallas_ls.core.relevance import reaching_units
from pallas_ls.core.resolve import parse_module
from pallas_ls.core.rules import conv_precision
from pallas_ls.core.workspace import Workspace
from tests.core.expectations import FIXTURES

PATCHED = "patches a method of a compiled class, which compiled callers do not see"

ROOT = pathlib.Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "tests" / "oracle" / "snippets"
PRECISION = ROOT / "tests" / "oracle" / "precision"

HEAD = """import functools

import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BAD = (lax.Precision.DEFAULT, lax.Precision.HIGHEST)
"""

CONV_HELPER = """

def conv_helper(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=BAD)
"""

CONV_BODY = """

def conv_body(x_ref, w_ref, o_ref):
    o_ref[...] = conv_helper(x_ref[...], w_ref[...])
"""

PLAIN_KERNELS = """

def add_body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0


def add(x):
    return pl.pallas_call(add_body, out_shape=x)(x)


def scale_body(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def scale(x):
    return pl.pallas_call(scale_body, out_shape=x)(x)
"""

# Two plain kernels and a conv body that reaches the conv through a helper; the tests add
# the sites that use the conv body.
CONV_MODULE = HEAD + CONV_HELPER + PLAIN_KERNELS + CONV_BODY


def _codes(findings: list[Finding]) -> list[tuple[str, int]]:
    return [(f.code, f.span.start_line) for f in findings]


@pytest.fixture
def reached_bodies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kernel bodies reachability was computed for."""
    if expect_compiled():
        pytest.skip(PATCHED)
    names: list[str] = []
    real = kernels.KernelFinder.reached

    def counting(self: kernels.KernelFinder, site: kernels.KernelSite) -> list[kernels.Reached]:
        names.append(site.body_name)
        return real(self, site)

    monkeypatch.setattr(kernels.KernelFinder, "reached", counting)
    return names


def _without_shortcut(monkeypatch: pytest.MonkeyPatch, run: object) -> object:
    if expect_compiled():
        pytest.skip(PATCHED)
    with monkeypatch.context() as m:
        m.setattr(conv_precision._Reaching, "may_reach", lambda self, site: True)
        return run()  # type: ignore[operator]


def test_only_sites_with_a_way_to_a_conv_are_followed(reached_bodies: list[str]) -> None:
    source = (
        CONV_MODULE
        + """

def conv(x, w):
    return pl.pallas_call(conv_body, out_shape=x)(x, w)
"""
    )
    findings = analyse(source, "/nowhere/k.py")
    assert [f.code for f in findings] == ["PAL002"]
    assert reached_bodies == ["conv_body"]


# Each program reaches its conv through something other than a name spelled in the
# kernel's own statement; all must still be reported.
INDIRECT = {
    "module_alias": """
KERNEL = None
KERNEL = conv_helper


def body(x_ref, w_ref, o_ref):
    o_ref[...] = KERNEL(x_ref[...], w_ref[...])
""",
    "tuple_of_helpers": """
OPS = (conv_helper, None)


def body(x_ref, w_ref, o_ref):
    o_ref[...] = OPS[0](x_ref[...], w_ref[...])
""",
    "class_attribute": """
class Ops:
    @staticmethod
    def apply(x, w):
        return conv_helper(x, w)


def body(x_ref, w_ref, o_ref):
    o_ref[...] = Ops.apply(x_ref[...], w_ref[...])
""",
    "partial_in_another_statement": """
def generic(x_ref, w_ref, o_ref, *, op):
    o_ref[...] = op(x_ref[...], w_ref[...])


body = functools.partial(generic, op=conv_helper)
""",
    "two_statements_on_a_line": """
def generic(x_ref, w_ref, o_ref, *, op):
    o_ref[...] = op(x_ref[...], w_ref[...])


UNUSED = 1; body = functools.partial(generic, op=conv_helper)
""",
    "chain_of_three": """
def step(x, w):
    return conv_helper(x, w)


def middle(x, w):
    return step(x, w) + 0.0


def body(x_ref, w_ref, o_ref):
    o_ref[...] = middle(x_ref[...], w_ref[...])
""",
}


@pytest.mark.parametrize("name", sorted(INDIRECT))
def test_a_conv_reached_through_other_statements_is_found(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = (
        HEAD
        + CONV_HELPER
        + INDIRECT[name]
        + """

def run(x, w):
    return pl.pallas_call(body, out_shape=x)(x, w)
"""
    )
    findings = analyse(source, "/nowhere/k.py")
    assert [f.code for f in findings] == ["PAL002"]
    assert _codes(findings) == _codes(
        _without_shortcut(monkeypatch, lambda: analyse(source, "/nowhere/k.py"))  # type: ignore[arg-type]
    )


def test_a_kernel_given_by_a_caller_is_followed(reached_bodies: list[str]) -> None:
    """`launch(conv_body)`: the site in `launch` is seen through the call, whose statement
    names the conv kernel; the site's statement alone does not."""
    source = (
        HEAD
        + CONV_HELPER
        + """

def launch(body, x, w):
    return pl.pallas_call(body, out_shape=x)(x, w)


def conv_body(x_ref, w_ref, o_ref):
    o_ref[...] = conv_helper(x_ref[...], w_ref[...])


def run(x, w):
    return launch(conv_body, x, w)
"""
    )
    findings = analyse(source, "/nowhere/k.py")
    assert [f.code for f in findings] == ["PAL002"]
    assert "conv_body" in reached_bodies


def test_an_entry_point_bound_elsewhere_is_followed(reached_bodies: list[str]) -> None:
    """The entry point is a partial made in another statement; the site is where it is
    given the body."""
    source = (
        CONV_MODULE
        + """

CALL = functools.partial(pl.pallas_call, out_shape=None)


def run(x, w):
    return CALL(conv_body)(x, w)
"""
    )
    findings = analyse(source, "/nowhere/k.py")
    assert [f.code for f in findings] == ["PAL002"]
    assert reached_bodies == ["conv_body"]


def test_an_import_inside_a_kernel_is_a_way_out(tmp_path: pathlib.Path) -> None:
    """The import sits in the kernel's body, not at the top of the module."""
    pkg = tmp_path / "kern"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "ops.py").write_text(HEAD + CONV_HELPER, encoding="utf-8")
    source = (
        HEAD.replace("from jax import lax\n", "")
        + PLAIN_KERNELS
        + """

def body(x_ref, w_ref, o_ref):
    from kern.ops import conv_helper

    o_ref[...] = conv_helper(x_ref[...], w_ref[...])


def run(x, w):
    return pl.pallas_call(body, out_shape=x)(x, w)
"""
    ).replace("BAD = (lax.Precision.DEFAULT, lax.Precision.HIGHEST)\n", "")
    assert "conv" not in source.replace("conv_helper", "")
    main = pkg / "main.py"
    main.write_text(source, encoding="utf-8")
    findings = analyse(source, str(main), Config(), Workspace(str(tmp_path)))
    assert [f.code for f in findings] == ["PAL002"]


def test_statements_found_by_the_text() -> None:
    source = (
        HEAD
        + CONV_HELPER
        + PLAIN_KERNELS
        + """

@functools.partial(
    pl.pallas_call, out_shape=None
)
def decorated(x_ref, o_ref):
    o_ref[...] = x_ref[...]


A = 1; B = conv_helper
"""
    )
    module = parse_module(source, "/nowhere/k.py")
    assert module is not None
    units = reaching_units(module, ("conv",), conv_precision._library_module)
    assert units is not None
    named = {
        getattr(module.tree.body[i], "name", None) or type(module.tree.body[i]).__name__
        for i in units
    }
    # the helper (spells it), and both statements of the shared line; no plain kernel
    assert named == {"conv_helper", "Assign"}
    assert sum(isinstance(module.tree.body[i], type(module.tree.body[-1])) for i in units) == 2
    star = source + "\nfrom kern.ops import *\n"
    module = parse_module(star, "/nowhere/k.py")
    assert module is not None
    assert reaching_units(module, ("conv",), conv_precision._library_module) is None


def _programs() -> list[pathlib.Path]:
    return sorted(
        [
            *FIXTURES.glob("*.py"),
            *SNIPPETS.glob("*.py"),
            *PRECISION.glob("*.py"),
        ]
    )


def test_the_shortcut_changes_no_result(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    """Every fixture, oracle program and a generated benchmark module: the same findings
    with the shortcut and without it."""
    gen = ROOT / "benchmarks" / "gen_pallas.py"
    subprocess.run(
        [sys.executable, str(gen), "--sizes", "3000", "--outdir", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    paths = [*_programs(), tmp_path / "pallas_3000.py"]
    assert len(paths) > 500
    differ = []
    reported = 0
    for path in paths:
        source = path.read_text(encoding="utf-8")
        with_it = _codes(analyse(source, str(path)))
        without = _codes(
            _without_shortcut(monkeypatch, lambda s=source, p=path: analyse(s, str(p)))  # type: ignore[arg-type, misc]
        )
        reported += bool(with_it)
        if with_it != without:
            differ.append((path.name, with_it, without))
    assert differ == []
    assert reported > 200  # the programs do reach convolutions
