"""A small constant propagation: what an expression provably evaluates to.

`Evaluator.eval(expr, ctx)` returns the list of values the expression may take (both arms
of a conditional, every assignment of a name), or None when any of them is unknown. Rules
report only when every alternative is provably bad.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
import re
import sys
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from pallas_ls.core import jaxapi
from pallas_ls.core.flow import LOOPS, Truth, constant_truth, must_bind
from pallas_ls.core.model import immutable
from pallas_ls.core.resolve import (
    AssignBinding,
    Binding,
    DefBinding,
    FunctionNode,
    ImportBinding,
    ModuleInfo,
    ParamBinding,
    Scope,
    UnpackBinding,
)

if TYPE_CHECKING:
    from pallas_ls.core.crossmodule import ImportResolver

MAX_DEPTH = 24


# Values named by a qualified name depend on nothing else: share them between analyses.
_QUALNAME_VALUES: dict[str, list[Value]] = {}


@immutable(eq=False)
class Ctx:
    """Where an expression is evaluated: its module and the known arguments of the functions
    it sits in (from a visible call site, e.g. a kernel factory call)."""

    module: ModuleInfo
    env: tuple[tuple[FunctionNode, dict[str, tuple[ast.expr, Ctx] | None]], ...] = ()

    def with_binding(self, fn: FunctionNode, args: dict[str, tuple[ast.expr, Ctx] | None]) -> Ctx:
        return Ctx(self.module, ((fn, args), *self.env))

    def params_of(self, fn: FunctionNode) -> dict[str, tuple[ast.expr, Ctx] | None] | None:
        for node, args in self.env:
            if node is fn:
                return args
        return None


@immutable(eq=False)
class Value:
    """What an expression may evaluate to. A record like its subclasses (which a compiled
    build needs: mypyc makes a class an extension type unless a decorator it does not know,
    such as `immutable`, is on it, and its records may not derive from one)."""


@immutable(eq=False)
class Const(Value):
    """A Python constant: a number, a string, a bool, None, ..."""

    # Spelled with its module: a compiled build (setup.py) loads a record's field types
    # from the module's globals when the class is made, and `object` is not among them.
    value: builtins.object


@immutable(eq=False)
class Member(Value):
    """A member of a JAX enum: Precision.HIGH, OptLevel.O2, DotAlgorithmPreset.BF16_BF16_F32."""

    enum: str
    name: str


@immutable(eq=False)
class Dtype(Value):
    """A dtype, by its name (`float32`)."""

    name: str


@immutable(eq=False)
class OptLevelSetter:
    """Where opt_level got its (last) value: a keyword or positional argument of a
    CompilerParams(...) / .replace(...) / dataclasses.replace(...) call."""

    arg: ast.keyword | ast.expr
    value: ast.expr
    # The call it is an argument of; a dict spread into the constructor (`**dict(...)`,
    # `**{"opt_level": 2}`) when it comes from one, which is never this kernel's alone.
    call: ast.Call | ast.Dict
    ctx: Ctx


@immutable(eq=False)
class Params(Value):
    """A `CompilerParams(...)` object, with where its `opt_level` was set."""

    kind: str  # "tpu" | "gpu"
    call: ast.Call  # the last call in the chain (constructor or replace)
    ctx: Ctx
    opt_level: OptLevelSetter | None  # None: not set
    opt_level_unknown: bool = False  # **kwargs could set it
    setters: tuple[OptLevelSetter, ...] = ()  # every opt_level argument along the chain
    chain: tuple[tuple[ast.Call, Ctx], ...] = ()


@immutable(eq=False)
class Mesh(Value):
    """A mesh (a TensorCore, SparseCore or GPU one) for `pl.kernel` / `pl.core_map`."""

    kind: str  # "tc" | "sc" | "gpu"
    node: ast.AST
    ctx: Ctx


@immutable(eq=False)
class ModuleRef(Value):
    """A module of the workspace, imported whole (`from . import helpers`, `import
    pkg.helpers as helpers`): its attributes are its module-level names."""

    module: ModuleInfo


@immutable(eq=False)
class Seq(Value):
    """A tuple or a list: the values each item may have."""

    items: tuple[list[Value] | None, ...]
    is_tuple: bool


@immutable(eq=False)
class DotAlgo(Value):
    """A `DotAlgorithm(...)`: the values of its lhs and rhs precision types."""

    lhs: list[Value] | None
    rhs: list[Value] | None


@immutable(eq=False)
class Interpret(Value):
    """A provably truthy interpret argument: pltpu.InterpretParams(...)."""


@immutable(eq=False)
class Func(Value):
    """A function (def or lambda), with the arguments a `functools.partial` bound."""

    node: FunctionNode
    ctx: Ctx  # the defining context
    bound: dict[str, tuple[ast.expr, Ctx]] = field(default_factory=dict)  # functools.partial
    bound_positional: tuple[tuple[ast.expr, Ctx], ...] = ()


@immutable(eq=False)
class Record(Value):
    """A class whose instances keep the values they are built with: a frozen dataclass or a
    `typing.NamedTuple` with no base of its own, no `__init__`/`__new__`/`__post_init__`
    and no `__setattr__`/`__getattr__`. Its fields in order, each with its default."""

    node: ast.ClassDef
    ctx: Ctx
    fields: tuple[tuple[str, ast.expr | None], ...]
    # `LAYERS: ClassVar[int] = 0`: not a field, read the same on every instance.
    class_vars: tuple[tuple[str, ast.expr], ...] = ()
    named_tuple: bool = False


@immutable(eq=False)
class RecordInstance(Value):
    """`Config(...)` of a Record: every field's value, as an expression and its context."""

    record: Record
    values: dict[str, tuple[ast.expr, Ctx]]


@immutable(eq=False)
class EnumClass(Value):
    """A plain `enum.Enum` subclass: each member name with the name of the member it is
    (an alias of an earlier member with the same value is that member)."""

    node: ast.ClassDef
    members: dict[str, str]
    # Each member's own name with its value (`auto()`: 1, 2, ... in order).
    values: dict[str, object] = field(default_factory=dict)


@immutable(eq=False)
class NumpyBool(Value):
    """`np.True_` / `np.False_`: truthy or falsy like the bool, but not the same object (`is
    False` does not hold), so only its truth is used."""

    value: bool


@immutable(eq=False)
class PlainClass(Value):
    """A class statement with no base but `object`, no keyword and no decorator, and the
    constants its body binds once at class level (`LAYERS = 0`), read as `Cls.LAYERS`."""

    node: ast.ClassDef
    ctx: Ctx
    constants: dict[str, ast.expr]
    # Defs of its body read through the class (`Ops.conv`): plain functions, or
    # `@staticmethod`s; what they are called with is what they get.
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)


@immutable(eq=False)
class EnumMember(Value):
    """A member of an enum class defined in the analysed code."""

    cls: ast.ClassDef
    name: str  # the member's own name, not an alias
    enum: EnumClass | None = None


class _MemberToken:
    """Stands for one enum member in a comparison: equal (and identical) only to itself."""

    def __init__(self, name: str) -> None:
        self.name = name


@immutable(eq=False)
class Ref(Value):
    """Something known only by its qualified name (a module, a JAX function, ...)."""

    qualname: str


@immutable(eq=False)
class LibraryPartial(Value):
    """`functools.partial(<library function>, *args, **keywords)`: a JAX function (a
    convolution, say) with some arguments given in advance."""

    qualname: str
    args: tuple[tuple[ast.expr, Ctx], ...]
    keywords: tuple[tuple[ast.keyword, Ctx], ...]
    node: ast.Call  # the innermost partial(...) call


@immutable(eq=False)
class EntryFactory(Value):
    """A Pallas entry point not yet given its kernel body: `pl.pallas_call`,
    `functools.partial(pl.kernel, mesh=...)`, `pl.kernel(out_type=..., mesh=...)`,
    `pl.core_map(mesh)`. Arguments are accumulated."""

    entry: str  # "pallas_call" | "kernel" | "core_map"
    args: tuple[tuple[ast.expr, Ctx], ...]
    kwargs: tuple[tuple[ast.keyword, Ctx], ...]
    nodes: tuple[ast.AST, ...]  # the calls that built it


class Recorder:
    """What an evaluation depended on: module-level names (with the bindings they had) and
    the top-level statements whose code it read."""

    def __init__(self) -> None:
        # The bindings themselves, not their ids: a freed binding's id can be reused by a
        # new one, which would make a stale entry look valid. Lists, compared with the
        # module's lists by `==`: C-speed, identical objects match at once, and two distinct
        # binding objects are equal only when they hold the very same nodes.
        self.names: dict[str, list[object]] = {}
        self.statements: dict[int, tuple[ast.stmt, int]] = {}
        self.cross_module = False

    def note(
        self, module: ModuleInfo, name: str, found: tuple[Scope, list[Binding]] | None
    ) -> None:
        if found is None:
            self.names.setdefault(name, [])
            return
        scope, bindings = found
        if scope is module.module_scope:
            self.names[name] = list(bindings)
        for b in bindings:
            node = getattr(b, "node", None) or getattr(b, "function", None)
            if node is not None:
                self.statement(module, node)

    def statement(self, module: ModuleInfo, node: ast.AST) -> None:
        current = node
        parent = module.parents.get(current)
        while parent is not None and not isinstance(parent, ast.Module):
            current, parent = parent, module.parents.get(parent)
        if isinstance(current, ast.stmt):
            self.statements[id(current)] = (current, current.lineno)

    def absorb(self, other: Recorder) -> None:
        self.names.update(other.names)
        self.statements.update(other.statements)
        self.cross_module = self.cross_module or other.cross_module

    def still_valid(self, module: ModuleInfo, body_ids: set[int]) -> bool:
        if self.cross_module:
            return False
        for key, (stmt, lineno) in self.statements.items():
            if key not in body_ids or stmt.lineno != lineno:
                return False
        current = module.module_scope.bindings.get
        for name, held in self.names.items():  # noqa: SIM110 - a loop: ~5% of an edit, all() is slower
            if current(name, _UNBOUND) != held:
                return False
        return True


