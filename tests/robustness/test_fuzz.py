"""Fuzzing with a fixed time budget: hypothesmith programs and mutated Pallas files through
the engine (in process), the CLI (subprocess) and a live server (stdio).

PALLAS_FUZZ_SECONDS (default 150) is split between the three targets. Inputs are
reproducible from fuzzing.SEED; the number of inputs depends on the machine's speed.
"""

from __future__ import annotations

import ast
import pathlib
import random
import re
import subprocess
import time
import warnings
from typing import Any

import pytest
from fuzzing import (
    ErrorLogCapture,
    FuzzLog,
    MutationSource,
    hypothesmith_pool,
    pallas_variants,
    run_hypothesmith,
    shrink,
)
from robustness_support import (
    CLI_COMMAND,
    PROCESS_TIMEOUT,
    Hang,
    RpcClient,
    clean_env,
    fuzz_budget,
    lsp_lines,
    make_project,
    offset_to_position,
    span_to_range,
    time_limit,
)

from pallas_ls.core.engine import analyse, hover_at
from pallas_ls.core.model import Finding
from pallas_ls.core.textedit import apply_edits

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")

ENGINE_SHARE, CLI_SHARE, SERVER_SHARE = 0.4, 0.25, 0.35
HANG_SECONDS = 20.0  # per input: only a hang reaches it
# A finding's span holds one of these: the argument it is about, or (PAL003 for a conv
# given no precision, or a positional None, under `jax.default_matmul_precision`) the conv.
SPAN_WORDS = {
    "PAL001": ("opt_level", "params"),
    "PAL004": ("opt_level", "params"),
    "PAL002": ("precision", "params"),
    "PAL003": ("precision", "params", "conv", "None"),
}


class EngineError(Exception):
    pass


def span_text(text: str, finding: Finding) -> str:
    lines = lsp_lines(text)
    span = finding.span
    if span.end_line >= len(lines):
        raise EngineError(f"{finding.code} span {span} ends past the last line ({len(lines)})")
    if (span.start_line, span.start_col) > (span.end_line, span.end_col):
        raise EngineError(f"{finding.code} span {span} ends before it starts")
    first, last = lines[span.start_line], lines[span.end_line]
    if span.start_col > len(first.rstrip("\r\n")) or span.end_col > len(last.rstrip("\r\n")):
        raise EngineError(f"{finding.code} span {span} is past the end of its line")
    if span.start_line == span.end_line:
        return first[span.start_col : span.end_col]
    middle = "".join(lines[span.start_line + 1 : span.end_line])
    return first[span.start_col :] + middle + last[: span.end_col]


def check_findings(text: str, findings: list[Finding]) -> None:
    """Spans lie inside the text on the right words; every fix applies and parses."""
    parses = parses_ok(text)
    for finding in findings:
        covered = span_text(text, finding)
        words = SPAN_WORDS.get(finding.code)
        if words and not any(word in covered for word in words):
            raise EngineError(f"{finding.code} span {finding.span} covers {covered!r}")
        for fix in finding.fixes:
            for edit in fix.edits:
                span_text(text, Finding(finding.code, "", edit.span))
            fixed = apply_edits(text, fix.edits)
            if parses and not parses_ok(fixed):
                raise EngineError(f"fix {fix.title!r} for {finding.code} breaks the file")


