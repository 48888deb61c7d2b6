"""One test per bad input of issue 5: files (CLI), pathological code (engine), protocol
misuse and client death (server). Each asserts the message and that nothing else was lost."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import time

import pytest
from robustness_support import (
    CLI_COMMAND,
    PROCESS_TIMEOUT,
    RpcClient,
    alive,
    clean_env,
    descendants,
    make_project,
    time_limit,
)

from pallas_ls.core.engine import analyse
from pallas_ls.core.model import Span
from pallas_ls.core.textedit import apply_edits

# A file with one PAL001 finding, whose `opt_level=2` sits after non-ASCII text.
GOOD = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    label = "é"; params = pltpu.CompilerParams(opt_level=2)
    return pl.pallas_call(kernel, out_shape=x, compiler_params=params)(x)
"""
GOOD_LINE = 10
GOOD_COL = GOOD.splitlines()[GOOD_LINE].index("opt_level=2")
GOOD_SPAN = Span(GOOD_LINE, GOOD_COL, GOOD_LINE, GOOD_COL + len("opt_level=2"))
EXIT_SECONDS = 30.0  # a bound for "exits by itself", not a speed assertion


def cli(*args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI_COMMAND, *args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
    )


@pytest.fixture
def project(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "good.py").write_text(GOOD, encoding="utf-8")
    return folder


def assert_good_still_checked(proc: subprocess.CompletedProcess[str], folder: pathlib.Path) -> None:
    expected = f"{folder / 'good.py'}:{GOOD_LINE + 1}:{GOOD_COL + 1}: PAL001"
    assert expected in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr


def stderr_line_for(proc: subprocess.CompletedProcess[str], path: pathlib.Path) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.startswith(f"{path}:")]
    assert lines, f"no stderr line names {path}:\n{proc.stderr}"
    return lines[0]


# --- CLI: files ----------------------------------------------------------------------


def test_latin1_with_cookie_is_checked_with_code_point_columns(project: pathlib.Path) -> None:
    source = "# -*- coding: latin-1 -*-\n" + GOOD
    (project / "latin.py").write_bytes(source.encode("latin-1"))
    proc = cli(str(project), cwd=project)
    assert_good_still_checked(proc, project)
    assert f"{project / 'latin.py'}:{GOOD_LINE + 2}:{GOOD_COL + 1}: PAL001" in proc.stdout
    assert proc.stderr == ""


def test_latin1_without_cookie_is_reported_and_skipped(project: pathlib.Path) -> None:
    (project / "latin.py").write_bytes(GOOD.encode("latin-1"))
    proc = cli(str(project), cwd=project)
    assert_good_still_checked(proc, project)
    assert "decode" in stderr_line_for(proc, project / "latin.py")
    assert "1 file checked" in proc.stdout