class Unrecorded(Recorder):
    """The recorder of an analysis no cache keeps (`pallas-ls check`, a one-off hover):
    it records nothing, so what it would guard is never reused."""

    def note(
        self, module: ModuleInfo, name: str, found: tuple[Scope, list[Binding]] | None
    ) -> None:
        pass

    def statement(self, module: ModuleInfo, node: ast.AST) -> None:
        pass

    def absorb(self, other: Recorder) -> None:
        pass

    def still_valid(self, module: ModuleInfo, body_ids: set[int]) -> bool:
        return False


UNRECORDED = Unrecorded()


class Identity:
    """Compares equal only to a wrapper of the very same object, and keeps it alive so its
    id cannot be handed to another object while a cache holds it."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Identity) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


_UNBOUND: list[object] = []  # never modified


def entry_kwarg(entry: EntryFactory, name: str) -> tuple[ast.keyword, Ctx] | None:
    found = None
    for kw, ctx in entry.kwargs:
        if kw.arg == name:
            found = (kw, ctx)
    return found


def entry_body(entry: EntryFactory) -> tuple[ast.expr, Ctx] | None:
    """The kernel body given to the entry point so far, if any."""
    name = {"pallas_call": "kernel", "kernel": "body", "core_map": ""}[entry.entry]
    kw = entry_kwarg(entry, name) if name else None
    if kw is not None:
        return kw[0].value, kw[1]
    index = 0
    if entry.entry == "core_map" and entry_kwarg(entry, "mesh") is None:
        index = 1
    if len(entry.args) > index:
        return entry.args[index]
    return None


def entry_mesh(entry: EntryFactory) -> tuple[ast.expr, Ctx] | None:
    kw = entry_kwarg(entry, "mesh")
    if kw is not None:
        return kw[0].value, kw[1]
    if entry.entry == "core_map" and entry.args:
        return entry.args[0]
    return None


# Methods that could change what an instance's fields read as.
_RECORD_HOOKS = frozenset(
    {"__init__", "__new__", "__post_init__", "__setattr__", "__getattr__", "__getattribute__"}
)


def _record(node: ast.ClassDef, ctx: Ctx, base: Record | None = None) -> Record | None:
    """The Record a class statement defines, when it is one (see Record). `base`: the
    frozen dataclass Record of this module that its single base class is."""
    module = ctx.module
    if node.keywords:
        return None
    if node.bases and base is None:
        if node.decorator_list or len(node.bases) != 1:
            return None
        if module.qualname(node.bases[0]) != "typing.NamedTuple":
            return None
    else:
        if len(node.decorator_list) != 1:
            return None
        decorator = node.decorator_list[0]
        if not (
            isinstance(decorator, ast.Call)
            and module.qualname(decorator.func) == "dataclasses.dataclass"
            and not decorator.args
        ):
            return None
        options = {k.arg: k.value for k in decorator.keywords}
        frozen = options.pop("frozen", None)
        if not (isinstance(frozen, ast.Constant) and frozen.value is True):
            return None  # instances may be changed after they are built
        if set(options) - {"eq", "order", "repr", "unsafe_hash"}:
            return None  # kw_only, slots, init=False, **options: not followed
    fields: list[tuple[str, ast.expr | None]] = []
    class_vars: list[tuple[str, ast.expr]] = []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign):
            if not isinstance(stmt.target, ast.Name) or not stmt.simple:
                return None
            annotation = stmt.annotation
            head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
            kind = module.qualname(head)
            if kind == "typing.ClassVar" and node.decorator_list and stmt.value is not None:
                class_vars.append((stmt.target.id, stmt.value))
                continue
            if kind in {"typing.ClassVar", "dataclasses.InitVar"}:
                return None
            default = stmt.value
            if isinstance(default, ast.Call):
                if module.qualname(default.func) == "dataclasses.field":
                    given = {k.arg: k.value for k in default.keywords}
                    if default.args or set(given) - {"default"}:
                        return None  # default_factory, init=False, ...
                    default = given.get("default")
                    if default is None:
                        return None  # field() with no default: not followed
            fields.append((stmt.target.id, default))
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name in _RECORD_HOOKS:
                return None
        elif isinstance(stmt, ast.Assign | ast.AugAssign | ast.ClassDef):
            return None  # class attributes, nested classes: not followed
    names = {name for name, _ in fields}
    if len(names) != len(fields) or any(name in names for name, _ in class_vars):
        return None  # a name given twice: the later one wins, not followed
    if base is not None:
        return _inherit(node, ctx, base, fields, class_vars)
    return Record(node, ctx, tuple(fields), tuple(class_vars), named_tuple=bool(node.bases))


def _inherit(
    node: ast.ClassDef,
    ctx: Ctx,
    base: Record,
    fields: list[tuple[str, ast.expr | None]],
    class_vars: list[tuple[str, ast.expr]],
) -> Record | None:
    """A frozen dataclass subclass of `base`: the base's fields in their order, a field the
    subclass declares again taking its new default in place, then the subclass's own; the
    subclass's ClassVars over the base's."""
    own = dict(fields)
    own_vars = dict(class_vars)
    base_names = {name for name, _ in base.fields}
    base_vars = {name for name, _ in base.class_vars}
    if any(name in base_vars for name in own) or any(name in base_names for name in own_vars):
        return None  # a field turned into a ClassVar or back: not followed
    merged = [(name, own.pop(name, default)) for name, default in base.fields]
    merged += [(name, default) for name, default in fields if name in own]
    seen_default = False
    for _, default in merged:
        if default is None and seen_default:
            return None  # a field without a default after one with: a TypeError
        seen_default = seen_default or default is not None
    merged_vars = [(name, own_vars.pop(name, value)) for name, value in base.class_vars]
    merged_vars += [(name, value) for name, value in class_vars if name in own_vars]
    return Record(node, ctx, tuple(merged), tuple(merged_vars))


# Methods that change how members compare or which member a value is.
_ENUM_HOOKS = frozenset(
    {"__eq__", "__ne__", "__hash__", "__new__", "__init__", "_missing_", "__getattr__"}
    | {"__getattribute__", "_generate_next_value_", "__bool__", "__len__"}
)


def _enum_class(node: ast.ClassDef, ctx: Ctx) -> EnumClass | None:
    """The EnumClass a class statement defines: `class Mode(enum.Enum)` whose members are
    constants (or `enum.auto()`), with no method that changes how they compare."""
    module = ctx.module
    if node.keywords or len(node.bases) != 1 or module.qualname(node.bases[0]) != "enum.Enum":
        return None
    if any(module.qualname(d) != "enum.unique" for d in node.decorator_list):
        return None
    members: dict[str, str] = {}
    values: dict[str, object] = {}
    by_value: dict[object, str] = {}
    autos = 0
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name in _ENUM_HOOKS:
                return None
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and not stmt.targets[0].id.startswith("_")
        ):
            return None
        name = stmt.targets[0].id
        if name in ("name", "value"):
            return None  # a member shadowing the .name/.value properties: not followed
        value = stmt.value
        if isinstance(value, ast.Call) and module.qualname(value.func) == "enum.auto":
            if value.args or value.keywords:
                return None
            autos += 1
            members[name] = name  # a value of its own, unless a constant equals it
            values[name] = autos
            continue
        if not isinstance(value, ast.Constant):
            return None
        # An equal value (by ==, as Enum compares them: 1, 1.0 and True) makes an alias.
        try:
            members[name] = by_value.setdefault(value.value, name)
        except TypeError:
            return None  # an unhashable value
        values.setdefault(members[name], value.value)
    if autos and by_value:
        return None  # auto() next to constants may repeat one of them
    return EnumClass(node, members, values)


def _plain_class(node: ast.ClassDef, ctx: Ctx) -> PlainClass | None:
    module = ctx.module
    if node.keywords or node.decorator_list:
        return None
    for base in node.bases:
        if not (isinstance(base, ast.Name) and base.id == "object" and module.is_builtin(base)):
            return None
    cached = node.__dict__.get("_pl_plain")  # it depends on the class's own text only
    if cached is None:
        cached = node._pl_plain = _class_body_names(node, module)  # type: ignore[attr-defined]
    return PlainClass(node, ctx, *cached)


def _class_body_names(
    node: ast.ClassDef, module: ModuleInfo
) -> tuple[dict[str, ast.expr], dict[str, ast.FunctionDef]]:
    """The constants a class body binds once, and its plain or static functions."""
    stores: dict[str, int] = {}
    constants: dict[str, ast.expr] = {}
    pending: list[ast.AST] = list(node.body)
    while pending:  # class-level code, not the methods' bodies
        current = pending.pop()
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            stores[current.name] = stores.get(current.name, 0) + 1
            continue
        if isinstance(current, ast.Name) and not isinstance(current.ctx, ast.Load):
            stores[current.id] = stores.get(current.id, 0) + 1
        pending.extend(ast.iter_child_nodes(current))
    functions: dict[str, ast.FunctionDef] = {}
    for stmt in node.body:
        if (
            isinstance(stmt, ast.FunctionDef)
            and stores.get(stmt.name) == 1
            and all(
                isinstance(d, ast.Name) and d.id == "staticmethod" and module.is_builtin(d)
                for d in stmt.decorator_list
            )
        ):
            functions[stmt.name] = stmt
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name) and stores.get(target.id) == 1:
            constants[target.id] = value
    return constants, functions


def _attribute_stored(source: str, attr: str) -> bool:
    """The module's text may store to or delete an attribute `attr` of something
    (`Cfg.LAYERS = 2`, `cls.LAYERS += 1`, `del Cfg.LAYERS`), or calls `setattr`/`delattr`."""
    key = (source, attr)
    found = _STORED.get(key)
    if found is None:
        if len(_STORED) > 64:
            _STORED.clear()  # holds old versions' text: keep it small
        found = _STORED[key] = _attribute_stored_uncached(source, attr)
    return found


_STORED: dict[tuple[str, str], bool] = {}


def _attribute_stored_uncached(source: str, attr: str) -> bool:
    if "setattr(" in source or "delattr(" in source:
        return True
    name = re.escape(attr)
    store = re.compile(
        rf"(?m)\.{name}\s*(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)"  # `.X = `, `.X += `
        rf"|\.{name}\s*:[^=\n]*=(?!=)"  # `.X: int = `
        rf"|^[ \t\w.,\[\]*]*\.{name}[ \t]*,[^\n]*[^=!<>]=(?!=)"  # `Cfg.X, y = `
        rf"|\bdel\b[^\n]*\.{name}\b"
    )
    return store.search(source) is not None


def _same_value(a: object, b: object) -> bool:
    try:
        return bool(hash(a) == hash(b) and a == b)
    except Exception:
        return False


def _property(record: Record, name: str) -> ast.FunctionDef | None:
    """The plain `@property` named `name` in the class body of a frozen dataclass record,
    taking only `self`."""
    if record.named_tuple:
        return None
    for stmt in record.node.body:
        if not isinstance(stmt, ast.FunctionDef) or stmt.name != name:
            continue
        decorators = stmt.decorator_list
        args = stmt.args
        if (
            len(decorators) == 1
            and isinstance(decorators[0], ast.Name)
            and decorators[0].id == "property"
            and record.ctx.module.is_builtin(decorators[0])
            and len(args.args) == 1
            and not (args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg)
        ):
            return stmt
    return None


def _class_var(record: Record, name: str) -> ast.expr | None:
    for var, value in record.class_vars:
        if var == name:
            return value
    return None


def _replaced(
    instance: RecordInstance, keywords: list[ast.keyword], ctx: Ctx
) -> RecordInstance | None:
    """`dataclasses.replace(cfg, layers=0)` / `cfg._replace(layers=0)`: the instance with
    those fields given new values (None: a name that is not a field raises)."""
    values = dict(instance.values)
    for keyword in keywords:
        if keyword.arg is None or keyword.arg not in values:
            return None
        values[keyword.arg] = (keyword.value, ctx)
    return RecordInstance(instance.record, values)


def _construct(record: Record, call: ast.Call, ctx: Ctx) -> RecordInstance | None:
    """`Config(...)`: each field bound to its argument or its default."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    names = [name for name, _ in record.fields]
    if len(call.args) > len(names):
        return None  # TypeError when built
    values: dict[str, tuple[ast.expr, Ctx]] = {}
    for (name, _), arg in zip(record.fields, call.args, strict=False):
        values[name] = (arg, ctx)
    for keyword in call.keywords:
        if keyword.arg not in names or keyword.arg in values:
            return None
        values[keyword.arg] = (keyword.value, ctx)
    for name, default in record.fields:
        if name not in values:
            if default is None:
                return None
            values[name] = (default, record.ctx)
    return RecordInstance(record, values)


