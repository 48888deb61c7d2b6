"""Names, scopes and qualified names for one parsed module (ast only; no imports run).

`ModuleInfo` knows, for every name used in the module, which bindings it may refer to:
imports (giving a qualified name such as `jax.experimental.pallas.pallas_call`),
assignments, parameters and definitions. An alias name alone proves nothing: `plgpu` is
whatever its import says it is.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pallas_ls.core.jaxapi import ENTRY_ATTRS
from pallas_ls.core.model import Span, immutable
from pallas_ls.core.textedit import Lines, split_lines

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
ScopeNode = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef


@immutable
class ImportBinding:
    """`import a.b as x` / `from a import b as x`; `module` is absolute or starts with dots."""

    qualname: str
    level: int  # 0 for absolute imports
    node: ast.Import | ast.ImportFrom
    alias: ast.alias


@immutable
class AssignBinding:
    """Bound by an assignment (or a walrus) of `value`."""

    value: ast.expr
    node: ast.stmt | ast.expr  # the statement (or walrus) that binds


@immutable
class ParamBinding:
    """A parameter of `function`, with its default value's expression if any."""

    function: FunctionNode
    name: str
    default: ast.expr | None
    kind: str  # "positional", "kwonly", "vararg", "kwarg"


@immutable
class DefBinding:
    """Bound by a def or a class statement."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@immutable
class OpaqueBinding:
    """Bound by something we do not follow (for loops, with-as, unpacking, except, del...)."""

    node: ast.AST


@immutable
class UnpackBinding(OpaqueBinding):
    """`a, b = value` where `value` is not a tuple display: the name is element `index` of
    `value`, when it is a sequence of `size` items (otherwise the assignment raises)."""

    value: ast.expr
    index: int
    size: int


Binding = ImportBinding | AssignBinding | ParamBinding | DefBinding | OpaqueBinding


@dataclass
class Scope:
    """A module, class, function, lambda or comprehension and the names it binds."""

    node: ScopeNode
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals_: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    # Calls and nested defs that run in this function's own body (not the module's).
    owned: list[ast.AST] = field(default_factory=list)

    @property
    def is_class(self) -> bool:
        return isinstance(self.node, ast.ClassDef)

    def add(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


class _Parents:
    """Parent links stored on the nodes themselves, so that statements reused from an
    earlier parse keep theirs (see incremental.py)."""

    __slots__ = ()

    def get(self, node: ast.AST, default: ast.AST | None = None) -> ast.AST | None:
        return node.__dict__.get("_pl_parent", default)

    def __setitem__(self, node: ast.AST, parent: ast.AST) -> None:
        node._pl_parent = parent  # type: ignore[attr-defined]


@dataclass
class StatementInfo:
    """What one top-level statement contributes to its module: module-level bindings and
    imported modules. Kept on the statement node and reused while the node is."""

    module_scope: Scope
    bindings: list[tuple[str, Binding]]
    globals_: set[str]
    imported: set[str]
    # Every identifier the statement spells as a name, read or stored (see relevance.py).
    names: set[str] = field(default_factory=set)
    # relevance.py's verdicts on the statement's text, by the words looked for
    seeds: dict[tuple[str, ...], int] = field(default_factory=dict)


class ModuleInfo:
    """A parsed module with scopes, parents and position helpers."""

    def __init__(
        self,
        tree: ast.Module,
        source: str,
        path: str | None = None,
        module_scope: Scope | None = None,
        lines: Lines | None = None,  # split_lines(source), when the caller has it
        share_lines: bool = False,
    ) -> None:
        self.tree = tree
        self.source = source
        self.path = path
        self.lines = lines if lines is not None else split_lines(source)
        # Whether the build swaps the nodes' line numbers for shared ints (_share_lines):
        # for a tree kept between versions (the server), not for one checked and dropped.
        self.share_lines = share_lines
        if share_lines:
            line_ints(len(self.lines) + 1)
        self.parents = _Parents()
        self._sink: _Sink | None = None
        self.recovered = False  # True when syntax errors were blanked out to parse the rest
        # Caches of values.py, kept with the module: the names declared `global` and
        # `nonlocal` (with the source they were read from), and the bindings of a name that
        # reach a function's read of it as the module leaves it.
        self.declared: tuple[str, frozenset[str], frozenset[str], bool] | None = None
        self.module_end: dict[str, tuple[list[Binding], list[Binding]]] = {}
        # A persistent module scope lets reused statements keep their inner scopes.
        self.module_scope = module_scope or Scope(tree, None)
        self.module_scope.node = tree
        self.module_scope.bindings = {}
        self.module_scope.globals_ = set()
        self.imported_modules: set[str] = set()
        for stmt in tree.body:
            info = stmt.__dict__.get("_pl_info")
            if not isinstance(info, StatementInfo) or info.module_scope is not self.module_scope:
                info = self._visit_statement(stmt)
            self.parents[stmt] = tree
            for name, binding in info.bindings:
                self.module_scope.add(name, binding)
            self.module_scope.globals_ |= info.globals_
            self.imported_modules |= info.imported

    def adopt(self, other: ModuleInfo) -> None:
        """Become `other` (a newer parse of the same document, built on this module's scope),
        so that everything holding this object sees the current version."""
        assert other.module_scope is self.module_scope
        self.tree = other.tree
        self.source = other.source
        self.lines = other.lines
        self.recovered = other.recovered
        self.imported_modules = other.imported_modules

    def _visit_statement(self, stmt: ast.stmt) -> StatementInfo:
        sink = _Sink()
        self._sink = sink
        try:
            self._visit(stmt, self.module_scope)
        finally:
            self._sink = None
        info = StatementInfo(
            self.module_scope, sink.bindings, sink.globals_, sink.imported, sink.names
        )
        stmt._pl_info = info  # type: ignore[attr-defined]
        # The calls that may be kernel entry points and the decorated defs in the
        # statement, for kernel discovery.
        stmt._pl_candidates = sink.calls  # type: ignore[attr-defined]
        return info

    def _add(self, scope: Scope, name: str, binding: Binding) -> None:
        if isinstance(binding, ImportBinding) and self._sink is not None:
            self._sink.imported.add(binding.qualname)
        if scope is self.module_scope and self._sink is not None:
            self._sink.bindings.append((name, binding))
        else:
            scope.add(name, binding)

    def _own(self, scope: Scope, node: ast.AST) -> None:
        owned = self._owned(scope)
        if owned is not None:
            owned.append(node)

    def _owned(self, scope: Scope) -> list[ast.AST] | None:
        """Where the calls and defs met in `scope` are recorded: the enclosing function's
        `owned` (a comprehension runs in its function), None at module level."""
        owner: Scope | None = scope
        while owner is not None and isinstance(owner.node, _COMPREHENSIONS):
            owner = owner.parent
        if owner is not None and owner is not self.module_scope:
            return owner.owned
        return None

    # -- construction -------------------------------------------------------------------
    def _build(self, node: ast.AST, scope: Scope) -> None:
        """Link and visit the children of `node`."""
        self._run(
            [(child, node) for child in reversed(_children(node)) if type(child) not in _LEAVES],
            scope,
        )

    def _run(self, stack: list[tuple[ast.AST, ast.AST]], scope: Scope) -> None:
        """Link and visit the (node, parent) pairs on `stack` and their descendants in
        `scope`, first pair last. Most nodes bind nothing: they are handled in this loop
        (parent, scope, calls collected), and so is the plain assignment; the others go
        through `_visit`."""
        calls = self._sink.calls if self._sink is not None else None
        add_name = (self._sink.names if self._sink is not None else set()).add
        owned = self._owned(scope)
        name_node = ast.Name
        constant = ast.Constant
        entry_attrs = ENTRY_ATTRS
        attribute = ast.Attribute
        assign = ast.Assign
        plain = _PLAIN_FIELDS
        call = ast.Call
        share = self.share_lines
        while stack:
            child, parent = stack.pop()
            child._pl_parent = parent  # type: ignore[attr-defined]
            kind = type(child)
            fields = plain.get(kind)
            if fields is None:
                if kind is not assign:
                    self._visit(child, scope)  # shares its lines
                    continue
                value = child.value  # type: ignore[attr-defined]
                for target in child.targets:  # type: ignore[attr-defined]
                    self._bind_target(target, value, child, scope)  # type: ignore[arg-type]
                fields = _ASSIGN_FIELDS
            if share:
                _share_lines(child.__dict__)
            child._pl_scope = scope  # type: ignore[attr-defined]
            if kind is name_node:
                add_name(child.id)  # type: ignore[attr-defined]
            elif kind is call:
                func = child.func  # type: ignore[attr-defined]  # may_name_entry, inlined
                if calls is not None and (type(func) is not attribute or func.attr in entry_attrs):
                    calls.append(child)
                if owned is not None:
                    owned.append(child)
            # A list field's items are pushed last-first, so they come off in order; the
            # fields come off last-first (a call's keywords, then its args, then func).
            # Names and constants (nearly half the nodes) are linked here, not pushed: they
            # have no children and bind nothing in this loop. Their scope is their parent's
            # (see scope_of), so only the parent link is set. So is `<name>.<attr>` (a
            # quarter of the rest): it binds nothing either, and its scope is set here.
            for name, many in fields:
                value = getattr(child, name)
                if many:
                    for item in reversed(value) if value else ():
                        kind = type(item)
                        if kind is name_node:
                            item._pl_parent = child
                            add_name(item.id)
                            if share:
                                _share_lines(item.__dict__)
                        elif kind is constant:
                            item._pl_parent = child
                            if share:
                                _share_lines(item.__dict__)
                        elif kind is attribute and type(item.value) is name_node:
                            item._pl_parent = child
                            item._pl_scope = scope
                            item.value._pl_parent = item  # type: ignore[attr-defined]
                            add_name(item.value.id)
                            if share:
                                _share_lines(item.__dict__)
                                _share_lines(item.value.__dict__)
                        elif item is not None:
                            stack.append((item, child))
                    continue
                kind = type(value)
                if kind is name_node:
                    value._pl_parent = child
                    add_name(value.id)
                    if share:
                        _share_lines(value.__dict__)
                elif kind is constant:
                    value._pl_parent = child
                    if share:
                        _share_lines(value.__dict__)
                elif kind is attribute and type(value.value) is name_node:
                    value._pl_parent = child
                    value._pl_scope = scope
                    value.value._pl_parent = value  # type: ignore[attr-defined]
                    add_name(value.value.id)
                    if share:
                        _share_lines(value.__dict__)
                        _share_lines(value.value.__dict__)
                elif value is not None:
                    stack.append((value, child))

    def _visit(self, node: ast.AST, scope: Scope) -> None:
        node._pl_scope = scope  # type: ignore[attr-defined]
        if self.share_lines:
            _share_lines(node.__dict__)
        kind = type(node)
        if kind is ast.Name:
            if self._sink is not None:
                self._sink.names.add(node.id)  # type: ignore[attr-defined]
            return
        if kind is ast.Constant:
            return
        if kind in _PLAIN_FIELDS:  # binds nothing: only a call needs more than the links
            if kind is ast.Call:
                if self._sink is not None and may_name_entry(node):  # type: ignore[arg-type]
                    self._sink.calls.append(node)
                self._own(scope, node)
            self._build(node, scope)
            return
        if isinstance(node, ast.Assign):  # the most common statement: before the others
            for target in node.targets:
                self._bind_target(target, node.value, node, scope)
            self._build(node, scope)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.decorator_list and self._sink is not None:
                self._sink.calls.append(node)
            self._own(scope, node)
            self._add(scope, node.name, DefBinding(node))
            # decorators, defaults and the return annotation run in the enclosing scope
            outer = [*node.decorator_list, *_defaults(node.args)]
            if node.returns is not None:
                outer.append(node.returns)
            if outer:
                self._run([(expr, node) for expr in reversed(outer)], scope)
            inner = Scope(node, scope)
            node._pl_inner = inner  # type: ignore[union-attr]
            self._add_params(node.args, inner, node)
            self._run([(stmt, node) for stmt in reversed(node.body)], inner)
            for arg in _all_args(node.args):
                self.parents[arg] = node.args
                arg._pl_scope = inner  # type: ignore[attr-defined]
                if self.share_lines:
                    _share_lines(arg.__dict__)
            self.parents[node.args] = node
            return
        if isinstance(node, ast.Lambda):
            defaults = _defaults(node.args)
            if defaults:
                self._run([(expr, node) for expr in reversed(defaults)], scope)
            inner = Scope(node, scope)
            node._pl_inner = inner  # type: ignore[attr-defined]
            self._add_params(node.args, inner, node)
            # a visit, not `_run`: a lambda in a lambda costs one frame, not two
            self.parents[node.body] = node
            self._visit(node.body, inner)
            self.parents[node.args] = node
            return
        if isinstance(node, ast.ClassDef):
            self._add(scope, node.name, DefBinding(node))
            for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
                self.parents[expr] = node
                self._visit(expr, scope)
            inner = Scope(node, scope)
            for stmt in node.body:
                self.parents[stmt] = node
                self._visit(stmt, inner)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self._add(scope, alias.asname, ImportBinding(alias.name, 0, node, alias))
                else:
                    head = alias.name.split(".")[0]
                    self._add(scope, head, ImportBinding(head, 0, node, alias))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            for alias in node.names:
                if alias.name == "*":
                    continue
                qual = f"{base}.{alias.name}" if base else alias.name
                self._add(
                    scope, alias.asname or alias.name, ImportBinding(qual, node.level, node, alias)
                )
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self._bind_target(node.target, node.value, node, scope)
        elif isinstance(node, ast.AugAssign | ast.For | ast.AsyncFor):
            for name in _target_names(node.target):
                self._add(scope, name, OpaqueBinding(node))
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    for name in _target_names(item.optional_vars):
                        self._add(scope, name, OpaqueBinding(node))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self._add(scope, node.name, OpaqueBinding(node))
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                for name in _target_names(target):
                    self._add(scope, name, OpaqueBinding(node))
        elif isinstance(node, ast.Global):
            if scope is self.module_scope and self._sink is not None:
                self._sink.globals_.update(node.names)
            else:
                scope.globals_.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            scope.nonlocals.update(node.names)
        elif isinstance(node, ast.NamedExpr):
            target_scope = scope
            while isinstance(target_scope.node, ast.ClassDef) and target_scope.parent:
                target_scope = target_scope.parent
            self._add(target_scope, node.target.id, AssignBinding(node.value, node))
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            # Comprehension variables live in their own scope; bind them as opaque there.
            inner = Scope(node, scope)  # type: ignore[arg-type]
            for gen in node.generators:
                for name in _target_names(gen.target):
                    self._add(inner, name, OpaqueBinding(gen))
            self._build(node, inner)
            return
        elif _is_match_capture(node):
            capture = getattr(node, "name", None)
            if isinstance(capture, str):
                self._add(scope, capture, OpaqueBinding(node))
        self._build(node, scope)

    def _add_params(self, args: ast.arguments, inner: Scope, fn: FunctionNode) -> None:
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += list(args.defaults)
        for arg, default in zip(positional, defaults, strict=True):
            self._add(inner, arg.arg, ParamBinding(fn, arg.arg, default, "positional"))
        for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            self._add(inner, arg.arg, ParamBinding(fn, arg.arg, kw_default, "kwonly"))
        if args.vararg:
            self._add(inner, args.vararg.arg, ParamBinding(fn, args.vararg.arg, None, "vararg"))
        if args.kwarg:
            self._add(inner, args.kwarg.arg, ParamBinding(fn, args.kwarg.arg, None, "kwarg"))

    def _bind_target(self, target: ast.expr, value: ast.expr, stmt: ast.stmt, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            self._add(scope, target.id, AssignBinding(value, stmt))
        elif isinstance(target, ast.Tuple | ast.List):
            if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts):
                if not any(isinstance(e, ast.Starred) for e in target.elts):
                    for t, v in zip(target.elts, value.elts, strict=True):
                        self._bind_target(t, v, stmt, scope)
                    return
            elts = target.elts
            if all(isinstance(e, ast.Name) for e in elts):
                for i, e in enumerate(elts):
                    self._add(scope, e.id, UnpackBinding(stmt, value, i, len(elts)))  # type: ignore[attr-defined]
                return
            for name in _target_names(target):
                self._add(scope, name, OpaqueBinding(stmt))
        # attribute/subscript targets bind no name

    # -- queries ------------------------------------------------------------------------
    def scope_of(self, node: ast.AST) -> Scope:
        links = node.__dict__
        scope = links.get("_pl_scope")
        if scope is None and type(node) in _END_NODES:
            # a name or constant linked by _build's loop: its parent's scope
            parent = links.get("_pl_parent")
            if parent is not None:
                scope = parent.__dict__.get("_pl_scope")
        return scope if scope is not None else self.module_scope

    def lookup(self, name: str, scope: Scope) -> tuple[Scope, list[Binding]] | None:
        """The scope that binds `name` as seen from `scope`, with all its bindings there."""
        current: Scope | None = scope
        first = True
        while current is not None:
            if name in current.globals_:
                current = self.module_scope
                first = True
                continue
            if (first or not current.is_class) and name in current.bindings:
                if name in current.nonlocals:
                    current = current.parent
                    first = False
                    continue
                return current, current.bindings[name]
            current = current.parent
            first = False
        return None

    def qualname(self, expr: ast.expr, depth: int = 0) -> str | None:
        """`pl.pallas_call` -> `jax.experimental.pallas.pallas_call`, when imports prove it."""
        if depth > 12:
            return None
        if isinstance(expr, ast.Attribute):
            base = self.qualname(expr.value, depth + 1)
            return f"{base}.{expr.attr}" if base else None
        if isinstance(expr, ast.Name):
            found = self.lookup(expr.id, self.scope_of(expr))
            if found is None:
                return None
            _, bindings = found
            quals = set()
            for b in bindings:
                if isinstance(b, ImportBinding) and b.level == 0:
                    quals.add(b.qualname)
                elif (
                    isinstance(b, AssignBinding)
                    and isinstance(b.value, ast.Name | ast.Attribute)
                    and self.scope_of(b.value) is not None
                ):
                    q = self.qualname(b.value, depth + 1)
                    if q is None:
                        return None
                    quals.add(q)
                else:
                    return None
            return quals.pop() if len(quals) == 1 else None
        return None

    def is_builtin(self, name: ast.Name) -> bool:
        """`name` refers to a Python builtin: nothing in the module binds it where it is read."""
        return self.lookup(name.id, self.scope_of(name)) is None

    def enclosing_function(self, node: ast.AST) -> FunctionNode | None:
        current = self.parents.get(node)
        while current is not None:
            if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                return current
            current = self.parents.get(current)
        return None

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    # -- positions ----------------------------------------------------------------------
    def col(self, lineno: int, byte_col: int) -> int:
        """ast's UTF-8 byte column on 1-based `lineno` -> code-point column."""
        if lineno - 1 >= len(self.lines) or byte_col <= 0:
            return max(byte_col, 0)
        line = self.lines[lineno - 1]
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def span(self, node: ast.AST) -> Span:
        start_line = node.lineno  # type: ignore[attr-defined]
        end_line = node.end_lineno or start_line  # type: ignore[attr-defined]
        return Span(
            start_line - 1,
            self.col(start_line, node.col_offset),  # type: ignore[attr-defined]
            end_line - 1,
            self.col(end_line, node.end_col_offset or 0),  # type: ignore[attr-defined]
        )

    def text(self, node: ast.AST) -> str:
        """The source text of a node (from the line table; no re-splitting of the file)."""
        try:
            span = self.span(node)
        except AttributeError:
            return ""
        if span.start_line >= len(self.lines):
            return ""
        if span.start_line == span.end_line:
            return self.lines[span.start_line][span.start_col : span.end_col]
        parts = [self.lines[span.start_line][span.start_col :]]
        parts.extend(self.lines[span.start_line + 1 : span.end_line])
        if span.end_line < len(self.lines):
            parts.append(self.lines[span.end_line][: span.end_col])
        return "".join(parts)


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Nodes with no binding semantics: `_build` links them without the visitor's dispatch.
# Each maps to the fields that hold child nodes (in `_fields` order; True: a list), which
# leaves out names, strings, constants and the shared context/operator singletons.
_PLAIN_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {
    ast.Name: (),
    ast.Attribute: (("value", False),),
    ast.Constant: (),
    ast.Call: (("func", False), ("args", True), ("keywords", True)),
    ast.Subscript: (("value", False), ("slice", False)),
    ast.Slice: (("lower", False), ("upper", False), ("step", False)),
    ast.BinOp: (("left", False), ("right", False)),
    ast.UnaryOp: (("operand", False),),
    ast.BoolOp: (("values", True),),
    ast.Compare: (("left", False), ("comparators", True)),
    ast.IfExp: (("test", False), ("body", False), ("orelse", False)),
    ast.keyword: (("value", False),),
    ast.Tuple: (("elts", True),),
    ast.List: (("elts", True),),
    ast.Dict: (("keys", True), ("values", True)),
    ast.Set: (("elts", True),),
    ast.Starred: (("value", False),),
    ast.JoinedStr: (("values", True),),
    ast.FormattedValue: (("value", False), ("format_spec", False)),
    ast.Expr: (("value", False),),
    ast.Return: (("value", False),),
    ast.If: (("test", False), ("body", True), ("orelse", True)),
    ast.While: (("test", False), ("body", True), ("orelse", True)),
    ast.Pass: (),
    ast.Break: (),
    ast.Continue: (),
    ast.Assert: (("test", False), ("msg", False)),
    ast.Raise: (("exc", False), ("cause", False)),
    ast.Await: (("value", False),),
    ast.Yield: (("value", False),),
    ast.YieldFrom: (("value", False),),
    ast.Try: (("body", True), ("handlers", True), ("orelse", True), ("finalbody", True)),
}
# `_run` binds an assignment's targets and then links it like the nodes above.
_ASSIGN_FIELDS: tuple[tuple[str, bool], ...] = (("targets", True), ("value", False))
# Shared singletons (contexts, operators): no links needed.
_LEAVES = frozenset(
    {
        ast.Load,
        ast.Store,
        ast.Del,
        *(c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.operator)),
        *(c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.unaryop)),
        *(c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.cmpop)),
        *(c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.boolop)),
    }
)


