"""The import-line pre-check: a file that imports nothing from jax (directly or through a
workspace module), or imports jax but never names Pallas, is not parsed at all; every way
of writing a jax import still is."""

from __future__ import annotations

from pathlib import Path

import pytest

from pallas_ls.core import engine
from pallas_ls.core.engine import analyse
from pallas_ls.core.workspace import Workspace

FIXTURES = Path(__file__).parent / "fixtures"
KERNEL = """

def body(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    return pl.pallas_call(body, out_shape=x, compiler_params=pltpu.CompilerParams(opt_level=2))(x)
"""
JAX_IMPORTS = (
    "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n"
)


@pytest.fixture
def no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file was parsed")

    monkeypatch.setattr(engine, "parse_recovering", refuse)


@pytest.mark.parametrize(
    "header",
    [
        "from types import SimpleNamespace\n\npl = pltpu = jax = SimpleNamespace()\n",
        "import numpy as np  # not jax\nimport os, sys\n",
        '"""Mentions jax in prose only."""\nimport math\n',
    ],
)
def test_file_without_jax_imports_is_not_parsed(header: str, no_parse: None) -> None:
    assert analyse(header + KERNEL, "/nowhere/mod.py") == []
    assert engine.hover_at(header + KERNEL, 8, 60, "/nowhere/mod.py") is None


@pytest.mark.parametrize(
    "header",
    [
        JAX_IMPORTS,
        "import os; " + JAX_IMPORTS,
        "try: "
        + JAX_IMPORTS.replace("\n", "\nexcept ImportError: pass\n", 1)
        + JAX_IMPORTS.split("\n")[1]
        + "\n",
        "from jax . experimental import pallas as pl\n"
        "from jax.experimental.pallas import tpu as pltpu\n",
        "from jax.experimental \\\n    import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n",
        "\f" + JAX_IMPORTS,
    ],
    ids=["plain", "after-semicolon", "after-try-colon", "spaced-dots", "backslash", "form-feed"],
)
def test_every_spelling_of_a_jax_import_is_analysed(header: str) -> None:
    source = header + KERNEL
    findings = analyse(source, "/nowhere/mod.py")
    assert [f.code for f in findings] == ["PAL001"]
    # Old Mac line ends: the scan must not rely on "\n" alone.
    cr_only = source.replace("\n", "\r")
    assert [f.code for f in analyse(cr_only, "/nowhere/mod.py")] == ["PAL001"]


def test_workspace_module_import_is_analysed() -> None:
    """kern.py imports its params from a sibling module; jax comes in through it too."""
    path = FIXTURES / "xmod" / "kern.py"
    source = path.read_text(encoding="utf-8")
    assert engine._may_matter(source, str(path), Workspace(str(path.parent)))
    assert analyse(source, str(path), workspace=Workspace(str(path.parent)))


def test_absolute_import_of_a_workspace_module_counts(tmp_path: Path) -> None:
    (tmp_path / "common.py").write_text(JAX_IMPORTS, encoding="utf-8")
    source = '"""Uses jax through common."""\nfrom common import pl, pltpu\n' + KERNEL
    main = tmp_path / "main.py"
    assert engine._may_matter(source, str(main), None)
    assert not engine._may_matter(source, "/nowhere/main.py", None)


def test_a_jax_import_costs_no_file_system_look_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pre-check runs on every keystroke: with jax imported it must not stat anything,
    whatever comes before the jax import."""

    def no_stat(*args: object) -> bool:
        raise AssertionError("looked on disk")

    monkeypatch.setattr(engine, "workspace_module", no_stat)
    source = "import numpy as np\nfrom mylib import helpers\n" + JAX_IMPORTS + KERNEL
    assert engine._may_matter(source, "/project/mod.py", Workspace("/project"))


CONV_HELPER = '''"""Plain JAX: no Pallas anywhere."""
import jax
from jax import lax


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=lax.Precision.HIGH)
'''


def test_jax_file_without_pallas_is_not_parsed(no_parse: None) -> None:
    """Every entry point and CompilerParams lives under jax.experimental.pallas: a file that
    imports jax but never spells "pallas" (and imports no workspace module) has nothing to
    report, however much jax code it holds. A line split by a backslash changes nothing."""
    assert analyse(CONV_HELPER, "/nowhere/conv.py") == []
    split = CONV_HELPER.replace('(1, 1), "SAME"', '(1, 1), \\\n        "SAME"')
    assert "\\\n" in split
    assert analyse(split, "/nowhere/conv.py") == []


def test_preventive_hover_still_serves_conv_helpers() -> None:
    line = CONV_HELPER.splitlines().index(
        next(ln for ln in CONV_HELPER.splitlines() if "precision=" in ln)
    )
    col = CONV_HELPER.splitlines()[line].index("precision=") + 3
    hover = engine.hover_at(CONV_HELPER, line, col, "/nowhere/conv.py")
    assert hover is not None and hover.codes == ("PAL002", "PAL003")


def test_entry_point_through_a_workspace_module_without_pallas_here(tmp_path: Path) -> None:
    """The file never names Pallas: its entry point and CompilerParams come from a sibling."""
    (tmp_path / "common.py").write_text(
        JAX_IMPORTS + "launch = pl.pallas_call\nPARAMS = pltpu.CompilerParams(opt_level=2)\n",
        encoding="utf-8",
    )
    source = "import jax\nfrom common import PARAMS, launch\n" + KERNEL.replace(
        "pl.pallas_call(", "launch("
    ).replace("pltpu.CompilerParams(opt_level=2)", "PARAMS")
    assert "pallas" not in source
    main = tmp_path / "main.py"
    main.write_text(source, encoding="utf-8")
    findings = analyse(source, str(main), workspace=Workspace(str(tmp_path)))
    assert [f.code for f in findings] == ["PAL001"]
