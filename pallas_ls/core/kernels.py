"""Kernel entry points: where they are, what kind of kernel they build, whether Mosaic
lowers them, and which code their bodies reach (pallas-semantics.md, sections A, B, D, G)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pallas_ls.core import jaxapi
from pallas_ls.core.flow import (
    ENDS_ITERATION,
    EXITS,
    LOOPS,
    always_exits,
    block_exits,
    constant_truth,
    runs_at_least_once,
)
from pallas_ls.core.model import Related, raise_if_cancelled
from pallas_ls.core.params import INTROSPECTION, ignored_by_callee, passed_to
from pallas_ls.core.resolve import (
    AssignBinding,
    DefBinding,
    FunctionNode,
    ImportBinding,
    ModuleInfo,
    ParamBinding,
    may_name_entry,
)
from pallas_ls.core.values import (
    UNRECORDED,
    Const,
    Ctx,
    EntryFactory,
    Evaluator,
    Func,
    Identity,
    Interpret,
    Mesh,
    Params,
    Recorder,
    Seq,
    Value,
    argument_value,
    bind_arguments,
    entry_body,
    entry_mesh,
    literal_kwargs,
    rebound_elsewhere,
    truthiness,
)

ENTRY_ATTRS = jaxapi.ENTRY_ATTRS
ENTRY_LABEL = {"pallas_call": "pl.pallas_call", "kernel": "pl.kernel", "core_map": "pl.core_map"}
MAX_REACHED_FUNCTIONS = 400

# isinstance() with `A | B` builds the union on every call (~150 ns); these checks run per
# node of reached code, so the type tuples are built once.
_NAME_OR_ATTR = (ast.Name, ast.Attribute)
_WORD = re.compile(r"[^\W\d]\w*")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ALIASING = (AssignBinding, ImportBinding)
_MAY_BE_FUNCTION = (ast.Name, ast.Lambda, ast.Call, ast.Attribute)
_INDEXED = (ast.Call, ast.FunctionDef, ast.AsyncFunctionDef)
_NEW_SCOPE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class KernelKind(Enum):
    TENSORCORE = "TensorCore"
    SPARSECORE = "SparseCore"
    NOT_TPU = "not TPU"
    UNKNOWN = "unknown"


class Mosaic(Enum):
    USED = "used"
    USED_UNLESS_INTERPRET = "used unless interpret"  # interpret comes from a variable
    NOT_USED = "not used"
    UNKNOWN = "unknown"


@dataclass(eq=False)
class KernelSite:
    """A kernel's entry point: the call (or decorated def) that gives the body."""

    entry: EntryFactory
    anchor: ast.AST  # the call (or decorated def) that supplies the body
    ctx: Ctx
    body: tuple[ast.expr, Ctx] | None
    decorated: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    kind: KernelKind = KernelKind.UNKNOWN
    kind_reason: str = ""
    mosaic: Mosaic = Mosaic.UNKNOWN
    mesh_node: ast.AST | None = None
    params: list[Value] | None = None
    params_keyword: tuple[ast.keyword, Ctx] | None = None
    _reached: list[Reached] | None = field(default=None, repr=False)
    # How many functions the kernel body may be (`a if flag else b`: 2); each Reached
    # says which of them it is reached from.
    roots: int = field(default=0, repr=False)
    deps: Recorder | None = field(default=None, repr=False)
    # A kernel built inside a function of the module, seen through one call of it with
    # that call's arguments (`launch(body, params)`): the call, and the kernel's name there.
    via: ast.Call | None = None
    via_body: str | None = None
    decided: bool | None = field(default=None, repr=False)  # see KernelFinder._decided
    # The module's top-level statement the site was found in (None: seen through a call).
    statement: ast.stmt | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return ENTRY_LABEL[self.entry.entry]

    @property
    def entry_node(self) -> ast.AST:
        return self.entry.nodes[0] if self.entry.nodes else self.anchor

    @property
    def body_name(self) -> str:
        if self.via_body is not None:
            return self.via_body
        if self.decorated is not None:
            return self.decorated.name
        if self.body is not None:
            return _short(self.body[1].module.text(self.body[0])) or "<kernel>"
        return "<kernel>"

    def evidence(self) -> list[Related]:
        module = self.ctx.module
        out = [
            Related(
                f"kernel `{_short(self.body_name)}` enters {self.label} here"
                f" ({self.kind.value}{': ' + self.kind_reason if self.kind_reason else ''})",
                module.span(self.entry_node),
            )
        ]
        if self.mesh_node is not None and self.entry.entry != "pallas_call":
            mesh_module = self.ctx.module
            out.append(Related("the kernel's mesh", mesh_module.span(self.mesh_node)))
        if self.via is not None:
            callee = _short(module.text(self.via.func))
            out.append(
                Related(f"with the arguments of this call of `{callee}`", module.span(self.via))
            )
        return out


@dataclass(eq=False)
class Reached:
    """A function traced as part of a kernel, and how the kernel gets there."""

    fn: FunctionNode
    ctx: Ctx
    # How the kernel gets here (the site's evidence, then one entry per hop), or what makes
    # it: built only when a finding shows it (most reached functions have none).
    _chain: tuple[Related, ...] | Callable[[], tuple[Related, ...]]
    via: ast.AST | None  # the call or reference in the analysed file that leads here
    # Where this function's return value goes: an expression in the caller (the call, or the
    # call that receives this function as a callback) and the caller itself. None: nowhere
    # we can see (a kernel body, a decorated def), so a return counts as live.
    result_use: tuple[ast.AST, Reached] | None = None
    # The calls and nested defs of `fn` that run (live_nodes), once reachability has
    # looked at them; rules reuse them.
    live: list[ast.AST] | None = None
    root: int = 0  # which of the site's possible kernel bodies it is reached from
    # Where it is traced from: the node in the caller that traces it (a call, a callback
    # argument, a decorated def) and the caller. None for a kernel body.
    trace: tuple[ast.AST, Reached] | None = None

    @property
    def chain(self) -> tuple[Related, ...]:
        if callable(self._chain):
            self._chain = self._chain()
        return self._chain


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _partial_target(expr: ast.expr) -> ast.expr:
    """`f` of `functools.partial(f, ...)` (by the callee's name: a guess that only decides
    whether a kernel is looked at again), else `expr`."""
    if type(expr) is ast.Call and expr.args and _is_partial_like(expr):
        return expr.args[0]
    return expr


def _read_by_rules(site: KernelSite) -> list[ast.expr]:
    """The parts of a kernel's building call that decide what the rules report: the kernel
    function (without a partial's keywords), the compiler params and the mesh."""
    out: list[ast.expr] = []
    if site.body is not None:
        out.append(_partial_target(site.body[0]))
    if site.params_keyword is not None:
        out.append(site.params_keyword[0].value)
    mesh = entry_mesh(site.entry)
    if mesh is not None:
        out.append(mesh[0])
    return out


class _Unknown(Enum):
    """A keyword argument that may be given through a `**` argument we cannot read."""

    KEYWORD = 0


_UNKNOWN_KEYWORD = _Unknown.KEYWORD


def _mosaic_interpret_value(value: Value) -> bool:
    """An `interpret=` value under which JAX lowers with Mosaic: False, None or 0 (G.2)."""
    if not isinstance(value, Const):
        return False
    v = value.value
    return v is None or v is False or (type(v) is int and v == 0)