# Plain nodes without children: `_build` links them as it meets them.
_END_NODES = frozenset({ast.Name, ast.Constant})


# The parser makes two new ints for each node past line 256 (its lineno and end_lineno):
# ~1.4 MB of a 5,000-line module's ~13 MB tree. A kept tree's nodes get these instead.
_LINE_INTS: list[int] = list(range(4096))


def line_ints(last: int) -> list[int]:
    """The shared ints, up to `last` at least (and 512 more: a file grows as it is typed)."""
    if last >= len(_LINE_INTS):
        _LINE_INTS.extend(range(len(_LINE_INTS), last + 513))
    return _LINE_INTS


def shift_lines(stmt: ast.AST, delta: int, last: int) -> None:
    """`ast.increment_lineno(stmt, delta)`, to shared ints (the new last line is `last`)."""
    table = line_ints(last + 1)
    for node in ast.walk(stmt):
        links = node.__dict__
        line = links.get("lineno")
        if line is not None:
            links["lineno"] = table[line + delta]
            end = links.get("end_lineno")
            if end is not None:
                links["end_lineno"] = table[end + delta]


def _share_lines(links: dict[str, Any]) -> None:
    line = links.get("lineno")
    if line is not None and line > 256:
        line = _LINE_INTS[line]
        links["lineno"] = line
        end = links.get("end_lineno")
        if end is not None:
            links["end_lineno"] = line if end == line else _LINE_INTS[end]