def test_bom_and_crlf_are_checked(project: pathlib.Path) -> None:
    (project / "bom.py").write_bytes(b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    (project / "crlf.py").write_bytes(GOOD.replace("\n", "\r\n").encode("utf-8"))
    (project / "cr.py").write_bytes(GOOD.replace("\n", "\r").encode("utf-8"))
    proc = cli(str(project), cwd=project)
    assert_good_still_checked(proc, project)
    for name in ("bom.py", "crlf.py", "cr.py"):
        assert f"{project / name}:{GOOD_LINE + 1}:{GOOD_COL + 1}: PAL001" in proc.stdout, name
    assert proc.stderr == ""


@pytest.mark.parametrize(
    "data",
    [
        GOOD.replace("kernel,", "kernel,\0").encode("utf-8"),
        bytes(range(256)) * 40,
        b"\x7fELF\x02\x01\x01" + os.urandom(3000).replace(b"\0", b"\1"),
    ],
    ids=["nul-bytes", "binary", "binary-without-nul"],
)
def test_binary_and_nul_files_are_reported_and_skipped(project: pathlib.Path, data: bytes) -> None:
    (project / "bad.py").write_bytes(data)
    proc = cli(str(project), cwd=project)
    assert_good_still_checked(proc, project)
    line = stderr_line_for(proc, project / "bad.py")
    assert "binary" in line or "decode" in line, line


def test_huge_file_has_a_clear_message(project: pathlib.Path) -> None:
    from pallas_ls.cli import MAX_FILE_BYTES

    big = GOOD + "x = 1\n" * (MAX_FILE_BYTES // 6 + 10)
    (project / "big.py").write_text(big, encoding="utf-8")
    proc = cli(str(project), cwd=project)
    assert_good_still_checked(proc, project)
    line = stderr_line_for(proc, project / "big.py")
    assert "too large" in line and f"{MAX_FILE_BYTES:,}" in line, line


def test_unreadable_files_even_for_root(project: pathlib.Path) -> None:
    """Tests run as root, so chmod 000 proves nothing: a dangling symlink, a looping one,
    and a link to /proc/self/mem (reading it fails with EIO, for root too)."""
    (project / "dangling.py").symlink_to(project / "missing.py")
    (project / "loop_a.py").symlink_to(project / "loop_b.py")
    (project / "loop_b.py").symlink_to(project / "loop_a.py")
    (project / "eio.py").symlink_to("/proc/self/mem")
    proc = cli(str(project), cwd=project)
    assert_good_still_checked(proc, project)
    for name in ("dangling.py", "loop_a.py", "loop_b.py", "eio.py"):
        stderr_line_for(proc, project / name)
    explicit = cli(str(project / "eio.py"), str(project / "dangling.py"), cwd=project)
    assert explicit.returncode == 2, explicit
    stderr_line_for(explicit, project / "eio.py")
    stderr_line_for(explicit, project / "dangling.py")


def test_fifo_named_py_does_not_hang(project: pathlib.Path) -> None:
    """A FIFO never delivers EOF without a writer: reading it would hang the CLI forever."""
    fifo = project / "pipe.py"
    os.mkfifo(fifo)
    proc = cli(str(project), cwd=project)  # in a folder walk
    assert_good_still_checked(proc, project)
    explicit = subprocess.run(
        [*CLI_COMMAND, str(fifo), str(project / "good.py")],
        cwd=project,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=EXIT_SECONDS,
    )  # given by name: TimeoutExpired here is the bug
    assert_good_still_checked(explicit, project)
    stderr_line_for(explicit, fifo)


def test_symlink_loop_in_folder(project: pathlib.Path) -> None:
    (project / "sub").mkdir()
    (project / "sub" / "back").symlink_to(project, target_is_directory=True)
    (project / "sub" / "self").symlink_to(project / "sub", target_is_directory=True)
    (project / "sub" / "inner.py").write_text(GOOD, encoding="utf-8")
    proc = cli(str(project), cwd=project)
    assert_good_still_checked(proc, project)
    assert f"{project / 'sub' / 'inner.py'}:{GOOD_LINE + 1}" in proc.stdout
    assert proc.stdout.count(": PAL001") == 2, proc.stdout  # each file once
    assert "loop" in proc.stderr


def test_nothing_checkable_exits_2(project: pathlib.Path) -> None:
    (project / "good.py").unlink()
    (project / "bad.py").write_bytes(b"\0\0\0")
    proc = cli(str(project), cwd=project)
    assert proc.returncode == 2, proc
    stderr_line_for(proc, project / "bad.py")


# --- engine: pathological code ---------------------------------------------------------

BOUND = 30.0  # seconds: only a hang reaches it


def nested_functions(depth: int) -> str:
    lines = [f"{'    ' * i}def f{i}(x):" for i in range(depth)]
    return "\n".join(lines) + "\n" + "    " * depth + "return x\n"


PATHOLOGICAL = {
    "200-nested-parens": "y = " + "(" * 200 + "1" + ")" * 200 + "\n",
    "90-nested-parens-in-opt-level": "q = pltpu.CompilerParams(opt_level="
    + "(" * 90
    + "2"
    + ")" * 90
    + ")\n",
    "100-nested-functions": nested_functions(100),
    "95-nested-functions": nested_functions(95),
    "long-sum": "y = " + "+".join(["1"] * 50_000) + "\n",
    "long-attribute-chain": "y = x" + ".a" * 20_000 + "\n",
    "nested-lambdas": "y = " + "lambda: " * 500 + "0\n",
    "nested-lists": "y = " + "[" * 180 + "]" * 180 + "\n",
    "huge-list": "y = [" + ", ".join(str(i) for i in range(200_000)) + "]\n",
    "huge-int-opt-level": "q = pltpu.CompilerParams(opt_level=" + "9" * 5000 + ")\n",
    "huge-string": "s = '" + "é" * 1_000_000 + "'\n",
    "replace-chain": "p = pltpu.CompilerParams()\n"
    + "p = p.replace(opt_level=1)\n" * 3000
    + "def other(x):\n    return pl.pallas_call(kernel, out_shape=x, compiler_params=p)(x)\n",
    "recursive-helpers": (
        "def a(p):\n    return b(p)\n\ndef b(p):\n    return a(p)\n\n"
        "def k2(x_ref, o_ref):\n    o_ref[...] = lax.conv(x_ref, x_ref, (1,), 'SAME', precision=a(1))\n"
        "def r(x):\n    return pl.pallas_call(k2, out_shape=x)(x)\n"
    ),
    "self-recursive-kernel": (
        "def k3(x_ref, o_ref):\n    k3(x_ref, o_ref)\n"
        "def r3(x):\n    return pl.pallas_call(k3, out_shape=x,"
        " compiler_params=pltpu.CompilerParams(opt_level=2))(x)\n"
    ),
    "deep-if-chain": "def g(x):\n"
    + "".join(f"{'    ' * (i + 1)}if x:\n" for i in range(90))
    + "    " * 91
    + "pass\n",
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_code_finishes_and_keeps_other_findings(name: str) -> None:
    """Appended to a file with one finding: the analysis finishes in bounded time, raises
    nothing, and the unrelated finding above stays where it was."""
    source = GOOD + "\n\n" + PATHOLOGICAL[name]
    with time_limit(BOUND):
        findings = analyse(source, "/tmp/pathological.py")
    assert GOOD_SPAN in [f.span for f in findings if f.code == "PAL001"], findings


@pytest.mark.parametrize(
    "separator", ["\u2028", "\x85", "\x0c", "\x0b", "\x1c", "\u2029"], ids=ascii
)
def test_unicode_line_separators_in_comments_do_not_shift_spans(separator: str) -> None:
    """str.splitlines() breaks lines where Python does not (U+2028, NEL, FF, ...): spans and
    fixes must use Python's own line breaks."""
    source = GOOD.replace("import jax\n", f"import jax  # a{separator}b\n", 1)
    findings = analyse(source, "/tmp/sep.py")
    assert [f.span for f in findings] == [GOOD_SPAN], findings
    fixed = apply_edits(source, findings[0].preferred_fix.edits)  # type: ignore[union-attr]
    assert "pltpu.CompilerParams()" in fixed, fixed.splitlines()[GOOD_LINE]


def test_stray_indented_line_does_not_hide_findings_above() -> None:
    """Half-typed code: an unexpectedly indented line (after the imports, between two
    functions, at the end) is the only broken statement; findings elsewhere stay put."""
    imports_end = GOOD.index("\n\n\ndef kernel")
    source = GOOD[:imports_end] + "\n    y = 1" + GOOD[imports_end:] + "\n\n    z = 2\n"
    findings = analyse(source, "/tmp/stray.py")
    moved = Span(GOOD_LINE + 1, GOOD_COL, GOOD_LINE + 1, GOOD_COL + len("opt_level=2"))
    assert [f.span for f in findings] == [moved], findings


def test_repeated_identical_import_keeps_findings() -> None:
    """Re-importing the same module under the same name (pasted import blocks, notebooks)
    must not make the analysis give up on that name."""
    source = GOOD + "\nfrom jax.experimental.pallas import tpu as pltpu\n"
    findings = analyse(source, "/tmp/reimport.py")
    assert [f.span for f in findings] == [GOOD_SPAN], findings


def test_cli_on_pathological_files(project: pathlib.Path) -> None:
    for name, code in PATHOLOGICAL.items():
        (project / f"p_{name.replace('-', '_')}.py").write_text(GOOD + "\n\n" + code, "utf-8")
    proc = cli(str(project), cwd=project)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert f"{len(PATHOLOGICAL) + 1} files checked" in proc.stdout, proc.stdout[-500:]


# --- server: protocol ------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: pathlib.Path) -> pathlib.Path:
    return make_project(tmp_path / "project")


def open_good(client: RpcClient, root: pathlib.Path, name: str = "good.py") -> str:
    uri = (root / name).as_uri()
    client.open(uri, GOOD)
    return uri


def warnings_shown(client: RpcClient) -> list[str]:
    return [m["message"] for m in client.messages("window/showMessage") if m["type"] == 2]


@pytest.mark.parametrize(
    "options",
    [
        {"select": 5, "ignore": ["PAL999"], "jaxVersion": 3},
        {"select": ["PAL001", 7], "jaxVersion": "not-a-version"},
        ["not", "an", "object"],
        {"settings": {"ignore": "PALXYZ"}},
    ],
    ids=["wrong-types", "mixed-list", "list", "unknown-code"],
)
def test_invalid_settings_warn_once_and_use_defaults(root: pathlib.Path, options: object) -> None:
    with RpcClient(cwd=root) as client:
        client.initialize(root, initialization_options=options)
        uri = open_good(client, root)
        diagnostics = client.wait_published(uri, 1)
        assert [d["code"] for d in diagnostics] == ["PAL001"]
        shown = warnings_shown(client)
        assert len(shown) == 1, shown
        assert "invalid settings" in shown[0]
        client.notify("workspace/didChangeConfiguration", {"settings": options})
        client.replace_all(uri, GOOD + "\n", 2)
        assert [d["code"] for d in client.wait_published(uri, 2)] == ["PAL001"]
        assert len(warnings_shown(client)) == 1, warnings_shown(client)
        assert client.shutdown() == 0


def test_requests_for_unknown_documents_get_errors(root: pathlib.Path) -> None:
    from robustness_support import pull_capabilities

    with RpcClient(cwd=root) as client:
        client.initialize(root, pull_capabilities("utf-16"))
        ghost = {"uri": (root / "never_opened.py").as_uri()}
        origin = {"line": 0, "character": 0}
        span = {"start": origin, "end": origin}
        requests = [
            ("textDocument/hover", {"textDocument": ghost, "position": origin}),
            (
                "textDocument/codeAction",
                {"textDocument": ghost, "range": span, "context": {"diagnostics": []}},
            ),
            ("textDocument/diagnostic", {"textDocument": ghost}),
        ]
        for method, params in requests:
            reply = client.request(method, params)
            assert "error" in reply, (method, reply)
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {**ghost, "version": 3},
                "contentChanges": [{"range": span, "text": "x"}],
            },
        )
        client.notify("textDocument/didClose", {"textDocument": ghost})
        client.notify("textDocument/didSave", {"textDocument": ghost})
        uri = open_good(client, root)
        report = client.result("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        assert [d["code"] for d in report["items"]] == ["PAL001"]
        assert client.shutdown() == 0


def test_invalid_json_rpc_does_not_kill_the_server(root: pathlib.Path) -> None:
    with RpcClient(cwd=root) as client:
        client.initialize(root)
        reply = client.request("pallas/unknownMethod", {"x": 1})
        assert reply["error"]["code"] == -32601
        reply = client.request("textDocument/hover", {"textDocument": 5})
        assert "error" in reply
        uri = open_good(client, root)
        assert [d["code"] for d in client.wait_published(uri, 1)] == ["PAL001"]
        assert client.shutdown() == 0


def no_orphans(children: set[int]) -> list[int]:
    deadline = time.monotonic() + EXIT_SECONDS
    while time.monotonic() < deadline:
        left = [pid for pid in children if alive(pid)]
        if not left:
            return []
        time.sleep(0.1)
    return [pid for pid in children if alive(pid)]


def started_server(root: pathlib.Path, process_id: int | None = None) -> tuple[RpcClient, set[int]]:
    client = RpcClient(cwd=root)
    client.initialize(root, process_id=process_id)
    uri = open_good(client, root)
    client.wait_published(uri, 1)
    return client, descendants(client.pid)


def test_exit_without_shutdown_exits_1(root: pathlib.Path) -> None:
    client, children = started_server(root)
    with client:
        client.notify("exit")
        assert client.proc.wait(EXIT_SECONDS) == 1
    assert no_orphans(children) == []


def test_shutdown_then_exit_exits_0(root: pathlib.Path) -> None:
    client, children = started_server(root)
    with client:
        assert client.shutdown() == 0
    assert no_orphans(children) == []


def test_server_exits_when_stdin_closes(root: pathlib.Path) -> None:
    client, children = started_server(root)
    with client:
        assert client.proc.stdin is not None
        client.proc.stdin.close()
        code = client.proc.wait(EXIT_SECONDS)
        assert code in (0, 1), code
    assert no_orphans(children) == []


def test_server_exits_when_the_client_process_dies(root: pathlib.Path) -> None:
    parent = subprocess.Popen(["sleep", "3"])
    client, children = started_server(root, process_id=parent.pid)
    with client:
        assert client.proc.poll() is None  # alive while its client lives
        parent.wait(EXIT_SECONDS)  # reaped: the pid is gone, not a zombie
        # Exits by itself (TimeoutExpired otherwise); the spec leaves the code open.
        client.proc.wait(EXIT_SECONDS)
    assert no_orphans(children) == []


def test_server_killed_leaves_no_orphans(root: pathlib.Path) -> None:
    client, children = started_server(root)
    with client:
        os.kill(client.pid, signal.SIGKILL)
        client.proc.wait(EXIT_SECONDS)
    assert no_orphans(children) == []