class KernelFinder:
    def __init__(self, module: ModuleInfo, evaluator: Evaluator) -> None:
        self.module = module
        self.ev = evaluator
        self.ctx = Ctx(module)
        self._interpret_mode_refs = self._find_interpret_mode()
        self.same_signature = False  # set by sites(): the cache's results still apply

    # -- discovery ----------------------------------------------------------------------
    def sites(
        self,
        cache: dict[str, Any] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> list[KernelSite]:
        """Every kernel entry point of the module, classified. With a cache (one per
        document), the sites of a top-level statement whose recorded inputs did not change
        are reused as they were: an edit costs one validity check per statement, not a
        look at every call in the file."""
        previous = cache.get("sites", {}) if cache is not None else {}
        signature = self.signature()
        # Compared once per analysis: a changed import or alias drops every cached result.
        self.same_signature = cache is not None and cache.get("signature") == signature
        if not self.same_signature:
            previous = {}
        current: dict[int, tuple[ast.stmt, Recorder, list[KernelSite]]] = {}
        body_ids = {id(stmt) for stmt in self.module.tree.body}
        # Calls of the module's own functions in re-read statements: (call, function,
        # the statement's recorder and sites), for _add_wrapper_sites once every site is
        # known.
        calls: list[tuple[ast.Call, ast.FunctionDef, Recorder, list[KernelSite]]] = []
        for stmt in self.module.tree.body:
            entry = previous.get(id(stmt))
            if (
                entry is None
                or entry[0] is not stmt
                or not entry[1].still_valid(self.module, body_ids)
            ):
                raise_if_cancelled(cancelled)  # the cache is written only at the end
                # One recorder for the statement: what its filters and discoveries read.
                # (Without a cache nothing reads it.)
                recorder = Recorder() if cache is not None else UNRECORDED
                recorder.statement(self.module, stmt)
                found: list[KernelSite] = []
                for node in _statement_candidates(stmt):
                    if isinstance(node, ast.Call):
                        fn = self._may_be_entry(node.func, recorder)
                        if fn is False:
                            continue
                        if fn is not True:
                            calls.append((node, fn, recorder, found))
                            continue
                    found.extend(self._discover(node, recorder))
                for site in found:
                    site.statement = stmt
                entry = (stmt, recorder, found)
            current[id(stmt)] = entry
        if calls:
            self._add_wrapper_sites(calls, current.values())
        out = [site for entry in current.values() for site in entry[2]]
        if cache is not None:
            cache["sites"] = current
            cache["signature"] = signature
        return out

    def signature(self) -> object:
        """What every cached result depends on beyond its recorded names: the module's
        imports and simple aliases (read by qualified-name resolution) and whether it
        switches interpret mode on."""
        parts: list[object] = [
            self._interpret_mode_refs,
            frozenset(self.module.imported_modules),
            # names rebound under `global` / `nonlocal` are unknown everywhere they are read
            rebound_elsewhere(self.module, True),
            rebound_elsewhere(self.module, False),
        ]
        for name, bindings in self.module.module_scope.bindings.items():
            imported = any(isinstance(b, ImportBinding) for b in bindings)
            for b in bindings:
                # An imported name rebound anywhere (`P = None` after `from jax.lax import
                # Precision as P`) changes what it means, and how a fix spells Precision.
                if imported or (
                    isinstance(b, AssignBinding) and isinstance(b.value, _NAME_OR_ATTR)
                ):
                    parts.append((name, Identity(b)))
        return tuple(parts)

    def _discover(self, node: ast.AST, recorder: Recorder) -> list[KernelSite]:
        self.ev.recorder = recorder
        try:
            found: list[KernelSite] = []
            if isinstance(node, ast.Call):
                site = self._site_from_call(node)
                if site is not None:
                    found.append(site)
            elif isinstance(node, _DEFS):
                for dec in node.decorator_list:
                    site = self._site_from_decorator(node, dec)
                    if site is not None:
                        found.append(site)
            if found and not self._runs(node, self.ctx):
                return []
            for site in found:
                site.deps = recorder
                self._classify(site)
            return found
        finally:
            self.ev.recorder = None

    def _runs(self, node: ast.AST, ctx: Ctx) -> bool:
        """False when `node` provably never runs in its function (or module): it follows a
        statement that always leaves the block (`raise NotImplementedError` before old
        code), or sits in an `if` branch that the test, evaluated in `ctx`, rules out."""
        child = node
        parent = child.__dict__.get("_pl_parent")
        while parent is not None and type(parent) is not ast.Module:
            if type(parent) is ast.IfExp and child is not parent.test:
                t = truthiness(self.ev.eval(parent.test, ctx))
                if t is (child is parent.orelse):
                    return False
            if isinstance(child, ast.stmt):
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(parent, field, None)
                    if type(block) is not list or not any(s is child for s in block):
                        continue
                    for stmt in block:
                        if stmt is child:
                            break
                        if self._exits(stmt, ctx):
                            return False
                    if type(parent) is ast.If and field != "finalbody":
                        t = truthiness(self.ev.eval(parent.test, ctx))
                        if t is (field == "orelse"):
                            return False
                    break
            if isinstance(parent, _NEW_SCOPE):
                return True  # what runs before the function is called does not matter
            child, parent = parent, parent.__dict__.get("_pl_parent")
        return True

    def _exits(self, stmt: ast.stmt, ctx: Ctx) -> bool:
        """Whether `stmt` always leaves its block, `if` tests evaluated in `ctx`."""
        return always_exits(stmt, lambda test: truthiness(self.ev.eval(test, ctx)))

    def _may_be_entry(self, func: ast.expr, recorder: Recorder) -> bool | ast.FunctionDef:
        """A cheap filter before evaluating a callee: entry points are reached through
        attribute names, imports or assigned values (partials, factories), never through a
        plain def, a class or a builtin. A name bound only to an undecorated def of this
        module gives that def (a possible wrapper, see _add_wrapper_sites). Names it looks up
        go into `recorder`."""
        if isinstance(func, ast.Attribute):
            return func.attr in ENTRY_ATTRS
        if isinstance(func, ast.Call):
            return self._may_be_entry(func.func, recorder) is True
        if isinstance(func, ast.Name):
            found = self.module.lookup(func.id, self.module.scope_of(func))
            recorder.note(self.module, func.id, found)
            if found is None:
                return False
            bindings = found[1]
            if len(bindings) == 1 and type(bindings[0]) is DefBinding:
                fn = bindings[0].node
                # A decorator may change what the function is called with, or return
                # another one.
                if type(fn) is ast.FunctionDef and not fn.decorator_list:
                    return fn
                return False
            return any(isinstance(b, _ALIASING) for b in bindings)
        return False

    def _site_from_call(self, call: ast.Call, ctx: Ctx | None = None) -> KernelSite | None:
        ctx = ctx or self.ctx
        callee = self.ev.eval(call.func, ctx)
        if not callee or len(callee) != 1 or not isinstance(callee[0], EntryFactory):
            return None
        if entry_body(callee[0]) is not None:
            return None
        entry = self.ev._extend_entry(callee[0], call, ctx)
        body = entry_body(entry)
        if body is None:
            return None
        return KernelSite(entry, call, ctx, body)

    def _add_wrapper_sites(
        self,
        calls: list[tuple[ast.Call, ast.FunctionDef, Recorder, list[KernelSite]]],
        entries: Iterable[tuple[ast.stmt, Recorder, list[KernelSite]]],
    ) -> None:
        """The kernels a function of this module builds, seen with the arguments of each
        call of it: `def launch(kernel, params): return pl.pallas_call(kernel, ...,
        compiler_params=params)` called as `launch(body, pltpu.CompilerParams(opt_level=2))`.
        Only a kernel whose function, params or mesh come from the called function's
        parameters is looked at again (see _decided). One level: the kernel is built in
        the called function itself, which is an undecorated def of this module; a wrapper
        of a wrapper, and one imported from another module, are not followed. The sites
        go with the calling statement's, under its recorder: it noted the function's
        binding (an edit of the function re-reads the caller) and takes in what the
        function's statement read."""
        tops = {id(fn): self._top_statement(fn) for _, fn, _, _ in calls}
        wanted = {id(top) for top in tops.values()}
        by_fn: dict[int, list[KernelSite]] = {}
        recorders: dict[int, Recorder] = {}
        for stmt, stmt_recorder, found in entries:
            if id(stmt) not in wanted:
                continue
            recorders[id(stmt)] = stmt_recorder
            for site in found:
                if site.via is None and isinstance(site.anchor, ast.Call):
                    fn = self.module.enclosing_function(site.anchor)
                    if fn is not None:
                        by_fn.setdefault(id(fn), []).append(site)
        for call, fn, recorder, found in calls:
            # What the called function's statement read decides its sites: the caller's
            # sites depend on it too, whether or not it has any now.
            top = tops[id(fn)]
            if top is not None and id(top) in recorders and recorders[id(top)] is not recorder:
                recorder.absorb(recorders[id(top)])
            plain = by_fn.get(id(fn))
            if plain is None:
                continue
            if any(type(a) is ast.Starred for a in call.args) or any(
                k.arg is None for k in call.keywords
            ):
                continue  # `*args` / `**kwargs`: which parameter gets what is unknown
            undecided = [p for p in plain if not self._decided(p, fn)]
            if not undecided:
                continue
            self.ev.recorder = recorder
            try:
                self._derive_at(call, fn, undecided, recorder, found)
            finally:
                self.ev.recorder = None

    def _derive_at(
        self,
        call: ast.Call,
        fn: ast.FunctionDef,
        undecided: list[KernelSite],
        recorder: Recorder,
        found: list[KernelSite],
    ) -> None:
        """The sites of `fn` that its parameters decide, as `call` gives them (see above)."""
        if not self._runs(call, self.ctx):
            return
        bound = bind_arguments(Func(fn, self.ctx), call, self.ctx)
        if bound is None:
            return
        for p in undecided:
            assert isinstance(p.anchor, ast.Call)
            if not self._runs(p.anchor, bound):
                continue  # `if sparse: return pl.kernel(...)` before it, sparse=True
            derived = self._site_from_call(p.anchor, bound)
            if derived is None:
                continue
            derived.via = call
            body = derived.body
            named = self._functions(self.ev.eval(*body)) if body else []
            if len(named) == 1 and isinstance(named[0].node, _DEFS):
                derived.via_body = named[0].node.name
            derived.deps = recorder
            self._classify(derived)
            found.append(derived)

    def _top_statement(self, node: ast.AST) -> ast.AST | None:
        parents = self.module.parents
        parent = parents.get(node)
        while parent is not None and not isinstance(parent, ast.Module):
            node, parent = parent, parents.get(parent)
        return node if parent is not None else None

    def _decided(self, site: KernelSite, fn: ast.FunctionDef) -> bool:
        """Whether what the rules read of the kernel built in `fn` cannot depend on how
        `fn` is called: not TPU, interpret mode on whatever the arguments, or neither the
        kernel function, the compiler params nor the mesh come from `fn`'s parameters.
        (An `interpret=` parameter alone does not count: a kernel whose `interpret` is not
        provably true is already checked as the production path.) Kept on the site,
        which the cache keeps while its statement is unchanged."""
        if site.decided is None:
            kind = site.kind
            site.decided = (
                kind is KernelKind.SPARSECORE
                or kind is KernelKind.NOT_TPU
                or site.mosaic is Mosaic.NOT_USED
                or not self._uses_parameters(_read_by_rules(site), fn)
            )
        return site.decided

    def _uses_parameters(self, exprs: list[ast.expr], fn: ast.FunctionDef) -> bool:
        """Whether `exprs` (in `fn`) may read one of `fn`'s parameters, directly, through
        `fn`'s own variables, or through a def nested in `fn` (a kernel closing over them).
        Read from the source text: a word that is also an attribute or keyword name only
        makes the kernel be looked at again, with the call's arguments, for nothing."""
        inner = fn.__dict__.get("_pl_inner")
        if inner is None:
            return True
        local = inner.bindings
        text = self.module.text
        pending = set()
        for e in exprs:
            if type(e) is ast.Name:  # most kernel functions: no need for the text
                if e.id in local:
                    pending.add(e.id)
            else:
                pending.update(w for w in _WORD.findall(text(e)) if w in local)
        seen: set[str] = set()
        while pending:
            name = pending.pop()
            seen.add(name)
            for b in local[name]:
                if type(b) is ParamBinding or type(b) is DefBinding:
                    return True
                value = getattr(b, "value", None)
                if value is None:
                    return True  # bound by a loop, `with`, ...: may come from a parameter
                for w in _WORD.findall(text(_partial_target(value))):
                    if w in local and w not in seen:
                        pending.add(w)
        return False

    def _site_from_decorator(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, dec: ast.expr
    ) -> KernelSite | None:
        value = self.ev.eval(dec, self.ctx)
        if not value or len(value) != 1 or not isinstance(value[0], EntryFactory):
            return None
        entry = value[0]
        if entry_body(entry) is not None:
            return None
        fake = ast.Name(id=fn.name, ctx=ast.Load())
        ast.copy_location(fake, fn)
        entry = EntryFactory(
            entry.entry, (*entry.args, (fake, self.ctx)), entry.kwargs, (*entry.nodes, dec)
        )
        # The decorator order matters little here: the body is the decorated function itself.
        return KernelSite(entry, dec, self.ctx, None, decorated=fn)

    # -- classification -----------------------------------------------------------------
    def _classify(self, site: KernelSite) -> None:
        params_kw = self._keyword(site.entry, "compiler_params")
        site.params_keyword = params_kw if params_kw is not _UNKNOWN_KEYWORD else None
        if site.params_keyword is not None:
            site.params = self.ev.eval(site.params_keyword[0].value, site.params_keyword[1])
        if params_kw is _UNKNOWN_KEYWORD:
            params_kind = "unknown"  # `**kwargs` that may hold them
        elif params_kw is not None:
            params_kind = _params_kind(site.params)
        else:
            params_kind = "absent"

        if site.entry.entry == "pallas_call":
            if params_kind == "gpu" or (params_kind != "tpu" and self._gpu_only_module()):
                site.kind = KernelKind.NOT_TPU
            else:
                site.kind = KernelKind.TENSORCORE
                site.kind_reason = "pl.pallas_call always lowers a TensorCore kernel"
        else:
            mesh = entry_mesh(site.entry)
            if mesh is not None:
                site.mesh_node = mesh[0]
                site.kind = self._mesh_kind(self.ev.eval(mesh[0], mesh[1]))
                if site.kind is KernelKind.TENSORCORE:
                    site.kind_reason = "its mesh is a pltpu.TensorCoreMesh"
            if params_kind == "gpu":
                site.kind = KernelKind.NOT_TPU
        site.mosaic = self._mosaic(site, params_kind)

    def _mesh_kind(self, values: list[Value] | None) -> KernelKind:
        if not values:
            return KernelKind.UNKNOWN
        kinds = set()
        for v in values:
            if isinstance(v, Mesh):
                kinds.add(
                    {"tc": KernelKind.TENSORCORE, "sc": KernelKind.SPARSECORE}.get(
                        v.kind, KernelKind.NOT_TPU
                    )
                )
            elif isinstance(v, Seq):
                inner = [self._mesh_kind(item) for item in v.items]
                if len(inner) == 1:
                    kinds.add(inner[0])
                elif inner and all(k is KernelKind.SPARSECORE for k in inner):
                    kinds.add(KernelKind.SPARSECORE)
                else:
                    # MPMD with a TensorCore mesh fails with another error first.
                    return KernelKind.UNKNOWN
            else:
                return KernelKind.UNKNOWN
        return kinds.pop() if len(kinds) == 1 else KernelKind.UNKNOWN

    def _mosaic(self, site: KernelSite, params_kind: str) -> Mosaic:
        if params_kind not in {"absent", "tpu"}:
            return Mosaic.UNKNOWN
        if self._interpret_forced(site.anchor):
            return Mosaic.NOT_USED
        if self._only_traced(site.anchor):
            return Mosaic.NOT_USED
        kw = self._keyword(site.entry, "interpret")
        if kw is None:
            return Mosaic.USED
        if kw is _UNKNOWN_KEYWORD:
            return Mosaic.UNKNOWN  # `**kwargs` that may hold `interpret=True`
        value = self.ev.eval(kw[0].value, kw[1])
        t = truthiness(value)
        if t is None and isinstance(kw[0].value, ast.BoolOp | ast.Name):
            t = self._truth(kw[0].value, kw[1])
        if t is False:
            return Mosaic.USED
        if t is True:
            return Mosaic.NOT_USED
        if value and any(_mosaic_interpret_value(v) for v in value):
            # `InterpretParams() if debug else False`, or a flag assigned True in one place
            # and False in another: the code spells out a path without interpret mode, the
            # production one (policy G.2: only a provably truthy interpret removes it).
            return Mosaic.USED_UNLESS_INTERPRET
        if value and any(isinstance(v, Interpret) for v in value):
            # pl.kernel/core_map ignore interpret on TPU, but such code targets CPU: suppress.
            return Mosaic.NOT_USED
        if value and all(isinstance(v, Const) for v in value):
            return Mosaic.UNKNOWN
        # A variable or parameter: the production path lowers with Mosaic (policy G.2).
        return Mosaic.USED_UNLESS_INTERPRET

    def _only_traced(self, anchor: ast.AST) -> bool:
        """The built kernel goes straight into `jax.eval_shape(...)` or `jax.make_jaxpr(...)`,
        which trace it for shapes or a jaxpr and never lower it; or into `jax.jit(...)`
        whose only use is `.eval_shape(...)`, or `.trace(...)` with the result dropped or
        read for what tracing gives (`.out_info`, `.jaxpr`): `.lower()` of it lowers."""
        parents = self.module.parents
        parent = parents.get(anchor)
        if not (isinstance(parent, ast.Call) and parent.args and parent.args[0] is anchor):
            return False
        qual = self.module.qualname(parent.func)
        if qual in _TRACE_ONLY:
            return True
        if qual != "jax.jit":
            return False
        method = parents.get(parent)
        call = parents.get(method) if method is not None else None
        if not (
            isinstance(method, ast.Attribute)
            and method.value is parent
            and isinstance(call, ast.Call)
            and call.func is method
        ):
            return False
        if method.attr == "eval_shape":
            return True
        if method.attr != "trace":
            return False
        use = parents.get(call)
        return isinstance(use, ast.Expr) or (
            isinstance(use, ast.Attribute) and use.attr in _TRACED_FACTS
        )

    def _keyword(self, entry: EntryFactory, name: str) -> tuple[ast.keyword, Ctx] | _Unknown | None:
        """The keyword argument `name` of an entry point, as the last call that gives it
        (a partial's keywords, then the call's): by name, or in a `**` dict written right
        there (`**dict(interpret=True)`, `**{"interpret": True}`). _UNKNOWN_KEYWORD when
        a later `**` argument cannot be read: it may hold it (a named dict may be changed
        after it is made). Python rejects a name given both ways in one call, so there a
        named one decides."""
        found: tuple[ast.keyword, Ctx] | _Unknown | None = None
        starred = False
        for kw, ctx in entry.kwargs:  # the common case first: no `**` at all
            if kw.arg == name:
                found = (kw, ctx)
            elif kw.arg is None:
                starred = True
        if not starred:
            return found
        found = None
        found_in: ast.AST | None = None
        for kw, ctx in entry.kwargs:
            call = kw.__dict__.get("_pl_parent")
            if kw.arg == name:
                found, found_in = (kw, ctx), call
            elif kw.arg is None:
                items = literal_kwargs(kw.value)
                if items is None:
                    if found is None or found_in is not call:
                        found, found_in = _UNKNOWN_KEYWORD, call
                    continue
                for item in items:
                    if item.arg == name:
                        found, found_in = (item, ctx), call
        return found

    def _truth(self, expr: ast.expr, ctx: Ctx, depth: int = 0) -> bool | None:
        """Truthiness of `a or b` / `a and b` when one operand decides it, whatever the
        others are: `mode or pltpu.InterpretParams()` is always truthy, also through a
        variable bound once to it."""
        if type(expr) is ast.Name and depth < 4:
            module = ctx.module
            found = module.lookup(expr.id, module.scope_of(expr))
            if self.ev.recorder is not None:
                self.ev.recorder.note(module, expr.id, found)
            if found is not None and len(found[1]) == 1 and type(found[1][0]) is AssignBinding:
                value = found[1][0].value
                if isinstance(value, ast.BoolOp | ast.Name):
                    return self._truth(value, ctx, depth + 1)
            if depth == 0:
                return None  # the caller evaluated it already
        if not isinstance(expr, ast.BoolOp):
            return truthiness(self.ev.eval(expr, ctx))
        parts = [self._truth(operand, ctx, depth + 1) for operand in expr.values]
        decisive = isinstance(expr.op, ast.Or)  # `or` stops at a truthy operand
        if decisive in parts:
            return decisive
        if all(part is (not decisive) for part in parts):
            return not decisive
        return None

    def _find_interpret_mode(self) -> tuple[bool, bool]:
        """(module calls set_tpu_interpret_mode, module uses force_tpu_interpret_mode)."""
        set_mode = force = False
        if "interpret_mode" not in self.module.source:
            return set_mode, force
        for node in ast.walk(self.module.tree):
            if isinstance(node, _NAME_OR_ATTR):
                name = jaxapi.canonical(self.module.qualname(node))
                if name == "set_tpu_interpret_mode":
                    set_mode = True
                elif name == "force_tpu_interpret_mode":
                    force = True
        return set_mode, force

    def _interpret_forced(self, anchor: ast.AST) -> bool:
        set_mode, force = self._interpret_mode_refs
        if set_mode:
            return True
        if not force:
            return False
        # Inside a function, the kernel may be built under the context manager of a caller.
        return self.module.enclosing_function(anchor) is not None or any(
            isinstance(a, ast.With) for a in self.module.ancestors(anchor)
        )

    def _gpu_only_module(self) -> bool:
        mods = self.module.imported_modules
        gpu = any(m.startswith(jaxapi.GPU_MODULES) for m in mods)
        tpu = any(m.startswith(jaxapi.TPU_MODULES) for m in mods)
        return gpu and not tpu

    # -- reachability -------------------------------------------------------------------
    def reached(self, site: KernelSite) -> list[Reached]:
        if site._reached is not None:
            return site._reached
        out: list[Reached] = []

        def root_chain() -> tuple[Related, ...]:  # each Reached keeps what it built
            return tuple(site.evidence())

        via = site.anchor if site.decorated is not None else site.body[0] if site.body else None
        roots = [
            # A body that returns a value fails when traced: it reaches nothing lowered.
            None
            if self._may_return_a_value(fn)
            else Reached(fn.node, _callback_ctx(fn), root_chain, via)
            for fn in self._kernel_bodies(site)
        ]
        site.roots = len(roots)
        for index, root in enumerate(roots):
            if root is None:
                continue
            root.root = index
            seen: set[tuple[int, int]] = set()
            work = [root]
            while work and len(out) < MAX_REACHED_FUNCTIONS:
                item = work.pop()
                key = (id(item.fn), id(item.ctx.env[0][1]) if item.ctx.env else 0)
                if key in seen:
                    continue
                seen.add(key)
                out.append(item)
                for callee in self._callees(item):
                    callee.root = index
                    work.append(callee)
        site._reached = out
        return out

    def returns_a_value(self, site: KernelSite) -> bool:
        """Every function the site's kernel body may be returns something other than None:
        JAX fails when it traces the kernel, before any lowering error can fire."""
        fns = self._kernel_bodies(site)
        return bool(fns) and all(self._may_return_a_value(fn) for fn in fns)

    def _may_return_a_value(self, fn: Func, depth: int = 0) -> bool:
        """A kernel body that may return something other than None: JAX then stops after
        tracing it ("The kernel function ... should return None"), before Mosaic lowers
        anything, so no lowering error of its code is provable. `return helper(...)` is
        None when the helper is a plain function that returns nothing else (a lambda's
        call is taken to be None, as before)."""
        values = _returned_values(fn.node, fn.ctx.module)
        if isinstance(fn.node, ast.Lambda):
            return bool(values) and not isinstance(values[0], ast.Call)
        for value in values:
            if type(value) is not ast.Call or depth >= 3:
                return True
            assert isinstance(value, ast.Call)
            callees = self.ev.eval(value.func, fn.ctx)
            if not callees or not all(isinstance(c, Func) for c in callees):
                return True  # a library function, or unknown
            for callee in callees:
                assert isinstance(callee, Func)
                node = callee.node
                if isinstance(node, ast.Lambda) or node.decorator_list:
                    return True
                if self._may_return_a_value(callee, depth + 1):
                    return True
        return False

    def _kernel_bodies(self, site: KernelSite) -> list[Func]:
        """The functions the site's kernel body may be."""
        if site.decorated is not None:
            return [Func(site.decorated, self.ctx)]
        if site.body is None:
            return []
        return self._functions(self.ev.eval(site.body[0], site.body[1]))

    def _functions(self, values: list[Value] | None) -> list[Func]:
        out: list[Func] = []
        for v in values or []:
            if isinstance(v, Func):
                out.append(v)
            elif isinstance(v, Seq):
                for item in v.items:
                    out.extend(self._functions(item))
        return out

    def _callees(self, item: Reached) -> list[Reached]:
        out: list[Reached] = []
        module = item.ctx.module
        item.live = live_nodes(item.fn, item.ctx, self.ev)
        for node in item.live:
            if isinstance(node, ast.Call):
                if _library_call(module, node.func):
                    # jnp.dot, lax.conv, ...: never a user function, and its function-typed
                    # arguments (loop and cond bodies) are handled below.
                    callee = None
                else:
                    callee = self._cheap_eval(node.func, item.ctx)
                fns = self._functions(callee)
                if len({id(fn.node) for fn in fns}) > 1:
                    # One of several functions (`k = a if flag else b`, then `k(x)`), and
                    # this context does not decide which: none of them is provably traced.
                    fns = []
                for fn in fns:
                    if _is_generator(fn.node):
                        continue  # the call makes a generator: the body runs when it is iterated
                    inner = bind_arguments(fn, node, item.ctx)
                    if inner is not None:
                        out.append(self._hop(item, fn, inner, node, module, node))
                if _never_lowered(module, node.func):
                    continue  # jax.checkpoint fails first: "Unimplemented primitive ... remat2"
                func = node.func
                name = func.attr if type(func) is ast.Attribute else getattr(func, "id", None)
                if name in _PIPELINES and _pipeline_never_run(module, node, item, self.ev):
                    continue  # its body is traced when the pipeline runs, and it never does
                if (
                    name in _LAZY_BUILTINS
                    and type(func) is ast.Name
                    and module.is_builtin(func)
                    and never_consumed(module, node)
                ):
                    continue  # `map(f, xs)` calls `f` only when it is iterated
                branching = _branching(module, node.func)
                args = [*node.args, *(k.value for k in node.keywords)]
                if branching is not None:
                    args = self._taken_branches(node, branching, item.ctx)
                elif self._no_iteration(node, item.ctx):
                    continue  # a loop body Mosaic never lowers
                for arg in args:
                    if isinstance(arg, _MAY_BE_FUNCTION):
                        if isinstance(arg, ast.Call) and not _is_partial_like(arg):
                            continue
                        if isinstance(arg, ast.Attribute) and _library_call(module, arg):
                            continue  # jnp.float32, lax.Precision.HIGHEST: never user code
                        for fn in self._functions(self._cheap_eval(arg, item.ctx)):
                            out.append(self._hop(item, fn, _callback_ctx(fn), arg, module, node))
            elif isinstance(node, _DEFS) and node is not item.fn:
                if node.decorator_list and self._decorator_traces(node, item.ctx):
                    fn = Func(node, item.ctx)
                    out.append(self._hop(item, fn, _callback_ctx(fn), node, module))
        return out

    def _no_iteration(self, call: ast.Call, ctx: Ctx) -> bool:
        """`lax.fori_loop(lo, hi, body, init)` with `hi <= lo`, or `lax.scan(f, init,
        length=0)` with no `xs`, where this context knows the numbers: a static trip count
        of 0. Mosaic lowers a loop body only when the loop runs at least once. Also
        `functools.reduce(f, seq, ...)` over a sequence known to be empty: `f` is never
        called."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr not in ("fori_loop", "scan", "reduce"):
            return False
        qual = ctx.module.qualname(func)
        if qual == "functools.reduce":
            return (
                len(call.args) >= 2
                and not any(isinstance(a, ast.Starred) for a in call.args[:2])
                and _statically_empty(call.args[1], ctx, self.ev)
            )
        if qual == "jax.lax.fori_loop":
            return empty_range(fori_bounds(self.ev, call, ctx))
        if qual == "jax.lax.scan":
            xs = argument_value(call, 2, "xs")
            if xs is not None and not (isinstance(xs, ast.Constant) and xs.value is None):
                return False
            return static_int(self.ev, argument_value(call, 3, "length"), ctx) == 0
        return False

    def _taken_branches(self, call: ast.Call, kind: str, ctx: Ctx) -> list[ast.expr]:
        """The arguments of `lax.cond(pred, on_true, on_false, *operands)` or
        `lax.switch(index, [branch, ...], *operands)` that may be functions the kernel
        traces and lowers: all branches, or only the one a constant predicate or index
        selects (Mosaic folds a constant index and lowers that branch alone)."""
        args = call.args
        keywords = [k.value for k in call.keywords]
        if kind == "cond":
            if len(args) < 3:
                return [*args, *keywords]
            taken = truthiness(self.ev.eval(args[0], ctx))
            if taken is None and _from_metadata(args[0]):
                # `x.shape[0] > 4`: a Python bool when traced; Mosaic lowers one branch,
                # which one this analysis does not know.
                return [*args[3:], *keywords]
            branches = [args[1]] if taken is True else [args[2]] if taken is False else args[1:3]
            return [*branches, *args[3:], *keywords]
        if len(args) < 2:
            return [*args, *keywords]
        table = args[1]
        items = list(table.elts) if isinstance(table, ast.List | ast.Tuple) else [table]
        values = self.ev.eval(args[0], ctx)
        index = (
            values[0].value
            if values and len(values) == 1 and isinstance(values[0], Const)
            else None
        )
        if index is None and _from_metadata(args[0]):
            return [*args[2:], *keywords]  # a static index: one branch, not known which
        if (
            isinstance(table, ast.List | ast.Tuple)
            and items
            and not any(isinstance(e, ast.Starred) for e in items)
            and isinstance(index, int)  # a bool too
        ):
            chosen = min(max(index, 0), len(items) - 1)  # switch clamps it
            items = [items[chosen]]
        return [*items, *args[2:], *keywords]

    def _cheap_eval(self, expr: ast.expr, ctx: Ctx) -> list[Value] | None:
        return self.ev.eval(expr, ctx)

    def _hop(
        self,
        item: Reached,
        fn: Func,
        ctx: Ctx,
        node: ast.AST,
        module: ModuleInfo,
        result: ast.AST | None = None,
    ) -> Reached:
        name = getattr(fn.node, "name", "<lambda>")
        path = None if module is self.module else module.path

        def chain() -> tuple[Related, ...]:
            return (*item.chain, Related(f"reaches `{name}` here", module.span(node), path))

        # `via`: the last node in the analysed file on the way (where a finding about code in
        # another module is shown).
        via = node if module is self.module else item.via
        result_use = (result, item) if result is not None else None
        return Reached(fn.node, ctx, chain, via, result_use, trace=(node, item))

    def _decorator_traces(self, node: ast.FunctionDef | ast.AsyncFunctionDef, ctx: Ctx) -> bool:
        """A nested def is traced where it stands when a decorator calls it at once:
        `pl.when(...)`, `pl.loop(...)`, `run_scoped` (also through `functools.partial`),
        except under `pl.when(<falsy constant>)`. Under `jax.jit`, `jax.vmap`,
        `functools.lru_cache`, ... it runs only where it is called, and reachability
        follows those calls."""
        module = ctx.module
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            qual = module.qualname(target)
            if qual is not None and jaxapi.canonical(qual) == "partial":
                if not (isinstance(dec, ast.Call) and dec.args):
                    return False
                qual = module.qualname(dec.args[0])
            if qual is None or not qual.startswith("jax."):
                return False
            name = jaxapi.canonical(qual)
            if name not in {"when", "loop"} and qual.rsplit(".", 1)[-1] not in _RUN_AT_ONCE:
                return False
            if name == "when" and isinstance(dec, ast.Call) and dec.args:
                truth = truthiness(self.ev.eval(dec.args[0], ctx))
                if truth is False or (truth is None and self._may_be_false(dec.args[0], ctx)):
                    # `pl.when(False)` never calls its body; a test that is False on one
                    # way here (`x = lax.select(...) if causal else False`) is undecided.
                    return False
            if name == "loop" and isinstance(dec, ast.Call) and self._no_trips(dec, ctx):
                return False
        return True

    def _may_be_false(self, expr: ast.expr, ctx: Ctx, depth: int = 0) -> bool:
        """`expr` is a Python false constant on some way through this context: an
        alternative the evaluator gives, a side of a conditional expression, or a binding
        of the name to one."""
        if depth > 4:
            return False
        if isinstance(expr, ast.Constant):
            return not expr.value
        values = self.ev.eval(expr, ctx)
        if values and any(truthiness([v]) is False for v in values):
            return True
        if isinstance(expr, ast.IfExp):
            return self._may_be_false(expr.body, ctx, depth + 1) or self._may_be_false(
                expr.orelse, ctx, depth + 1
            )
        if isinstance(expr, ast.Name):
            found = ctx.module.lookup(expr.id, ctx.module.scope_of(expr))
            for b in found[1] if found is not None else ():
                if isinstance(b, AssignBinding) and self._may_be_false(b.value, ctx, depth + 1):
                    return True
        return False

    def _no_trips(self, loop: ast.Call, ctx: Ctx) -> bool:
        """`@pl.loop(lower, upper[, step])` whose static bounds give no iteration: its body
        is never traced."""
        if not 1 <= len(loop.args) <= 3 or any(isinstance(a, ast.Starred) for a in loop.args):
            return False
        bounds = [static_int(self.ev, a, ctx) for a in loop.args]
        step = next((k.value for k in loop.keywords if k.arg == "step"), None)
        if step is not None:
            bounds.append(static_int(self.ev, step, ctx))
        return len(bounds) >= 2 and empty_range(bounds)


# Functions that trace what they are given without lowering it.
_TRACE_ONLY = frozenset({"jax.eval_shape", "jax.make_jaxpr"})
# What `jax.jit(f).trace(...)` gives that needs no lowering (`.lower` is the other way on).
_TRACED_FACTS = frozenset(
    {"args_info", "fun_name", "in_avals", "in_tree", "jaxpr", "out_avals", "out_info", "out_tree"}
)

# Pallas helpers that call the function they decorate right away (by their last name,
# under jax.): `@functools.partial(pl.run_scoped, ...)`.
_RUN_AT_ONCE = frozenset({"run_scoped", "run_state"})

NEVER_LOWERED = frozenset(
    {"jax.checkpoint", "jax.remat", "jax.ad_checkpoint.checkpoint", "jax.ad_checkpoint.remat"}
)


def _returned_values(fn: FunctionNode, module: ModuleInfo) -> list[ast.expr]:
    """What a function's `return` statements give other than a literal None (a lambda:
    its body), cached on the node: it depends on the function's own text only."""
    if isinstance(fn, ast.Lambda):
        body = fn.body
        return [] if type(body) is ast.Constant and body.value is None else [body]
    cached = fn.__dict__.get("_pl_returns")
    if cached is None:
        lines = module.lines[fn.lineno - 1 : fn.end_lineno or fn.lineno]
        # Most kernels never spell `return`: no walk of their bodies (~0.1 ms each).
        cached = []
        if any("return" in line for line in lines):
            cached = [
                stmt.value
                for block in _blocks(fn)
                for stmt in block
                if type(stmt) is ast.Return
                and stmt.value is not None
                and not (type(stmt.value) is ast.Constant and stmt.value.value is None)
            ]
        fn._pl_returns = cached  # type: ignore[union-attr]
    return cached


