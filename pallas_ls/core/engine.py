"""analyse(source) -> findings; hover_at(source, position) -> hover text.

The pipeline: text -> parse (recovering from syntax errors) -> scopes and imports ->
kernel sites -> rules -> findings. Pure: no LSP, no I/O beyond reading workspace files.
"""

from __future__ import annotations

import ast
import gc
import itertools
import logging
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pallas_ls.core import jaxapi
from pallas_ls.core.crossmodule import ImportResolver, workspace_module
from pallas_ls.core.incremental import IncrementalModule
from pallas_ls.core.kernels import KernelFinder
from pallas_ls.core.model import (
    AnalysisCancelled,
    Config,
    Finding,
    HoverInfo,
    raise_if_cancelled,
)
from pallas_ls.core.resolve import ModuleInfo, Scope, parse_module
from pallas_ls.core.rules import RULES
from pallas_ls.core.rules.base import RuleContext
from pallas_ls.core.rules.conv_precision import check_conv_precision
from pallas_ls.core.rules.opt_level import check_opt_level, check_opt_level_version
from pallas_ls.core.textedit import Lines, split_lines
from pallas_ls.core.values import Evaluator
from pallas_ls.core.workspace import Workspace

log = logging.getLogger("pallas_ls")

Check = Callable[[RuleContext], Iterator[Finding]]
CHECKS: tuple[tuple[frozenset[str], Check], ...] = (
    (frozenset({"PAL001"}), check_opt_level),
    (frozenset({"PAL002", "PAL003"}), check_conv_precision),
    (frozenset({"PAL004"}), check_opt_level_version),
)
MAX_RECOVERY_ATTEMPTS = 25


def _resolver(workspace: Workspace | None) -> ImportResolver:
    ws = workspace or _DEFAULT_WORKSPACE
    resolver = getattr(ws, "_pallas_resolver", None)
    if resolver is None:
        resolver = ImportResolver(ws)
        ws._pallas_resolver = resolver  # type: ignore[attr-defined]
    return resolver


_DEFAULT_WORKSPACE = Workspace()


def parse_recovering(
    source: str,
    path: str | None = None,
    module_scope: Scope | None = None,
    source_lines: Lines | None = None,
    share_lines: bool = False,  # see ModuleInfo
) -> ModuleInfo | None:
    """Parse; on a syntax error, blank out the top-level statement holding the error and
    retry, so findings in untouched code stay put while the user types."""
    module = parse_module(source, path, module_scope, source_lines, share_lines)
    if module is not None:
        return module
    lines = list(source_lines if source_lines is not None else split_lines(source))
    for _ in range(MAX_RECOVERY_ATTEMPTS):
        text = "".join(lines)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(text)
        except SyntaxError as exc:
            line = min(max((exc.lineno or 1) - 1, 0), len(lines) - 1)
            stray = isinstance(exc, IndentationError) and "unexpected indent" in str(exc.msg)
            if not _blank_block(lines, line, only_after=stray):
                return None
            continue
        except RecursionError:
            if not _blank_deepest_statement(lines):
                return None
            continue
        except (ValueError, MemoryError):
            return None
        return _with_original_lines(
            parse_module(text, path, module_scope, share_lines=share_lines), source
        )
    return None


def _with_original_lines(module: ModuleInfo | None, source: str) -> ModuleInfo | None:
    if module is not None:
        module.source = source
        module.lines = split_lines(source)
        module.recovered = True
    return module


