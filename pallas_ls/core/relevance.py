"""Which top-level statements of a module may lead to some code.

A rule that looks for a few library calls (a convolution) follows each kernel through the
functions it reaches, which costs about as much as parsing the file. Most kernels of a
module cannot reach such a call at all, and the module says so:

- code reaches another top-level statement's code only through a name that statement binds
  at module level (a def, a class, an assignment, an import), read as a name where it is
  used (`helper(x)`, `Ops.conv`, `partial(kernel, op=helper)`, `getattr(Ops, "conv")`):
  the evaluator never finds a module-level binding another way (it has no `globals()`);
- a statement that spells a wanted word (a text search: also in strings and attributes),
  or imports anything from a module that is not a library (the user's code elsewhere,
  which the cross-module resolver may follow), is a seed.

`reaching_units` gives the statements from which a chain of such names leads to a seed.
A kernel site whose own statement is not among them, and whose context binds nothing from
elsewhere, cannot reach the wanted code: skipping it changes no result. The names each
statement reads are collected by the scope build (`StatementInfo.names`), so the search
costs a few set operations per statement and round (one round per link of the longest
chain), next to nothing beside the analysis it saves.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable

from pallas_ls.core.incremental import first_line
from pallas_ls.core.resolve import ModuleInfo, StatementInfo


def reaching_units(
    module: ModuleInfo, words: tuple[str, ...], is_library: Callable[[str], bool]
) -> set[int] | None:
    """Indices into `module.tree.body` of the statements that may reach a spelling of one
    of `words` (substrings, e.g. `conv` for `lax.conv_general_dilated`) through names bound
    at module level. None: any statement may (a star import, or a statement whose
    bindings are not known)."""
    body = module.tree.body
    text = _Text(module)
    seeds: set[int] = set()
    infos: list[StatementInfo] = []
    spelled: list[set[str]] = []
    for index, stmt in enumerate(body):
        info = stmt.__dict__.get("_pl_info")
        if not isinstance(info, StatementInfo):
            return None
        # A statement's verdict is kept with it: an edit elsewhere reuses the statement.
        seed = info.seeds.get(words)
        if seed is None:
            seed = info.seeds[words] = _seed(stmt, text, words, is_library)
        if seed is _STAR:
            return None
        if seed:
            seeds.add(index)
        infos.append(info)
        spelled.append(info.names)
    relevant = set(seeds)
    frontier = seeds
    named: set[str] = set()
    while frontier:
        bound = (n for i in frontier for n in _bound(infos[i]))
        fresh = {n for n in bound if n not in named}
        if not fresh:
            break
        named |= fresh
        frontier = {
            i
            for i, names in enumerate(spelled)
            if i not in relevant and not fresh.isdisjoint(names)
        }
        relevant |= frontier
    return relevant


def _bound(info: StatementInfo) -> list[str]:
    """The names a statement binds at module level (also through `global`)."""
    return [*(name for name, _ in info.bindings), *info.globals_]


_STAR = 2  # a seed verdict: the statement star-imports names from somewhere


class _Text:
    """The module's text and, once asked, where each line starts in it."""

    def __init__(self, module: ModuleInfo) -> None:
        self.source = module.source
        self.lines = module.lines
        self._starts: list[int] | None = None

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Offsets of lines `first`..`last` (1-based, inclusive)."""
        if self._starts is None:
            self._starts = [0, *itertools.accumulate(map(len, self.lines))]
        starts = self._starts
        last = min(last, len(starts) - 1)
        return starts[min(first - 1, last)], starts[last]


def _seed(
    stmt: ast.stmt, text: _Text, words: tuple[str, ...], is_library: Callable[[str], bool]
) -> int:
    """1 when the statement's lines spell one of `words` or import from a module that is
    not a library (also inside a def), _STAR for a star import, else 0. The lines of a
    statement sharing one with another (`a = 1; b = 2`) hold both: either may count."""
    start, end = text.span(first_line(stmt) + 1, stmt.end_lineno or stmt.lineno)
    source = text.source
    if source.find("import", start, end) >= 0:
        if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
            return _STAR
        if not isinstance(stmt, ast.Import | ast.ImportFrom):
            if _STAR_IMPORT.search(source, start, end):
                return _STAR
            if _IMPORT_WORD.search(source, start, end):
                return 1  # an import inside a def or a block, or a use of `__import__`
        elif not _library_import(stmt, is_library):
            return 1
    return int(any(source.find(word, start, end) >= 0 for word in words))


_IMPORT_WORD = re.compile(r"(?<![\w.])import(?!\w)|__import__|import_module")
_STAR_IMPORT = re.compile(r"\bimport\s*\(?\s*\*")


def _library_import(stmt: ast.Import | ast.ImportFrom, is_library: Callable[[str], bool]) -> bool:
    if isinstance(stmt, ast.ImportFrom):
        return stmt.level == 0 and stmt.module is not None and is_library(stmt.module)
    return all(is_library(alias.name) for alias in stmt.names)