def may_name_entry(call: ast.Call) -> bool:
    """Kernel discovery looks at every call whose callee is not `<expr>.<attr>` with an attr
    other than an entry point's name (jaxapi.ENTRY_ATTRS)."""
    func = call.func
    return type(func) is not ast.Attribute or func.attr in ENTRY_ATTRS


class _Sink:
    def __init__(self) -> None:
        self.calls: list[ast.AST] = []
        self.bindings: list[tuple[str, Binding]] = []
        self.globals_: set[str] = set()
        self.imported: set[str] = set()
        self.names: set[str] = set()


def _defaults(args: ast.arguments) -> list[ast.expr]:
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


def _all_args(args: ast.arguments) -> list[ast.arg]:
    out = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if args.vararg:
        out.append(args.vararg)
    if args.kwarg:
        out.append(args.kwarg)
    return out


def _children(node: ast.AST) -> list[ast.AST]:
    """ast.iter_child_nodes as a list: a child node, or the nodes of a list field, in
    field order (the fast path's table where there is one)."""
    fields = _PLAIN_FIELDS.get(type(node))
    out: list[ast.AST] = []
    if fields is not None:
        for name, many in fields:
            value = getattr(node, name)
            if many:
                out.extend(item for item in value if item is not None)
            elif value is not None:
                out.append(value)
        return out
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(item for item in value if isinstance(item, ast.AST))
    return out


