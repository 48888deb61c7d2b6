"""Re-parse only the top-level statements an edit touches.

A document's parse is kept as a list of top-level statements with the lines each one spans
(decorators, trailing comments and blank lines included). On a new text, the lines both
versions share at the start and at the end are found; statements entirely inside them are
reused (those after the edit are moved by the change in line count), and only the lines in
between are parsed again. When that region does not parse on its own, the whole text is
parsed from scratch (with syntax-error recovery), so the result always equals a
from-scratch parse of the new text.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from pallas_ls.core.resolve import ModuleInfo, Scope, shift_lines
from pallas_ls.core.textedit import Lines, common_prefix, common_suffix, split_lines_after


@dataclass
class _Chunk:
    """Top-level statements that one parse of their lines gave."""

    start: int  # first line (0-based) of the statement, its decorators included
    end: int  # one past its last line, trailing blank and comment lines included
    stmts: list[ast.stmt]


def first_line(stmt: ast.stmt) -> int:
    """The 0-based line a top-level statement starts on, its decorators included."""
    line = stmt.lineno
    decorators = getattr(stmt, "decorator_list", None)
    if decorators:
        line = min(line, *(d.lineno for d in decorators))
    return line - 1


def _chunks(body: list[ast.stmt], total_lines: int) -> list[_Chunk]:
    chunks: list[_Chunk] = []
    for stmt in body:
        start = first_line(stmt)
        if chunks and start < chunks[-1].end:
            chunks[-1].stmts.append(stmt)  # `a = 1; b = 2` share a line
            chunks[-1].end = max(chunks[-1].end, (stmt.end_lineno or stmt.lineno))
            continue
        if chunks:
            chunks[-1].end = start
        elif start > 0:
            chunks.append(_Chunk(0, start, []))  # leading comments and blank lines
            chunks[-1].end = start
        chunks.append(_Chunk(start, stmt.end_lineno or stmt.lineno, [stmt]))
    if chunks:
        chunks[-1].end = total_lines
    return chunks


def _common_lines(old_text: str, new_text: str, old: Lines, new: Lines) -> tuple[int, int]:
    """How many whole lines the two versions share at the start and at the end."""
    limit = min(len(old), len(new))
    chars = common_prefix(old_text, new_text)
    prefix = min(old_text.count("\n", 0, chars), limit)
    while prefix > 0 and old[prefix - 1] != new[prefix - 1]:
        prefix -= 1  # \r-only line ends: fall back to comparing lines
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    back = common_suffix(old_text, new_text)
    suffix = min(old_text.count("\n", len(old_text) - back), limit - prefix)
    while suffix > 0 and old[len(old) - suffix] != new[len(new) - suffix]:
        suffix -= 1
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return prefix, suffix


class IncrementalModule:
    """One document's parse state across versions."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self._lines: Lines = ()
        self._text = ""
        self._chunks: list[_Chunk] | None = None
        self._scope: Scope | None = None
        self.module: ModuleInfo | None = None
        self.reparsed_lines = 0  # how many lines the last update parsed (for tests/benchmarks)
        self.rule_cache: dict[str, Any] = {}  # per-kernel results the rules may reuse

    def update(self, source: str) -> ModuleInfo | None:
        from pallas_ls.core.engine import parse_recovering

        lines = split_lines_after(source, self._text, self._lines)
        body = self._incremental_body(source, lines) if self._chunks is not None else None
        if body is None:
            module = parse_recovering(source, self.path, self._scope_for(), lines, True)
            self.reparsed_lines = len(lines)
            clean = module is not None and not module.recovered
        else:
            tree = ast.Module(body=body, type_ignores=[])
            module = ModuleInfo(tree, source, self.path, self._scope_for(), lines, True)
            clean = True
        self._lines = lines
        self._text = source
        if module is not None and self.module is not None:
            self.module.adopt(module)  # one ModuleInfo per document: cached results stay valid
            module = self.module
        self.module = module
        # Only a clean parse is a safe base for the next edit; after a recovered parse the
        # next version is parsed whole again.
        self._chunks = _chunks(module.tree.body, len(lines)) if module and clean else None
        return module

    def _scope_for(self) -> Scope:
        if self._scope is None:
            self._scope = Scope(ast.Module(body=[], type_ignores=[]), None)
        return self._scope

    def _incremental_body(self, new_text: str, new: Lines) -> list[ast.stmt] | None:
        old = self._lines
        assert self._chunks is not None
        if not self._chunks:
            return None
        prefix, suffix = _common_lines(self._text, new_text, old, new)
        if prefix == len(old) == len(new):
            self.reparsed_lines = 0
            return [s for c in self._chunks for s in c.stmts]
        old_change_end = len(old) - suffix  # exclusive, in old lines
        first = 0
        while first < len(self._chunks) and self._chunks[first].end <= prefix:
            first += 1
        # Re-parse from the chunk holding the first changed line, or the one before it when
        # the change sits right at a chunk boundary (it may extend that statement).
        if first > 0 and (first == len(self._chunks) or self._chunks[first].start >= prefix):
            first -= 1
        last = first
        while last < len(self._chunks) and self._chunks[last].start < max(
            old_change_end, prefix + 1
        ):
            last += 1
        last = min(max(last, first + 1), len(self._chunks))
        region_start = self._chunks[first].start
        region_end_old = self._chunks[last - 1].end
        delta = len(new) - len(old)
        region_end_new = region_end_old + delta
        if region_end_new < region_start or region_end_old < old_change_end:
            return None
        text = "".join(new[region_start:region_end_new])
        try:
            parsed = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if parsed.body and first_line(parsed.body[0]) < 0:
            return None
        if region_start:
            for stmt in parsed.body:
                shift_lines(stmt, region_start, len(new))
        self.reparsed_lines = region_end_new - region_start
        before = [s for c in self._chunks[:first] for s in c.stmts]
        after = [s for c in self._chunks[last:] for s in c.stmts]
        if delta:
            for stmt in after:
                shift_lines(stmt, delta, len(new))
        return [*before, *parsed.body, *after]