def _library_call(module: ModuleInfo, func: ast.expr) -> bool:
    """`<import of jax/numpy/...>.attr(...)`: a library function, not user code."""
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    if root is func or not isinstance(root, ast.Name):
        return False
    found = module.lookup(root.id, module.scope_of(root))
    if found is None:
        return False
    return all(
        isinstance(b, ImportBinding) and b.level == 0 and b.qualname.split(".")[0] in LIBRARIES
        for b in found[1]
    )


LIBRARIES = frozenset({"jax", "jaxlib", "numpy", "functools", "math", "dataclasses", "ml_dtypes"})


_NEVER_LOWERED_LAST = frozenset(name.rsplit(".", 1)[-1] for name in NEVER_LOWERED)


_FORI_BOUNDS = ((0, "lower"), (1, "upper"))


def static_int(ev: Evaluator, expr: ast.expr | None, ctx: Ctx) -> int | None:
    """The one int (not a bool) `expr` evaluates to in this context, if it is known."""
    values = ev.eval(expr, ctx) if expr is not None else None
    if not values or len(values) != 1 or not isinstance(values[0], Const):
        return None
    value = values[0].value
    return value if type(value) is int else None


def fori_bounds(ev: Evaluator, call: ast.Call, ctx: Ctx) -> list[int | None]:
    """`lax.fori_loop(lower, upper, ...)`'s bounds where this context knows them."""
    return [static_int(ev, argument_value(call, i, n), ctx) for i, n in _FORI_BOUNDS]


