"""Fix safety: on every seed file and on generated variants of each finding's line, every
offered fix parses, clears its finding, adds none and leaves the text outside its edits
alone; fixAll (server) and --fix (CLI) are idempotent."""

from __future__ import annotations

import ast
import functools
import io
import pathlib
import re
import subprocess
import tokenize
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from robustness_support import (
    CLI_COMMAND,
    PROCESS_TIMEOUT,
    REPO,
    RpcClient,
    apply_lsp_edits,
    clean_env,
    lsp_lines,
    make_project,
    seed_files,
    workspace_edits,
)

from pallas_ls.core.engine import analyse
from pallas_ls.core.model import Finding, Fix, Span
from pallas_ls.server.fixall import fix_all

FIX_ALL = "source.fixAll.pallas-ls"
NOTE = "  # keep this note é🙂"


def parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def offset(text: str, line: int, col: int) -> int:
    """(line, code point) -> offset, with the LSP's line breaks (the test's own oracle)."""
    lines = lsp_lines(text)
    if line >= len(lines):
        return len(text)
    return sum(len(x) for x in lines[:line]) + min(col, len(lines[line].rstrip("\r\n")))


def position(text: str, at: int) -> tuple[int, int]:
    line = start = 0
    for piece in lsp_lines(text):
        if start + len(piece) > at or not piece:
            break
        start += len(piece)
        line += 1
    return line, at - start


def apply_fix(text: str, fix: Fix) -> tuple[str, list[tuple[int, int, int]]]:
    """The fixed text, and per edit (old start, old end, new length), by the test's oracle."""
    edits = sorted(
        (offset(text, *_start(e.span)), offset(text, *_end(e.span)), e.new_text) for e in fix.edits
    )
    out, pos, regions = [], 0, []
    for start, end, new in edits:
        assert start >= pos, f"overlapping edits in {fix.title!r}"
        out += [text[pos:start], new]
        regions.append((start, end, len(new)))
        pos = end
    out.append(text[pos:])
    return "".join(out), regions


def _start(span: Span) -> tuple[int, int]:
    return span.start_line, span.start_col


def _end(span: Span) -> tuple[int, int]:
    return span.end_line, span.end_col


def map_offset(at: int, regions: list[tuple[int, int, int]]) -> int | None:
    """An old offset -> its new offset; None inside a replaced region."""
    shift = 0
    for start, end, length in regions:
        if at >= end:
            shift += length - (end - start)
        elif at > start:
            return None
    return at + shift


def tokens(text: str) -> list[tuple[str, int, int]]:
    """(token text, start offset, end offset) of every significant token, comments included."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in skip:
            continue
        out.append(
            (
                tok.string,
                starts[tok.start[0] - 1] + tok.start[1],
                starts[tok.end[0] - 1] + tok.end[1],
            )
        )
    return out


def check_fix(path: str, text: str, finding: Finding, fix: Fix, before: list[Finding]) -> None:
    fixed, regions = apply_fix(text, fix)
    assert fixed != text, f"{fix.title!r} changes nothing"
    if parses(text):
        assert parses(fixed), f"{fix.title!r} breaks the file:\n{fixed}"
    # Every character outside the edits is unchanged (checked piecewise against the original).
    for i, (start, _stop, _) in enumerate(regions):
        new_start = map_offset(start, regions[:i])
        assert new_start is not None
        assert fixed[:new_start].endswith(text[max(0, start - 200) : start])
    # What an edit removes beyond its finding is whitespace, one separating comma, and
    # comments that the edit writes back: no code or comment of the user's is lost.
    lo = offset(text, *_start(finding.span))
    hi = offset(text, *_end(finding.span))
    edits = sorted((offset(text, *_start(e.span)), e.new_text) for e in fix.edits)
    commas = 0
    for (start, end, _), (_, new_text) in zip(regions, edits, strict=True):
        outside = text[start : max(start, min(end, lo))] + " " + text[max(start, hi) : end]
        for comment in re.findall(r"#[^\r\n]*", outside):
            assert comment in new_text, f"{fix.title!r} drops the comment {comment!r}"
            outside = outside.replace(comment, " ")
        leftover = outside.split()
        commas += leftover.count(",")
        assert set(leftover) <= {","} and commas <= 1, (
            f"{fix.title!r} removes {leftover!r} outside its finding {finding.span}"
        )
    # Its finding is gone and no new finding appears (others may move, or go with it).
    after = Counter((f.code, f.span) for f in analyse(fixed, path))
    expected: Counter[tuple[str, Span]] = Counter()
    for other in before:
        if other is finding:
            continue
        s = map_offset(offset(text, *_start(other.span)), regions)
        e = map_offset(offset(text, *_end(other.span)), regions)
        if s is not None and e is not None:
            expected[(other.code, Span(*position(fixed, s), *position(fixed, e)))] += 1
    new = after - expected
    assert not new, f"{fix.title!r} for {finding.code} leaves or adds {list(new)}:\n{fixed}"


# --- variants ------------------------------------------------------------------------


def _indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    return line[: len(line) - len(line.lstrip())]


def variants(text: str, finding: Finding) -> Iterator[tuple[str, str]]:
    """The finding's line reformatted in ways users write it."""
    lo = offset(text, *_start(finding.span))
    hi = offset(text, *_end(finding.span))
    indent = _indent(text, lo) + "        "
    rest = text[hi:]
    after = hi + len(rest) - len(rest.lstrip(" "))
    follower = text[after : after + 1]
    yield "own-line", text[:lo] + "\n" + indent + text[lo:]
    if follower == ")":
        yield "trailing-comma", text[:hi] + "," + text[hi:]
        yield (
            "own-line-comma-comment",
            text[:lo] + "\n" + indent + text[lo:hi] + "," + NOTE + "\n" + indent + text[hi:],
        )
    elif follower == ",":
        yield (
            "own-line-comment",
            text[:lo]
            + "\n"
            + indent
            + text[lo : after + 1]
            + NOTE
            + "\n"
            + indent
            + text[after + 1 :],
        )
    yield "non-ascii-before", text[:lo] + '_π="✓🙂", ' + text[lo:]
    # Columns shift, nothing else changes (the keyword above is a TypeError in a partial).
    yield "spaces-before", text[:lo] + "   " + text[lo:]
    # A line above (lines shift), and a statement before it on its line (non-ASCII columns
    # shift): also for a finding on a call, where the variants above break the syntax.
    line_start = text.rfind("\n", 0, lo) + 1
    yield "comment-above", text[:line_start] + "# ✓ a note 🙂\n" + text[line_start:]
    first = line_start + len(text[line_start:lo]) - len(text[line_start:lo].lstrip())
    yield "statement-before", text[:first] + '_π = "✓🙂"; ' + text[first:]
    yield "crlf", text.replace("\n", "\r\n")
    yield "crlf-own-line", (text[:lo] + "\n" + indent + text[lo:]).replace("\n", "\r\n")


