"""Emacs 28.2 + eglot 1.9 (Debian emacs-nox, elpa-eglot), batch, against `pallas-ls serve`.

The driver (tests/editors/emacs_driver.el) loads the shipped editors/emacs/pallas-ls.el from
load-path as a user does, opens a kernel with a PAL001 finding in python-mode and checks the
diagnostic (message, code, UTF-16 range with non-ASCII text before it), hover, the quick fix,
and that the diagnostic clears and comes back. Installed by tests/editors/setup.sh.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from editor_harness import HERE, make_project, require_server, run_editor

pytestmark = pytest.mark.editor

DRIVER = HERE / "emacs_driver.el"


def test_emacs_eglot_pal001_end_to_end(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs missing: run `bash tests/editors/setup.sh`")
    version = subprocess.run(
        [emacs, "--version"], capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()[0]
    require_server()
    project = make_project(tmp_path, mode="eglot", encoding="utf-16")
    run = run_editor([emacs, "-Q", "--batch", "-l", str(DRIVER)], project, tmp_path)
    print(version)
    run.assert_passed("config.loaded", "client.cmd", "client.root_dir", "hover.eldoc_text")


def test_emacs_eglot_settings_reach_the_server(tmp_path: Path) -> None:
    """eglot-workspace-configuration in the README's form: PAL001 ignored -> empty report."""
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs missing: run `bash tests/editors/setup.sh`")
    require_server()
    project = make_project(tmp_path, mode="eglot", encoding="utf-16", ignored=["PAL001"])
    run = run_editor([emacs, "-Q", "--batch", "-l", str(DRIVER)], project, tmp_path)
    run.assert_passed("config.loaded", "client.attached", "settings.ignored", full_flow=False)