def parses_ok(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def engine_run(text: str, rng: random.Random, path: str | None, full_hover: bool) -> None:
    """Analyse, check the findings, hover at two random positions; raise on any problem."""
    with ErrorLogCapture() as errors, time_limit(HANG_SECONDS):
        findings = analyse(text, path)
        check_findings(text, findings)
        lines = lsp_lines(text)
        for i in range(2):
            line = rng.randrange(len(lines) + 1)
            col = rng.randrange(len(lines[min(line, len(lines) - 1)]) + 2)
            if i == 0 and findings and rng.random() < 0.5:
                f = rng.choice(findings)
                line, col = f.span.start_line, f.span.start_col
            hover = hover_at(text, line, col, path, findings=None if full_hover else findings)
            if hover is not None and not hover.markdown:
                raise EngineError("empty hover")
    if errors.records:
        record = errors.records[0]
        raise EngineError(f"engine logged an error: {record.getMessage()}\n{record.exc_text or ''}")


def fuzz_engine_input(log: FuzzLog, text: str, rng: random.Random, path: str | None) -> None:
    log.inputs += 1
    full_hover = log.inputs % 4 == 0
    try:
        engine_run(text, rng, path, full_hover)
    except Exception as exc:
        kind = "hang" if isinstance(exc, Hang) else "exception"
        state = rng.getstate()
        failing_type = type(exc)

        def still_fails(candidate: str) -> bool:
            try:
                engine_run(candidate, random.Random(0), path, True)
            except failing_type:
                return True
            except Exception:
                return False
            return False

        small = text if kind == "hang" else shrink(text, still_fails, 5.0)
        rng.setstate(state)
        log.add_exception(kind, exc, small)


def test_fuzz_engine(tmp_path: pathlib.Path, record_property: Any) -> None:
    budget = fuzz_budget() * ENGINE_SHARE
    start = time.monotonic()
    path = str(tmp_path / "fuzzed.py")
    rng = random.Random(1)
    log = FuzzLog("engine")
    source = MutationSource(salt=1)
    mutation_end = start + budget * 0.5
    while time.monotonic() < mutation_end:
        fuzz_engine_input(log, source.next(), rng, path if rng.random() < 0.8 else None)
    mutated = log.inputs

    def on_program(program: str) -> None:
        for variant in pallas_variants(program):
            fuzz_engine_input(log, variant, rng, path)

    grammar_end = start + budget * 0.85
    run_hypothesmith("grammar", grammar_end, on_program)
    from_grammar = log.inputs - mutated
    run_hypothesmith("node", start + budget, on_program, batch=3)
    from_node = log.inputs - mutated - from_grammar
    summary = (
        f"engine fuzz: {log.inputs} inputs ({mutated} mutated seeds, {from_grammar} from_grammar, "
        f"{from_node} from_node) in {time.monotonic() - start:.0f} s"
    )
    print(summary)
    record_property("fuzz_engine_inputs", log.inputs)
    if log.failures:
        pytest.fail(summary + "\n" + log.report(tmp_path), pytrace=False)


# --- CLI -----------------------------------------------------------------------------

SUMMARY = re.compile(r"in (\d+) checked files?|(\d+) files? checked")


def encode_variant(text: str, rng: random.Random) -> bytes:
    choice = rng.randrange(6)
    if choice == 1:
        return b"\xef\xbb\xbf" + text.encode("utf-8", "surrogatepass")
    if choice == 2:
        return text.replace("\n", "\r\n").encode("utf-8", "surrogatepass")
    if choice == 3:
        try:
            return ("# -*- coding: latin-1 -*-\n" + text).encode("latin-1")
        except UnicodeEncodeError:
            pass
    return text.encode("utf-8", "surrogatepass")


def checked_count(stdout: str) -> int | None:
    match = SUMMARY.search(stdout)
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def run_cli(args: list[str], cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI_COMMAND, *args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        errors="replace",
        timeout=PROCESS_TIMEOUT,
    )


def cli_problems(
    proc: subprocess.CompletedProcess[str], folder: pathlib.Path, files: int
) -> list[str]:
    problems = []
    checked = checked_count(proc.stdout)
    if proc.returncode not in (0, 1) and not (proc.returncode == 2 and checked == 0):
        problems.append(f"exit code {proc.returncode} with {checked} files checked")
    if "Traceback" in proc.stderr or "internal error" in proc.stderr:
        problems.append("traceback or internal error on stderr")
    if checked is None:
        problems.append("no summary line on stdout")
    named = {line.split(":", 1)[0] for line in proc.stderr.splitlines() if line.strip()}
    if any(not name.startswith(str(folder)) for name in named):
        problems.append("a stderr line that names no checked path")
    if checked is not None and checked + len(named) != files:
        problems.append(f"{checked} checked + {len(named)} reported != {files} files")
    return problems


def test_fuzz_cli(tmp_path: pathlib.Path, record_property: Any) -> None:
    budget = fuzz_budget() * CLI_SHARE
    start = time.monotonic()
    rng = random.Random(2)
    source = MutationSource(salt=2)
    pool = hypothesmith_pool()
    inputs = runs = 0
    failures: list[str] = []
    batch = 0
    while time.monotonic() < start + budget and len(failures) < 5:
        batch += 1
        folder = tmp_path / f"batch{batch}"
        folder.mkdir()
        texts = [source.next() for _ in range(10)]
        texts += [rng.choice(pallas_variants(rng.choice(pool))) for _ in range(2)]
        for i, text in enumerate(texts):
            (folder / f"m{i:02}.py").write_bytes(encode_variant(text, rng))
        inputs += len(texts)
        fix = batch % 2 == 0
        before = {p.name: p.read_bytes() for p in folder.iterdir()}
        proc = run_cli([str(folder), *(["--fix"] if fix else [])], tmp_path)
        runs += 1
        problems = cli_problems(proc, folder, len(texts))
        if fix and not problems:
            for p in sorted(folder.iterdir()):
                old, new = before[p.name], p.read_bytes()
                if old != new and parses_ok_bytes(old) and not parses_ok_bytes(new):
                    problems.append(f"--fix broke {p.name}")
            after_first = {p.name: p.read_bytes() for p in folder.iterdir()}
            again = run_cli([str(folder), "--fix"], tmp_path)
            runs += 1
            problems += cli_problems(again, folder, len(texts))
            after_second = {p.name: p.read_bytes() for p in folder.iterdir()}
            if after_second != after_first:
                changed = sorted(k for k in after_first if after_first[k] != after_second.get(k))
                problems.append(f"a second --fix changed {changed}")
        if problems:
            failures.append(
                f"batch {batch} ({folder}, kept): {problems}\nrc={proc.returncode}\n"
                f"stdout tail: {proc.stdout[-600:]}\nstderr: {proc.stderr[-2000:]}"
            )
    summary = (
        f"CLI fuzz: {inputs} files in {batch} batches, {runs} runs "
        f"in {time.monotonic() - start:.0f} s"
    )
    print(summary)
    record_property("fuzz_cli_inputs", inputs)
    if failures:
        pytest.fail(summary + "\n" + "\n\n".join(failures), pytrace=False)


def parses_ok_bytes(data: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


# --- live server ---------------------------------------------------------------------


def diagnostics_key(diagnostics: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted((d["code"], repr(d["range"])) for d in diagnostics)


def expected_key(text: str, path: str, encoding: str) -> list[tuple[str, str]]:
    return sorted(
        (f.code, repr(span_to_range(text, f.span, encoding))) for f in analyse(text, path)
    )


def random_range(text: str, rng: random.Random, encoding: str) -> dict[str, Any]:
    a, b = sorted((rng.randrange(len(text) + 1), rng.randrange(len(text) + 1)))
    if rng.random() < 0.3:
        b = a
    return {
        "start": offset_to_position(text, a, encoding),
        "end": offset_to_position(text, b, encoding),
    }


def minimal_change(old: str, new: str, encoding: str) -> dict[str, Any]:
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    # Never split a \r\n pair.
    while prefix and old[prefix - 1] == "\r":
        prefix -= 1
    while suffix and old[len(old) - suffix] == "\n":
        suffix -= 1
    return {
        "range": {
            "start": offset_to_position(old, prefix, encoding),
            "end": offset_to_position(old, len(old) - suffix, encoding),
        },
        "text": new[prefix : len(new) - suffix],
    }


def test_fuzz_server(tmp_path: pathlib.Path, record_property: Any) -> None:
    budget = fuzz_budget() * SERVER_SHARE
    start = time.monotonic()
    root = make_project(tmp_path / "project")
    path = root / "fuzzed.py"
    uri = path.as_uri()
    rng = random.Random(3)
    source = MutationSource(salt=3)
    pool = hypothesmith_pool()
    failures: list[str] = []
    inputs = requests = 0
    with RpcClient(cwd=root) as client:
        client.initialize(root)
        encoding = client.encoding
        text = source.next()
        client.open(uri, text)
        version = 1
        while time.monotonic() < start + budget and len(failures) < 5:
            new = (
                source.next()
                if rng.random() < 0.85
                else rng.choice(pallas_variants(pool[inputs % len(pool)]))
            )
            version += 1
            if rng.random() < 0.5:
                change = minimal_change(text, new, encoding)
                client.notify(
                    "textDocument/didChange",
                    {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
                )
            else:
                client.replace_all(uri, new, version)
            text = new
            inputs += 1
            doc = {"uri": uri}
            hover = client.send_request(
                "textDocument/hover",
                {"textDocument": doc, "position": random_range(text, rng, encoding)["start"]},
            )
            action = client.send_request(
                "textDocument/codeAction",
                {
                    "textDocument": doc,
                    "range": random_range(text, rng, encoding),
                    "context": {"diagnostics": []},
                },
            )
            requests += 2
            for ident in (hover, action):
                reply = client.response(ident)
                if "error" in reply:
                    failures.append(f"v{version}: error response {reply['error']}\ninput: {text!r}")
            published = client.wait_published(uri, version)
            want = expected_key(text, str(path), encoding)
            if diagnostics_key(published) != want:
                failures.append(
                    f"v{version}: published {diagnostics_key(published)} != analyse {want}\n"
                    f"input: {text!r}"
                )
            errors = [m for m in client.messages("window/logMessage") if m["type"] == 1]
            if errors:
                failures.append(
                    f"v{version}: server logged {errors[0]['message']}\ninput: {text!r}"
                )
                client.notifications.clear()
        if "Traceback" in client.stderr.decode("utf-8", "replace"):
            failures.append("traceback on the server's stderr:\n" + client.describe())
        alive = client.proc.poll() is None
        code = client.shutdown() if alive else client.proc.returncode
    summary = (
        f"server fuzz: {inputs} inputs, {requests} requests (+{inputs} diagnostics compared) "
        f"in {time.monotonic() - start:.0f} s; alive={alive}, exit code {code}"
    )
    print(summary)
    record_property("fuzz_server_inputs", inputs)
    assert alive and code == 0, summary
    if failures:
        pytest.fail(summary + "\n" + "\n\n".join(f[:4000] for f in failures), pytrace=False)
