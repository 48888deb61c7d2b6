"""PAL001 (opt_level reaching a TensorCore kernel) and PAL004 (opt_level on a JAX that
predates it). Record 4498015edb3d4ca7."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from pallas_ls.core import jaxapi
from pallas_ls.core.fixes import remove_argument
from pallas_ls.core.kernels import KernelKind, KernelSite, Mosaic
from pallas_ls.core.model import Edit, Finding, Fix, Related
from pallas_ls.core.resolve import AssignBinding, ModuleInfo
from pallas_ls.core.rules import OPT_LEVEL_MIN_JAX, RULES
from pallas_ls.core.rules.base import RuleContext
from pallas_ls.core.values import Const, Member, OptLevelSetter, Params, spread_keywords

PAL004_TEXT = "CompilerParams.__init__() got an unexpected keyword argument 'opt_level'"


def _provably_set(ctx: RuleContext, setter: OptLevelSetter) -> bool:
    values = ctx.evaluator.eval(setter.value, setter.ctx)
    if not values:
        return False
    for v in values:
        if isinstance(v, Const) and v.value is not None:
            continue
        if isinstance(v, Member) and v.enum == "OptLevel":
            continue
        return False
    return True


class _Uses:
    """Where a params expression flows: only to qualifying TensorCore sites, or elsewhere."""

    def __init__(self, ctx: RuleContext, qualifying: list[KernelSite]) -> None:
        self.ctx = ctx
        self.module = ctx.module
        self.ok_keywords = {
            id(site.params_keyword[0])
            for site in qualifying
            if site.params_keyword and site.params_keyword[1].module is ctx.module
        }
        self.all_site_keywords = {
            id(site.params_keyword[0]): site for site in ctx.sites if site.params_keyword
        }
        self._loads: dict[str, list[ast.Name]] | None = None

    def exclusive(self, expr: ast.AST, depth: int = 0) -> bool:
        if depth > 16:
            return False
        parent = self.module.parents.get(expr)
        if isinstance(parent, ast.keyword) and parent.arg == "compiler_params":
            return id(parent) in self.ok_keywords
        if isinstance(parent, ast.Attribute) and parent.attr == "replace":
            grand = self.module.parents.get(parent)
            return isinstance(grand, ast.Call) and self.exclusive(grand, depth + 1)
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is expr:
            name = jaxapi.canonical(self.module.qualname(parent.func))
            return name == "dataclasses.replace" and self.exclusive(parent, depth + 1)
        if isinstance(parent, ast.IfExp) and expr is not parent.test:
            return self.exclusive(parent, depth + 1)
        if isinstance(parent, ast.Assign | ast.AnnAssign) and parent.value is expr:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                return False
            loads = self._name_loads(targets[0].id, parent)
            return bool(loads) and all(self.exclusive(load, depth + 1) for load in loads)
        return False

    def _name_loads(self, name: str, stmt: ast.AST) -> list[ast.Name]:
        if self._loads is None:
            self._loads = {}
            for node in ast.walk(self.module.tree):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    self._loads.setdefault(node.id, []).append(node)
        out = []
        for load in self._loads.get(name, []):
            found = self.module.lookup(name, self.module.scope_of(load))
            if found is None:
                continue
            if any(isinstance(b, AssignBinding) and b.node is stmt for b in found[1]):
                out.append(load)
        return out


def check_opt_level(ctx: RuleContext) -> Iterator[Finding]:
    if ctx.jax_version < OPT_LEVEL_MIN_JAX:
        return
    record = RULES["PAL001"].record
    qualifying = [
        s
        for s in ctx.sites
        if s.kind is KernelKind.TENSORCORE
        and s.mosaic in {Mosaic.USED, Mosaic.USED_UNLESS_INTERPRET}
        and s.params
        and all(isinstance(p, Params) and p.kind == "tpu" for p in s.params)
    ]
    uses = _Uses(ctx, qualifying)
    on_setter: dict[int, tuple[OptLevelSetter, list[KernelSite], list[OptLevelSetter]]] = {}
    # Setters that reach a kernel through a wrapper's parameter: where else the wrapper
    # sends them is not followed, so removing the argument is not offered.
    no_fix: set[int] = set()
    for site in qualifying:
        assert site.params is not None and site.params_keyword is not None
        alternatives = [p for p in site.params if isinstance(p, Params)]
        if any(p.opt_level is None or p.opt_level_unknown for p in alternatives):
            continue
        if ctx.finder.returns_a_value(site):
            continue  # the kernel fails when traced, before it is lowered
        if not all(_provably_set(ctx, p.opt_level) for p in alternatives if p.opt_level):
            continue
        fallback = False
        for p in alternatives:
            assert p.opt_level is not None
            in_module = all(s.ctx.module is ctx.module for s in p.setters)
            if not in_module or not all(uses.exclusive(s.call) for s in p.setters):
                fallback = True
        if site.via is not None:
            # Reported where the caller sets it; never inside the wrapper, which its
            # other callers share.
            if not all(s.ctx.module is ctx.module for p in alternatives for s in p.setters):
                continue
            for p in alternatives:
                assert p.opt_level is not None
                entry = on_setter.setdefault(
                    id(p.opt_level.arg), (p.opt_level, [], list(p.setters))
                )
                entry[1].append(site)
                if fallback:
                    no_fix.add(id(p.opt_level.arg))
            continue
        if fallback:
            yield _finding_at_site(ctx, site, alternatives)
            continue
        for p in alternatives:
            assert p.opt_level is not None
            entry = on_setter.setdefault(id(p.opt_level.arg), (p.opt_level, [], list(p.setters)))
            entry[1].append(site)
    for setter, sites, setters in on_setter.values():
        module = ctx.module
        edits: list[Edit] = []
        for s in setters if id(setter.arg) not in no_fix else ():
            if not isinstance(s.call, ast.Call):
                edits = []  # in a dict spread into the params: never this kernel's alone
                break
            edit = remove_argument(module, s.call, s.arg)
            if edit is None:
                edits = []
                break
            if isinstance(s.arg, ast.expr):  # positional: pass None instead
                edit = Edit(module.span(s.arg), "None")
            edits.append(edit)
        fixes = (
            (
                Fix(
                    f"{record.solutions[0]}: remove `{_short(module.text(setter.arg))}`",
                    tuple(edits),
                    True,
                ),
            )
            if edits
            else ()
        )
        related: list[Related] = []
        for site in sites:
            related.extend(site.evidence())
        yield Finding(
            "PAL001",
            _message(ctx, sites[0], setter),
            module.span(setter.arg),
            fixes=fixes,
            related=tuple(related),
            record_id=record.id,
        )


def _shown_path(other: str | None, here: str | None) -> str | None:
    """Another module's path as seen from the analysed file's folder (`settings.py`,
    `../config/params.py`); the full path where there is no such way (another drive)."""
    if other is None or here is None or not os.path.isabs(other) or not os.path.isabs(here):
        return other
    try:
        return os.path.relpath(other, os.path.dirname(here))
    except ValueError:
        return other


def _short(text: str, limit: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _message(ctx: RuleContext, site: KernelSite, setter: OptLevelSetter) -> str:
    record = RULES["PAL001"].record
    value = _short(setter.ctx.module.text(setter.value))
    when = "when it is lowered for TPU"
    if site.mosaic is Mosaic.USED_UNLESS_INTERPRET:
        when = (
            "when it is lowered for TPU without interpret mode (`interpret` is not provably true)"
        )
    where = ""
    if setter.ctx.module is not ctx.module:
        where = f" (set in {_shown_path(setter.ctx.module.path, ctx.module.path)})"
    return (
        f"{record.error_text} opt_level={value}{where} reaches kernel "
        f"`{_short(site.body_name, 40)}` built by {site.label} at line "
        f"{ctx.module.span(site.entry_node).start_line + 1}, a TensorCore kernel "
        f"({site.kind_reason}); JAX raises this {when}."
    )


def _finding_at_site(ctx: RuleContext, site: KernelSite, alternatives: list[Params]) -> Finding:
    record = RULES["PAL001"].record
    assert site.params_keyword is not None
    keyword = site.params_keyword[0]
    module = ctx.module
    text = module.text(keyword.value)
    simple = isinstance(keyword.value, ast.Name | ast.Attribute | ast.Call | ast.Subscript)
    new_value = f"{text}.replace(opt_level=None)" if simple else f"({text}).replace(opt_level=None)"
    # Only where the kernel's own call names the params: one given through `**KWARGS`
    # is in a dict that other calls may share.
    fixes: tuple[Fix, ...] = ()
    if any(k is keyword for k, _ in site.entry.kwargs):
        fixes = (
            Fix(
                f"{record.solutions[0]}: pass `{_short(new_value)}` to this kernel only",
                (Edit(module.span(keyword.value), new_value),),
                True,
            ),
        )
    setter = alternatives[0].opt_level
    assert setter is not None
    related = list(site.evidence())
    setter_module = setter.ctx.module
    related.append(
        Related(
            "opt_level is set here (shared with other kernels or defined elsewhere)",
            setter_module.span(setter.arg),
            None if setter_module is module else setter_module.path,
        )
    )
    return Finding(
        "PAL001",
        _message(ctx, site, setter),
        module.span(keyword),
        fixes=fixes,
        related=tuple(related),
        record_id=record.id,
    )


def _opt_level_enum_access(module: ModuleInfo, value: ast.expr) -> str | None:
    """The module of an `<module>.OptLevel` attribute access inside `value`, if any."""
    for node in ast.walk(value):
        if isinstance(node, ast.Attribute) and node.attr == "OptLevel":
            qual = module.qualname(node)
            if jaxapi.canonical(qual) == "OptLevel" and qual:
                return qual.rpartition(".")[0]
    return None


def check_opt_level_version(ctx: RuleContext) -> Iterator[Finding]:
    if ctx.jax_version >= OPT_LEVEL_MIN_JAX:
        return
    record = RULES["PAL004"].record
    module = ctx.module
    mctx = ctx.finder.ctx
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Call):
            continue
        kw = next((k for k in node.keywords if k.arg == "opt_level"), None)
        spread: ast.keyword | ast.expr | None = None  # given in a dict spread into the call
        container: ast.AST | None = None
        if kw is None and any(k.arg is None for k in node.keywords):
            for key, entry, inside, star in spread_keywords(module, node) or ():
                if key == "opt_level":
                    kw, spread, container = star, entry, inside
        if kw is None:
            continue
        name = jaxapi.canonical(module.qualname(node.func))
        is_params = name == "tpu.CompilerParams"
        if not is_params:
            base: ast.expr | None = None
            if name == "dataclasses.replace":
                base = node.args[0] if node.args else None
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "replace":
                base = node.func.value
            if base is not None:
                values = ctx.evaluator.eval(base, mctx)
                is_params = bool(values) and all(
                    isinstance(v, Params) and v.kind == "tpu" for v in values or []
                )
        if not is_params:
            continue
        if spread is None:
            edit = remove_argument(module, node, kw)
        elif isinstance(spread, ast.keyword) and isinstance(container, ast.Call):
            # `**dict(opt_level=2)`, or `**KW` with `KW = dict(opt_level=2)` only ever
            # spread into calls: no CompilerParams of this JAX takes it
            edit = remove_argument(module, container, spread)
        else:
            edit = None  # an entry of a dict display: no fix
        shown = spread if spread is not None else kw
        fixes = (Fix(f"Remove `{_short(module.text(shown))}`", (edit,), True),) if edit else ()
        head = f"TypeError: {PAL004_TEXT}"
        value = shown.value if isinstance(shown, ast.keyword) else shown
        missing = _opt_level_enum_access(module, value)
        if missing:
            # Evaluating the argument fails first: OptLevel is missing from that module too.
            head = f"AttributeError: module '{missing}' has no attribute 'OptLevel'"
        yield Finding(
            "PAL004",
            f"{head} — the target JAX is {ctx.jax_version_text}; "
            f"pltpu.CompilerParams has opt_level from JAX 0.11.0 on, so this call raises "
            "when it runs.",
            module.span(kw),
            fixes=fixes,
            record_id=record.id,
        )