def truthiness(values: list[Value] | None) -> bool | None:
    """True/False when every alternative is provably truthy/falsy, else None."""
    if not values:
        return None
    results = set()
    for v in values:
        if isinstance(v, Const):
            results.add(bool(v.value))
        elif isinstance(v, Interpret | Func | Mesh | Params | EnumMember):
            results.add(True)  # an enum member: no __bool__/__len__ (EnumClass checks)
        elif isinstance(v, Seq):
            results.add(bool(v.items))  # a tuple or list display: true when not empty
        elif isinstance(v, NumpyBool):
            results.add(v.value)
        elif isinstance(v, Ref) and jaxapi.canonical(v.qualname) == "InterpretParams":
            results.add(True)  # the class itself (`interpret=pltpu.InterpretParams`): truthy
        else:
            return None
    return results.pop() if len(results) == 1 else None


class Evaluator:
    def __init__(self, resolver: ImportResolver | None = None) -> None:
        self.resolver = resolver
        # While set, every name looked up and every binding followed is noted, so that a
        # result can be reused until one of them changes (see rules/conv_precision.py).
        self.recorder: Recorder | None = None
        # While set (eval_at_entry), a read in this `while` loop's test sees only the
        # bindings that reach the loop, not those of its body.
        self._entry: ast.While | None = None
        # One token per enum member compared (by its class node and name): `is` and `==`
        # between members hold only for the same member.
        self._members: dict[tuple[int, str], _MemberToken] = {}

    # -- entry --------------------------------------------------------------------------
    def eval(self, expr: ast.expr | None, ctx: Ctx, depth: int = 0) -> list[Value] | None:
        if expr is None or depth > MAX_DEPTH:
            return None
        try:
            return self._eval(expr, ctx, depth + 1)
        except RecursionError:
            return None

    def eval_at_entry(self, loop: ast.While, ctx: Ctx) -> list[Value] | None:
        """The value of a `while` loop's test the first time it is evaluated (`n = 0`
        before `while n > 0: ... n -= 1`: 0 > 0)."""
        saved, self._entry = self._entry, loop
        try:
            return self.eval(loop.test, ctx)
        finally:
            self._entry = saved

    def _eval(self, expr: ast.expr, ctx: Ctx, depth: int) -> list[Value] | None:
        if isinstance(expr, ast.Constant):
            return [Const(expr.value)]
        if isinstance(expr, ast.Name):
            return self._eval_name(expr, ctx, depth)
        if isinstance(expr, ast.Attribute):
            return self._eval_attribute(expr, ctx, depth)
        if isinstance(expr, ast.IfExp):
            test = truthiness(self.eval(expr.test, ctx, depth))
            if test is True:
                return self.eval(expr.body, ctx, depth)
            if test is False:
                return self.eval(expr.orelse, ctx, depth)
            a = self.eval(expr.body, ctx, depth)
            b = self.eval(expr.orelse, ctx, depth)
            return None if a is None or b is None else a + b
        if isinstance(expr, ast.Tuple | ast.List):
            if any(isinstance(e, ast.Starred) for e in expr.elts):
                return None
            items = tuple(self.eval(e, ctx, depth) for e in expr.elts)
            return [Seq(items, isinstance(expr, ast.Tuple))]
        if isinstance(expr, ast.Call):
            return self._eval_call(expr, ctx, depth)
        if isinstance(expr, ast.Lambda):
            return [Func(expr, ctx)]
        if isinstance(expr, ast.NamedExpr):
            return self.eval(expr.value, ctx, depth)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            t = truthiness(self.eval(expr.operand, ctx, depth))
            return None if t is None else [Const(not t)]
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
            values = self.eval(expr.operand, ctx, depth)
            if not values or not all(
                isinstance(v, Const) and type(v.value) in (int, float) for v in values
            ):
                return None
            sign = -1 if isinstance(expr.op, ast.USub) else 1
            return [Const(sign * v.value) for v in values]  # type: ignore[attr-defined]
        if isinstance(expr, ast.Compare):
            return self._eval_compare(expr, ctx, depth)
        if isinstance(expr, ast.BinOp):
            return self._eval_binop(expr, ctx, depth)
        if isinstance(expr, ast.Subscript):
            return self._eval_subscript(expr, ctx, depth)
        if isinstance(expr, ast.JoinedStr):
            return self._eval_fstring(expr, ctx, depth)
        if isinstance(expr, ast.BoolOp):
            # Only when every operand is decided: `a and b` / `a or b` of known truth.
            truths = [truthiness(self.eval(v, ctx, depth)) for v in expr.values]
            if None in truths:
                return None
            return [Const(all(truths) if isinstance(expr.op, ast.And) else any(truths))]
        return None

    def _eval_compare(self, expr: ast.Compare, ctx: Ctx, depth: int) -> list[Value] | None:
        """`backend == "sc"`, `x is None`, `mode in ("a", "b")` between known constants:
        decided as Python would, for every combination of their alternatives."""
        operands = [self._constants(e, ctx, depth) for e in (expr.left, *expr.comparators)]
        if any(o is None for o in operands):
            return None
        results: set[bool] = set()
        for left_value in operands[0]:  # type: ignore[union-attr]
            for rights in _combinations(operands[1:]):  # type: ignore[arg-type]
                current = left_value
                outcome = True
                for op, right in zip(expr.ops, rights, strict=True):
                    compare = _COMPARE.get(type(op))
                    if compare is None:
                        return None
                    try:
                        if not compare(current, right):
                            outcome = False
                            break
                    except Exception:
                        return None
                    current = right
                results.add(outcome)
        return [Const(r) for r in sorted(results)] or None

    def _eval_binop(self, expr: ast.BinOp, ctx: Ctx, depth: int) -> list[Value] | None:
        """`512 // BLOCK`, `N * 2`, `"tensor" + "float32"` between known numbers or strings:
        computed as Python would, for every combination of their alternatives."""
        operate = _ARITHMETIC.get(type(expr.op))
        if operate is None:
            return None
        left = self.eval(expr.left, ctx, depth)
        if not left:
            return None
        right = self.eval(expr.right, ctx, depth)
        if not right or len(left) * len(right) > 8:
            return None
        out: list[Value] = []
        for a in left:
            for b in right:
                if isinstance(a, Seq) or isinstance(b, Seq):
                    joined = _sequence_op(expr.op, a, b)
                    if joined is None:
                        return None
                    out.append(joined)
                    continue
                if not (isinstance(a, Const) and isinstance(b, Const)):
                    return None
                if type(a.value) not in _ARITHMETIC_TYPES or type(b.value) not in _ARITHMETIC_TYPES:
                    return None
                if (
                    isinstance(expr.op, ast.Pow | ast.LShift)
                    and isinstance(b.value, int | float)
                    and abs(b.value) > 64
                ):
                    return None  # a huge number
                if (
                    isinstance(expr.op, ast.Mult)
                    and any(isinstance(v, int) and v > 1000 for v in (a.value, b.value))
                    and any(isinstance(v, str) for v in (a.value, b.value))
                ):
                    return None  # a huge string
                try:
                    value = operate(a.value, b.value)
                except Exception:
                    return None  # TypeError, ZeroDivisionError, ...: raises when it runs
                if isinstance(value, str) and len(value) > 1000:
                    return None
                out.append(Const(value))
        return out

    def _constants(self, expr: ast.expr, ctx: Ctx, depth: int) -> list[object] | None:
        """The plain Python values an expression may have (constants and tuples of them)."""
        values = self.eval(expr, ctx, depth)
        if not values or len(values) > 8:
            return None
        out: list[object] = []
        for v in values:
            if isinstance(v, Const) and type(v.value) in _PLAIN:
                out.append(v.value)
            elif isinstance(v, EnumMember):
                key = (id(v.cls), v.name)
                if len(self._members) > 4096:
                    self._members.clear()
                out.append(self._members.setdefault(key, _MemberToken(v.name)))
            elif isinstance(v, Seq) and all(
                item is not None
                and len(item) == 1
                and isinstance(item[0], Const)
                and type(item[0].value) in _PLAIN
                for item in v.items
            ):
                out.append(tuple(item[0].value for item in v.items))  # type: ignore[index,union-attr]
            else:
                return None
        return out

    def _eval_name(self, expr: ast.Name, ctx: Ctx, depth: int) -> list[Value] | None:
        module = ctx.module
        found = module.lookup(expr.id, module.scope_of(expr))
        if self.recorder is not None:
            self.recorder.note(module, expr.id, found)
        if found is None:
            if expr.id in {"True", "False", "None"}:
                return [Const({"True": True, "False": False, "None": None}[expr.id])]
            return None
        scope, bindings = found
        declared = module.declared
        if declared is None or declared[0] is not module.source or declared[3]:
            if expr.id in rebound_elsewhere(module, scope.node is module.tree):
                return None  # a function assigns it under `global` / `nonlocal`: when is unknown
        if len(bindings) > 1 and all(isinstance(b, ImportBinding) for b in bindings):
            # The same import repeated binds the same thing.
            if len({(b.qualname, b.level) for b in bindings}) == 1:  # type: ignore[union-attr]
                bindings = bindings[:1]
        if len(bindings) > 1:
            bindings = _reaching(
                module, expr, scope.node, bindings, self._truth(ctx, depth), self._entry
            )
        out: list[Value] = []
        for b in bindings:
            values = self._eval_binding(b, expr.id, ctx, depth)
            if values is None:
                return None
            out.extend(values)
        return out or None

    def _truth(self, ctx: Ctx, depth: int) -> Truth:
        """How an `if` test between bindings is decided here: a literal, or a value this
        context gives it (a wrapper's `safe=True` default)."""

        def truth(test: ast.expr) -> bool | None:
            literal = constant_truth(test)
            if literal is not None or depth > 8:
                return literal
            return truthiness(self.eval(test, ctx, depth + 1))

        return truth

    def _dataclass_base(self, node: ast.ClassDef, ctx: Ctx, depth: int) -> Record | None:
        """The single base class of `node` when it is a frozen dataclass of the same module
        (`@dataclass(frozen=True) class Sub(Base)`)."""
        if len(node.bases) != 1 or not node.decorator_list or depth > 20:
            return None
        found = self.eval(node.bases[0], ctx, depth + 1)
        if not found or len(found) != 1:
            return None
        base = found[0]
        if (
            not isinstance(base, Record)
            or base.named_tuple
            or base.ctx.module is not ctx.module
            or base.node is node
        ):
            return None
        return base

    def _eval_binding(self, b: object, name: str, ctx: Ctx, depth: int) -> list[Value] | None:
        module = ctx.module
        if isinstance(b, ImportBinding):
            if b.level == 0 and _is_jax_or_std(b.qualname):
                return self._from_qualname(b.qualname)
            if self.resolver is None:
                return None
            if self.recorder is not None:
                self.recorder.cross_module = True
            target = self.resolver.resolve(module, b)
            if target is None:
                return None
            other, other_name = target
            if not other_name:  # the import names the module itself
                return [ModuleRef(other)]
            found = other.lookup(other_name, other.module_scope)
            if found is None:
                return None
            out: list[Value] = []
            other_ctx = Ctx(other)
            for ob in found[1]:
                values = self._eval_binding(ob, other_name, other_ctx, depth + 1)
                if values is None:
                    return None
                out.extend(values)
            return out
        if isinstance(b, AssignBinding):
            return self.eval(b.value, ctx, depth)
        if isinstance(b, DefBinding):
            if isinstance(b.node, ast.FunctionDef | ast.AsyncFunctionDef):
                if b.node.decorator_list and _replaced_by_decorator(b.node, ctx):
                    return None  # the name is bound to what the decorator gives instead
                return [Func(b.node, ctx)]
            made = (
                _record(b.node, ctx, self._dataclass_base(b.node, ctx, depth))
                or _enum_class(b.node, ctx)
                or _plain_class(b.node, ctx)
            )
            return [made] if made is not None else None
        if isinstance(b, UnpackBinding):
            return self._element(self.eval(b.value, ctx, depth), b.index, b.size)
        if isinstance(b, ParamBinding):
            params = ctx.params_of(b.function)
            if params is None or name not in params:
                return None
            bound = params[name]
            if bound is None:
                return None
            return self.eval(bound[0], bound[1], depth)
        return None

    @staticmethod
    def _element(values: list[Value] | None, index: int, size: int | None) -> list[Value] | None:
        """Element `index` of every alternative, each a sequence (of `size` items when
        given); None when one is not."""
        if not values:
            return None
        out: list[Value] = []
        for v in values:
            if not isinstance(v, Seq) or (size is not None and len(v.items) != size):
                return None
            if not -len(v.items) <= index < len(v.items):
                return None
            item = v.items[index]
            if item is None:
                return None
            out.extend(item)
        return out

    def _enum_lookup(
        self, enum: EnumClass, call: ast.Call, ctx: Ctx, depth: int
    ) -> list[Value] | None:
        """`Mode(1)`: the member with that value (equal by ==, as Enum looks it up)."""
        if len(call.args) != 1 or call.keywords:
            return None
        wanted = self._constants(call.args[0], ctx, depth)
        if not wanted:
            return None
        out: list[Value] = []
        for value in wanted:
            if _unsafe_argument(value):
                return None
            found = [n for n, v in enum.values.items() if _same_value(v, value)]
            if len(found) != 1:
                return None  # no such member (ValueError), or unsure
            out.append(EnumMember(enum.node, found[0], enum))
        return out

    def _eval_subscript(self, expr: ast.Subscript, ctx: Ctx, depth: int) -> list[Value] | None:
        """`PAIR[1]`, `divmod(N, BK)[0]`: a constant index into known sequences;
        `Mode["CONV"]`: a member by name."""
        index = expr.slice
        if isinstance(index, ast.Slice):
            return self._eval_slice(expr.value, index, ctx, depth)
        if isinstance(index, ast.Constant) and isinstance(index.value, str):
            classes = self.eval(expr.value, ctx, depth) or []
            refs = [c for c in classes if isinstance(c, Ref)]
            if refs and len(refs) == len(classes) and index.value.isidentifier():
                # `lax.Precision["HIGH"]`: a JAX enum's member by name, as `.HIGH`
                looked = [self._from_qualname(f"{r.qualname}.{index.value}") for r in refs]
                if all(v and all(isinstance(m, Member) for m in v) for v in looked):
                    return [m for v in looked for m in v or []]
                return None
            enums = [e for e in classes if isinstance(e, EnumClass) and index.value in e.members]
            if not enums or len(enums) != len(classes):
                return None
            return [EnumMember(e.node, e.members[index.value], e) for e in enums]
        if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
            inner = index.operand
            if not (isinstance(inner, ast.Constant) and type(inner.value) is int):
                return None
            position = -inner.value
        elif isinstance(index, ast.Constant) and type(index.value) is int:
            position = index.value
        else:
            return None
        return self._element(self.eval(expr.value, ctx, depth), position, None)

    def _eval_slice(
        self, value: ast.expr, part: ast.Slice, ctx: Ctx, depth: int
    ) -> list[Value] | None:
        """`PAIR[::-1]`, `SIZES[:2]`: a slice with constant bounds of a tuple or list
        display, or of a name bound only to such displays (read off the text first: most
        slices are of arrays, and evaluating those can cost a lot)."""
        if isinstance(value, ast.Name):
            module = ctx.module
            named = module.lookup(value.id, module.scope_of(value))
            if named is None or not all(
                isinstance(b, AssignBinding) and isinstance(b.value, ast.Tuple | ast.List)
                for b in named[1]
            ):
                return None
        elif not isinstance(value, ast.Tuple | ast.List):
            return None
        found = self.eval(value, ctx, depth)
        if not found or not all(isinstance(v, Seq) for v in found):
            return None
        bounds: list[int | None] = []
        for bound in (part.lower, part.upper, part.step):
            if bound is None:
                bounds.append(None)
                continue
            known = self._constants(bound, ctx, depth)
            if not known or len(known) != 1 or type(known[0]) not in (int, type(None)):
                return None
            bounds.append(known[0])  # type: ignore[arg-type]
        if bounds[2] == 0:
            return None  # ValueError when it runs
        chosen = slice(*bounds)
        return [Seq(v.items[chosen], v.is_tuple) for v in found]  # type: ignore[attr-defined]

    def _eval_fstring(self, expr: ast.JoinedStr, ctx: Ctx, depth: int) -> list[Value] | None:
        """`f"{K}x{K}"` of known numbers and strings (a constant format spec at most)."""
        parts: list[list[str]] = []
        for part in expr.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append([part.value])
                continue
            if not isinstance(part, ast.FormattedValue):
                return None
            spec = ""
            if part.format_spec is not None:
                specs = self._eval_fstring(part.format_spec, ctx, depth)  # type: ignore[arg-type]
                if not specs or len(specs) != 1:
                    return None
                spec = specs[0].value  # type: ignore[attr-defined]
            values = self._constants(part.value, ctx, depth)
            if values is None or any(_unsafe_argument(v) for v in values):
                return None
            convert = _CONVERSIONS.get(part.conversion)
            if convert is None:
                return None
            try:
                parts.append([format(convert(v), spec) for v in values])
            except Exception:
                return None
        combos = 1
        for p in parts:
            combos *= len(p)
        if combos > 8:
            return None
        return [Const("".join(c)) for c in _combinations(parts)]  # type: ignore[arg-type]

    def _str_method(
        self, call: ast.Call, func: ast.Attribute, ctx: Ctx, depth: int
    ) -> list[Value] | None:
        """`MODE.startswith("conv")`, `NAME.lower()` on known strings: computed as Python
        would, for every combination of alternatives."""
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        receivers = self._constants(func.value, ctx, depth)
        if receivers is None or not all(type(r) is str and len(r) <= 100 for r in receivers):
            return None
        operands = self._operands(call.args, ctx, depth, [receivers])
        if operands is None:
            return None
        out: list[Value] = []
        for receiver, *args in _combinations(operands):
            if any(_unsafe_argument(a) for a in args):
                return None
            try:
                value = getattr(receiver, func.attr)(*args)
            except Exception:
                return None  # raises when it runs
            if type(value) not in _PLAIN or (isinstance(value, str) and len(value) > 1000):
                return None
            out.append(Const(value))
        return out

    def _operands(
        self,
        args: list[ast.expr],
        ctx: Ctx,
        depth: int,
        operands: list[list[object]] | None = None,
    ) -> list[list[object]] | None:
        """The known alternatives of each argument, after `operands`; None at the first
        unknown one (the rest are not evaluated) or past 8 combinations."""
        out = list(operands or [])
        for a in args:
            known = self._constants(a, ctx, depth)
            if known is None:
                return None
            out.append(known)
        combos = 1
        for o in out:
            combos *= len(o)
        return out if combos <= 8 else None

    def _eval_sequence_builtin(
        self, call: ast.Call, name: str, ctx: Ctx, depth: int
    ) -> list[Value] | None:
        """`tuple(PAIR)` / `list(PAIR)` of a known tuple or list; `getattr(obj, "NAME")` with
        a constant name and no default, as `obj.NAME`."""
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if name == "getattr":
            if len(call.args) != 2:
                return None
            attr = call.args[1]
            if not (isinstance(attr, ast.Constant) and isinstance(attr.value, str)):
                return None
            if not attr.value.isidentifier():
                return None
            node = ast.Attribute(value=call.args[0], attr=attr.value, ctx=ast.Load())
            return self._eval_attribute(node, ctx, depth)
        if len(call.args) != 1:
            return None
        found = self.eval(call.args[0], ctx, depth)
        if not found or not all(isinstance(v, Seq) for v in found):
            return None
        return [Seq(v.items, name == "tuple") for v in found]  # type: ignore[attr-defined]

    def _eval_builtin(self, call: ast.Call, name: str, ctx: Ctx, depth: int) -> list[Value] | None:
        """`int(N / 2)`, `max(0, L - 2)`, `divmod(N, BK)`, `round(x)`, `len(SIZES)` on known
        constants: computed as Python would, for every combination of alternatives."""
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if name == "len" and len(call.args) == 1:
            found = self.eval(call.args[0], ctx, depth)
            if found and len(found) == 1 and isinstance(found[0], EnumClass):
                return [Const(len(set(found[0].members.values())))]  # aliases do not count
        operands = self._operands(call.args, ctx, depth)
        if operands is None:
            return None
        function = _PURE_BUILTINS.get(name) or _PURE_LIBRARY[name]
        out: list[Value] = []
        for args in _combinations(operands):
            if any(_unsafe_argument(a) for a in args):
                return None
            if (
                name == "pow"
                and len(args) >= 2
                and isinstance(args[1], int | float)
                and abs(args[1]) > 64
            ):
                return None  # a huge number
            try:
                value = function(*args)
            except Exception:
                return None  # raises when it runs
            if isinstance(value, tuple):
                out.append(Seq(tuple([Const(v)] for v in value), True))
            elif isinstance(value, str) and len(value) > 1000:
                return None
            else:
                out.append(Const(value))
        return out

    def _from_qualname(self, qualname: str) -> list[Value] | None:
        cached = _QUALNAME_VALUES.get(qualname)
        if cached is None:
            cached = self._from_qualname_uncached(qualname)
            if len(_QUALNAME_VALUES) < 4096:
                _QUALNAME_VALUES[qualname] = cached
        return cached

    def _from_qualname_uncached(self, qualname: str) -> list[Value]:
        canon = jaxapi.canonical(qualname)
        head, _, member = qualname.rpartition(".")
        enum = jaxapi.canonical(head)
        if enum in {"Precision", "OptLevel", "DotAlgorithmPreset"}:
            return [Member(enum, member)]
        if canon is None:
            for module in jaxapi.DTYPE_MODULES:
                if head == module and member in jaxapi.DTYPE_NAMES:
                    return [Dtype(member)]
        if canon in {"pallas_call", "kernel", "core_map"}:
            return [EntryFactory(canon, (), (), ())]
        if qualname in ("numpy.True_", "numpy.False_"):
            return [NumpyBool(qualname == "numpy.True_")]
        return [Ref(qualname)]

    def _eval_attribute(self, expr: ast.Attribute, ctx: Ctx, depth: int) -> list[Value] | None:
        base = self.eval(expr.value, ctx, depth)
        if base is None:
            return None
        out: list[Value] = []
        for v in base:
            if isinstance(v, Ref):
                values = self._from_qualname(f"{v.qualname}.{expr.attr}")
            elif isinstance(v, ModuleRef):
                values = self._module_attribute(v.module, expr.attr, depth)
            elif isinstance(v, RecordInstance) and expr.attr in v.values:
                value, where = v.values[expr.attr]
                values = self.eval(value, where, depth)
            elif (
                isinstance(v, RecordInstance)
                and len(base) == 1
                and (prop := _property(v.record, expr.attr)) is not None
            ):
                # `cfg.trips` of `@property def trips(self): return self.n - 2`: `self`
                # stands for the expression the instance came from.
                self_name = prop.args.args[0].arg
                inner = v.record.ctx.with_binding(prop, {self_name: (expr.value, ctx)})
                values = self._returned(prop, inner, depth + 1)
            elif isinstance(v, RecordInstance | Record) and (
                class_var := _class_var(v if isinstance(v, Record) else v.record, expr.attr)
            ):
                values = self.eval(class_var, (v if isinstance(v, Record) else v.record).ctx, depth)
            elif (
                isinstance(v, PlainClass)
                and (expr.attr in v.constants or expr.attr in v.functions)
                and not _attribute_stored(ctx.module.source, expr.attr)
                and not _attribute_stored(v.ctx.module.source, expr.attr)
            ):
                # `Cfg.LAYERS` of `class Cfg: LAYERS = 0`, or `Ops.conv`, stored nowhere in
                # the module
                if expr.attr in v.functions:
                    values = [Func(v.functions[expr.attr], v.ctx)]
                else:
                    values = self.eval(v.constants[expr.attr], v.ctx, depth)
            elif isinstance(v, EnumClass) and expr.attr in v.members:
                values = [EnumMember(v.node, v.members[expr.attr], v)]
            elif isinstance(v, EnumMember) and expr.attr == "name":
                values = [Const(v.name)]
            elif (
                isinstance(v, EnumMember)
                and expr.attr == "value"
                and v.enum is not None
                and v.name in v.enum.values
            ):
                values = [Const(v.enum.values[v.name])]
            else:
                return None
            if values is None:
                return None
            out.extend(values)
        return out

    def _module_attribute(self, other: ModuleInfo, name: str, depth: int) -> list[Value] | None:
        """`helpers.name`: what the module's own bindings of `name` give (not a submodule,
        nor a name its `__getattr__` makes)."""
        found = other.lookup(name, other.module_scope)
        if found is None:
            return None
        out: list[Value] = []
        other_ctx = Ctx(other)
        for binding in found[1]:
            values = self._eval_binding(binding, name, other_ctx, depth + 1)
            if values is None:
                return None
            out.extend(values)
        return out

    # -- calls --------------------------------------------------------------------------
    def _eval_call(self, call: ast.Call, ctx: Ctx, depth: int) -> list[Value] | None:
        func = call.func
        # `<named tuple>._replace(...)`
        if isinstance(func, ast.Attribute) and func.attr == "_replace" and not call.args:
            base = self.eval(func.value, ctx, depth)
            if base and all(isinstance(v, RecordInstance) and v.record.named_tuple for v in base):
                replaced = [_replaced(v, call.keywords, ctx) for v in base]  # type: ignore[arg-type]
                return None if None in replaced else replaced  # type: ignore[return-value]
        # `<params>.replace(...)`
        if isinstance(func, ast.Attribute) and func.attr == "replace":
            base = self.eval(func.value, ctx, depth)
            if base is not None and all(isinstance(v, Params) for v in base):
                return [self._replace(v, call, call.keywords, ctx) for v in base]  # type: ignore[arg-type]
        if (
            isinstance(func, ast.Name)
            and func.id in _SEQUENCE_BUILTINS
            and ctx.module.lookup(func.id, ctx.module.scope_of(func)) is None
        ):
            return self._eval_sequence_builtin(call, func.id, ctx, depth)
        if (
            isinstance(func, ast.Name)
            and func.id in _PURE_BUILTINS
            and ctx.module.lookup(func.id, ctx.module.scope_of(func)) is None
        ):
            return self._eval_builtin(call, func.id, ctx, depth)
        if isinstance(func, ast.Attribute | ast.Name):
            qual = ctx.module.qualname(func)
            if qual in _PURE_LIBRARY:
                return self._eval_builtin(call, qual, ctx, depth)
        if isinstance(func, ast.Attribute) and func.attr in _STR_METHODS:
            computed = self._str_method(call, func, ctx, depth)
            if computed is not None:
                return computed
        callees = self.eval(func, ctx, depth)
        if callees is None or len(callees) != 1:
            return None
        callee = callees[0]
        if isinstance(callee, EntryFactory):
            if entry_body(callee) is not None:
                return None  # calling a built kernel: its result is an array
            return [self._extend_entry(callee, call, ctx)]
        if isinstance(callee, Func):
            return self._call_function(callee, call, ctx, depth)
        if isinstance(callee, Record):
            instance = _construct(callee, call, ctx)
            return [instance] if instance is not None else None
        if isinstance(callee, EnumClass):
            return self._enum_lookup(callee, call, ctx, depth)
        if not isinstance(callee, Ref):
            return None
        name = jaxapi.canonical(callee.qualname)
        if name == "tpu.CompilerParams" or name == "gpu.CompilerParams":
            return [self._construct_params(name.split(".")[0], call, ctx)]
        if name == "dataclasses.replace" and call.args:
            base = self.eval(call.args[0], ctx, depth)
            if (
                len(call.args) == 1
                and base
                and all(isinstance(v, RecordInstance) and not v.record.named_tuple for v in base)
            ):
                replaced = [_replaced(v, call.keywords, ctx) for v in base]  # type: ignore[arg-type]
                return None if None in replaced else replaced  # type: ignore[return-value]
            if base is not None and all(isinstance(v, Params) for v in base):
                return [self._replace(v, call, call.keywords, ctx) for v in base]  # type: ignore[arg-type]
            if base and all(isinstance(v, Interpret) for v in base):
                return [Interpret()]  # another InterpretParams: still interpret mode
            return None
        if name in {"mesh.tc", "mesh.sc", "mesh.gpu"}:
            return [Mesh(name.split(".")[1], call, ctx)]
        if name == "InterpretParams":
            return [Interpret()]
        if name == "Precision" and len(call.args) == 1 and not call.keywords:
            arg = self.eval(call.args[0], ctx, depth)
            if arg and len(arg) == 1 and isinstance(arg[0], Const):
                value = arg[0].value
                if isinstance(value, str) and value in jaxapi.PRECISION_STRINGS:
                    return [Member("Precision", jaxapi.PRECISION_STRINGS[value])]
                if isinstance(value, int) and 0 <= value < 3:
                    return [Member("Precision", jaxapi.PRECISION_MEMBERS[value])]
            return None
        if name == "DotAlgorithm":
            lhs = _arg(call, 0, "lhs_precision_type")
            rhs = _arg(call, 1, "rhs_precision_type")
            return [DotAlgo(self.eval(lhs, ctx, depth), self.eval(rhs, ctx, depth))]
        if name == "partial" and call.args:
            target = self.eval(call.args[0], ctx, depth)
            if target and all(isinstance(t, Func) for t in target):
                # `functools.partial(kernel, ...)`; with `kernel` one of several functions,
                # the same partial of each.
                if any(isinstance(a, ast.Starred) for a in call.args[1:]):
                    return None
                if any(k.arg is None for k in call.keywords):
                    return None
                out: list[Value] = []
                for t in target:
                    assert isinstance(t, Func)
                    bound = dict(t.bound)
                    bound.update({k.arg: (k.value, ctx) for k in call.keywords if k.arg})
                    positional = t.bound_positional + tuple((a, ctx) for a in call.args[1:])
                    out.append(Func(t.node, t.ctx, bound, positional))
                return out
            if target is None or len(target) != 1:
                return None
            t = target[0]
            if isinstance(t, EntryFactory):
                fake = ast.Call(func=call.args[0], args=call.args[1:], keywords=call.keywords)
                return [self._extend_entry(t, fake, ctx, node=call)]
            if isinstance(t, Ref | LibraryPartial):
                if any(isinstance(a, ast.Starred) for a in call.args[1:]):
                    return None
                if any(k.arg is None for k in call.keywords):
                    return None
                args = tuple((a, ctx) for a in call.args[1:])
                keywords = tuple((k, ctx) for k in call.keywords)
                if isinstance(t, LibraryPartial):
                    return [LibraryPartial(t.qualname, t.args + args, t.keywords + keywords, call)]
                return [LibraryPartial(t.qualname, args, keywords, call)]
            return None
        return None

    def _extend_entry(
        self, entry: EntryFactory, call: ast.Call, ctx: Ctx, node: ast.AST | None = None
    ) -> EntryFactory:
        return EntryFactory(
            entry.entry,
            entry.args + tuple((a, ctx) for a in call.args),
            entry.kwargs + tuple((k, ctx) for k in call.keywords),
            (*entry.nodes, node or call),
        )

    def _construct_params(self, kind: str, call: ast.Call, ctx: Ctx) -> Params:
        setter: OptLevelSetter | None = None
        unknown = any(isinstance(a, ast.Starred) for a in call.args)
        index = jaxapi.COMPILER_PARAMS_FIELDS.index("opt_level")
        if not unknown and len(call.args) > index:
            setter = OptLevelSetter(call.args[index], call.args[index], call, ctx)
        if any(kw.arg is None for kw in call.keywords):
            # `CompilerParams(**dict(opt_level=2))`, `**PARAMS_KW` with a visible dict
            spread = spread_keywords(ctx.module, call)
            if spread is None:
                unknown = True
            for key, entry, container, _ in spread or ():
                if key == "opt_level":
                    value = entry.value if isinstance(entry, ast.keyword) else entry
                    assert isinstance(container, ast.Call | ast.Dict)
                    setter = OptLevelSetter(entry, value, container, ctx)
        for kw in call.keywords:
            if kw.arg == "opt_level":
                setter = OptLevelSetter(kw, kw.value, call, ctx)
        return Params(
            kind,
            call,
            ctx,
            setter,
            opt_level_unknown=unknown and setter is None,
            setters=(setter,) if setter else (),
            chain=((call, ctx),),
        )

    def _replace(
        self, base: Params, call: ast.Call, keywords: list[ast.keyword], ctx: Ctx
    ) -> Params:
        setter = base.opt_level
        unknown = base.opt_level_unknown
        setters = base.setters
        for kw in keywords:
            if kw.arg is None:
                unknown, setter = True, None
            elif kw.arg == "opt_level":
                setter = OptLevelSetter(kw, kw.value, call, ctx)
                unknown = False
                setters = (*setters, setter)
        return Params(base.kind, call, ctx, setter, unknown, setters, (*base.chain, (call, ctx)))

    def _call_function(self, fn: Func, call: ast.Call, ctx: Ctx, depth: int) -> list[Value] | None:
        """The value a user function returns (factories of params, meshes or kernels)."""
        if isinstance(fn.node, ast.Lambda):
            inner = bind_arguments(fn, call, ctx)
            if inner is None:
                return None
            return self.eval(fn.node.body, inner, depth)
        if isinstance(fn.node, ast.AsyncFunctionDef) or fn.node.decorator_list:
            return None
        inner = bind_arguments(fn, call, ctx)
        if inner is None:
            return None
        return self._returned(fn.node, inner, depth)

    def _returned(self, node: ast.FunctionDef, inner: Ctx, depth: int) -> list[Value] | None:
        """What `node` returns, its parameters bound in `inner`: every `return`'s values
        (None when one returns nothing, or it yields)."""
        returns = [
            n
            for n in _walk_function_body(node)
            if isinstance(n, ast.Return | ast.Yield | ast.YieldFrom)
        ]
        if not returns or any(not isinstance(r, ast.Return) or r.value is None for r in returns):
            return None
        out: list[Value] = []
        for r in returns:
            assert isinstance(r, ast.Return)
            values = self.eval(r.value, inner, depth)
            if values is None:
                return None
            out.extend(values)
        return out