def _target_names(target: ast.AST) -> list[str]:
    if type(target) is ast.Name:
        return [target.id]
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _is_match_capture(node: ast.AST) -> bool:
    return type(node).__name__ in {"MatchAs", "MatchStar", "MatchMapping"}


# ast.parse holds its C-level tree beside the Python one while converting, so its peak
# memory is about twice the tree's; a long file is parsed in pieces of about this many
# lines, cut before a top-level `def`/`class`/decorator that follows a blank line. Small
# pieces are also faster (5k-line file, fresh process, GC off: 41 ms in pieces of 300
# lines, 43 ms in pieces of 500, ~49 ms whole; at 20k lines the piece size makes no
# difference).
PIECE_LINES = 300


def _parse_in_pieces(
    lines: Lines, path: str | None, visit: Callable[[ast.stmt], object] | None = None
) -> ast.Module | None:
    """The module parsed piece by piece, or None when the file is short or a piece does not
    parse on its own (a cut inside a string or brackets): then the caller parses the whole
    text. Each piece is preceded by a string literal spanning the lines before it, so its
    line numbers are the file's; the tokenizer goes over a string's line breaks about twice
    as fast as over blank lines (20k-line file: 6 ms less than padding with newlines)."""
    if len(lines) < 2 * PIECE_LINES:
        return None
    body: list[ast.stmt] = []
    start = 0
    while start < len(lines):
        end = _piece_end(lines, start + PIECE_LINES)
        pad = '"""' + "\n" * (start - 1) + '"""\n' if start else ""
        try:
            stmts = ast.parse(pad + "".join(lines[start:end]), filename=path or "<unknown>").body
        except SyntaxError:
            return None
        if start:
            if not stmts or not isinstance(stmts[0], ast.Expr) or stmts[0].end_lineno != start:
                return None  # not the padding: cannot happen after a clean cut, but check
            del stmts[0]
        body.extend(stmts)
        if visit is not None:
            for stmt in stmts:
                visit(stmt)
        start = end
    return ast.Module(body=body, type_ignores=[])


