"""Shared set-up for the real-editor tests: a project to open, what to expect, how to run.

Each test copies a kernel with a PAL001 finding into a temporary project, writes the
expectations (message, code, range in every position encoding, hover text, the text after
the quick fix) to a JSON file, runs the real editor headless on a driver script that checks
them and writes PASS/FAIL lines, and asserts on those lines.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
VENV_BIN = Path(sys.executable).parent  # .venv/bin: holds pallas-ls and the 0.11 nvim
SERVER = VENV_BIN / "pallas-ls"

SAMPLE = FIXTURES / "opt_level_kernel.py.txt"
SAMPLE_FIXED = FIXTURES / "opt_level_kernel.fixed.py.txt"
COVERED = "opt_level=2"  # the diagnostic's range: the keyword argument, name to value
RETYPE_AFTER = 'dimension_semantics=("parallel",)'  # where the user types it back
RETYPE_TEXT = ", opt_level=2"
MESSAGE_PREFIX = "ValueError: explicit opt_level is only supported for SparseCore kernels"
HOVER_TEXT = "An explicit opt_level was passed for a non-sparsecore kernel"
CODE = "PAL001"

# Checks every driver must report as passed; guards against a driver that stops early.
COMMON_CHECKS = (
    "server.on_path",
    "client.encoding",
    "diag.count",
    "diag.message",
    "diag.code",
    "diag.range.lsp",
    "diag.range.buffer",
    "hover.text",
    "action.count",
    "action.title",
    "fix.text",
    "diag.cleared",
    "retype.text",
    "diag.back.count",
    "diag.back.range.lsp",
)

EDITOR_TIMEOUT_S = 180


def column(line: str, code_points: int, encoding: str) -> int:
    """A code-point column of `line` as the LSP column in `encoding`."""
    prefix = line[:code_points]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding == "utf-16":
        return len(prefix.encode("utf-16-le")) // 2
    return len(prefix)


def _find(text: str, needle: str) -> tuple[int, int]:
    """(0-based line, code-point column) of the only occurrence of needle in text."""
    assert text.count(needle) == 1, f"{needle!r} must occur once in the fixture"
    for number, line in enumerate(text.splitlines()):
        if needle in line:
            return number, line.index(needle)
    raise AssertionError(needle)


@dataclass
class EditorProject:
    root: Path
    file: Path
    expect_file: Path
    result_file: Path
    env: dict[str, str]


def make_project(
    tmp_path: Path, *, mode: str, encoding: str, ignored: list[str] | None = None
) -> EditorProject:
    text = SAMPLE.read_text(encoding="utf-8")
    fixed = SAMPLE_FIXED.read_text(encoding="utf-8")
    assert text != fixed
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "kernels"\nversion = "0.1"\n')
    file = root / "kernels.py"
    file.write_text(text, encoding="utf-8")

    line_no, start = _find(text, COVERED)
    line = text.splitlines()[line_no]
    assert any(ord(ch) > 0xFFFF for ch in line[:start]), "need astral text before the range"
    end = start + len(COVERED)
    fixed_line_no, after = _find(fixed, RETYPE_AFTER)
    fixed_line = fixed.splitlines()[fixed_line_no]
    after += len(RETYPE_AFTER)
    assert fixed_line[:after] + RETYPE_TEXT + fixed_line[after:] == line
    encodings = ("utf-8", "utf-16", "utf-32")
    expect = {
        "mode": mode,
        "repo": str(REPO),
        "root": str(root),
        "file": str(file),
        "text": text,
        "fixed_text": fixed,
        "encoding": encoding,
        "code": CODE,
        "message_prefix": MESSAGE_PREFIX,
        "hover": HOVER_TEXT,
        "covered": COVERED,
        # [start line, start col, end line, end col] in each encoding
        "range": {
            enc: [line_no, column(line, start, enc), line_no, column(line, end, enc)]
            for enc in encodings
        },
        "retype": {enc: [fixed_line_no, column(fixed_line, after, enc)] for enc in encodings},
        "retype_text": RETYPE_TEXT,
        "ignored": ignored,  # set: the editor's settings tell the server to ignore these codes
    }
    expect_file = tmp_path / "expect.json"
    expect_file.write_text(json.dumps(expect, ensure_ascii=False), encoding="utf-8")

    home = tmp_path / "home"
    # The server reads the JAX version from the active virtualenv; drop the caller's so the
    # result does not depend on which venv the developer's shell has active (.venv: no jax).
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env.update(
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        PALLAS_EXPECT=str(expect_file),
        PALLAS_RESULT=str(tmp_path / "result.txt"),
    )
    return EditorProject(root, file, expect_file, tmp_path / "result.txt", env)


@dataclass
class EditorRun:
    returncode: int | None  # None: killed after EDITOR_TIMEOUT_S
    output: str
    results: list[str]
    seconds: float

    def report(self) -> str:
        return (
            f"exit={self.returncode} after {self.seconds:.1f}s\n"
            f"--- results ---\n"
            + "\n".join(self.results)
            + f"\n--- editor output ---\n{self.output}"
        )

    def assert_passed(self, *checks: str, full_flow: bool = True) -> None:
        passed = {r.split()[1] for r in self.results if r.startswith("PASS ")}
        required = (*COMMON_CHECKS, *checks) if full_flow else checks
        missing = [c for c in required if c not in passed]
        assert self.returncode == 0, self.report()
        assert self.results and self.results[-1] == "RESULT PASS", self.report()
        assert not missing, f"checks not reported as passed: {missing}\n{self.report()}"


def run_editor(argv: list[str], project: EditorProject, tmp_path: Path) -> EditorRun:
    """Run a headless editor to completion; output goes to a file (the server it starts may
    outlive it holding pipes), and its whole process group is ended on timeout."""
    log = tmp_path / "editor-output.txt"
    start = time.monotonic()
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            argv,
            cwd=project.root,
            env=project.env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            returncode: int | None = proc.wait(timeout=EDITOR_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            returncode = None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the editor's session: it and its server
            proc.wait()
    seconds = time.monotonic() - start
    results = (
        project.result_file.read_text(encoding="utf-8").splitlines()
        if project.result_file.exists()
        else []
    )
    output = log.read_text(encoding="utf-8", errors="replace")
    print(f"{argv[0]}: {seconds:.1f}s")  # shown with pytest -s / on failure
    return EditorRun(returncode, output[-20000:], results, seconds)


def require_server() -> Path:
    assert SERVER.exists(), f"{SERVER} missing: pip install -e . into the venv"
    return SERVER