def fori_is_scan(ev: Evaluator, call: ast.Call, ctx: Ctx) -> bool:
    """JAX runs this `lax.fori_loop` as a scan: both bounds are static (known ints, shapes,
    lengths, arithmetic on them), or `unroll` is given (which a traced bound rejects)."""
    for kw in call.keywords:
        if kw.arg == "unroll" and not (
            isinstance(kw.value, ast.Constant) and kw.value.value in (None, False, 1)
        ):
            return True
    return all(_static_number(ev, argument_value(call, i, n), ctx, 0) for i, n in _FORI_BOUNDS)


def fori_is_while(ev: Evaluator, call: ast.Call, ctx: Ctx) -> bool:
    """JAX provably runs this `lax.fori_loop` (or `@pl.loop(...)`) as a while loop: no
    `unroll` above 1, and a bound that is provably traced (it reads a ref, `n_ref[0]`, or
    is `pl.program_id(...)`). A bound the analysis cannot read is neither."""
    for kw in call.keywords:
        if kw.arg == "unroll" and not (
            isinstance(kw.value, ast.Constant) and kw.value.value in (None, False, 1)
        ):
            return False
    return any(_provably_traced(ctx.module, argument_value(call, i, n)) for i, n in _FORI_BOUNDS)


def _provably_traced(module: ModuleInfo, expr: ast.AST | None, depth: int = 0) -> bool:
    """`expr` computes on a value read from a ref (`n_ref[0]`, a parameter named `*ref`
    subscripted) or on `pl.program_id(...)`, also through local names every binding of
    which does (`length = lengths_ref[b]`): an array while a kernel is traced. What only
    reads an array's metadata (`x.shape[0]`, `len(x)`) is not."""
    if expr is None or depth > 12:
        return False
    if isinstance(expr, ast.Attribute) and expr.attr in _STATIC_ATTRS:
        return False
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Name) and expr.func.id == "len":
            return False
        if jaxapi.canonical(module.qualname(expr.func)) == "program_id":
            return True
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
        if expr.value.id.endswith("ref"):
            found = module.lookup(expr.value.id, module.scope_of(expr.value))
            if found is not None and all(isinstance(b, ParamBinding) for b in found[1]):
                return True
    if isinstance(expr, ast.Name) and isinstance(expr.ctx, ast.Load):
        found = module.lookup(expr.id, module.scope_of(expr))
        bindings = found[1] if found is not None else []
        return bool(bindings) and all(
            isinstance(b, AssignBinding) and _provably_traced(module, b.value, depth + 4)
            for b in bindings
        )
    return any(_provably_traced(module, c, depth + 1) for c in ast.iter_child_nodes(expr))