def _piece_end(lines: Lines, at_least: int) -> int:
    for i in range(at_least, len(lines)):
        line = lines[i]
        if line.startswith(("def ", "class ", "async def ", "@")) and not lines[i - 1].strip():
            return i
    return len(lines)


def parse_module(
    source: str,
    path: str | None = None,
    module_scope: Scope | None = None,
    lines: Lines | None = None,  # split_lines(source), when the caller has it
    share_lines: bool = False,  # see ModuleInfo
) -> ModuleInfo | None:
    if lines is None:  # ModuleInfo needs them anyway; with them a long file is parsed in pieces
        lines = split_lines(source)
    scope = module_scope or Scope(ast.Module(body=[], type_ignores=[]), None)
    # Each piece's statements are visited as soon as it is parsed, while its nodes are still
    # in the CPU's caches (parse and build of the 5k file: 67 -> 65 ms; 20k: 262 -> 258);
    # the module built at the end reuses what they recorded.
    early = ModuleInfo(
        ast.Module(body=[], type_ignores=[]), source, path, scope, lines, share_lines
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are not ours to report
            tree = _parse_in_pieces(lines, path, early._visit_statement)
            if tree is None:
                tree = ast.parse(source, filename=path or "<unknown>")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        return ModuleInfo(tree, source, path, scope, lines, share_lines)
    except RecursionError:
        return None