_PLAIN = frozenset({bool, int, float, str, bytes, type(None)})
_ARITHMETIC_TYPES = frozenset({bool, int, float, str})
_ARITHMETIC: dict[type, Callable[[Any, Any], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.Div: operator.truediv,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.RShift: operator.rshift,
    ast.LShift: operator.lshift,
}
# Builtins computed on known constants (when nothing in the module rebinds the name).
_SEQUENCE_BUILTINS = frozenset({"tuple", "list", "getattr"})
_PURE_BUILTINS: dict[str, Callable[..., object]] = {
    "abs": abs,
    "bool": bool,
    "divmod": divmod,
    "float": float,
    "int": int,
    "len": len,
    "max": max,
    "min": min,
    "pow": pow,
    "round": round,
}


def _cdiv(a: object, b: object) -> int:
    """`pl.cdiv` of two Python ints (anything else is an array op, not a constant)."""
    if type(a) is not int or type(b) is not int:
        raise TypeError("not two ints")
    return -(-a // b)


# str methods computed on known strings (results that are plain values, bounded in size).
_STR_METHODS = frozenset(
    {
        "startswith",
        "endswith",
        "lower",
        "upper",
        "casefold",
        "strip",
        "lstrip",
        "rstrip",
        "removeprefix",
        "removesuffix",
        "replace",
        "count",
        "find",
        "isdigit",
        "isalpha",
        "isalnum",
        "islower",
        "isupper",
    }
)

# Library functions computed on known constants, by qualified name.
_PURE_LIBRARY: dict[str, Callable[..., object]] = {
    "math.ceil": math.ceil,
    "math.floor": math.floor,
    "math.trunc": math.trunc,
    "math.gcd": math.gcd,
    "math.isqrt": math.isqrt,
    "math.log2": math.log2,
    "math.sqrt": math.sqrt,
    f"{jaxapi.PL}.cdiv": _cdiv,
}


# An f-string's `!s`, `!r`, `!a` (-1: none).
_CONVERSIONS: dict[int, Callable[[object], object]] = {
    -1: lambda v: v,
    ord("s"): str,
    ord("r"): repr,
    ord("a"): ascii,
}


def _unsafe_argument(value: object) -> bool:
    """A value a builtin must not be given here: an enum member's stand-in, a huge
    string (int("9" * 10**6) is slow), or a tuple holding either."""
    if isinstance(value, tuple):
        return any(_unsafe_argument(v) for v in value)
    if isinstance(value, str):
        return len(value) > 100
    return type(value) not in _PLAIN


_COMPARE: dict[type, Callable[[object, object], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,  # type: ignore[operator]
    ast.LtE: lambda a, b: a <= b,  # type: ignore[operator]
    ast.Gt: lambda a, b: a > b,  # type: ignore[operator]
    ast.GtE: lambda a, b: a >= b,  # type: ignore[operator]
    ast.Is: lambda a, b: a is b if a is None or b is None else a == b and type(a) is type(b),
    ast.IsNot: lambda a, b: (
        not (a is b if a is None or b is None else a == b and type(a) is type(b))
    ),
    ast.In: lambda a, b: a in b,  # type: ignore[operator]
    ast.NotIn: lambda a, b: a not in b,  # type: ignore[operator]
}


def _combinations(options: list[list[object]]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = [()]
    for choices in options:
        out = [(*prefix, c) for prefix in out for c in choices]
        if len(out) > 64:
            return []  # too many alternatives: undecided
    return out


_DECLARED = re.compile(r"^[ \t]*(global|nonlocal)[ \t]", re.MULTILINE)
_NO_NAMES: frozenset[str] = frozenset()


def rebound_elsewhere(module: ModuleInfo, module_level: bool) -> frozenset[str]:
    """Names some function declares `global` (module_level) or `nonlocal`: assignments
    there rebind them at a time the analysis does not know. Kept per source text."""
    cached = module.declared
    if cached is None or cached[0] is not module.source:
        names: tuple[set[str], set[str]] = (set(), set())
        source = module.source
        if ("global" in source or "nonlocal" in source) and _DECLARED.search(source):
            for node in ast.walk(module.tree):
                if type(node) is ast.Global:
                    names[0].update(node.names)
                elif type(node) is ast.Nonlocal:
                    names[1].update(node.names)
        cached = (module.source, frozenset(names[0]), frozenset(names[1]), any(names))
        module.declared = cached
    found = cached[1] if module_level else cached[2]
    return found or _NO_NAMES


def _in_dead_branch(
    module: ModuleInfo, node: ast.AST, stop: ast.AST, truth: Truth = constant_truth
) -> bool:
    """`node` sits in the branch of an `if` that never runs (below `stop`): its test is a
    literal, or one the context decides."""
    child, parent = node, module.parents.get(node)
    while parent is not None and parent is not stop:
        if type(parent) is ast.If:
            taken = truth(parent.test)
            if taken is not None:
                branch = parent.body if taken else parent.orelse
                if child is not parent.test and not any(s is child for s in branch):
                    return True
        child, parent = parent, module.parents.get(parent)
    return False


def _reaching(
    module: ModuleInfo,
    load: ast.Name,
    owner: ast.AST,
    bindings: list[Binding],
    truth: Truth = constant_truth,
    entry: ast.While | None = None,
) -> list[Binding]:
    """The bindings of a name that may reach `load`: a binding statement that runs before
    it in a block enclosing it (`kernel = conv` then `kernel = plain` then the use) hides
    every binding written before it, and the function's parameters. A function reading a
    module-level name sees it as the module leaves it (it is called once the module has
    run). A closure reading its enclosing function's names sees them all."""
    fn = module.enclosing_function(load)
    at_module_end = owner is module.tree and fn is not None
    walk_from: ast.AST = load
    if not at_module_end and fn is not None and fn is not owner:
        # A closure reads its enclosing function's name when it is called, which is after
        # its def: what reaches the def, and every binding written after it.
        outer: FunctionNode = fn
        while (up := module.enclosing_function(outer)) is not owner:
            if up is None:
                return bindings
            outer = up
        walk_from, fn = outer, owner
    if not at_module_end and (fn if fn is not None else module.tree) is not owner:
        return bindings
    home = None if at_module_end else fn
    stmts: dict[int, ast.AST] = {}
    for b in bindings:
        if type(b) is ParamBinding and b.function is home:
            continue  # bound on entry: before every statement of the body
        node = getattr(b, "node", None)
        if not isinstance(node, ast.stmt) or module.enclosing_function(node) is not home:
            return bindings
        stmts[id(node)] = node
    last: ast.stmt | None = None
    reading: ast.AST | None = None
    if at_module_end:
        # The same for every read of the name in this analysis: kept with its list.
        held = module.module_end.get(load.id)
        if held is not None and held[0] is bindings:
            return held[1]
        for stmt in module.tree.body:
            if id(stmt) in stmts or must_bind(stmt, load.id):
                last = stmt
    else:
        child: ast.AST = walk_from
        parent = module.parents.get(child)
        while parent is not None and last is None:
            if isinstance(child, ast.stmt):
                for _, value in ast.iter_fields(parent):
                    if isinstance(value, list) and any(v is child for v in value):
                        index = next(i for i, v in enumerate(value) if v is child)
                        before = [
                            v
                            for v in value[:index]
                            if id(v) in stmts or must_bind(v, load.id, truth)
                        ]
                        if before:
                            last = before[-1]
                        break
            if parent is owner or last is not None:
                break
            child, parent = parent, module.parents.get(parent)
        # `cp = cp.replace(...)` after `cp = ...` in the same block: the right-hand side
        # is read before its own statement binds, and the block runs `last` first.
        reading = child
    kept = bindings
    if any(type(module.parents.get(n)) is ast.If for n in stmts.values()):
        # `if False: kernel = bad`: a binding in a branch that never runs does not reach.
        stop = module.tree if home is None else home
        decide = constant_truth if at_module_end else truth
        dead = {i for i, n in stmts.items() if _in_dead_branch(module, n, stop, decide)}
        if dead:
            kept = [b for b in bindings if id(getattr(b, "node", None)) not in dead]
            if not kept:
                return bindings
    if last is not None:
        start = (last.lineno, last.col_offset)
        live, kept = kept, []
        for b in live:
            node = stmts.get(id(getattr(b, "node", None)))
            if node is None:
                continue  # a parameter, hidden by `last`
            if node is not reading and (node.lineno, node.col_offset) >= start:  # type: ignore[attr-defined]
                kept.append(b)
    if walk_from is load and not at_module_end and len(kept) > 1:
        kept = _not_after(module, load, owner, kept, stmts, entry)
    if at_module_end:
        module.module_end[load.id] = (bindings, kept)
    return kept


def _not_after(
    module: ModuleInfo,
    load: ast.Name,
    owner: ast.AST,
    bindings: list[Binding],
    stmts: dict[int, ast.AST],
    entry: ast.While | None = None,
) -> list[Binding]:
    """Without the bindings written after `load` that cannot run before it: only a loop
    around both brings a later binding back (`f = pl.pallas_call(kernel)` then
    `kernel = other` reads the first), except the `entry` loop when `load` is in its test
    (its first evaluation)."""
    here = (load.lineno, load.col_offset)
    loops: list[ast.AST] = []
    child: ast.AST = load
    node = module.parents.get(load)
    while node is not None and node is not owner:
        if type(node) in LOOPS and not (node is entry and child is entry.test):
            loops.append(node)
        child, node = node, module.parents.get(node)
    out: list[Binding] = []
    for b in bindings:
        stmt = stmts.get(id(getattr(b, "node", None)))
        if stmt is None or (stmt.lineno, stmt.col_offset) <= here:  # type: ignore[attr-defined]
            out.append(b)
            continue
        at = (stmt.lineno, stmt.col_offset)  # type: ignore[attr-defined]
        if any(
            (loop.lineno, loop.col_offset) <= at <= (loop.end_lineno, loop.end_col_offset)  # type: ignore[attr-defined]
            for loop in loops
        ):
            out.append(b)
    return out or bindings


def bind_arguments(
    fn: Func,
    call: ast.Call | None,
    ctx: Ctx | None,
    extra_positional: tuple[tuple[ast.expr, Ctx], ...] = (),
) -> Ctx | None:
    """The context of `fn`'s body for this call: parameters bound to the call's arguments or
    the defaults. Unmatched or starred arguments leave the parameter unknown."""
    node = fn.node
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    given_pos: list[tuple[ast.expr, Ctx]] = list(fn.bound_positional) + list(extra_positional)
    given_kw: dict[str, tuple[ast.expr, Ctx]] = dict(fn.bound)
    opaque = False
    if call is not None and ctx is not None:
        for a in call.args:
            if isinstance(a, ast.Starred):
                opaque = True
                break
            given_pos.append((a, ctx))
        for k in call.keywords:
            if k.arg is None:
                opaque = True
            else:
                given_kw[k.arg] = (k.value, ctx)
    bound: dict[str, tuple[ast.expr, Ctx] | None] = {}
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    for i, (param, default) in enumerate(zip(positional, defaults, strict=True)):
        if i < len(given_pos):
            bound[param.arg] = given_pos[i]
        elif param.arg in given_kw:
            bound[param.arg] = given_kw[param.arg]
        elif default is not None and not opaque:
            bound[param.arg] = (default, fn.ctx)
        else:
            bound[param.arg] = None
    for param, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if param.arg in given_kw:
            bound[param.arg] = given_kw[param.arg]
        elif kw_default is not None and not opaque:
            bound[param.arg] = (kw_default, fn.ctx)
        else:
            bound[param.arg] = None
    return fn.ctx.with_binding(node, bound)


def _sequence_op(op: ast.operator, a: Value, b: Value) -> Seq | None:
    """`(HIGH,) * 2`, `2 * [x]`, `(a,) + (b,)` of known tuples or lists (at most 64 items)."""
    if isinstance(op, ast.Add):
        if isinstance(a, Seq) and isinstance(b, Seq) and a.is_tuple == b.is_tuple:
            if len(a.items) + len(b.items) <= 64:
                return Seq(a.items + b.items, a.is_tuple)
        return None
    if not isinstance(op, ast.Mult):
        return None
    seq, times = (a, b) if isinstance(a, Seq) else (b, a)
    if not (isinstance(seq, Seq) and isinstance(times, Const) and type(times.value) is int):
        return None
    count = max(times.value, 0)
    if len(seq.items) * count > 64:
        return None
    return Seq(seq.items * count, seq.is_tuple)


def _replaced_by_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef, ctx: Ctx) -> bool:
    """A decorator of `node` is a function of the user's that visibly returns something
    else than the function it is given, on some way through it (`def stub(fn): return
    lambda *a: None`). A decorator from a library, or one whose result cannot be told
    apart from a wrapper of the function, is taken to wrap it."""
    module = ctx.module
    for dec in node.decorator_list:
        # Read off the text, not evaluated: most decorators come from libraries, and a
        # module may have hundreds of `@register_rule(...)` defs.
        factory = isinstance(dec, ast.Call)
        name = dec.func if isinstance(dec, ast.Call) else dec
        if not isinstance(name, ast.Name):
            continue
        found = module.lookup(name.id, module.scope_of(name))
        if found is None or len(found[1]) != 1 or not isinstance(found[1][0], DefBinding):
            continue  # an import, a parameter, a name bound twice: taken to wrap
        defined = found[1][0].node
        if not isinstance(defined, ast.FunctionDef) or defined.decorator_list:
            continue
        decorator = _returned_function(defined) if factory else defined
        if decorator is not None and _discards_its_argument(decorator):
            return True
    return False


def _returned_function(factory: ast.FunctionDef) -> FunctionNode | None:
    """The one nested def or lambda a decorator factory returns (`def tagged(tag): def
    decorate(fn): ...; return decorate`), read off its text; None otherwise."""
    body = _walk_function_body(factory)
    nested = {n.name: n for n in body if isinstance(n, ast.FunctionDef)}
    made: set[int] = set()
    found: FunctionNode | None = None
    for n in body:
        if isinstance(n, ast.Return):
            value = n.value
            if isinstance(value, ast.Lambda):
                found = value
            elif isinstance(value, ast.Name) and value.id in nested:
                found = nested[value.id]
            else:
                return None
            made.add(id(found))
    return found if len(made) == 1 and not getattr(found, "decorator_list", None) else None


def _discards_its_argument(node: FunctionNode) -> bool:
    """The decorator `node`, called with a function as its first positional parameter,
    returns on some way through it a value that provably is neither that function nor made
    from it: a constant, nothing, or a lambda or nested def that never names it. Cached on
    the node: it depends on its own text only."""
    cached = node.__dict__.get("_pl_discards")
    if cached is None:
        cached = node._pl_discards = _discards(node)  # type: ignore[union-attr]
    return bool(cached)


def _discards(node: FunctionNode) -> bool:
    free = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    if not free or isinstance(node, ast.AsyncFunctionDef):
        return False
    param = free[0]

    def names_param(fn: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(fn))

    if isinstance(node, ast.Lambda):
        returns: list[ast.expr | None] = [node.body]
        nested: dict[str, ast.AST] = {}
    else:
        body = _walk_function_body(node)
        returns = [n.value for n in body if isinstance(n, ast.Return)]
        if not any(isinstance(n, ast.Return) for n in body):
            returns = [None]  # falls off its end: the name becomes None
        nested = {n.name: n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    for value in returns:
        if value is None or isinstance(value, ast.Constant):
            return True
        if isinstance(value, ast.Lambda) and not names_param(value.body):
            return True
        if (
            isinstance(value, ast.Name)
            and value.id != param
            and value.id in nested
            and not names_param(nested[value.id])
        ):
            return True
    return False


def _walk_function_body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """Nodes of a function body, not descending into nested functions, lambdas or classes."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(fn.body))
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return out


def walk_body(fn: FunctionNode) -> list[ast.AST]:
    if isinstance(fn, ast.Lambda):
        out: list[ast.AST] = []
        stack: list[ast.AST] = [fn.body]
        while stack:
            node = stack.pop()
            out.append(node)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            stack.extend(ast.iter_child_nodes(node))
        return out
    return _walk_function_body(fn)


def _arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args):
        return call.args[index]
    return None


def literal_kwargs(expr: ast.expr) -> list[ast.keyword] | None:
    """The items of a `**` argument written as `dict(a=...)` or `{"a": ...}`, else None."""
    if type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id == "dict":
        if expr.args or any(k.arg is None for k in expr.keywords):
            return None
        return list(expr.keywords)
    if type(expr) is ast.Dict:
        out = []
        for key, value in zip(expr.keys, expr.values, strict=True):
            if not (type(key) is ast.Constant and isinstance(key.value, str)):
                return None  # `**inner` or a computed key
            item = ast.keyword(arg=key.value, value=value)
            ast.copy_location(item, value)
            out.append(item)
        return out
    return None


def spread_keywords(
    module: ModuleInfo, call: ast.Call
) -> list[tuple[str, ast.keyword | ast.expr, ast.AST, ast.keyword]] | None:
    """The keywords a call's `**` arguments give, each with where it is written (the dict
    display's value, or the `dict(...)` call's keyword), the display or call it is in and
    the `**` argument, when every one is a dict display with constant string keys or a
    `dict(a=...)` call, written there or bound once to a name that is only ever spread into
    calls; else None."""
    out: list[tuple[str, ast.keyword | ast.expr, ast.AST, ast.keyword]] = []
    for keyword in call.keywords:
        if keyword.arg is not None:
            continue
        value = keyword.value
        if isinstance(value, ast.Name):
            found = module.lookup(value.id, module.scope_of(value))
            if found is None or len(found[1]) != 1 or not isinstance(found[1][0], AssignBinding):
                return None
            binding = found[1][0]
            if not (isinstance(binding.node, ast.Assign) and len(binding.node.targets) == 1):
                return None
            if not _only_spread(module, value.id, found[0].node):
                return None
            value = binding.value
        if isinstance(value, ast.Call) and not (
            isinstance(value.func, ast.Name) and module.is_builtin(value.func)
        ):
            return None  # `dict` rebound
        items = literal_kwargs(value)
        if items is None:
            return None
        for item in items:
            # A display's entry is given as its value (the keyword is made up for it).
            entry = item if isinstance(value, ast.Call) else item.value
            out.append((item.arg or "", entry, value, keyword))
    return out


def _only_spread(module: ModuleInfo, name: str, scope: ast.AST) -> bool:
    """Every read of `name` in the scope that binds it (and the functions in it) is a `**`
    argument of a call: nothing can change the dict it holds."""
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
            parent = module.parents.get(n)
            if not (isinstance(parent, ast.keyword) and parent.arg is None):
                return False
        elif isinstance(n, ast.Global | ast.Nonlocal) and name in n.names:
            return False
    return True


def call_argument(call: ast.Call, index: int | None, name: str) -> ast.keyword | ast.expr | None:
    """The keyword (or positional expression) passing parameter `name` in `call`."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    if index is not None and not any(isinstance(a, ast.Starred) for a in call.args[:index]):
        if len(call.args) > index:
            return call.args[index]
    return None


def argument_value(call: ast.Call, index: int | None, name: str) -> ast.expr | None:
    """The expression passing parameter `name` in `call` (a keyword's value)."""
    found = call_argument(call, index, name)
    return found.value if isinstance(found, ast.keyword) else found


def _is_jax_or_std(qualname: str) -> bool:
    """A library the workspace does not hold: JAX and its kin, or Python's own standard
    library (`math`, `os`, `enum`, ...), whose names are not looked up in other files."""
    head = qualname.split(".")[0]
    return head in _LIBRARIES or head in sys.stdlib_module_names


_LIBRARIES = frozenset({"jax", "jaxlib", "numpy", "ml_dtypes"})