def _is_top_level_start(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line.startswith(("#", ")", "]", "}"))


def _blank_deepest_statement(lines: list[str]) -> bool:
    """A statement too deep for the parser: blank the top-level block that fails alone."""
    starts = [i for i, line in enumerate(lines) if _is_top_level_start(line)] + [len(lines)]
    for a, b in itertools.pairwise(starts):
        try:
            ast.parse("".join(lines[a:b]))
        except RecursionError:
            return _blank_block(lines, a)
        except (SyntaxError, ValueError, MemoryError):
            continue
    return False


def _blank_block(lines: list[str], line: int, only_after: bool = False) -> bool:
    """Blank the top-level block around `line` (keeping line breaks). False if nothing changed.
    `only_after`: a stray indented line blanks only itself and what follows it up to the next
    top-level statement, not the complete statement above it."""
    if not lines:
        return False
    start = line
    while not only_after and start > 0 and not _is_top_level_start(lines[start]):
        start -= 1
    while not only_after and start > 0 and lines[start - 1].lstrip().startswith("@"):
        start -= 1
    end = line + 1
    while end < len(lines) and not _is_top_level_start(lines[end]):
        end += 1
    changed = False
    for i in range(start, end):
        ending = lines[i][len(lines[i].rstrip("\r\n")) :]
        # A comment keeps line breaks apart: a bare "\r" before a "\n" would become "\r\n".
        blank = "#" + ending
        if lines[i] != blank:
            lines[i] = blank
            changed = True
    return changed


# Import statements on one line, read off the text without parsing it: `from X import`,
# `import X, Y`, at the line start or after `;` / `:` (`try: import jax`).
_IMPORT = re.compile(
    r"(?:^|[;:])[ \t\f]*(?:from[ \t\f]+([^#;]*?)[ \t\f]+import\b|import[ \t\f]+([^#;]+))"
)


_CONTINUATION = re.compile(r"\\(?:\r\n|\n|\r)")


def _lines_with(source: str, word: str) -> Iterator[str]:
    """Each line (\\n, \\r\\n or \\r ended) holding `word`, once; str.find keeps it cheap."""
    i = source.find(word)
    while i != -1:
        start = max(source.rfind("\n", 0, i), source.rfind("\r", 0, i)) + 1
        ends = [e for e in (source.find("\n", i), source.find("\r", i)) if e != -1]
        end = min(ends) if ends else len(source)
        yield source[start:end]
        i = source.find(word, end)


def _may_matter(
    source: str,
    path: str | None = None,
    workspace: Workspace | None = None,
    pallas_only: bool = True,
) -> bool:
    """Whether the file can hold a finding at all, judged from its text and import lines.
    Every finding needs a Pallas entry point or a `CompilerParams`, and JAX names all of
    them under `jax.experimental.pallas` (or `jax._src.pallas`): a file gets one from jax
    directly, and then spells "pallas" somewhere, or through a module of the workspace.
    A file that does neither costs a text scan; one that imports jax and spells "pallas"
    costs no file-system look-up. With `pallas_only` False, any jax import will do (the
    preventive hover on `precision=` also serves conv helpers outside kernel files)."""
    if "jax" not in source:
        return False
    if "\\\n" in source or "\\\r" in source:
        # A statement split by a backslash: join its lines, so that an import split that
        # way is read whole.
        source = _CONTINUATION.sub(" ", source)
    pallas = not pallas_only or "pallas" in source
    others: list[str] = []  # non-jax top-level names: looked up on disk only if needed
    for line in _lines_with(source, "import"):
        for match in _IMPORT.finditer(line):
            module, names = match.groups()
            if module is not None:
                if module.lstrip().startswith("."):
                    return True  # relative: a module of the workspace
                heads = ["".join(module.split()).split(".")[0]]
            else:
                heads = [part.split()[0].split(".")[0] for part in names.split(",") if part.split()]
            if "jax" in heads:
                if pallas:
                    return True
                continue  # jax without Pallas (jnp, lax, jit, ...): nothing to find there
            others += heads
    return any(
        head.isidentifier()
        and head not in sys.stdlib_module_names
        and workspace_module(head, path, workspace)
        for head in others
    )


def analyse(
    source: str,
    path: str | None = None,
    config: Config | None = None,
    workspace: Workspace | None = None,
    state: IncrementalModule | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[Finding]:
    """Findings for one file. `state` keeps a document's parse between versions (the
    server passes one per open document) so that an edit re-parses only what it touched.
    `cancelled` is polled between steps (after the parse, per kernel site, per rule); when
    it returns True, AnalysisCancelled is raised and the caches stay as they were."""
    config = config or Config()
    if not _may_matter(source, path, workspace):
        return []
    with _gc_paused():
        module = state.update(source) if state is not None else parse_recovering(source, path)
        if module is None:
            return []
        raise_if_cancelled(cancelled)
        return analyse_module(
            module, config, workspace, state.rule_cache if state else None, cancelled
        )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Building a parse allocates a few hundred thousand objects at once; the cyclic
    collector would run dozens of times meanwhile for nothing (nothing is garbage yet).
    Pause it for one analysis; it runs again right after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def analyse_module(
    module: ModuleInfo,
    config: Config,
    workspace: Workspace | None = None,
    cache: dict[str, Any] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[Finding]:
    evaluator = Evaluator(_resolver(workspace))
    try:
        finder = KernelFinder(module, evaluator)
        sites = finder.sites(cache, cancelled)
    except RecursionError:
        log.warning("pallas-ls: %s is nested too deeply to analyse", module.path or "<buffer>")
        return []
    ctx = RuleContext(module, evaluator, finder, sites, config, cache, cancelled)
    findings: list[Finding] = []
    for codes, check in CHECKS:
        if not any(config.enabled(code) for code in codes):
            continue
        raise_if_cancelled(cancelled)
        try:
            findings.extend(f for f in check(ctx) if config.enabled(f.code))
        except AnalysisCancelled:
            raise
        except Exception:  # one failing rule must not hide the others' findings
            log.exception(
                "pallas-ls: rule %s failed on %s",
                "/".join(sorted(codes)),
                module.path or "<buffer>",
            )
    findings.sort(key=lambda f: (f.span, f.code))
    return findings


# -- hover --------------------------------------------------------------------------------
def hover_at(
    source: str,
    line: int,
    col: int,
    path: str | None = None,
    config: Config | None = None,
    workspace: Workspace | None = None,
    findings: list[Finding] | None = None,
    module: ModuleInfo | None = None,
) -> HoverInfo | None:
    """Hover text at a position. The server passes the findings and the parse it already has
    for this exact text, so a hover costs a look-up, not an analysis."""
    config = config or Config()
    if findings is None:
        findings = analyse(source, path, config, workspace)
    here = [f for f in findings if f.span.contains(line, col)]
    if here:
        parts = [finding_markdown(f) for f in here]
        return HoverInfo("\n\n---\n\n".join(parts), here[0].span, tuple(f.code for f in here))
    if not _may_matter(source, path, workspace, pallas_only=False):
        return None
    if module is None or module.source != source:
        module = parse_recovering(source, path)
    if module is None:
        return None
    return _preventive_hover(module, line, col)


def finding_markdown(finding: Finding) -> str:
    rule = RULES[finding.code]
    record = rule.record
    lines = [f"**{finding.code}** ({rule.name}) · `{record.error_text}`", "", finding.message]
    lines += ["", record.documentation]
    lines += ["", "**Solutions**", *(f"- {s}" for s in record.solutions)]
    lines += ["", "**Prevention**", *(f"- {t}" for t in record.prevention_tips)]
    lines += [
        "",
        f"[Where JAX raises it]({record.github_url}) · `pallas-ls explain {finding.code}`",
    ]
    return "\n".join(lines)


def _statement_at(module: ModuleInfo, line: int) -> ast.stmt | None:
    body = module.tree.body
    lo, hi = 0, len(body)
    while lo < hi:  # the last top-level statement starting at or before `line`
        mid = (lo + hi) // 2
        if body[mid].lineno - 1 <= line:
            lo = mid + 1
        else:
            hi = mid
    return body[lo - 1] if lo else None


def _preventive_hover(module: ModuleInfo, line: int, col: int) -> HoverInfo | None:
    stmt = _statement_at(module, line)
    if stmt is None:
        return None
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg not in {"opt_level", "precision"}:
                continue
            span = module.span(kw)
            if not span.contains(line, col):
                continue
            qual = module.qualname(node.func)
            name = jaxapi.canonical(qual)
            if kw.arg == "opt_level" and (
                name == "tpu.CompilerParams"
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "replace")
            ):
                return _hint(("PAL001", "PAL004"), span)
            if kw.arg == "precision" and name in jaxapi.CONV_PRECISION_INDEX:
                return _hint(("PAL002", "PAL003"), span)
    return None


def _hint(codes: tuple[str, ...], span: object) -> HoverInfo:
    record = RULES[codes[0]].record
    lines = [
        f"**pallas-ls** · `{record.error_text}` ({', '.join(codes)})",
        "",
        record.documentation,
    ]
    lines += ["", f"*When it fires:* {record.trigger_scenarios}"]
    lines += ["", "**Prevention**", *(f"- {t}" for t in record.prevention_tips)]
    lines += ["", f"[Where JAX raises it]({record.github_url})"]
    from pallas_ls.core.model import Span

    assert isinstance(span, Span)
    return HoverInfo("\n".join(lines), span, codes)
