"""`pallas-ls check|explain|serve`: the same engine as the language server."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import stat
import sys
import textwrap
import tokenize
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pallas_ls import __version__, compiled
from pallas_ls.core.model import Config, Finding
from pallas_ls.core.sourcefile import decode_source
from pallas_ls.core.workspace import Workspace

MAX_FILE_BYTES = 2 * 1024 * 1024
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox"}
    | {".mypy_cache", ".ruff_cache", ".pytest_cache"}
)
# Below this many files, starting worker processes costs more than it saves.
PARALLEL_MIN_FILES = 8


@dataclass
class FileResult:
    """What checking one file gave: findings, problems to print, fixes applied."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one stderr line each
    checked: bool = False
    fixed: int = 0
    internal_error: bool = False
    size: int = 0  # bytes read


def analyse(
    source: str, path: str | None = None, config: Config | None = None, workspace: Any = None
) -> list[Finding]:
    """The engine, imported on first use so that `pallas-ls serve` starts fast."""
    from pallas_ls.core.engine import analyse as run

    return run(source, path, config, workspace)


# --- finding files -------------------------------------------------------------------


def _is_virtualenv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def _walk(root: str, problems: list[str]) -> Iterator[str]:
    """`.py` files under root in a stable order, skipping tooling dirs and symlink loops."""
    seen: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            info = os.stat(directory)
        except OSError as exc:
            problems.append(f"{directory}: cannot read directory: {exc.strerror or exc}")
            continue
        key = (info.st_dev, info.st_ino)
        if key in seen:
            problems.append(f"{directory}: symbolic link loop, skipped")
            continue
        seen.add(key)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            problems.append(f"{directory}: cannot read directory: {exc.strerror or exc}")
            continue
        subdirs: list[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
                is_file = not is_dir and entry.is_file()
            except OSError:
                is_dir = is_file = False
            if is_dir:
                if entry.name not in SKIP_DIRS and not _is_virtualenv(entry.path):
                    subdirs.append(entry.path)
            elif is_file:
                if entry.name.endswith(".py"):
                    yield entry.path
            elif entry.is_symlink() and entry.name.endswith(".py"):
                problems.append(f"{entry.path}: broken or looping symbolic link, skipped")
        stack.extend(reversed(subdirs))


def collect_files(paths: Sequence[str], problems: list[str]) -> list[str]:
    files: list[str] = []
    seen: set[str] = set()
    for path in paths:
        if os.path.isdir(path):
            found: Iterator[str] = _walk(path, problems)
        elif os.path.exists(path):
            found = iter([path])
        else:
            problems.append(f"{path}: no such file or directory")
            continue
        for name in found:
            if name not in seen:
                seen.add(name)
                files.append(name)
    return files


# --- checking one file ---------------------------------------------------------------

_workspaces: dict[str, Workspace] = {}
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def _project_root(path: str) -> str:
    """Where a file's absolute imports of its own packages start: the working directory for
    a file inside it (as the folder an editor opened is for the server), otherwise the
    nearest folder above the file that marks a project, otherwise the file's folder."""
    cwd = os.getcwd()
    folder = os.path.dirname(path)
    with contextlib.suppress(ValueError):  # ValueError: another drive (Windows)
        if os.path.commonpath([cwd, folder]) == cwd:
            return cwd
    current = folder
    while True:
        if any(os.path.exists(os.path.join(current, m)) for m in PROJECT_MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return folder
        current = parent


def _workspace_for(path: str) -> Workspace:
    """One workspace (with its import resolver and caches) per project root."""
    root = _project_root(path)
    workspace = _workspaces.get(root)
    if workspace is None:
        workspace = _workspaces[root] = Workspace(root=root)
    return workspace


def _read(path: str, result: FileResult) -> bytes | None:
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            result.problems.append(f"{path}: not a regular file, skipped")
            return None
        size = info.st_size
        if size > MAX_FILE_BYTES:
            result.problems.append(
                f"{path}: file too large ({size:,} bytes; the limit is {MAX_FILE_BYTES:,} bytes), skipped"
            )
            return None
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        result.problems.append(f"{path}: cannot read: {exc.strerror or exc}")
        return None
    if len(data) > MAX_FILE_BYTES:
        result.problems.append(f"{path}: file too large (over {MAX_FILE_BYTES:,} bytes), skipped")
        return None
    if b"\0" in data:
        result.problems.append(f"{path}: binary file (contains NUL bytes), skipped")
        return None
    return data


def _write_atomically(path: str, data: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    mode = stat.S_IMODE(os.stat(path).st_mode)
    import tempfile  # only --fix writes: not imported by `serve`

    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".pallas-ls-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _fix_file(path: str, data: bytes, text: str, config: Config, result: FileResult) -> None:
    from pallas_ls.server.fixall import fix_all

    where = os.path.abspath(path)
    workspace = _workspace_for(where)
    outcome = fix_all(text, lambda t: analyse(t, where, config, workspace))
    result.findings = outcome.findings
    if not outcome.applied or outcome.text == text:
        return
    import io

    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    try:
        new_data = outcome.text.encode(encoding)
    except (UnicodeEncodeError, LookupError) as exc:
        result.problems.append(
            f"{path}: fixed text cannot be encoded as {encoding} ({exc}); not fixed"
        )
        result.findings = analyse(text, where, config, workspace)
        return
    try:
        with open(path, "rb") as handle:
            current = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        current = None
        reason = f"cannot re-read: {exc.strerror or exc}"
    else:
        reason = "changed on disk while being analysed"
    if current != data:
        result.problems.append(f"{path}: {reason}; left alone, not fixed")
        result.findings = analyse(text, where, config, workspace)
        return
    try:
        _write_atomically(path, new_data)
    except OSError as exc:
        result.problems.append(f"{path}: cannot write the fixed file: {exc.strerror or exc}")
        result.findings = analyse(text, where, config, workspace)
        return
    result.fixed = outcome.applied


def check_file(path: str, config: Config, fix: bool = False) -> FileResult:
    result = FileResult(path)
    data = _read(path, result)
    if data is None:
        return result
    result.size = len(data)
    try:
        text = decode_source(data)
    except ValueError as exc:
        result.problems.append(f"{path}: cannot decode: {exc}")
        return result
    try:
        if fix:
            _fix_file(path, data, text, config, result)
        else:
            # The engine resolves imports from other modules of the tree only for a file it
            # can place: it gets the absolute path, the output keeps the one given.
            where = os.path.abspath(path)
            result.findings = analyse(text, where, config, _workspace_for(where))
    except Exception as exc:
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        result.problems.append(f"{path}: internal error while analysing: {detail}")
        result.internal_error = True
        return result
    result.checked = True
    return result


# A checked file's parse is garbage as soon as its findings are out, and a cyclic one (its
# nodes link to their parents): the collector would pass over each tree two or three times
# (~25 ms per 5,000 lines, a third of the analysis). A check keeps the collector off and
# runs one full pass each time this many bytes of source were analysed since the last one
# (at most ~170 MB of dead trees; as mypy does, a batch run trades memory for passes).
GC_BUDGET_BYTES = 2_000_000
_since_collect = 0


def _check_job(job: tuple[str, Config, bool]) -> FileResult:
    global _since_collect
    result = check_file(*job)
    _since_collect += result.size
    if _since_collect >= GC_BUDGET_BYTES:
        _since_collect = 0
        gc.collect()
    return result


def _worker_start() -> None:
    gc.disable()


def _check_batch(jobs: list[tuple[str, Config, bool]]) -> list[FileResult]:
    return [_check_job(job) for job in jobs]


def _batches(
    jobs: list[tuple[str, Config, bool]], workers: int
) -> list[list[tuple[str, Config, bool]]]:
    """The jobs in batches for the workers: neighbouring files together (they import each
    other and share a worker's caches), about 16 batches per worker (the workers finish
    together), the largest batch first (what is left at the end is small: a large file
    last would keep one worker busy while the other waits)."""
    size = max(1, len(jobs) // (workers * 16))
    batches = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    return sorted(batches, key=lambda batch: -sum(_size(path) for path, _, _ in batch))


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def check_files(files: Sequence[str], config: Config, fix: bool) -> list[FileResult]:
    jobs = [(path, config, fix) for path in files]
    workers = min(os.cpu_count() or 1, len(jobs))
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if len(jobs) <= PARALLEL_MIN_FILES or workers <= 1:
            results = [_check_job(job) for job in jobs]
        else:
            from concurrent.futures import ProcessPoolExecutor  # not needed by `serve`

            with ProcessPoolExecutor(max_workers=workers, initializer=_worker_start) as pool:
                batches = pool.map(_check_batch, _batches(jobs, workers), chunksize=1)
                results = [result for batch in batches for result in batch]
    finally:
        if was_enabled:
            gc.enable()
    return sorted(results, key=lambda r: r.path)


# --- output --------------------------------------------------------------------------


def _finding_json(path: str, finding: Finding) -> dict[str, Any]:
    span = finding.span
    return {
        "path": path,
        "line": span.start_line + 1,
        "column": span.start_col + 1,
        "end_line": span.end_line + 1,
        "end_column": span.end_col + 1,
        "code": finding.code,
        "severity": finding.severity,
        "message": finding.message,
        "fixes": [
            {
                "title": fix.title,
                "edits": [
                    {
                        "line": edit.span.start_line + 1,
                        "column": edit.span.start_col + 1,
                        "end_line": edit.span.end_line + 1,
                        "end_column": edit.span.end_col + 1,
                        "new_text": edit.new_text,
                    }
                    for edit in fix.edits
                ],
            }
            for fix in finding.fixes
        ],
    }


def _sorted_findings(result: FileResult) -> list[Finding]:
    return sorted(result.findings, key=lambda f: (f.span, f.code, f.message))


def _print_text(results: list[FileResult], fix: bool) -> None:
    total = fixable = 0
    for result in results:
        for finding in _sorted_findings(result):
            total += 1
            fixable += finding.preferred_fix is not None
            span = finding.span
            message = finding.message.replace("\n", "\n    ")
            print(
                f"{result.path}:{span.start_line + 1}:{span.start_col + 1}: {finding.code} {message}"
            )
    fixed = sum(r.fixed for r in results)
    checked = sum(r.checked for r in results)
    files = "file" if checked == 1 else "files"
    if fix and fixed:
        print(f"Fixed {fixed} error{'s' if fixed != 1 else ''}.")
    if total:
        hint = f" ({fixable} fixable with `--fix`)" if fixable and not fix else ""
        print(f"Found {total} error{'s' if total != 1 else ''}{hint}; {checked} {files} checked.")
    else:
        print(f"All checks passed! ({checked} {files} checked)")


# --- commands ------------------------------------------------------------------------


def _split_codes(values: list[str] | None) -> list[str]:
    return [c.strip() for v in values or [] for c in v.split(",") if c.strip()]


def _config_from_args(args: argparse.Namespace) -> Config:
    from pallas_ls.core.rules import expand_codes
    from pallas_ls.server.jaxversion import detect_jax_version, parse_jax_version

    codes: dict[str, frozenset[str]] = {}
    for option in ("select", "ignore"):
        known, unknown = expand_codes(_split_codes(getattr(args, option)))
        for code in unknown:
            print(f"warning: --{option}: unknown rule code {code!r}, ignored", file=sys.stderr)
        codes[option] = frozenset(known)
    if args.jax_version is not None:
        jax_version = parse_jax_version(args.jax_version)
        if jax_version is None:
            raise _UsageError(f"--jax-version: not a version: {args.jax_version!r}")
    else:
        jax_version = detect_jax_version(os.getcwd())
    return Config(select=codes["select"], ignore=codes["ignore"], jax_version=jax_version)


class _UsageError(Exception):
    pass


def cmd_check(args: argparse.Namespace) -> int:
    config = _config_from_args(args)
    problems: list[str] = []
    files = collect_files(args.paths or ["."], problems)
    results = check_files(files, config, args.fix)
    for line in problems:
        print(line, file=sys.stderr)
    for result in results:
        for line in result.problems:
            print(line, file=sys.stderr)
    if args.format == "json":
        payload = [_finding_json(r.path, f) for r in results for f in _sorted_findings(r)]
        json.dump(payload, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        _print_text(results, args.fix)
    if any(r.internal_error for r in results):
        return 2
    if not any(r.checked for r in results):
        if problems or any(r.problems for r in results):
            return 2
        print("warning: no Python files found", file=sys.stderr)
        return 0
    return 1 if any(r.findings for r in results) else 0


def cmd_explain(args: argparse.Namespace) -> int:
    from pallas_ls.core.rules import RULES

    rule = RULES.get(args.code.strip().upper())
    if rule is None:
        print(
            f"pallas-ls explain: unknown rule {args.code!r} (known: {', '.join(sorted(RULES))})",
            file=sys.stderr,
        )
        return 2
    record = rule.record

    def section(title: str, body: str) -> None:
        if body.strip():
            print(f"\n## {title}\n\n{body.strip()}")

    def bullets(items: Sequence[str]) -> str:
        return "\n".join(
            textwrap.indent(item.strip(), "  ").replace("  ", "- ", 1) for item in items
        )

    print(f"# {rule.code} ({rule.name})\n")
    print(rule.summary)
    print(f"\nJAX versions: {rule.jax_versions}")
    # The sections below are the record's. A rule bound to a record it shares reports
    # another message of the same JAX check (its summary above says which), so the
    # record's own error is labelled as the record's, not as what this rule reports.
    sharing = sorted(r.code for r in RULES.values() if r.record is record and r is not rule)
    also = f" (also behind {', '.join(sharing)})" if sharing else ""
    print(f"\n## Error record: {record.slug}{also}\n\n{record.error_text}")
    section("Documentation", record.documentation)
    section("Trigger scenarios", record.trigger_scenarios)
    section("Common situations", record.common_situations)
    section("Solutions", bullets(record.solutions))
    section("Prevention tips", bullets(record.prevention_tips))
    section("Link", record.github_url)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from pallas_ls.server.server import serve

    return serve()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pallas-ls", description="Find JAX Pallas TPU lowering errors before JAX does."
    )
    build = "yes" if compiled() else "no"
    parser.add_argument(
        "--version", action="version", version=f"pallas-ls {__version__} (compiled: {build})"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    check = commands.add_parser("check", help="check files and folders")
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("--fix", action="store_true", help="apply preferred fixes in place")
    check.add_argument("--select", action="append", metavar="CODES", help="e.g. PAL001,PAL002")
    check.add_argument("--ignore", action="append", metavar="CODES")
    check.add_argument(
        "--jax-version", metavar="X.Y.Z", help="target JAX (default: the installed one)"
    )
    check.set_defaults(run=cmd_check)

    explain = commands.add_parser("explain", help="explain a rule, e.g. PAL001")
    explain.add_argument("code")
    explain.set_defaults(run=cmd_explain)

    serve = commands.add_parser("serve", help="run the language server on stdio")
    serve.add_argument("--stdio", action="store_true", help="accepted and ignored")
    serve.set_defaults(run=cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except _UsageError as exc:
        print(f"pallas-ls: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
