"""The VS Code extension in a real VS Code: code-server 4.100.3 driven by Playwright + Chromium.

vscode-client/scripts/run-e2e.sh builds the .vsix when stale, installs it into a fresh
code-server profile with `pallas-ls.interpreter` set to this interpreter, opens a copy of
vscode-client/e2e/workspace/ and runs vscode-client/e2e/test.mjs, which prints one
`PASS <check>` line per check and `RESULT PASS` at the end. Set-up (apt packages,
code-server, playwright-core): vscode-client/scripts/setup-e2e.sh, run by `make test`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "vscode-client"
RUN_E2E = CLIENT / "scripts" / "run-e2e.sh"
TIMEOUT_S = 600

# Every check the driver must report; guards against a driver that stops early.
CHECKS = (
    "output.channel",
    *(
        f"{code}.{check}"
        for code in ("PAL001", "PAL002")
        for check in ("squiggle", "problem", "hover", "fix.applied", "cleared", "fix.text")
    ),
    "clean.no-problems",
    "clean.typed.flagged",
    "settings.ignore.applied",
    "settings.ignore.removed",
    "clean.typed.cleared",
    "not-installed.notification",
    "path.setting",
    "restart.command",
    "restart.diagnostics",
)


@pytest.mark.editor
def test_vscode_extension_end_to_end(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    env = dict(os.environ)
    env.update(
        PALLAS_LS_PYTHON=sys.executable,
        E2E_RUN_DIR=str(run_dir),
        E2E_KEEP="1",  # logs and the failure screenshot stay in tmp_path
    )
    env.pop("VIRTUAL_ENV", None)
    log_file = tmp_path / "run-e2e.log"
    with log_file.open("wb") as sink:
        proc = subprocess.Popen(
            ["bash", str(RUN_E2E)],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        returncode: int | None = None
        try:
            returncode = proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            # SIGTERM first: the script's EXIT trap ends code-server's own process group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=20)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # whatever is left: node, Chromium
            proc.wait()
    output = log_file.read_text(encoding="utf-8", errors="replace")
    screenshot = run_dir / "out" / "failure.png"
    report = (
        f"run-e2e.sh exit status: {returncode} (None: killed after {TIMEOUT_S}s)\n"
        f"log: {log_file}\nscreenshot: {screenshot if screenshot.exists() else '(none)'}\n"
        f"run dir: {run_dir}\n--- log ---\n{output[-30000:]}"
    )
    print(f"run-e2e: {log_file}")
    assert returncode == 0, report
    passed = set(re.findall(r"^\[[\d.]+s\] PASS (\S+?):?(?: |$)", output, flags=re.MULTILINE))
    missing = [check for check in CHECKS if check not in passed]
    assert not missing, f"checks not reported as passed: {missing}\n{report}"
    assert re.search(r"^\[[\d.]+s\] RESULT PASS$", output, flags=re.MULTILINE), report


@pytest.mark.editor
def test_vscode_extension_unit_tests() -> None:
    """`npm test`: strict tsc, then node --test on the extension's resolution logic."""
    npm = shutil.which("npm")
    assert npm, "npm not found (Node 20 + npm are needed for the VS Code extension)"
    if not (CLIENT / "node_modules" / "vscode-languageclient").is_dir():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=CLIENT, check=True, timeout=300)
    proc = subprocess.run(
        [npm, "test"], cwd=CLIENT, capture_output=True, text=True, timeout=300, check=False
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert re.search(r"^# fail 0$", output, flags=re.MULTILINE), output
    passed = re.search(r"^# pass (\d+)$", output, flags=re.MULTILINE)
    assert passed and int(passed.group(1)) > 0, output
