"""Which JAX the analysed code runs on: read from the environment's folders, no process
started and no package imported."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from pallas_ls.server import jaxversion
from tests.conftest import clean_env, make_fake_venv


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    jaxversion.detect_jax_version.cache_clear()
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)


def _dist(site: pathlib.Path, folder: str) -> None:
    (site / folder).mkdir(parents=True)


def test_project_venv_decides(tmp_path: pathlib.Path) -> None:
    make_fake_venv(tmp_path / ".venv", "0.10.2")
    assert jaxversion.detect_jax_version(str(tmp_path)) == (0, 10, 2)


def test_jaxlib_alone_is_not_jax(tmp_path: pathlib.Path) -> None:
    venv = make_fake_venv(tmp_path / "venv", None)
    site = next(venv.glob("lib/python3*/site-packages"))
    _dist(site, "jaxlib-0.10.2.dist-info")
    _dist(site, "jax_tpu_helpers-1.0.dist-info")
    assert jaxversion.detect_jax_version(str(tmp_path)) is None


def test_project_venv_wins_over_the_active_one(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_fake_venv(tmp_path / "project" / ".venv", "0.11.0")
    active = make_fake_venv(tmp_path / "active", "0.10.2")
    monkeypatch.setenv("VIRTUAL_ENV", str(active))
    assert jaxversion.detect_jax_version(str(tmp_path / "project")) == (0, 11, 0)
    assert jaxversion.detect_jax_version(str(tmp_path / "elsewhere")) == (0, 10, 2)


def test_conda_prefix_and_egg_info(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "conda" / "lib" / "python3.11" / "site-packages"
    _dist(site, "jax-0.9.1-py3.11.egg-info")
    monkeypatch.setenv("CONDA_PREFIX", str(tmp_path / "conda"))
    assert jaxversion.detect_jax_version(str(tmp_path / "project")) == (0, 9, 1)


def test_windows_layout(tmp_path: pathlib.Path) -> None:
    venv = tmp_path / ".venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = C:\\Python311\n", encoding="utf-8")
    _dist(venv / "Lib" / "site-packages", "jax-0.10.0.dist-info")
    assert jaxversion.detect_jax_version(str(tmp_path)) == (0, 10, 0)


def test_no_venv_falls_back_to_this_interpreter(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert jaxversion.detect_jax_version(str(tmp_path / "project")) is None  # no jax here
    jaxversion.detect_jax_version.cache_clear()
    _dist(tmp_path / "site", "jax-0.8.2.dist-info")
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path / "site")])
    assert jaxversion.detect_jax_version(str(tmp_path / "project")) == (0, 8, 2)


def test_a_plain_venv_is_read_without_jedi_or_importlib_metadata(tmp_path: pathlib.Path) -> None:
    """The server detects at start-up: importing jedi and importlib.metadata there (or
    starting the venv's Python, as jedi would) costs ~7 MB and ~150 ms for nothing."""
    make_fake_venv(tmp_path / ".venv", "0.10.2")
    script = (
        "import sys\n"
        "from pallas_ls.server.jaxversion import detect_jax_version\n"
        f"print(detect_jax_version({str(tmp_path)!r}))\n"
        "print(sorted(m for m in ('jedi', 'importlib.metadata') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=clean_env()
    ).stdout.split("\n")
    assert out[:2] == ["(0, 10, 2)", "[]"]