def _static_number(ev: Evaluator, expr: ast.expr | None, ctx: Ctx, depth: int) -> bool:
    """`expr` is a Python number while tracing: a known int, `x.shape[i]`, `x.ndim`,
    `len(x)`, `pl.num_programs(i)`, `pl.cdiv` of such, or arithmetic on such."""
    if expr is None or depth > 8:
        return False
    if static_int(ev, expr, ctx) is not None:
        return True
    module = ctx.module
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape"
    if isinstance(expr, ast.Attribute):
        return expr.attr == "ndim"
    if isinstance(expr, ast.BinOp):
        return _static_number(ev, expr.left, ctx, depth + 1) and _static_number(
            ev, expr.right, ctx, depth + 1
        )
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
        return _static_number(ev, expr.operand, ctx, depth + 1)
    if isinstance(expr, ast.Call) and module.qualname(expr.func) == f"{jaxapi.PL}.num_programs":
        # A Python int for a static grid; traced only for a dynamic one (not told apart:
        # taking it as static can only drop a report, never make one).
        return True
    if (
        isinstance(expr, ast.Call)
        and module.qualname(expr.func) == f"{jaxapi.PL}.cdiv"
        and len(expr.args) == 2
        and not expr.keywords
    ):
        # `pl.cdiv(a, b)` of two Python ints is a Python int.
        return all(_static_number(ev, a, ctx, depth + 1) for a in expr.args)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
        if not module.is_builtin(expr.func) or expr.keywords:
            return False
        if expr.func.id == "len" and len(expr.args) == 1:
            return True
        return expr.func.id in ("int", "min", "max") and all(
            _static_number(ev, a, ctx, depth + 1) for a in expr.args
        )
    if isinstance(expr, ast.Name):
        found = module.lookup(expr.id, module.scope_of(expr))
        if found is None or not found[1]:
            return False
        return all(
            isinstance(b, AssignBinding) and _static_number(ev, b.value, ctx, depth + 1)
            for b in found[1]
        )
    return False


def _is_generator(fn: ast.AST) -> bool:
    """A def whose own body yields (cached on the node)."""
    cached = fn.__dict__.get("_pl_generator")
    if cached is None:
        cached = False
        stack: list[ast.AST] = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)  # type: ignore[attr-defined]
        while stack and not cached:
            node = stack.pop()
            if isinstance(node, ast.Yield | ast.YieldFrom):
                cached = True
            elif not isinstance(node, _NEW_SCOPE):
                stack.extend(ast.iter_child_nodes(node))
        fn._pl_generator = cached  # type: ignore[attr-defined]
    return cached


def _branching(module: ModuleInfo, func: ast.expr) -> str | None:
    """ "cond" for `lax.cond`, "switch" for `lax.switch`, else None."""
    if isinstance(func, ast.Attribute) and func.attr not in ("cond", "switch"):
        return None
    qual = module.qualname(func)
    if qual == "jax.lax.cond":
        return "cond"
    if qual == "jax.lax.switch":
        return "switch"
    return None