def same_finding(a: Finding, code: str, text: str, needle: str) -> bool:
    lo, hi = offset(text, *_start(a.span)), offset(text, *_end(a.span))
    return a.code == code and text[lo:hi].replace("\r\n", "\n").strip() == needle


def fix_cases() -> Iterator[tuple[str, str, int]]:
    for path in seed_files():
        text = path.read_text(encoding="utf-8")
        for i, finding in enumerate(analyse(text, str(path))):
            if finding.fixes:
                yield str(path), path.name, i


CASES = list(fix_cases())


@pytest.mark.parametrize(
    ("path", "index"), [(p, i) for p, _, i in CASES], ids=[f"{n}-{i}" for _, n, i in CASES]
)
def test_every_fix_is_safe_on_the_file_and_its_variants(path: str, index: int) -> None:
    text = pathlib.Path(path).read_text(encoding="utf-8")
    before = analyse(text, path)
    finding = before[index]
    lo, hi = offset(text, *_start(finding.span)), offset(text, *_end(finding.span))
    needle = text[lo:hi].strip()
    checked = []
    for fix in finding.fixes:
        check_fix(path, text, finding, fix, before)
    checked.append("original")
    for name, variant in variants(text, finding):
        found = analyse(variant, path)
        # The variant's copy of the finding: same code and text, nearest the old place
        # (a variant inserts at most a few characters before it).
        target = sorted(
            (f for f in found if same_finding(f, finding.code, variant, needle)),
            key=lambda f: abs(offset(variant, *_start(f.span)) - lo),
        )[:1]
        if not target or abs(offset(variant, *_start(target[0].span)) - lo) > 40:
            continue  # the variant changed what the analysis sees: not this test's subject
        assert len(target[0].fixes) == len(finding.fixes), name
        for fix in target[0].fixes:
            try:
                check_fix(path, variant, target[0], fix, found)
            except AssertionError as exc:
                raise AssertionError(f"variant {name}: {exc}") from None
        checked.append(name)
    assert len(checked) >= 4, checked  # the variants are not vacuous


def test_fix_cases_exist() -> None:
    assert len(CASES) >= 20


# --- server: fixAll twice ------------------------------------------------------------


def fix_all_action(client: RpcClient, uri: str, text: str) -> dict[str, Any] | None:
    lines = lsp_lines(text)
    end = {"line": len(lines) - 1, "character": len(lines[-1])}
    actions = client.result(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": end},
            "context": {"diagnostics": [], "only": [FIX_ALL]},
        },
    )
    kinds = {a.get("kind") for a in actions or []}
    assert kinds <= {FIX_ALL}, kinds
    return actions[0] if actions else None


def seed_relative(path: pathlib.Path) -> pathlib.Path:
    for base in (REPO / "tests" / "core" / "fixtures", REPO / "examples"):
        if path.is_relative_to(base):
            return path.relative_to(base)
    return pathlib.Path(path.name)


