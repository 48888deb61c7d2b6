"""Applying findings' preferred fixes to a text: shared by `pallas-ls check --fix` and the
server's `source.fixAll` action. Pure: no LSP imports."""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pallas_ls.core.model import Edit, Finding, Fix, Span
from pallas_ls.core.textedit import apply_edits

_LONE_LF = re.compile(r"(?<!\r)\n")


def _point_key(span: Span) -> tuple[tuple[int, int], tuple[int, int]]:
    return (span.start_line, span.start_col), (span.end_line, span.end_col)


def _conflicts(a: Span, b: Span) -> bool:
    (a0, a1), (b0, b1) = _point_key(a), _point_key(b)
    if a0 == a1 == b0 == b1:
        return True  # two insertions at one point: order would be arbitrary
    return a0 < b1 and b0 < a1


def line_ending_of(text: str) -> str:
    """The file's line ending, judged by its first line break."""
    match = re.search(r"\r\n|\r|\n", text)
    return match.group(0) if match else "\n"


def adapt_edit(edit: Edit, newline: str) -> Edit:
    """Fix texts are written with \\n; a CRLF (or CR) file keeps its own line endings."""
    if newline == "\n" or "\n" not in edit.new_text:
        return edit
    return Edit(edit.span, _LONE_LF.sub(newline, edit.new_text))


def compatible_fixes(findings: Iterable[Finding]) -> list[Fix]:
    """Each finding's preferred fix, skipping any that would overlap one already taken."""
    taken: list[Span] = []
    chosen: list[Fix] = []
    for finding in sorted(findings, key=lambda f: (f.span, f.code)):
        fix = finding.preferred_fix
        if fix is None or not fix.edits:
            continue
        spans = [e.span for e in fix.edits]
        if any(_conflicts(s, t) for s in spans for t in taken) or any(
            _conflicts(s, t) for i, s in enumerate(spans) for t in spans[i + 1 :]
        ):
            continue
        taken.extend(spans)
        chosen.append(fix)
    return chosen


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


@dataclass
class FixOutcome:
    text: str
    applied: int  # fixes applied, over all passes
    findings: list[Finding]  # what remains in `text`


def fix_all(
    text: str, analyse_text: Callable[[str], list[Finding]], max_passes: int = 8
) -> FixOutcome:
    """Apply compatible preferred fixes, re-analyse, repeat until nothing is left to fix.

    A pass whose result no longer parses (when the input did) is discarded: a fix must
    never break a file.
    """
    newline = line_ending_of(text)
    findings = analyse_text(text)
    applied = 0
    original_parses: bool | None = None
    for _ in range(max_passes):
        fixes = compatible_fixes(findings)
        if not fixes:
            break
        edits = [adapt_edit(e, newline) for fix in fixes for e in fix.edits]
        try:
            new_text = apply_edits(text, edits)
        except ValueError:
            break
        if new_text == text:
            break
        if original_parses is None:
            original_parses = _parses(text)
        if original_parses and not _parses(new_text):
            break
        text = new_text
        applied += len(fixes)
        findings = analyse_text(text)
    return FixOutcome(text, applied, findings)