def _never_lowered(module: ModuleInfo, func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute) and func.attr not in _NEVER_LOWERED_LAST:
        return False  # a qualified name ends with the attr: cheaper than resolving it
    return module.qualname(func) in NEVER_LOWERED


_PIPELINES = frozenset({"emit_pipeline", "emit_pipeline_with_allocations"})


def _pipeline_never_run(module: ModuleInfo, call: ast.Call, item: Reached, ev: Evaluator) -> bool:
    """`pipeline = pltpu.emit_pipeline(body, ...)` (or the bare call) and the pipeline is
    never called or passed on: no name in the function reads it, so `body` is not traced.
    A helper that returns the pipeline: the same question where the helper is called."""
    qual = module.qualname(call.func)  # the caller checked the last name
    if qual is None or not qual.startswith("jax.") or qual.rsplit(".", 1)[-1] not in _PIPELINES:
        return False
    return _never_called(module, call, item, ev, 0)


def _never_called(
    module: ModuleInfo, value: ast.AST, item: Reached, ev: Evaluator, depth: int
) -> bool:
    """The function object `value` evaluates to is dropped, or bound to a name nothing
    that may run reads; through `return`, where the function returning it is called."""
    if depth > 5:
        return False
    parent = module.parents.get(value)
    if isinstance(parent, ast.Expr):
        return True
    if isinstance(parent, ast.Return) and parent.value is value:
        use = item.result_use
        if use is None or not isinstance(use[0], ast.Call):
            return False  # a kernel body's value, or a callback's: not followed
        if module.enclosing_function(value) is not item.fn:
            return False  # returned by a nested function: not this function's value
        call, caller = use
        if item.trace is None or item.trace[0] is not call:
            return False  # handed to a library function (a loop, a cond), not called here
        return _never_called(caller.ctx.module, call, caller, ev, depth + 1)
    if not (isinstance(parent, ast.Assign) and parent.value is value and len(parent.targets) == 1):
        return False
    target = parent.targets[0]
    if not isinstance(target, ast.Name):
        return False
    fn = module.enclosing_function(value)
    if fn is None:
        return False
    return not _any_read_runs(module, target.id, fn, item, ev, depth)


def _any_read_runs(
    module: ModuleInfo, name: str, fn: ast.AST, item: Reached, ev: Evaluator, depth: int
) -> bool:
    """Whether a read of `name` in `fn` may call the function object it is bound to."""
    return any(
        isinstance(n, ast.Name)
        and n.id == name
        and isinstance(n.ctx, ast.Load)
        and _read_runs(module, n, fn, item, ev, depth)
        for n in ast.walk(fn)
    )


def _read_runs(
    module: ModuleInfo, read: ast.Name, fn: ast.AST, item: Reached, ev: Evaluator, depth: int
) -> bool:
    """Whether `read`, a read in `fn` of a name bound to a function object, may call it or
    pass it on. Not when the read never runs (`may_run`), when it sits in a lambda or a
    plain nested def that is never called, or when it hands the object to a plain helper
    that never reads the parameter it lands in."""
    if not may_run(module, read, fn) or in_uncalled_closure(module, read, fn, item, ev, depth):
        return False
    hand_over = passed_to(module, read)
    return hand_over is None or not ignored_by_callee(ev, item.ctx, *hand_over)


def in_uncalled_closure(
    module: ModuleInfo, node: ast.AST, fn: ast.AST, item: Reached, ev: Evaluator, depth: int = 0
) -> bool:
    """`node` sits in a lambda or a plain nested def of `fn` that is never called."""
    for scope in module.ancestors(node):
        if scope is fn:
            break
        if isinstance(scope, ast.Lambda):
            if _never_called(module, scope, item, ev, depth + 1):
                return True
        elif isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            if not scope.decorator_list and _def_never_called(module, scope, item, ev, depth + 1):
                return True
    return False


def _def_never_called(
    module: ModuleInfo,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    item: Reached,
    ev: Evaluator,
    depth: int,
) -> bool:
    """A nested def whose name nothing that may run reads (in the function around it)."""
    if depth > 5:
        return False
    fn = module.enclosing_function(node)
    if fn is None:
        return False
    return not _any_read_runs(module, node.name, fn, item, ev, depth)


def block_of(module: ModuleInfo, stmt: ast.stmt) -> list[ast.stmt] | None:
    """The statement list `stmt` sits in (a body, an else, a finally, ...)."""
    parent = module.parents.get(stmt)
    if parent is None:
        return None
    for name in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(parent, name, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            return block
    return None


def may_run(module: ModuleInfo, node: ast.AST, fn: ast.AST | None) -> bool:
    """False when `node` provably never runs as part of `fn` (None: its module): in a branch
    a literal test skips (`if False:`, the `else` of `if True:`, `while False:`), after a
    `return`/`raise`/`continue`/`break` in a block around it, or in a nested def under
    `@pl.when(<literal false>)`. Anything else may run."""
    child = node
    for parent in module.ancestors(node):
        if parent is fn:
            return True
        kind = type(parent)
        if kind is ast.If or kind is ast.While:
            truth = constant_truth(parent.test)  # type: ignore[attr-defined]
            if truth is False and any(s is child for s in parent.body):  # type: ignore[attr-defined]
                return False
            if truth is True and kind is ast.If and any(s is child for s in parent.orelse):  # type: ignore[attr-defined]
                return False
        if isinstance(child, ast.stmt):
            for stmt in block_of(module, child) or ():
                if stmt is child:
                    break
                if always_exits(stmt, constant_truth):
                    return False
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            for dec in parent.decorator_list:  # type: ignore[attr-defined]
                if (
                    isinstance(dec, ast.Call)
                    and dec.args
                    and constant_truth(dec.args[0]) is False
                    and jaxapi.canonical(module.qualname(dec.func)) == "when"
                ):
                    return False
        child = parent
    return True


def _params_kind(values: list[Value] | None) -> str:
    if not values:
        return "unknown"
    kinds = {v.kind if isinstance(v, Params) else "unknown" for v in values}
    if kinds == {"tpu"}:
        return "tpu"
    if kinds == {"gpu"}:
        return "gpu"
    if isinstance(values[0], Const) and values[0].value is None and len(values) == 1:
        return "absent"
    return "unknown"


def _is_partial_like(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "partial"


def _callback_ctx(fn: Func) -> Ctx:
    """A function JAX calls for us (a kernel body, a loop or cond body): its positional
    parameters are traced values (unknown); keyword-only ones keep their defaults."""
    node = fn.node
    args = node.args
    bound: dict[str, tuple[ast.expr, Ctx] | None] = {}
    positional = [*args.posonlyargs, *args.args]
    for i, param in enumerate(positional):
        if param.arg in fn.bound:
            bound[param.arg] = fn.bound[param.arg]
        elif i < len(fn.bound_positional):
            bound[param.arg] = fn.bound_positional[i]
        else:
            bound[param.arg] = None
    for param, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if param.arg in fn.bound:
            bound[param.arg] = fn.bound[param.arg]
        else:
            bound[param.arg] = (default, fn.ctx) if default is not None else None
    return fn.ctx.with_binding(node, bound)


Guards = tuple[
    tuple[ast.If | ast.IfExp | ast.For | ast.AsyncFor | ast.While | ast.match_case, bool], ...
]


def _statement_candidates(stmt: ast.stmt) -> list[ast.AST]:
    """Calls and decorated defs of a top-level statement, cached on it (ModuleInfo's
    visitor sets them while it walks the statement)."""
    cached: list[ast.AST] | None = stmt.__dict__.get("_pl_candidates")
    if cached is None:
        cached = [
            n
            for n in ast.walk(stmt)
            if (isinstance(n, ast.Call) and may_name_entry(n))
            or (isinstance(n, _DEFS) and n.decorator_list)
        ]
        stmt._pl_candidates = cached  # type: ignore[attr-defined]
    return cached


def _body_index(fn: FunctionNode) -> list[tuple[ast.AST, Guards]]:
    """The calls and nested defs a function body runs (not inside nested functions), each
    with the `if` branches it sits in. Cached on the function node."""
    cached = fn.__dict__.get("_pl_body")
    if cached is not None:
        return cached
    inner = fn.__dict__.get("_pl_inner")
    if inner is not None:
        # The visitor recorded what this body owns; only the `if` guards remain to find.
        indexed = [(node, _guards(node, fn)) for node in inner.owned]
        indexed = _drop_unreachable(indexed, fn)
        fn._pl_body = indexed  # type: ignore[union-attr]
        return indexed
    out: list[tuple[ast.AST, Guards]] = []
    start: list[ast.AST] = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)
    stack: list[tuple[ast.AST, Guards]] = [(n, ()) for n in reversed(start)]
    while stack:
        node, guards = stack.pop()
        if isinstance(node, _INDEXED):
            out.append((node, guards))
        if isinstance(node, _NEW_SCOPE):
            continue
        if isinstance(node, ast.If):
            stack.extend((n, (*guards, (node, False))) for n in reversed(node.orelse))
            stack.extend((n, (*guards, (node, True))) for n in reversed(node.body))
            stack.append((node.test, guards))
            continue
        if isinstance(node, ast.match_case):
            stack.extend((n, (*guards, (node, True))) for n in reversed(node.body))
            heads = [node.pattern] if node.guard is None else [node.pattern, node.guard]
            stack.extend((n, guards) for n in reversed(heads))
            continue
        if type(node) is ast.With and _compile_time_eval(node):
            with_: Any = node
            stack.extend((n, (*guards, (with_, True))) for n in reversed(with_.body))
            stack.extend((item, guards) for item in reversed(with_.items))
            continue
        if type(node) in LOOPS:
            loop: Any = node
            stack.extend((n, guards) for n in reversed(loop.orelse))
            stack.extend((n, (*guards, (loop, True))) for n in reversed(loop.body))
            heads = [loop.test] if isinstance(node, ast.While) else [loop.iter, loop.target]
            stack.extend((n, guards) for n in reversed(heads))
            continue
        stack.extend((child, guards) for child in reversed(list(ast.iter_child_nodes(node))))
    out = _drop_unreachable(out, fn)
    fn._pl_body = out  # type: ignore[union-attr]
    return out


# Statements holding blocks of statements (defs and classes are other functions' code).
_COMPOUND = frozenset(
    {ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match}
    | ({ast.TryStar} if hasattr(ast, "TryStar") else set())
)


def _blocks(fn: FunctionNode) -> Iterator[list[ast.stmt]]:
    """Every statement block of a function body (not of nested defs or classes)."""
    pending: list[list[ast.stmt]] = [] if isinstance(fn, ast.Lambda) else [fn.body]
    while pending:
        block = pending.pop()
        yield block
        for stmt in block:
            if type(stmt) not in _COMPOUND:
                continue
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, name, None)
                if inner:
                    pending.append(inner)
            pending.extend(handler.body for handler in getattr(stmt, "handlers", ()))
            pending.extend(case.body for case in getattr(stmt, "cases", ()))