def server_texts(root: pathlib.Path) -> list[tuple[pathlib.Path, str]]:
    """Every seed file with fixable findings (its siblings copied too, for cross-module
    values), plus a CRLF copy and a copy with non-ASCII text around the findings."""
    for path in seed_files():
        target = root / seed_relative(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    out = []
    for path in seed_files():
        text = path.read_text(encoding="utf-8")
        target = root / seed_relative(path)
        if any(f.preferred_fix for f in analyse(text, str(target))):
            out.append((target, text))
            out.append((target.with_name(target.stem + "_crlf.py"), text.replace("\n", "\r\n")))
            marked = re.sub(r"\(x\)\n", "(x)  # é🙂\n", text)
            out.append((target.with_name(target.stem + "_utf.py"), "# ünïcødé 🙂 π→✓\n" + marked))
    return out


@pytest.mark.parametrize("capabilities", ["utf-16-push", "utf-8-pull"])
def test_server_fix_all_twice_changes_nothing_the_second_time(
    tmp_path: pathlib.Path, capabilities: str
) -> None:
    from robustness_support import PUSH_CAPABILITIES, pull_capabilities

    root = make_project(tmp_path / "project")
    caps = PUSH_CAPABILITIES if capabilities == "utf-16-push" else pull_capabilities("utf-8")
    texts = server_texts(root)
    assert len(texts) >= 9
    with RpcClient(cwd=root) as client:
        client.initialize(root, caps)
        for path, text in texts:
            name = str(path.relative_to(root))
            uri = path.as_uri()
            client.open(uri, text)
            action = fix_all_action(client, uri, text)
            assert action is not None, name
            fixed = apply_lsp_edits(text, workspace_edits(action["edit"], uri), client.encoding)
            # The same result as the engine's fix_all, keeping line endings.
            local = fix_all(text, functools.partial(analyse, path=str(path))).text
            assert fixed == local, name
            assert parses(fixed), name
            if "\r\n" in text:
                assert "\n" not in fixed.replace("\r\n", ""), f"{name}: mixed line endings"
            client.replace_all(uri, fixed, 2)
            again = fix_all_action(client, uri, fixed)
            if again is not None:
                twice = apply_lsp_edits(fixed, workspace_edits(again["edit"], uri), client.encoding)
                assert twice == fixed, f"{name}: a second fixAll changes the text"
        assert client.shutdown() == 0


# --- CLI: --fix twice ----------------------------------------------------------------


def encodings_of(text: str) -> Iterator[tuple[str, bytes]]:
    yield "utf8", text.encode("utf-8")
    yield "bom_crlf", b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8")
    try:
        newline = "\r\n" if "\r\n" in text else "\n"
        latin = f"# -*- coding: latin-1 -*-{newline}{text}# café{newline}"
        yield "latin1", latin.encode("latin-1")
    except UnicodeEncodeError:
        pass


def run_fix(folder: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI_COMMAND, "--fix", str(folder)],
        cwd=folder,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
    )


def test_cli_fix_twice_changes_nothing_the_second_time(tmp_path: pathlib.Path) -> None:
    folder = make_project(tmp_path / "project") / "src"
    folder.mkdir()
    originals: dict[str, bytes] = {}
    for path in seed_files():
        text = path.read_text(encoding="utf-8")
        finding = next((f for f in analyse(text, str(path)) if f.fixes), None)
        versions = [("plain", text)]
        if finding is not None:
            versions += list(variants(text, finding))
        for variant_name, variant in versions:
            for encoding, data in encodings_of(variant):
                name = f"{path.stem}_{variant_name}_{encoding}.py".replace("-", "_")
                (folder / name).write_bytes(data)
                originals[name] = data
    first = run_fix(folder)
    assert first.returncode in (0, 1), first.stderr
    assert "Traceback" not in first.stderr and "internal error" not in first.stderr, first.stderr
    assert "Fixed " in first.stdout, first.stdout[-2000:]
    fixed = {p.name: p.read_bytes() for p in folder.iterdir()}
    changed = [name for name in originals if fixed[name] != originals[name]]
    assert changed
    for name in changed:
        old, new = originals[name], fixed[name]
        assert new.startswith(b"\xef\xbb\xbf") == old.startswith(b"\xef\xbb\xbf"), name
        assert (b"\r\n" in new) == (b"\r\n" in old), name
        if b"\r\n" in old:
            assert b"\n" not in new.replace(b"\r\n", b""), f"{name}: mixed line endings"
        if b"latin-1" in old:
            assert b"caf\xe9" in new, name  # still latin-1
        if parses(old.decode("latin-1") if b"latin-1" in old else old.decode("utf-8-sig")):
            ast.parse(new)
    second = run_fix(folder)
    assert second.returncode in (0, 1), second.stderr
    assert "Fixed " not in second.stdout, second.stdout[-2000:]
    again = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert again == fixed, [n for n in fixed if again.get(n) != fixed[n]]