def _drop_unreachable(
    indexed: list[tuple[ast.AST, Guards]], fn: FunctionNode
) -> list[tuple[ast.AST, Guards]]:
    """Without what follows a `return`, `raise`, `continue` or `break` in the same block:
    never traced (a conv there is never lowered)."""
    if isinstance(fn, ast.Lambda):
        return indexed
    dead: set[int] = set()
    for block in _blocks(fn):
        for index, stmt in enumerate(block):
            if always_exits(stmt, constant_truth):
                dead.update(id(x) for x in block[index + 1 :])
                break
    if not dead:
        return indexed
    out = []
    for node, guards in indexed:
        current: ast.AST | None = node
        while current is not None and current is not fn and id(current) not in dead:
            current = current.__dict__.get("_pl_parent")
        if current is None or current is fn:
            out.append((node, guards))
    return out


def _guards(node: ast.AST, fn: FunctionNode) -> Guards:
    """The `if` branches between a node and its function, innermost first."""
    guards: list[tuple[Any, bool]] = []
    below: ast.AST | None = None  # the child of `child` on the way up
    child = node
    parent = child.__dict__.get("_pl_parent")
    while parent is not None and parent is not fn:
        if type(parent) in _COMPREHENSIONS:
            # The element (and a later generator) is evaluated once per item of the
            # generators before it; a generator expression's, only once it is consumed.
            gens = parent.generators
            upto = len(gens)
            if type(child) is ast.comprehension:
                upto = next(i for i, g in enumerate(gens) if g is child)
                if below is not child.iter:
                    upto += 1
            guards.extend((g, True) for g in gens[:upto])
            for gen in gens[:upto]:
                ifs: list[ast.expr] = gen.ifs
                if not (gen is child and any(t is below for t in ifs)):
                    guards.extend((_Filter(t), True) for t in ifs)
            if type(parent) is ast.GeneratorExp and (upto or type(child) is not ast.comprehension):
                guards.append((_Consumed(parent), True))
        if type(parent) is ast.If and child is not parent.test:
            guards.append((parent, any(c is child for c in parent.body)))
        elif type(parent) is ast.IfExp and child is not parent.test:
            guards.append((parent, child is parent.body))
        elif type(parent) in _BODY_GUARDS and any(c is child for c in parent.body):
            guards.append((parent, True))  # a loop, a `match` case or an `except` clause
        elif type(parent) in LOOPS and any(c is child for c in parent.orelse):
            guards.append((_LoopElse(parent), True))
        elif type(parent) is ast.With and _compile_time_eval(parent) and child in parent.body:
            guards.append((parent, True))
        elif type(parent) is ast.BoolOp and child is not parent.values[0]:
            # `a and b` evaluates b only when a is truthy, `a or b` only when a is falsy.
            conjunction = type(parent.op) is ast.And
            for operand in parent.values:
                if operand is child:
                    break
                guards.append((_Operand(operand), conjunction))
        below, child, parent = child, parent, parent.__dict__.get("_pl_parent")
    return tuple(guards)


_COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp})


def _compile_time_eval(with_: Any, module: ModuleInfo | None = None) -> bool:
    """`with jax.ensure_compile_time_eval():` as spelled, and resolved to JAX's when `module`
    is given: what runs on concrete values in its body is computed at once, never traced."""
    for item in with_.items:
        call = item.context_expr
        if type(call) is ast.Call:
            func = call.func
            name = func.attr if type(func) is ast.Attribute else getattr(func, "id", None)
            if name == "ensure_compile_time_eval" and (
                module is None or module.qualname(func) == "jax.ensure_compile_time_eval"
            ):
                return True
    return False


def ruled_out(
    node: ast.AST, fn: FunctionNode, ctx: Ctx, ev: Evaluator, truths: dict[object, bool | None]
) -> bool:
    """`node` never runs when `fn` is traced in this context: a guard between them is
    decided against it (an `if` or conditional expression branch not taken, a loop over
    nothing, a `while` false when reached, a `match` case not taken, an `and`/`or` operand
    that is never evaluated, a generator expression nothing iterates). An undecided guard
    rules nothing out. `truths` caches each guard's truth for one context."""
    for guard, in_body in _guards(node, fn):
        inner = guard if isinstance(guard, ast.AST) else guard.inner()
        key = (type(guard), id(inner))
        if key not in truths:
            truths[key] = _guard_truth(guard, ctx, ev)
        truth = truths[key]
        if (in_body and truth is False) or (not in_body and truth is True):
            return True
    return False


class _Wrapper:
    """A guard that is not a node itself: what it stands for, around one node."""

    __slots__ = ()

    def inner(self) -> ast.AST:
        raise NotImplementedError


class _Filter(_Wrapper):
    """A comprehension's `if` filter as a guard: a false one skips every item (a filter
    the analysis cannot decide is taken to pass some, like a loop of unknown length)."""

    __slots__ = ("test",)

    def __init__(self, test: ast.expr) -> None:
        self.test = test

    def inner(self) -> ast.AST:
        return self.test


class _LoopElse(_Wrapper):
    """A loop's `else` as a guard: it runs when the loop ends without a `break`."""

    __slots__ = ("loop",)

    def __init__(self, loop: ast.stmt) -> None:
        self.loop = loop

    def inner(self) -> ast.AST:
        return self.loop


def _else_never_runs(loop: Any) -> bool:
    """`while True:` ends only by a break, return or raise; a loop that runs at least once
    and whose body always breaks, returns or raises never gets to its `else`."""
    if type(loop) is ast.While and constant_truth(loop.test) is True:
        return True
    return runs_at_least_once(loop) and block_exits(loop.body, constant_truth, ENDS_ITERATION)


class _Consumed(_Wrapper):
    """A generator expression as a guard: what it evaluates runs only when it is iterated."""

    __slots__ = ("lazy",)

    def __init__(self, lazy: ast.expr) -> None:
        self.lazy = lazy

    def inner(self) -> ast.AST:
        return self.lazy


def never_consumed(module: ModuleInfo, lazy: ast.expr) -> bool:
    """A lazy iterator (a generator expression, `map(...)`, `filter(...)`) that nothing
    iterates: a bare expression statement, or bound to a local name its function never reads
    (nor declares `global`/`nonlocal`, nor names `locals`/`vars`/`eval`/...)."""
    parent = module.parents.get(lazy)
    if type(parent) is ast.Expr:
        return True
    if not (
        type(parent) is ast.Assign
        and len(parent.targets) == 1
        and type(parent.targets[0]) is ast.Name
    ):
        return False
    name = parent.targets[0].id
    owner = module.enclosing_function(parent)
    if owner is None:
        return False  # a module-level name: another module may read it
    for n in ast.walk(owner):
        kind = type(n)
        if kind is ast.Name:
            if (n.id == name or n.id in INTROSPECTION) and type(n.ctx) is ast.Load:  # type: ignore[attr-defined]
                return False
        elif (kind is ast.Global or kind is ast.Nonlocal) and name in n.names:  # type: ignore[attr-defined]
            return False
    return True


_LAZY_BUILTINS = frozenset({"map", "filter"})


class _Operand(_Wrapper):
    """An operand of `and`/`or` that decides whether the operands after it are evaluated
    (a guard whose `test` is the operand itself)."""

    __slots__ = ("test",)

    def __init__(self, test: ast.expr) -> None:
        self.test = test

    def inner(self) -> ast.AST:
        return self.test


def _from_metadata(expr: ast.expr) -> bool:
    """An expression tracing evaluates in Python: constants and what arrays know before
    they are computed (`x.shape[0] > 4`, `x.ndim == 4`, `len(x) % 2`, `x.dtype == y.dtype`)."""
    kind = type(expr)
    if kind is ast.Constant:
        return True
    if kind is ast.Attribute:
        return expr.attr in _STATIC_ATTRS  # type: ignore[attr-defined]
    if kind is ast.Subscript:
        return _from_metadata(expr.value) and _from_metadata(expr.slice)  # type: ignore[attr-defined]
    if kind is ast.Compare:
        return _from_metadata(expr.left) and all(map(_from_metadata, expr.comparators))  # type: ignore[attr-defined]
    if kind is ast.BoolOp:
        return all(map(_from_metadata, expr.values))  # type: ignore[attr-defined]
    if kind is ast.BinOp:
        return _from_metadata(expr.left) and _from_metadata(expr.right)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return _from_metadata(expr.operand)  # type: ignore[attr-defined]
    if kind is ast.Call:
        func = expr.func  # type: ignore[attr-defined]
        return isinstance(func, ast.Name) and func.id == "len" and len(expr.args) == 1  # type: ignore[attr-defined]
    return False


_STATIC_ATTRS = frozenset({"shape", "ndim", "size", "dtype"})
# Python branches: when the analysis cannot decide one, nothing in it is provably traced.
# An `except` clause runs only when its `try` body raises while traced: never decided here.
_BRANCHES = frozenset({ast.If, ast.IfExp, ast.match_case, ast.ExceptHandler, _Operand, ast.With})
_BODY_GUARDS = LOOPS | {ast.match_case, ast.ExceptHandler}


_ITERATING = frozenset({ast.For, ast.AsyncFor, ast.comprehension})


def _guard_truth(guard: Any, ctx: Ctx, ev: Evaluator) -> bool | None:
    """The test of an `if`, or whether a loop runs its body at all (False: a `for` or a
    comprehension over an empty tuple, list or `range`, a `while` whose test is false when
    it is reached, a generator expression nothing iterates), where the kernel's context
    decides."""
    if type(guard) in _ITERATING:
        return False if _statically_empty(guard.iter, ctx, ev) else None
    if type(guard) is ast.ExceptHandler:
        return None
    if type(guard) is ast.With:
        # Under `jax.ensure_compile_time_eval()` a conv of concrete values runs eagerly and
        # never reaches the kernel; of traced ones it is traced: not decided here.
        return None if _compile_time_eval(guard, ctx.module) else True
    if type(guard) is _Filter:
        return False if truthiness(ev.eval(guard.test, ctx)) is False else None
    if type(guard) is _LoopElse:
        return False if _else_never_runs(guard.loop) else None
    if type(guard) is _Consumed:
        return False if never_consumed(ctx.module, guard.lazy) else None
    if type(guard) is ast.While:
        # Whether the body runs at all: the test as the loop is first reached.
        return truthiness(ev.eval_at_entry(guard, ctx))
    if type(guard) is ast.match_case:
        match = guard.__dict__.get("_pl_parent")
        if isinstance(match, ast.Match):
            taken = _case_taken(match, ctx, ev)
            if taken is not None:
                return taken < len(match.cases) and match.cases[taken] is guard
        only = isinstance(match, ast.Match) and match.cases == [guard]
        irrefutable = type(guard.pattern) is ast.MatchAs and guard.pattern.pattern is None
        return True if only and irrefutable and guard.guard is None else None
    return truthiness(ev.eval(guard.test, ctx))


def _case_taken(match: ast.Match, ctx: Ctx, ev: Evaluator) -> int | None:
    """The index of the case a `match` on a known constant takes (`len(cases)`: none), from
    literal, `None`/`True`/`False`, wildcard and `|` patterns; None when undecided."""
    values = ev.eval(match.subject, ctx)
    if not values or len(values) != 1 or not isinstance(values[0], Const):
        return None
    subject = values[0].value
    if type(subject) not in (int, float, str, bytes, bool, type(None)):
        return None
    for index, case in enumerate(match.cases):
        hit = _pattern_matches(case.pattern, subject)
        if hit is None:
            return None
        if not hit:
            continue
        if case.guard is not None:
            passes = truthiness(ev.eval(case.guard, ctx))
            if passes is None:
                return None
            if not passes:
                continue
        return index
    return len(match.cases)


def _pattern_matches(pattern: ast.pattern, subject: object) -> bool | None:
    if isinstance(pattern, ast.MatchAs):
        return True if pattern.pattern is None else _pattern_matches(pattern.pattern, subject)
    if isinstance(pattern, ast.MatchSingleton):
        return subject is pattern.value
    if isinstance(pattern, ast.MatchValue):
        value = pattern.value
        sign = 1
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
            sign, value = -1, value.operand
        if not isinstance(value, ast.Constant) or type(value.value) not in (int, float, str, bytes):
            return None  # a dotted name, a complex number: not decided here
        literal = value.value if sign == 1 else -value.value  # type: ignore[operator]
        return bool(subject == literal)
    if isinstance(pattern, ast.MatchOr):
        hits = [_pattern_matches(p, subject) for p in pattern.patterns]
        if True in hits:
            return True
        return False if None not in hits else None
    return None  # sequence, mapping, class patterns


def _statically_empty(expr: ast.expr, ctx: Ctx, ev: Evaluator) -> bool:
    """An iterable with no items where this context decides: `range(...)` of known ints
    (also `range(len(T))` of a known tuple), an empty tuple, list, dict, set or string,
    `set()`/`dict()`/`tuple()`/`list()`/`zip()` with no arguments, a `zip` with an empty
    argument, and `.items()`/`.keys()`/`.values()` of an empty dict display."""
    module = ctx.module
    kind = type(expr)
    if kind is ast.Dict or kind is ast.Set:
        return not expr.keys if kind is ast.Dict else not expr.elts  # type: ignore[attr-defined]
    if kind is ast.Call:
        call: Any = expr
        func = call.func
        if (
            type(func) is ast.Attribute
            and func.attr in ("items", "keys", "values")
            and not call.args
            and not call.keywords
        ):
            return type(func.value) is ast.Dict and not func.value.keys
        builtin = (
            func.id
            if type(func) is ast.Name and not call.keywords and module.is_builtin(func)
            else None
        )
        if builtin in _EMPTY_BUILTINS and not call.args:
            return True
        if builtin == "zip":
            return any(
                not isinstance(a, ast.Starred) and _statically_empty(a, ctx, ev) for a in call.args
            )
        if builtin == "range" and not any(isinstance(a, ast.Starred) for a in call.args):
            return empty_range([_static_count(arg, ctx, ev) for arg in call.args])
        if builtin is not None and builtin in _SHADOWABLE:
            return False
    if kind is ast.Subscript and type(expr.slice) is ast.Slice:  # type: ignore[attr-defined]
        return _empty_slice(expr, ctx, ev)  # type: ignore[arg-type]
    values = ev.eval(expr, ctx)
    if not values:
        return False
    return all(
        (isinstance(v, Seq) and not v.items)
        or (isinstance(v, Const) and type(v.value) in (str, bytes) and not v.value)
        for v in values
    )


def empty_range(bounds: list[int | None]) -> bool:
    """`range(*bounds)` is known and gives no item (`pl.loop`, `fori_loop` and `range`
    bounds alike). Not when a bound is unknown or `range` would raise (a zero step)."""
    if not 1 <= len(bounds) <= 3 or None in bounds or (len(bounds) == 3 and bounds[2] == 0):
        return False
    return len(range(*bounds)) == 0  # type: ignore[arg-type]


def _empty_slice(expr: ast.Subscript, ctx: Ctx, ev: Evaluator) -> bool:
    """`T[a:b:c]` with static bounds that select nothing of a tuple, list or string of
    known length (`(1, 2)[5:]`)."""
    part: Any = expr.slice
    bounds: list[int | None] = []
    for bound in (part.lower, part.upper, part.step):
        value = None if bound is None else _static_count(bound, ctx, ev)
        if bound is not None and value is None:
            return False
        bounds.append(value)
    if bounds[2] == 0:
        return False  # a zero step raises
    values = ev.eval(expr.value, ctx)
    if not values:
        return False
    for v in values:
        if isinstance(v, Seq):
            length = len(v.items)
        elif isinstance(v, Const) and isinstance(v.value, str | bytes | tuple):
            length = len(v.value)
        else:
            return False
        if len(range(length)[slice(*bounds)]):
            return False
    return True


def _static_count(expr: ast.expr, ctx: Ctx, ev: Evaluator) -> int | None:
    """An int this context knows, or `len(T)` of a tuple or list it knows."""
    module = ctx.module
    call: Any = expr
    if (
        type(call) is ast.Call
        and type(call.func) is ast.Name
        and call.func.id == "len"
        and len(call.args) == 1
        and not call.keywords
        and module.is_builtin(call.func)
    ):
        values = ev.eval(call.args[0], ctx)
        if values and len(values) == 1 and isinstance(values[0], Seq):
            return len(values[0].items)
        return None
    return static_int(ev, expr, ctx)


_EMPTY_BUILTINS = frozenset({"set", "dict", "tuple", "list", "frozenset", "zip", "str"})
_SHADOWABLE = _EMPTY_BUILTINS | {"range"}


def live_nodes(fn: FunctionNode, ctx: Ctx, ev: Evaluator) -> list[ast.AST]:
    """Calls and nested defs of a function body that provably run when it is traced: not
    inside nested functions, not under `if <falsy constant>` (or the else of a truthy one),
    and not in a branch (`if`, conditional expression, `match` case) whose test this
    context does not decide."""
    truth: dict[int, bool | None] = {}
    out: list[ast.AST] = []
    # `if SKIP: return` with SKIP known here: what follows it in its block never runs.
    after_exit: set[int] = set()
    for exit_if, block, index in _conditional_exits(fn):
        t = truth[id(exit_if)] = truthiness(ev.eval(exit_if.test, ctx))
        if t is None:
            # `if k_rem == 0: return x` on a test not decided here: what follows runs for
            # some inputs and not for others, like the other side of an undecided branch,
            # so nothing in it is provably lowered. (A `raise` guard is not such a branch:
            # when it raises, the kernel is not lowered at all.)
            branches, exits = [*exit_if.body, *exit_if.orelse], _LEAVES
        else:
            branches, exits = (exit_if.body if t else exit_if.orelse), EXITS
        if any(type(s) in exits for s in branches):
            after_exit.update(id(s) for s in block[index + 1 :])
    for node, guards in _body_index(fn):
        dead = False
        for if_node, in_body in guards:
            key = id(if_node)
            if key not in truth:
                truth[key] = _guard_truth(if_node, ctx, ev)
            t = truth[key]
            if (in_body and t is False) or (not in_body and t is True):
                dead = True
                break
            if t is None and type(if_node) in _BRANCHES:
                # A Python branch on a value the analysis does not know (a flag, a shape
                # test): it is static when traced, so JAX traces this side or not; nothing
                # here is provably lowered. (Loops with unknown bounds are taken to run.)
                dead = True
                break
        if after_exit and not dead:
            current: ast.AST | None = node
            while current is not None and current is not fn:
                if id(current) in after_exit:
                    dead = True
                    break
                current = current.__dict__.get("_pl_parent")
        if not dead:
            out.append(node)
    return out


# Leaving a block early without failing: the rest of the block is skipped on a valid run.
_LEAVES = frozenset({ast.Return, ast.Continue, ast.Break})


def _conditional_exits(fn: FunctionNode) -> list[tuple[ast.If, list[ast.stmt], int]]:
    """The `if` statements of a function body with a `return`/`raise`/... directly in a
    branch and statements after them in their block (cached on the function)."""
    cached = fn.__dict__.get("_pl_cond_exits")
    if cached is not None:
        return cached
    out: list[tuple[ast.If, list[ast.stmt], int]] = []
    for block in _blocks(fn):
        for index, stmt in enumerate(block[:-1]):
            if type(stmt) is ast.If:
                assert isinstance(stmt, ast.If)
                if any(type(x) in EXITS for x in (*stmt.body, *stmt.orelse)):
                    out.append((stmt, block, index))
    fn._pl_cond_exits = out  # type: ignore[union-attr]
    return out
