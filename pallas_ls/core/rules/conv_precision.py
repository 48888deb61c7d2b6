"""PAL002 (per-operand conv precision) and PAL003 (unsupported conv precision) inside Mosaic
TPU kernels. Record 8e3e4ba5386a1f7c; the checks follow `_parse_precision_attr` in the
record's source: per-operand first, then anything but DEFAULT/HIGHEST is unsupported."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Iterator

from pallas_ls.core import jaxapi
from pallas_ls.core.fixes import remove_argument
from pallas_ls.core.flow import (
    RETURNS,
    binds_on_every_way_on,
    block_exits,
    constant_truth,
    literal_int,
)
from pallas_ls.core.kernels import (
    LIBRARIES,
    KernelKind,
    KernelSite,
    Mosaic,
    Reached,
    block_of,
    fori_is_scan,
    fori_is_while,
    in_uncalled_closure,
    may_run,
    ruled_out,
)
from pallas_ls.core.model import Edit, Finding, Fix, Related, Span, immutable
from pallas_ls.core.params import (
    INTROSPECTION,
    ignored_by_callee,
    metadata_only,
    passed_to,
    unpacked_names,
)
from pallas_ls.core.relevance import reaching_units
from pallas_ls.core.resolve import (
    AssignBinding,
    FunctionNode,
    ImportBinding,
    ModuleInfo,
    ParamBinding,
)
from pallas_ls.core.rules import CONV_RULE_MIN_JAX, RULES
from pallas_ls.core.rules.base import RuleContext
from pallas_ls.core.values import (
    UNRECORDED,
    Const,
    Ctx,
    DotAlgo,
    Dtype,
    Evaluator,
    Func,
    LibraryPartial,
    Member,
    Recorder,
    Seq,
    Value,
    argument_value,
    call_argument,
    spread_keywords,
)

ONLY = (
    " is not lowered for convolutions (Mosaic takes only Precision.DEFAULT and Precision.HIGHEST)"
)


@immutable
class Verdict:
    """Why a convolution's precision fails: the rule code and the words of the message."""

    code: str  # PAL002 | PAL003
    shown: str  # how JAX prints the precision in its message (PAL003)
    why: str


def _unsupported_template() -> str:
    """JAX's message for PAL003, as the record's source spells it."""
    source = RULES["PAL003"].record.raw.get("sourceCode", "")
    match = re.search(
        r'NotImplementedError\(f"(Unsupported conv precision: )\{precision\}"\)', source
    )
    return match.group(1) if match else "Unsupported conv precision: "


def _enum_of(values: list[Value] | None) -> str | None:
    """A single Precision member (from an enum or a precision string), else None."""
    if not values or len(values) != 1:
        return None
    v = values[0]
    if isinstance(v, Member) and v.enum == "Precision" and v.name in jaxapi.PRECISION_MEMBERS:
        return v.name
    if isinstance(v, Const) and isinstance(v.value, str):
        return jaxapi.PRECISION_STRINGS.get(v.value)
    return None


def classify(values: list[Value] | None, conv: str) -> Verdict | None:
    """The error `_parse_precision_attr` raises for this precision, or None (fine or unknown)."""
    if not values:
        return None
    verdicts = {_classify_one(v, conv) for v in values}
    if len(verdicts) != 1:
        return None
    return verdicts.pop()


def _classify_one(v: Value, conv: str) -> Verdict | None:
    if conv in jaxapi.PAIRS_WITH_DEFAULT:
        # lax pairs the precision with DEFAULT: anything but DEFAULT becomes per-operand.
        name = _enum_of([v])
        if isinstance(v, Const) and isinstance(v.value, str) and conv.endswith("_patches"):
            return None  # a string makes a mixed (str, enum) pair: ValueError instead
        if name in {"HIGH", "HIGHEST"}:
            return Verdict("PAL002", name, f"{conv.split('.')[-1]} pairs {name} with DEFAULT")
        return None
    if isinstance(v, Const):
        if v.value is None or not isinstance(v.value, str):
            return None
        if v.value in jaxapi.PRECISION_STRINGS:
            name = jaxapi.PRECISION_STRINGS[v.value]
            return (
                Verdict("PAL003", name, f"'{v.value}' means Precision.{name}")
                if name == "HIGH"
                else None
            )
        if v.value in jaxapi.DOT_ALGORITHM_PRESETS:
            return Verdict(
                "PAL003", v.value, f"'{v.value}' names DotAlgorithmPreset.{v.value}, which{ONLY}"
            )
        return None
    if isinstance(v, Member):
        if v.enum == "Precision":
            return Verdict("PAL003", "HIGH", f"Precision.HIGH{ONLY}") if v.name == "HIGH" else None
        if v.enum == "DotAlgorithmPreset" and v.name in jaxapi.DOT_ALGORITHM_PRESETS:
            return Verdict("PAL003", v.name, f"DotAlgorithmPreset.{v.name}{ONLY}")
        return None
    if isinstance(v, Seq):
        if len(v.items) != 2:
            return None
        a, b = (_enum_of(item) for item in v.items)
        if a is None or b is None:
            return None
        strings = all(item and isinstance(item[0], Const) for item in v.items)
        enums = all(item and isinstance(item[0], Member) for item in v.items)
        if not (strings or (enums and v.is_tuple)):
            return None  # mixed pairs and lists of enums fail earlier with another error
        if a != b:
            return Verdict("PAL002", f"({a}, {b})", f"lhs {a} and rhs {b} differ")
        return Verdict("PAL003", a, f"({a}, {a}){ONLY}") if a == "HIGH" else None
    if isinstance(v, DotAlgo):
        if not v.lhs or not v.rhs or len(v.lhs) != 1 or len(v.rhs) != 1:
            return None
        lhs, rhs = v.lhs[0], v.rhs[0]
        if not isinstance(lhs, Dtype) or not isinstance(rhs, Dtype):
            return None
        if lhs.name != rhs.name:
            return Verdict(
                "PAL002",
                "DotAlgorithm",
                f"DotAlgorithm operand types {lhs.name} and {rhs.name} differ",
            )
        return Verdict("PAL003", "DotAlgorithm(...)", f"a DotAlgorithm{ONLY}")
    return None


def _precision_spelling(module: ModuleInfo, precision_expr: ast.expr, ctx: Ctx) -> str:
    """`<the file's Precision>.HIGHEST`, in the spelling the file already uses."""
    for node in ast.walk(precision_expr):
        if isinstance(node, ast.Attribute) and node.attr in jaxapi.PRECISION_MEMBERS:
            if jaxapi.canonical(module.qualname(node.value)) == "Precision":
                return f"{module.text(node.value)}.HIGHEST"
    candidates: list[tuple[int, str]] = []
    for name, bindings in module.module_scope.bindings.items():
        if len(bindings) != 1 or not isinstance(bindings[0], ImportBinding):
            continue
        qual = bindings[0].qualname
        if bindings[0].level:
            continue
        if jaxapi.canonical(qual) == "Precision":
            candidates.append((0, f"{name}.HIGHEST"))
        elif qual == "jax.lax":
            candidates.append((1, f"{name}.Precision.HIGHEST"))
        elif qual == "jax":
            candidates.append((2, f"{name}.lax.Precision.HIGHEST"))
    if candidates:
        return min(candidates)[1]
    return '"highest"'


_INERT_BUILTINS = frozenset({"print", "len", "repr", "str", "id", "type"})
_NO_KEY = object()
_OVERWRITTEN = object()
# Which part of a container value is asked about: a tuple element's position, or the string
# key of a dict display's entry (a pytree JAX flattens leaf by leaf, so a loop carry or a
# result drops one entry like it drops one element).
Element = int | str


def _dict_key(
    display: ast.Dict, value: ast.AST, key_of: Callable[[ast.expr | None], object]
) -> object:
    """The constant key `value` is stored at in a dict display, `_OVERWRITTEN` when a later
    entry with the same key replaces it, `_NO_KEY` when a key is not a known constant (or
    `**`). `key_of` gives a key expression's constant, or `_NO_KEY`."""
    keys = [key_of(k) for k in display.keys]
    if any(k is _NO_KEY for k in keys):
        return _NO_KEY
    position = next(i for i, v in enumerate(display.values) if v is value)
    key = keys[position]
    for later in keys[position + 1 :]:
        same = _same_key(later, key)
        if same is None:
            return _NO_KEY
        if same:
            return _OVERWRITTEN
    return key


def _same_key(a: object, b: object) -> bool | None:
    """Whether two constants are the same dict key (`1` and `True` are); None: unsure."""
    try:
        return bool(hash(a) == hash(b) and a == b)
    except Exception:
        return None


class _Liveness:
    """Does a value computed in a kernel body reach a ref, an output or a side effect?
    (pl.pallas_call removes dead equations before lowering.) Follows a helper's return value
    back to its call site, and a loop or cond body's to the loop or cond.

    Uses that read only what tracing knows without the value (`.shape`, `.dtype`,
    `jnp.zeros_like(y)`, `len(y)`, `y is None`) do not make it live. Through a tuple, only
    the element it is in counts when the tuple is unpacked into names, also after a
    helper's or a cond branch's `return a, b`."""

    def __init__(self, reached: Reached, evaluator: Evaluator) -> None:
        self.reached = reached
        self.evaluator = evaluator
        self.fn = reached.fn
        self.module = reached.ctx.module
        self._names: dict[tuple[str, int, Element | None, int | None], bool] = {}
        self._loads: dict[str, list[ast.Name]] | None = None
        self._containers: dict[str, str] | None = None
        self._walked: list[ast.AST] | None = None
        self._kept: bool | None = None
        self._truths: dict[object, bool | None] = {}
        self._while: bool | None = None

    def live(
        self,
        expr: ast.AST,
        depth: int = 0,
        index: Element | None = None,
        size: int | None = None,
    ) -> bool:
        """`index`: `expr` is a tuple and the value asked about is its index-th element, or a
        dict display and the value is its entry at that string key; `size`: the tuple's
        length (the number of entries), when known."""
        if depth > 30:
            return True
        if self._kept_run_scoped():
            return True  # JAX keeps a run_scoped whole: nothing in its body is dropped
        if self._in_while_body():
            return True  # nor does it remove dead code inside a while loop's body
        node = expr
        below: ast.AST | None = None  # the child of `node` on the way up
        walrus: list[ast.NamedExpr] = []
        key: object = _NO_KEY  # `node` is a dict display; the value asked about is at `key`
        called = False  # the value went into a call that may do something with it
        parent = self.module.parents.get(node)
        while parent is not None and not isinstance(parent, ast.stmt):
            found = self._loop_body(parent, node) if isinstance(parent, ast.Call) else None
            if found is not None and isinstance(parent, ast.Call):
                loop_body, carry = found
                # JAX keeps what the body's effects (ref stores, prints) read of the carry,
                # and nothing else when the loop's result is discarded.
                effects = _EffectLiveness(loop_body, self.evaluator)
                if effects._reads_carry(carry, index, size):
                    return True
                if isinstance(self.module.parents.get(parent), ast.Expr):
                    return self._any_name_live(walrus, depth)
                if carry == 0:  # `lax.scan(step, (acc, conv), ...)`
                    if index is None or size is None:
                        return True
                    if _Liveness(loop_body, self.evaluator)._reads_carry(0, index, size):
                        return True
                    return self._scan_carry_used(parent, index, size, depth) or (
                        self._any_name_live(walrus, depth)
                    )
                if (
                    index is not None
                    and size is not None
                    and fori_is_scan(self.evaluator, parent, self.reached.ctx)
                    and not _Liveness(loop_body, self.evaluator)._reads_carry(1, index, size)
                ):
                    # `fori_loop(0, 4, body, (acc, conv))`, run as a scan, and the body never
                    # reads that carry element: the loop result's element is all that is
                    # left of it.
                    below, node, parent = node, parent, self.module.parents.get(parent)
                    continue
            if isinstance(parent, ast.Call) and self._scan_xs_unread(parent, node):
                return self._any_name_live(walrus, depth)  # `xs` no step reads: dropped
            hand_over = passed_to(self.module, node)
            element = (index, size) if index is not None and size is not None else None
            if hand_over is not None and ignored_by_callee(
                self.evaluator, self.reached.ctx, *hand_over, element=element
            ):
                return self._any_name_live(walrus, depth)
            if isinstance(parent, ast.Call) and node is not parent.func:
                if self._inert(parent):
                    # `len([conv])`, `str(conv)`: the call's value carries nothing of it.
                    return self._any_name_live(walrus, depth)
                called = True
            if isinstance(parent, ast.Lambda):
                if _is_default(node, parent):
                    return self._default_read(node, parent) or self._any_name_live(walrus, depth)
                if parent is self.fn:
                    return self._result_live(depth, index, size) or self._any_name_live(
                        walrus, depth
                    )
                return True
            held, key = key, _NO_KEY
            if held is not _NO_KEY and isinstance(parent, ast.Subscript) and parent.value is node:
                picked = parent.slice
                picked_key = self._key_of(picked)
                if picked_key is not _NO_KEY and _same_key(picked_key, held) is False:
                    return self._any_name_live(walrus, depth)  # another entry: dropped
                index = size = None  # the entry itself, or a key not known here
            elif (
                index is not None
                and size is not None
                and (scan := self._scan_returned_carry(parent, node)) is not None
            ):
                # `return (h, conv), None` from a scan body: element `index` of the carry.
                return self._carry_element_live(scan, index, size, depth) or (
                    self._any_name_live(walrus, depth)
                )
            elif isinstance(parent, ast.Tuple | ast.List):
                # One level of element tracking: a value inside a tuple inside a tuple
                # stands for the whole outer element it is in (`(acc, (conv, y))`: element
                # 1), a tuple with a starred item for its whole value.
                elts = parent.elts
                if not any(isinstance(e, ast.Starred) for e in elts):
                    index = elts.index(node)  # type: ignore[arg-type]
                    size = len(elts)
                else:
                    index = size = None
            elif isinstance(parent, ast.Dict) and any(v is node for v in parent.values):
                # `{"a": x, "b": y}["a"]`: a constant key picks one entry (the whole entry,
                # when the value is inside a tuple or dict there).
                entry = _dict_key(parent, node, self._key_of)
                if entry is _OVERWRITTEN:
                    return self._any_name_live(walrus, depth)
                key = entry
                if isinstance(entry, str):
                    # Also followed as the dict's entry through a loop's carry, a body's
                    # return and a name it is bound to.
                    index, size = entry, len(parent.keys)
                else:
                    index = size = None
            elif (
                isinstance(index, str)
                and isinstance(parent, ast.Attribute)
                and parent.attr == "get"
                and self._get_other_key(parent, index)
            ):
                return self._any_name_live(walrus, depth)  # `d.get("a", x)`: another entry
            elif isinstance(parent, ast.keyword) and parent.arg is not None:
                entry_name = parent.arg
                container = self.module.parents.get(parent)
                kind = self._keyword_container(container)
                if kind == "dict" and isinstance(container, ast.Call):
                    # `dict(a=x, b=conv)`: the entry at key "b", as in a display.
                    index, size = entry_name, len(container.keywords)
                    node = parent = container
                elif kind == "namespace" and isinstance(container, ast.Call):
                    # `ns = types.SimpleNamespace(a=x, b=conv)`: used when `ns.b` (or `ns`
                    # itself) is read.
                    assign = self.module.parents.get(container)
                    assert isinstance(assign, ast.Assign) and isinstance(
                        assign.targets[0], ast.Name
                    )
                    return self._attribute_live(
                        assign.targets[0].id, entry_name, assign, depth
                    ) or self._any_name_live(walrus, depth)
                else:
                    index = size = None
            elif (
                isinstance(index, str)
                and isinstance(parent, ast.Subscript)
                and parent.value is node
            ):
                # `out["acc"]` of a dict carried through a loop: a constant key picks one entry.
                if not isinstance(parent.ctx, ast.Load):
                    return self._any_name_live(walrus, depth)  # a store or `del`: no read
                picked_key = self._key_of(parent.slice)
                if isinstance(picked_key, str) and picked_key != index:
                    return self._any_name_live(walrus, depth)  # another entry: dropped
                index = size = None  # the entry itself, or a key not known here
            elif index is not None and isinstance(parent, ast.Subscript) and parent.value is node:
                # `(y, x)[1]`, `helper(...)[0]`: a constant index picks one element.
                picked = parent.slice
                position = literal_int(picked)
                if position is not None and position < 0 and size is not None:
                    position += size
                if position is None:
                    index = size = None
                elif position == index:
                    index = size = None  # the subscript is the value itself from here on
                elif position >= 0:
                    return self._any_name_live(walrus, depth)  # another element: dropped
                else:
                    index = size = None  # from the end: the length is not known here
            else:
                if (index is None or isinstance(index, str)) and metadata_only(
                    self.module, node, parent
                ):
                    if not walrus:
                        return False
                    return self._any_name_live(walrus, depth)
                if isinstance(parent, ast.NamedExpr):
                    walrus.append(parent)
                index = size = None
            below, node, parent = node, parent, self.module.parents.get(parent)
        stmt = parent
        if stmt is None:
            return True
        if self._any_name_live(walrus, depth):
            return True
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and _is_default(node, stmt):
            # A default value: used when the function reads that parameter.
            return self._default_read(node, stmt)
        if isinstance(stmt, ast.Expr):
            # The statement's own value is discarded; a value passed into it is live unless
            # the call is a pure jax.lax/jax.numpy function, or grows a local list.
            if expr is stmt.value or _is_conv_like(stmt.value, self.module) or not called:
                return False  # `(conv,)`, `conv[..., :64]`, `print(conv)`: discarded
            grown = self._local_list_grown(stmt.value)
            if grown is None:
                return True
            if below is not None and below is getattr(stmt.value, "func", None):
                return False  # `items.append(...)` itself uses nothing of `items`
            return self._name_live(grown, stmt, depth)
        if isinstance(stmt, ast.Assert):
            return False  # a message is discarded; a traced test fails before lowering
        if isinstance(stmt, ast.Return):
            if self._overridden_by_finally(stmt):
                return False  # `try: return conv ... finally: return x`: the finally's wins
            if node is not stmt.value:
                index = size = None
            return self._result_live(depth, index, size)
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if node is not stmt.value:
                return True  # in a target: a ref's subscript, an attribute's object
            return any(self._target_live(t, stmt, depth, index, size) for t in targets)
        return True

    @staticmethod
    def _default_read(default: ast.AST, function: FunctionNode) -> bool:
        """Whether `function`, whose parameter has the default `default`, reads it."""
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        with_default = positional[len(positional) - len(arguments.defaults) :]
        params = dict(zip(map(id, arguments.defaults), with_default, strict=True))
        for arg, value in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
            if value is not None:
                params[id(value)] = arg
        param = params.get(id(default))
        if param is None:
            return True
        body = function.body if isinstance(function.body, list) else [function.body]
        return any(
            isinstance(n, ast.Name) and (n.id == param.arg or n.id in INTROSPECTION)
            for part in body
            for n in ast.walk(part)
        )

    def _inert(self, call: ast.Call) -> bool:
        """A builtin that does nothing with a traced value JAX records: `print`, `len`,
        `repr`, `str`, `id`, `type` (not rebound in the module)."""
        func = call.func
        return (
            isinstance(func, ast.Name)
            and func.id in _INERT_BUILTINS
            and self.module.is_builtin(func)
        )

    def _target_live(
        self,
        target: ast.expr,
        stmt: ast.stmt,
        depth: int,
        index: Element | None,
        size: int | None = None,
    ) -> bool:
        if isinstance(target, ast.Name):
            declared = self._declared(target.id)
            if declared is not None:
                # `nonlocal y` / `global y`: the value outlives this function; used if the
                # function that owns the name (the module) reads it anywhere.
                return any(
                    isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Load)
                    for n in ast.walk(declared)
                )
            return self._name_live(target.id, stmt, depth, index, size)
        if isinstance(target, ast.Tuple | ast.List):
            if isinstance(index, str):
                index = size = None  # unpacking a dict takes its keys: not followed
            elts = target.elts
            stars = [i for i, e in enumerate(elts) if isinstance(e, ast.Starred)]
            if len(stars) == 1 and index is not None and size is not None and size >= len(elts) - 1:
                # `a, *rest = x, y, z`: the element lands in `a`, or in the list `rest`.
                star, after = stars[0], len(elts) - 1 - stars[0]
                if index < star:
                    lands = elts[index]
                elif index >= size - after:
                    lands = elts[index - (size - len(elts))]
                else:
                    lands = elts[star]
                return self._target_live(lands, stmt, depth, None)
            if stars:
                return any(self._target_live(e, stmt, depth, None) for e in elts)
            if index is not None and index < len(elts):
                return self._target_live(elts[index], stmt, depth, None)
            return any(self._target_live(e, stmt, depth, None) for e in elts)
        if isinstance(target, ast.Starred):
            return self._target_live(target.value, stmt, depth, None)
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and self._local_display(target.value.id)
        ):
            # `d["c"] = conv` into a local list or dict: used when the container is.
            return self._name_live(target.value.id, stmt, depth)
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and self._module_display_never_read(target.value)
        ):
            return False  # `CACHE["y"] = conv` into a module-level dict nothing reads
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and self._scratch_store_only(target.value.id)
        ):
            return False  # `s_ref[...] = conv` into a `run_scoped` buffer nothing reads
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and self._local_namespace(target.value.id)
        ):
            # `ns.y = conv` into a local `types.SimpleNamespace()`: used when `ns.y` is read
            # or `ns` itself goes somewhere (reading `ns.x` takes nothing of `ns.y`).
            return self._attribute_live(target.value.id, target.attr, stmt, depth)
        return True  # a subscript or attribute: a ref store, or state we cannot follow

    def _overridden_by_finally(self, ret: ast.Return) -> bool:
        """`ret` sits in a `try` body, handler or `else` whose `finally` always returns or
        raises: the value `ret` gives is replaced before the function ends."""
        child: ast.AST = ret
        for parent in self.module.ancestors(ret):
            if parent is self.fn or isinstance(
                parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            ):
                return False
            if (
                isinstance(parent, ast.Try | ast.TryStar)
                and not any(s is child for s in parent.finalbody)
                and block_exits(parent.finalbody, constant_truth, RETURNS)
            ):
                return True
            child = parent
        return False

    def _nodes(self) -> list[ast.AST]:
        """`ast.walk(self.fn)`, walked once for the questions that look at every node."""
        if self._walked is None:
            self._walked = list(ast.walk(self.fn))
        return self._walked

    def _declared(self, name: str) -> ast.AST | None:
        """Where `name` lives when this function declares it `nonlocal` (the function around
        it) or `global` (the module); None when it is a local."""
        for n in self._nodes():
            if isinstance(n, ast.Nonlocal | ast.Global) and name in n.names:
                if self.module.enclosing_function(n) is not self.fn:
                    continue  # a nested function's declaration
                if isinstance(n, ast.Global):
                    return self.module.tree
                return self.module.enclosing_function(self.fn) or self.module.tree
        return None

    def _any_name_live(self, walrus: list[ast.NamedExpr], depth: int) -> bool:
        """Is a value named by `(name := ...)` read after it is named?"""
        return any(self._name_live(w.target.id, w, depth) for w in walrus)

    def _local_list_grown(self, call: ast.expr) -> str | None:
        """`items.append(...)` (or extend/insert) where every binding of `items` in this
        function is a list (or dict) display: the list's name."""
        if not isinstance(call, ast.Call):
            return None
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr in ("append", "extend", "insert")
            and isinstance(func.value, ast.Name)
        ):
            return None
        name = func.value.id
        return name if self._local_display(name) else None

    def _module_display_never_read(self, name: ast.Name) -> bool:
        """`name` is a module-level name bound only to list or dict displays, and nothing
        in the module reads it except to store into it (`name[k] = v`)."""
        module = self.module
        found = module.lookup(name.id, module.scope_of(name))
        if found is None or found[0] is not module.module_scope:
            return False
        bindings = found[1]
        if not bindings or not all(
            isinstance(b, AssignBinding)
            and isinstance(b.value, ast.List | ast.Dict)
            and module.enclosing_function(b.value) is None
            for b in bindings
        ):
            return False
        for n in ast.walk(module.tree):
            if isinstance(n, ast.Name) and (n.id == name.id or n.id in INTROSPECTION):
                if not isinstance(n.ctx, ast.Load):
                    continue  # its bindings (all displays)
                parent = module.parents.get(n)
                if not (
                    n.id == name.id
                    and isinstance(parent, ast.Subscript)
                    and parent.value is n
                    and isinstance(parent.ctx, ast.Store)
                ):
                    return False
            elif isinstance(n, ast.Global) and name.id in n.names:
                return False
        return True

    def _scratch_store_only(self, name: str) -> bool:
        """`name` is a parameter of a `pl.run_scoped` body (a buffer that lives only while the
        body runs), and the body only ever stores into it (`name[...] = v`)."""
        fn = self.fn
        if isinstance(fn, ast.Lambda) or not self._run_scoped_body():
            return False
        args = fn.args
        if name not in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}:
            return False
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and (n.id == name or n.id in INTROSPECTION):
                if isinstance(n.ctx, ast.Store | ast.Del):
                    return False  # rebound: not only the buffer
                parent = self.module.parents.get(n)
                if not (
                    isinstance(parent, ast.Subscript)
                    and parent.value is n
                    and isinstance(parent.ctx, ast.Store)
                    and n.id == name
                    and isinstance(self.module.parents.get(parent), ast.Assign)
                ):
                    return False
            elif isinstance(n, ast.Global | ast.Nonlocal) and name in n.names:
                return False
        return True

    def _kept_run_scoped(self) -> bool:
        """This function is a `pl.run_scoped` body whose result is used, or with a provable
        effect outside its own buffers: a store into a ref of a function around it
        (`o_ref[...] = x`, also under `@pl.when`), or a debug print. JAX then keeps the whole `run_scoped` (it has no DCE
        rule of its own), and every equation in the body with it."""
        if self._kept is None:
            self._kept = False  # while asking the caller below
            self._kept = self._run_scoped_body() and (
                any(self._outside_effect(n) for n in ast.walk(self.fn))
                or (self._returns_value() and self._result_live(0))
            )
        return self._kept

    def _in_while_body(self) -> bool:
        """This function is traced inside the body (or test) of a while loop: a
        `lax.while_loop`, or a `lax.fori_loop` or `@pl.loop` with a traced bound (JAX keeps
        every equation of a while loop's body; a scan's body is pruned like the kernel)."""
        if self._while is None:
            self._while = False
            item: Reached | None = self.reached
            while item is not None and item.trace is not None:
                node, caller = item.trace
                module = caller.ctx.module
                call = module.parents.get(node)
                if isinstance(node, ast.FunctionDef):
                    loops = [
                        d
                        for d in node.decorator_list
                        if isinstance(d, ast.Call)
                        and jaxapi.canonical(module.qualname(d.func)) == "loop"
                    ]
                    if loops and fori_is_while(self.evaluator, loops[0], caller.ctx):
                        self._while = True
                        break
                elif _while_body_of(self.evaluator, module, node, call, caller.ctx):
                    self._while = True
                    break
                item = caller
        return self._while

    def _returns_value(self) -> bool:
        """A `return <value>` of this function itself (its nested defs' do not count)."""
        return any(
            isinstance(n, ast.Return)
            and n.value is not None
            and self.module.enclosing_function(n) is self.fn
            for n in ast.walk(self.fn)
        )

    def _outside_effect(self, node: ast.AST) -> bool:
        module = self.module
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            refs = [_stored_ref(t) for t in targets if isinstance(t, ast.Subscript)]
            if not refs:
                return False  # binds names: no effect
        elif isinstance(node, ast.Call):
            qual = module.qualname(node.func)
            if qual is None or not qual.startswith("jax."):
                return False
            last = qual.rsplit(".", 1)[-1]
            if last not in _EFFECT_CALLS:
                return False
            position = _EFFECT_CALLS[last]
            if position is None:
                refs = []  # a print
            else:
                arg = node.args[position] if len(node.args) > position else None
                refs = [_stored_ref(arg) if arg is not None else None]
        else:
            return False
        if refs and not any(r is not None and self._outer_param(r) for r in refs):
            return False
        for scope in module.ancestors(node):
            if scope is self.fn:
                break
            if isinstance(scope, ast.Lambda):
                return False
            if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) and not (
                scope.decorator_list
                and all(
                    (module.qualname(d.func if isinstance(d, ast.Call) else d) or "").startswith(
                        "jax."
                    )
                    for d in scope.decorator_list
                )
            ):
                return False  # a nested def we do not know to run (`@pl.when` does)
        return may_run(module, node, self.fn)

    def _outer_param(self, name: ast.Name) -> bool:
        """`name` is a parameter of a function around this one (a kernel's ref)."""
        module = self.module
        found = module.lookup(name.id, module.scope_of(name))
        if found is None:
            return False
        scope, bindings = found
        return (
            scope.node is not self.fn
            and any(scope.node is a for a in module.ancestors(self.fn))
            and all(isinstance(b, ParamBinding) for b in bindings)
        )

    def _run_scoped_body(self) -> bool:
        """This function is traced as the body of `pl.run_scoped` (called with it, or
        decorated with `functools.partial(pl.run_scoped, ...)`)."""
        trace = self.reached.trace
        if trace is None:
            return False
        node, caller = trace
        module = caller.ctx.module
        if node is self.fn:
            targets = []
            if isinstance(self.fn, ast.Lambda):
                return False
            for dec in self.fn.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if jaxapi.canonical(module.qualname(target)) == "partial":
                    if not (isinstance(dec, ast.Call) and dec.args):
                        return False
                    target = dec.args[0]
                targets.append(target)
            return len(targets) == 1 and _is_run_scoped(module, targets[0])
        call = module.parents.get(node)
        return (
            isinstance(call, ast.Call)
            and bool(call.args)
            and call.args[0] is node
            and _is_run_scoped(module, call.func)
        )

    def _local_display(self, name: str) -> bool:
        """Every binding of `name` in this function is a list or dict display (not a
        parameter, not `global` or `nonlocal`): a container only this function sees."""
        return self._local_containers().get(name) == "display"

    def _local_namespace(self, name: str) -> bool:
        """Every binding of `name` in this function is a `types.SimpleNamespace(...)`."""
        return self._local_containers().get(name) == "namespace"

    def _local_containers(self) -> dict[str, str]:
        """Names this function binds only to new containers of one kind, and that kind."""
        if self._containers is None:
            stores: dict[str, int] = {}
            made: dict[str, tuple[str, int]] = {}
            declared: set[str] = set()
            for n in self._nodes():
                if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                    stores[n.id] = stores.get(n.id, 0) + 1
                elif isinstance(n, ast.arg):
                    stores[n.arg] = stores.get(n.arg, 0) + 1
                elif isinstance(n, ast.Global | ast.Nonlocal):
                    declared.update(n.names)
                elif (
                    isinstance(n, ast.Assign)
                    and len(n.targets) == 1
                    and isinstance(n.targets[0], ast.Name)
                ):
                    kind = self._container_kind(n.value)
                    if kind is not None:
                        name_ = n.targets[0].id
                        was, count = made.get(name_, (kind, 0))
                        made[name_] = (kind if was == kind else "mixed", count + 1)
            self._containers = {
                n: kind
                for n, (kind, count) in made.items()
                if stores[n] == count and n not in declared and kind != "mixed"
            }
        return self._containers

    def _container_kind(self, value: ast.expr) -> str | None:
        if isinstance(value, ast.List | ast.Dict):
            return "display"
        if (
            isinstance(value, ast.Call)
            and self.module.qualname(value.func) == "types.SimpleNamespace"
            and not any(isinstance(a, ast.Starred) for a in value.args)
        ):
            return "namespace"
        return None

    def _result_live(
        self, depth: int, index: Element | None = None, size: int | None = None
    ) -> bool:
        use = self.reached.result_use
        if use is None:
            return True
        node, caller = use
        if (
            isinstance(node, ast.Call)
            and caller.ctx.module.qualname(node.func) == "jax.lax.fori_loop"
        ):
            # What the body returns is live when the next step's effects (ref stores,
            # prints) read it, and only then when the loop's result is discarded.
            if _EffectLiveness(self.reached, self.evaluator)._reads_carry(1, index, size):
                return True
            if isinstance(caller.ctx.module.parents.get(node), ast.Expr):
                return False
        if index is not None and size is not None:
            element = self._scan_element(node, caller, index, size)
            if element is not None:
                # One element of a scan's (or a static fori_loop's) result: JAX drops a
                # carry the body does not read, or per-step outputs, when unused after.
                return _Liveness(caller, self.evaluator).live(node, depth + 1, element, size)
        if index is not None and not self._same_structure(node, caller):
            index = size = None
        return _Liveness(caller, self.evaluator).live(node, depth + 1, index, size)

    def _scan_element(
        self, node: ast.AST, caller: Reached, index: Element, size: int
    ) -> Element | None:
        """This function is the body of `lax.scan` or of a `lax.fori_loop` with static bounds
        (which JAX runs as a scan) called as `node`, and the element `index` of the tuple it
        returns is element `index` of the loop's result with nothing of it carried into the
        next step: a scan's per-step output (`return carry, y`), or a carry element the
        body does not read. That index; else None."""
        if not isinstance(node, ast.Call):
            return None
        qual = caller.ctx.module.qualname(node.func)
        if qual == "jax.lax.scan":
            if size != 2 or not isinstance(index, int):
                return None
            if index == 1:
                return 1  # `ys`: stacked outputs, never fed back
            return 0 if not self._reads_carry(0, None, None) else None
        if qual == "jax.lax.fori_loop":
            if not fori_is_scan(self.evaluator, node, caller.ctx):
                return None  # a traced bound: a while_loop, which keeps every carry
            return index if not self._reads_carry(1, index, size) else None
        return None

    def _loop_body(self, call: ast.Call, node: ast.AST) -> tuple[Reached, int] | None:
        """The body of `call`, a `lax.fori_loop` or `lax.scan` whose initial carry is `node`,
        when it is a plain function (not a partial, not decorated), and the position of
        its carry parameter."""
        if call_argument(call, 3, "init_val") is node:
            qual, position, body_at = "jax.lax.fori_loop", 1, (2, "body_fun")
        elif call_argument(call, 1, "init") is node:
            qual, position, body_at = "jax.lax.scan", 0, (0, "f")
        else:
            return None
        if self.module.qualname(call.func) != qual:
            return None
        body = self._loop_function(argument_value(call, *body_at))
        if body is None:
            return None
        reached = Reached(
            body.node,
            body.ctx,
            (),
            None,
            result_use=(call, self.reached),
            trace=(call, self.reached),
        )
        return reached, position

    def _loop_function(self, expr: ast.expr | None) -> Func | None:
        """The function `expr` (a loop body or scan step) evaluates to, when the loop calls
        it with its own two positional parameters: a plain def or lambda, or a
        `functools.partial` of one that binds only other parameters by keyword."""
        values = self.evaluator.eval(expr, self.reached.ctx) if expr is not None else None
        if not values or len(values) != 1 or not isinstance(values[0], Func):
            return None
        fn = values[0]
        node = fn.node
        if isinstance(node, ast.AsyncFunctionDef) or (
            isinstance(node, ast.FunctionDef) and node.decorator_list
        ):
            return None
        if fn.bound_positional:
            return None  # the carry is not the second parameter
        if fn.bound:
            first_two = [a.arg for a in [*node.args.posonlyargs, *node.args.args][:2]]
            if len(first_two) < 2 or any(name in fn.bound for name in first_two):
                return None
        return fn

    def _scan_xs_unread(self, call: ast.Call, node: ast.AST) -> bool:
        """`node` is the `xs` of `call`, a `lax.scan` whose step is a plain function that
        never reads its second parameter (JAX drops an input no step reads)."""
        if call_argument(call, 2, "xs") is not node:
            return False
        if self.module.qualname(call.func) != "jax.lax.scan":
            return False
        step = self._loop_function(argument_value(call, 0, "f"))
        if step is None:
            return False
        body = Reached(step.node, step.ctx, (), None, result_use=(call, self.reached))
        return not _Liveness(body, self.evaluator)._reads_carry(1, None, None)

    def _scan_carry_used(self, call: ast.Call, index: Element, size: int, depth: int) -> bool:
        """Whether element `index` (of `size`) of the carry that `call`, a `lax.scan` of this
        function, returns is used: `(h, _), ys = lax.scan(...)` leaves it unused."""
        stmt = self.module.parents.get(call)
        if isinstance(stmt, ast.Expr):
            return False
        if not (
            isinstance(stmt, ast.Assign)
            and stmt.value is call
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Tuple | ast.List)
            and len(stmt.targets[0].elts) == 2
            and not any(isinstance(e, ast.Starred) for e in stmt.targets[0].elts)
        ):
            return True
        return self._target_live(stmt.targets[0].elts[0], stmt, depth + 1, index, size)

    def _scan_returned_carry(self, parent: ast.AST, node: ast.AST) -> ast.Call | None:
        """`parent` is `(carry, y)` returned by this function, a `lax.scan` body, and `node`
        is the carry: the scan call."""
        if not (
            isinstance(parent, ast.Tuple)
            and len(parent.elts) == 2
            and parent.elts[0] is node
            and isinstance(self.module.parents.get(parent), ast.Return)
            and self.module.enclosing_function(parent) is self.fn
        ):
            return None
        use = self.reached.result_use
        if use is None:
            return None
        call, caller = use
        if (
            not isinstance(call, ast.Call)
            or caller.ctx.module.qualname(call.func) != "jax.lax.scan"
        ):
            return None
        body = argument_value(call, 0, "f")
        values = self.evaluator.eval(body, caller.ctx) if body is not None else None
        if not values or len(values) != 1 or getattr(values[0], "node", None) is not self.fn:
            return None
        return call

    def _carry_element_live(self, call: ast.Call, index: Element, size: int, depth: int) -> bool:
        """This scan body returns a value as element `index` of its carry: used when the
        next step reads it, or the scan's final carry element is used."""
        if self._reads_carry(0, index, size):
            return True
        assert self.reached.result_use is not None
        caller = self.reached.result_use[1]
        return _Liveness(caller, self.evaluator)._scan_carry_used(call, index, size, depth)

    def _reads_carry(self, position: int, index: Element | None, size: int | None) -> bool:
        """Whether this function reads its carry (the parameter at `position`), or only its
        element `index` of a `size`-tuple when `index` is given, in a way that matters:
        `c[0]`, unpacking into names (`h, feat = c`) whose `index`-th is never read before
        it is rebound, and reads that only go into that same element of the next carry
        (`feat = f(feat)`, `return h, feat`) do not read it."""
        fn = self.fn
        positional = [*fn.args.posonlyargs, *fn.args.args]
        if len(positional) <= position:
            return True
        carry = positional[position].arg
        body = fn.body if isinstance(fn.body, list) else [fn.body]
        uses: list[ast.Name] = []
        for part in body:
            for n in ast.walk(part):
                if isinstance(n, ast.Name):
                    if n.id in INTROSPECTION:
                        return True
                    if isinstance(n.ctx, ast.Load):
                        if n.id == carry and self._branch_may_run(n):
                            uses.append(n)
                    elif n.id == carry:
                        return True  # rebound: not followed
                elif isinstance(n, ast.Global | ast.Nonlocal) and carry in n.names:
                    return True
        if index is None or size is None:
            return any(self._read_matters(use) for use in uses)
        for use in uses:
            parent = self.module.parents.get(use)
            if isinstance(index, str):
                # A dict carry: `c["acc"]` takes another entry; `c["feat"]` is read only if
                # it goes somewhere but the same entry of the next carry.
                if isinstance(parent, ast.Dict):
                    if self._spread_reads(parent, use, index, position):
                        return True
                    continue
                if not (
                    isinstance(parent, ast.Subscript)
                    and parent.value is use
                    and isinstance(picked_key := self._key_of(parent.slice), str)
                    and isinstance(parent.ctx, ast.Load)
                ):
                    return True
                if picked_key == index and self._feeds_other_element(parent, index, position):
                    return True
                continue
            if isinstance(parent, ast.Subscript) and parent.value is use:
                picked = literal_int(parent.slice)
                if picked is not None and picked < 0:
                    picked += size
                if picked is not None and 0 <= picked < size and picked != index:
                    continue  # `c[0]`: another element
                if picked == index and not self._feeds_other_element(parent, index, position):
                    continue
                return True
            names = unpacked_names(parent, use, size)
            if names is not None:
                assert isinstance(parent, ast.Assign)
                landed = names[index]
                if not any(
                    self._feeds_other_element(load, index, position)
                    for load in self._later_loads(landed.id, parent)
                ):
                    continue  # `h, feat = c` and `feat` is not read, or only for `feat`
            return True
        return False

    def _spread_reads(self, display: ast.Dict, use: ast.Name, key: str, position: int) -> bool:
        """`{**c, "acc": ...}` in this loop body, `c` a dict carry: whether its entry `key`
        is read. Not when a later constant key replaces it, nor when it lands in the
        display's same entry and that goes only into the same entry of the next carry."""
        at = next((i for i, v in enumerate(display.values) if v is use), None)
        if at is None or display.keys[at] is not None:
            return True  # `{"k": c}`: the whole carry as a value
        later = display.keys[at + 1 :]
        if any(k is None for k in later):
            return True  # another `**` may or may not replace it
        later_keys = [self._key_of(k) for k in later]
        if any(k is _NO_KEY for k in later_keys):
            return True
        if key in later_keys:
            return False  # replaced before the dict is built
        return self._entry_feeds_other(display, key, len(display.keys), position)

    def _entry_feeds_other(self, display: ast.Dict, key: str, size: int, position: int) -> bool:
        liveness = _CarryLiveness(self.reached, self.evaluator, key, scan=position == 0)
        return liveness.live(display, 0, key, size)

    def _read_matters(self, read: ast.Name) -> bool:
        """Whether a read of the whole carry counts (any read does, in a loop that is kept)."""
        return True

    def _feeds_other_element(self, read: ast.AST, index: Element, position: int) -> bool:
        """Whether a read of carry element `index` in this loop body (its carry parameter at
        `position`: 0 for a scan step, 1 for a fori_loop body) reaches anything but that
        same element of the carry the body returns."""
        return _CarryLiveness(self.reached, self.evaluator, index, scan=position == 0).live(read)

    @staticmethod
    def _same_structure(node: ast.AST, caller: Reached) -> bool:
        """The caller's expression is this function's return value itself: a direct call of
        it, or a cond/switch that returns what its branch returns (a loop's or a scan's
        result is not a body's return value element for element)."""
        if not isinstance(node, ast.Call):
            return False
        qual = caller.ctx.module.qualname(node.func)
        if qual is None or not qual.startswith("jax."):
            return True  # a user function: the call's value is the return value
        return qual.rsplit(".", 1)[-1] in ("cond", "switch")

    def _name_live(
        self,
        name: str,
        stmt: ast.stmt | ast.NamedExpr,
        depth: int,
        index: Element | None = None,
        size: int | None = None,
    ) -> bool:
        """Whether a value bound to `name` by `stmt` is read (its element `index` of `size`
        only, when given: `out = loop(...)` and then only `out[0]` is read)."""
        key = (name, id(stmt), index, size)
        if key in self._names:
            return self._names[key]
        self._names[key] = False  # cycles: assume dead until a use proves otherwise
        loads = self._later_loads(name, stmt)
        if isinstance(index, str):
            # A dict entry deleted or stored over (`del d["b"]`, `d["b"] = x`, `d.pop("b")`,
            # `d.update(b=x)`) before a read: the read does not see the value.
            loads = [
                n
                for n in loads
                if not self._replaced_before(n, stmt, self._entry_replacer(name, index))
            ]
        result = any(self.live(load, depth + 1, index, size) for load in loads)
        self._names[key] = result
        return result

    def _replaced_before(
        self,
        load: ast.Name,
        binding: ast.stmt | ast.NamedExpr,
        replaces: Callable[[ast.stmt], bool],
    ) -> bool:
        """A statement that `replaces` says deletes or overwrites what is asked about runs
        on every way from `binding` to `load`: it sits in a block around the load (in the
        same function), before the statement the load is in, and `binding` is not in
        between. Nothing can jump into the middle of a block, so the statement ran after
        the binding and before the read."""
        around = {id(a) for a in self.module.ancestors(binding)}
        around.add(id(binding))
        child: ast.AST = load
        for parent in self.module.ancestors(load):
            if isinstance(child, ast.stmt):
                if id(child) in around:
                    return False  # the binding is in this statement: it may run after
                block = block_of(self.module, child)
                if block is not None:
                    position = next(i for i, s in enumerate(block) if s is child)
                    for before in reversed(block[:position]):
                        if id(before) in around:
                            return False
                        if replaces(before):
                            return True
            if parent is self.fn or isinstance(
                parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
            ):
                return False
            child = parent
        return False

    def _entry_replacer(self, name: str, key: str) -> Callable[[ast.stmt], bool]:
        """Whether a statement deletes or stores over entry `key` of the dict `name`:
        `del name[key]`, `name[key] = v`, `name.pop(key[, default])`,
        `name.update(key=v)`, `name.update({key: v})`."""

        def same(expr: ast.expr | None) -> bool:
            return _same_key(self._key_of(expr), key) is True

        def replaces(stmt: ast.stmt) -> bool:
            if isinstance(stmt, ast.Delete | ast.Assign):
                return any(
                    isinstance(t, ast.Subscript)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == name
                    and same(t.slice)
                    for t in stmt.targets
                )
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
                return False
            call = stmt.value
            func = call.func
            if not (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == name
            ):
                return False
            if func.attr == "pop":
                return not call.keywords and 1 <= len(call.args) <= 2 and same(call.args[0])
            if func.attr == "update":
                if not call.args:
                    return any(k.arg == key for k in call.keywords)
                return (
                    len(call.args) == 1
                    and isinstance(call.args[0], ast.Dict)
                    and any(k is not None and same(k) for k in call.args[0].keys)
                )
            return False

        return replaces

    def _key_of(self, expr: ast.expr | None) -> object:
        """The dict key `expr` spells: a constant, or a name or attribute the evaluator
        knows as one string or int (`KA = "a"`); else `_NO_KEY`."""
        if isinstance(expr, ast.Constant):
            return expr.value
        if not isinstance(expr, ast.Name | ast.Attribute):
            return _NO_KEY
        values = self.evaluator.eval(expr, self.reached.ctx)
        if values and len(values) == 1 and isinstance(values[0], Const):
            known = values[0].value
            if type(known) in (str, int):
                return known
        return _NO_KEY

    def _get_other_key(self, attribute: ast.Attribute, key: str) -> bool:
        """`attribute` is `d.get` called as `d.get("a")` or `d.get("a", default)` with a
        constant key other than `key`."""
        call = self.module.parents.get(attribute)
        return (
            isinstance(call, ast.Call)
            and call.func is attribute
            and not call.keywords
            and 1 <= len(call.args) <= 2
            and isinstance(picked := self._key_of(call.args[0]), str)
            and picked != key
        )

    def _keyword_container(self, call: ast.AST | None) -> str | None:
        """ "dict" for `dict(a=..., b=...)` (the builtin, keywords only), "namespace" for
        `name = types.SimpleNamespace(a=..., b=...)` bound to a local name; else None."""
        if not isinstance(call, ast.Call) or call.args or any(k.arg is None for k in call.keywords):
            return None
        func = call.func
        if isinstance(func, ast.Name) and func.id == "dict" and self.module.is_builtin(func):
            return "dict"
        assign = self.module.parents.get(call)
        if (
            self._container_kind(call) == "namespace"
            and isinstance(assign, ast.Assign)
            and assign.value is call
            and len(assign.targets) == 1
            and isinstance(assign.targets[0], ast.Name)
            and self._declared(assign.targets[0].id) is None
        ):
            return "namespace"
        return None

    def _branch_may_run(self, node: ast.AST) -> bool:
        """False when a guard between `node` and its function (this one, or a function
        nested in it) is decided against it here: a branch of an `if` or conditional
        expression not taken (`if DEBUG:` with `DEBUG = False`), a loop over nothing, a
        `match` case not taken, an `and`/`or` operand never evaluated: the read is never
        traced."""
        fn = self.module.enclosing_function(node) or self.fn
        return not ruled_out(node, fn, self.reached.ctx, self.evaluator, self._truths)

    def _attribute_live(self, name: str, attr: str, stmt: ast.stmt, depth: int) -> bool:
        def replaces(before: ast.stmt) -> bool:
            # `ns.b = x` or `del ns.b` after the value was stored there
            return isinstance(before, ast.Assign | ast.Delete) and any(
                isinstance(t, ast.Attribute)
                and t.attr == attr
                and isinstance(t.value, ast.Name)
                and t.value.id == name
                for t in before.targets
            )

        for load in self._later_loads(name, stmt):
            if self._replaced_before(load, stmt, replaces):
                continue
            parent = self.module.parents.get(load)
            if isinstance(parent, ast.Attribute) and parent.value is load:
                if parent.attr != attr or not isinstance(parent.ctx, ast.Load):
                    continue  # another attribute, or a store into one
                if self.live(parent, depth + 1):
                    return True
            elif self.live(load, depth + 1):
                return True
        return False

    def _later_loads(self, name: str, stmt: ast.stmt | ast.NamedExpr) -> list[ast.Name]:
        """Loads that can see the value `stmt` (a statement or a `:=`) assigns to `name`."""
        if self._loads is None:
            self._loads = {}
            for node in self._nodes():
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    self._loads.setdefault(node.id, []).append(node)
        loads = [
            n
            for n in self._loads.get(name, [])
            if may_run(self.module, n, self.fn)
            and self._branch_may_run(n)
            and not in_uncalled_closure(self.module, n, self.fn, self.reached, self.evaluator)
        ]
        in_loop = any(
            isinstance(a, ast.For | ast.AsyncFor | ast.While)
            for a in _ancestors_within(self.module, stmt, self.fn)
        )
        if in_loop:
            return loads
        end = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
        later = [n for n in loads if (n.lineno, n.col_offset) >= end]
        # A statement later in the same block that, before any use, rebinds the name on
        # every way through it (`y = x`, also in `if True:`, a `with` or `try` body, a
        # loop that runs at least once) kills the value.
        block = block_of(self.module, stmt) if isinstance(stmt, ast.stmt) else None
        if block is not None and isinstance(stmt, ast.stmt):
            for following in block[block.index(stmt) + 1 :]:
                reads = any(
                    isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                    for n in ast.walk(following)
                )
                if reads:
                    if type(following) is ast.Assign and _rebinds(following, name):
                        # `y = helper(y, x)`: reads the value first, then replaces it.
                        cut = (following.end_lineno or 0, following.end_col_offset or 0)
                        return [n for n in later if (n.lineno, n.col_offset) < cut]
                    break
                if binds_on_every_way_on(following, name):
                    cut = (following.lineno, following.col_offset)
                    return [n for n in later if (n.lineno, n.col_offset) < cut]
        return later


# Builtins that can read a parameter without naming it.
# Pallas calls that write a ref (the position of the ref they write), or print (None).
_EFFECT_CALLS: dict[str, int | None] = {
    "sync_copy": 1,
    "print": None,
    "debug_print": None,
}


def _stored_ref(target: ast.expr) -> ast.Name | None:
    """The name a store writes through: `o_ref` in `o_ref[...]`, `o_ref.at[0][...]`."""
    node = target
    if isinstance(node, ast.Name):
        return node  # `pltpu.sync_copy(s_ref, o_ref)`
    while isinstance(node, ast.Subscript | ast.Attribute):
        if isinstance(node, ast.Attribute) and node.attr != "at":
            return None
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _is_run_scoped(module: ModuleInfo, func: ast.expr) -> bool:
    qual = module.qualname(func)
    return qual is not None and qual.startswith("jax.") and qual.endswith(".run_scoped")


def _is_default(node: ast.AST, function: FunctionNode) -> bool:
    """`node` is the default value of one of `function`'s parameters."""
    args = function.args
    return any(d is node for d in (*args.defaults, *args.kw_defaults))


class _CarryLiveness(_Liveness):
    """Liveness inside a loop body where returning a value as carry element `index` does
    not count: it only feeds the same element of the next step. A fori_loop body returns
    the carry itself; a scan step returns `(carry, y)`, whose carry elements come through
    `_carry_element_live`; `y` counts when the stacked outputs are used, and the carry
    as a whole always."""

    def __init__(
        self, reached: Reached, evaluator: Evaluator, index: Element, scan: bool = False
    ) -> None:
        super().__init__(reached, evaluator)
        self.index = index
        self.scan = scan

    def _result_live(
        self, depth: int, index: Element | None = None, size: int | None = None
    ) -> bool:
        if self.scan:
            if index == 1 and size == 2:
                return super()._result_live(depth, index, size)  # `y`: if the ys are used
            return True
        return index != self.index

    def _carry_element_live(self, call: ast.Call, index: Element, size: int, depth: int) -> bool:
        return index != self.index


class _EffectLiveness(_Liveness):
    """Liveness inside the body of a loop whose result is discarded: only what reaches an
    effect (a ref store, a print) in the same step counts, not what is carried."""

    def _result_live(
        self, depth: int, index: Element | None = None, size: int | None = None
    ) -> bool:
        return False

    def _carry_element_live(self, call: ast.Call, index: Element, size: int, depth: int) -> bool:
        return False

    def _read_matters(self, read: ast.Name) -> bool:
        return self.live(read)

    def _feeds_other_element(self, read: ast.AST, index: Element, position: int) -> bool:
        return self.live(read)

    def _entry_feeds_other(self, display: ast.Dict, key: str, size: int, position: int) -> bool:
        return self.live(display, 0, key, size)


def _while_body_of(
    evaluator: Evaluator, module: ModuleInfo, node: ast.AST, parent: ast.AST | None, ctx: Ctx
) -> bool:
    """`node` is the body (or test) argument of the `lax.while_loop` or traced-bound
    `lax.fori_loop` call `parent`, or such a loop call itself (a loop body followed from
    its call)."""
    if isinstance(node, ast.Call):
        call, body = node, None
    elif isinstance(parent, ast.Call):
        call, body = parent, node
    else:
        return False
    qual = module.qualname(call.func)
    if qual == "jax.lax.while_loop":
        return body is None or body in (
            argument_value(call, 0, "cond_fun"),
            argument_value(call, 1, "body_fun"),
        )
    if qual == "jax.lax.fori_loop" and fori_is_while(evaluator, call, ctx):
        return body is None or body is argument_value(call, 2, "body_fun")
    return False


def _rebinds(assign: ast.Assign, name: str) -> bool:
    """`assign` binds `name` itself (also as an element of a tuple or list target)."""
    for target in assign.targets:
        parts = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        for part in parts:
            if isinstance(part, ast.Starred):
                part = part.value
            if isinstance(part, ast.Name) and part.id == name:
                return True
    return False


def _ancestors_within(module: ModuleInfo, node: ast.AST, fn: ast.AST) -> Iterator[ast.AST]:
    for a in module.ancestors(node):
        if a is fn:
            return
        yield a


def _is_conv_like(call: ast.expr, module: ModuleInfo) -> bool:
    """A call with no side effects that a bare expression statement can only waste."""
    if not isinstance(call, ast.Call):
        return False
    qual = module.qualname(call.func) or ""
    return qual.startswith(("jax.lax.", "jax.numpy.")) or jaxapi.canonical(qual) is not None


def _no_convolution_reachable(module: ModuleInfo) -> bool:
    """Whether no kernel of the module can reach a convolution, read off its text: a conv
    call is spelled with its function's name (`lax.conv(...)`, `jnp.correlate(...)`, or an
    import or assignment that names it), unless it sits in another module of the user's,
    and the module imports none (only jax, numpy and the standard library)."""
    source = module.source
    if any(name in source for name in _CONV_WORDS):
        return False
    return all(_library_module(qualname) for qualname in module.imported_modules)


# The shortest spellings that every name of jaxapi.CONV_LAST_NAMES contains.
_CONV_WORDS = tuple(
    sorted(
        {
            name
            for name in jaxapi.CONV_LAST_NAMES
            if not any(other != name and other in name for other in jaxapi.CONV_LAST_NAMES)
        }
    )
)


class _Reaching:
    """Which kernel sites may reach a convolution at all (relevance.py): a site whose
    top-level statement has no chain of module-level names to one, and whose context binds
    nothing from another statement (no caller's arguments), reaches none."""

    def __init__(self, module: ModuleInfo) -> None:
        self.module = module
        self.units = reaching_units(module, _CONV_WORDS, _library_module)
        self.index = {id(stmt): i for i, stmt in enumerate(module.tree.body)}

    def may_reach(self, site: KernelSite) -> bool:
        if self.units is None or site.via is not None or site.statement is None:
            return True
        if site.ctx.env or site.ctx.module is not self.module:
            return True
        if site.body is not None and (site.body[1].env or site.body[1].module is not self.module):
            return True
        # A body from elsewhere (`P = partial(pl.pallas_call, kernel)` in another
        # statement) comes through a name the site's statement reads: that statement is
        # relevant when the body's is.
        return self.index.get(id(site.statement)) in self.units


def _library_module(qualname: str) -> bool:
    if qualname.startswith("."):
        return False
    head = qualname.split(".")[0]
    return head in LIBRARIES or head in sys.stdlib_module_names


def check_conv_precision(ctx: RuleContext) -> Iterator[Finding]:
    if ctx.jax_version < CONV_RULE_MIN_JAX:
        return
    cache = ctx.cache
    if _no_convolution_reachable(ctx.module):
        if cache is not None:
            cache["conv"] = {}
        return
    seen: dict[int, Finding] = {}
    previous = cache.get("conv", {}) if cache is not None and ctx.finder.same_signature else {}
    current: dict[int, tuple[ast.AST, Recorder, list[Finding]]] = {}
    body_ids = {id(stmt) for stmt in ctx.module.tree.body}
    reaching: _Reaching | None = None
    for site in ctx.sites:
        if site.kind is not KernelKind.TENSORCORE:
            continue
        if site.mosaic not in {Mosaic.USED, Mosaic.USED_UNLESS_INTERPRET}:
            continue
        entry = previous.get(id(site.anchor))
        if (
            entry is not None
            and entry[0] is site.anchor
            and entry[1].still_valid(ctx.module, body_ids)
        ):
            findings = entry[2]
        else:
            if reaching is None:
                reaching = _Reaching(ctx.module)
            if not reaching.may_reach(site):
                continue  # nothing it can reach spells a convolution (not cached: cheap)
            ctx.check_cancelled()
            findings, recorder = _check_site(ctx, site)
            entry = (site.anchor, recorder, findings)
        current[id(site.anchor)] = entry
        for finding in findings:
            seen.setdefault(hash((finding.code, finding.span)), finding)
    if cache is not None:
        cache["conv"] = current
    yield from seen.values()


def _check_site(ctx: RuleContext, site: KernelSite) -> tuple[list[Finding], Recorder]:
    # A fresh recorder that starts from the site's own inputs: the site object itself may be
    # reused by later analyses (its discovery cache), so its recorder is not extended.
    # Without a cache nothing reads it.
    recorder = Recorder() if ctx.cache is not None else UNRECORDED
    if site.deps is not None:
        recorder.absorb(site.deps)
    site._reached = None
    ctx.evaluator.recorder = recorder
    try:
        found = [
            (finding, reached.root)
            for reached in ctx.finder.reached(site)
            for finding in _check_function(ctx, site, reached)
        ]
        if site.roots > 1:
            return _in_every_root(found, site.roots), recorder
        return [finding for finding, _ in found], recorder
    finally:
        ctx.evaluator.recorder = None


def _in_every_root(found: list[tuple[Finding, int]], roots: int) -> list[Finding]:
    """`pl.pallas_call(a if flag else b)`: a conv is provably lowered only when every
    function the kernel may be (each root) reaches it."""
    reached_by: dict[tuple[str, object], set[int]] = {}
    for finding, root in found:
        reached_by.setdefault((finding.code, finding.span), set()).add(root)
    return [f for f, _ in found if len(reached_by[(f.code, f.span)]) == roots]


def _check_function(ctx: RuleContext, site: KernelSite, reached: Reached) -> Iterator[Finding]:
    module = reached.ctx.module
    liveness = _Liveness(reached, ctx.evaluator) if site.entry.entry == "pallas_call" else None
    assert reached.live is not None  # reached() fills it for every function it returns
    for node in reached.live:
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr not in jaxapi.CONV_LAST_NAMES:
            continue  # its qualified name ends with that attr: not a convolution
        conv = jaxapi.canonical(module.qualname(func))
        where: _Where | None
        values: list[Value] | None = None
        if conv in jaxapi.CONV_PRECISION_INDEX:
            found = call_argument(node, jaxapi.CONV_PRECISION_INDEX[conv], "precision")
            spread_from: tuple[ast.AST, ast.keyword] | None = None
            if found is None and any(k.arg is None for k in node.keywords):
                # `conv(x, w, **CONV_KW)` with `CONV_KW = dict(..., precision=...)`
                spread = spread_keywords(module, node)
                if spread is None:
                    continue  # a `**` argument that may hold anything
                named = [k.arg for k in node.keywords if k.arg is not None]
                if len({k for k, *_ in spread} | set(named)) != len(spread) + len(named):
                    continue  # a keyword given twice: TypeError when traced
                for key, entry, container, star in spread:
                    if key == "precision":
                        found, spread_from = entry, (container, star)
            if found is not None:
                given = found.value if isinstance(found, ast.keyword) else found
                values = ctx.evaluator.eval(given, reached.ctx)
            if found is None or _all_none(values):
                # No precision (or None): the conv takes the default matmul precision.
                context = _default_precision(ctx, site, reached, node, conv)
                if context is not None:
                    if liveness is not None and not liveness.live(node):
                        continue
                    yield _context_finding(ctx, site, reached, node, found, conv, context)
                continue
            if spread_from is None:
                where = _Where(found, node, reached.ctx)
            else:  # the entry's call, for a `dict(...)`'s fix; shown at the `**` argument
                container, star = spread_from
                call = container if isinstance(container, ast.Call) else node
                where = _Where(found, call, reached.ctx, star)
        elif isinstance(func, ast.Name) and "partial" in module.source:
            conv, through = _through_partial(ctx.evaluator, node, func, reached.ctx)
            if isinstance(through, _NotGiven):
                context = _default_precision(ctx, site, reached, node, conv or "")
                if context is not None and (liveness is None or liveness.live(node)):
                    yield _context_finding(ctx, site, reached, node, None, conv or "", context)
                continue
            where = through
        else:
            continue
        if where is None or conv is None:
            continue
        value_expr = where.arg.value if isinstance(where.arg, ast.keyword) else where.arg
        if values is None:
            values = ctx.evaluator.eval(value_expr, where.ctx)
        verdict = classify(values, conv)
        if verdict is None:
            continue
        if liveness is not None and not liveness.live(node):
            continue
        yield _finding(ctx, site, reached, where, value_expr, conv, verdict)


def _all_none(values: list[Value] | None) -> bool:
    """The precision given is provably `None`."""
    if not values:
        return False
    return all(isinstance(v, Const) and v.value is None for v in values)


# `jax.default_matmul_precision(value)`, as a context manager or a decorator: the precision a
# conv given none takes while it is traced (pallas-semantics.md C.2). The values the config
# accepts (JAX 0.10.2's list: the preset names but "DEFAULT"); any other raises ValueError
# when the context is entered, before anything is traced.
_MATMUL_PRECISION_CONTEXTS = frozenset(
    {"jax.default_matmul_precision", "jax._src.config.default_matmul_precision"}
)
_CONFIG_VALUES = frozenset(
    {"default", "high", "highest", "bfloat16", "tensorfloat32", "float32"}
    | (jaxapi.DOT_ALGORITHM_PRESETS - {"DEFAULT"})
)


@immutable
class _Context:
    """A `jax.default_matmul_precision(value)` in force where a conv is traced."""

    value: str
    call: ast.Call
    module: ModuleInfo
    verdict: Verdict


class _Unknown:
    """A default-precision context whose value the analysis cannot read."""


_UNKNOWN = _Unknown()


def _context_of(
    evaluator: Evaluator, module: ModuleInfo, expr: ast.expr, ctx: Ctx
) -> tuple[str, ast.Call] | _Unknown | None:
    """The value `expr` (a `with` item or a decorator) sets the default precision to; None
    when it is not `jax.default_matmul_precision(...)`. A name bound only to such a call
    (`ctx = jax.default_matmul_precision(...)`, then `with ctx:`) stands for it."""
    if isinstance(expr, ast.Name):
        found = module.lookup(expr.id, module.scope_of(expr))
        bindings = found[1] if found is not None else []
        calls = [b.value for b in bindings if isinstance(b, AssignBinding)]
        if not bindings or len(calls) != len(bindings):
            return None
        contexts = {_context_key(_context_of(evaluator, module, c, ctx)) for c in calls}
        if len(contexts) != 1:
            return _UNKNOWN  # bound to different contexts (or to one and to something else)
        return _context_of(evaluator, module, calls[0], ctx)
    if not isinstance(expr, ast.Call):
        return None
    if module.qualname(expr.func) not in _MATMUL_PRECISION_CONTEXTS:
        return None
    if len(expr.args) != 1 or expr.keywords or isinstance(expr.args[0], ast.Starred):
        return _UNKNOWN
    value = _string_value(evaluator, expr.args[0], ctx)
    return (value, expr) if value is not None else _UNKNOWN


_CONFIG_KEY = "jax_default_matmul_precision"


def _module_config(
    evaluator: Evaluator, module: ModuleInfo, ctx: Ctx
) -> tuple[str, ast.Call] | None:
    """`jax.config.update("jax_default_matmul_precision", value)` as a statement of the module
    itself (not under an `if` or in a function), the only update of that setting in the
    module: in force wherever the module traces a kernel with no context around it. None
    when the module also sets the precision any other way (a second update, a
    `jax.default_matmul_precision` context anywhere): a caller's context could win."""
    if "update" not in module.source:
        return None  # no `config.update(...)` anywhere: skip the walk (~20 ms per 5k lines)
    updates: list[ast.Call] = []
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Call):
            continue
        qual = module.qualname(node.func)
        if qual in _MATMUL_PRECISION_CONTEXTS:
            return None
        if qual == "jax.config.update" and (
            not node.args
            or not isinstance(node.args[0], ast.Constant)
            or node.args[0].value == _CONFIG_KEY
        ):
            updates.append(node)
    if len(updates) != 1:
        return None
    update = updates[0]
    statement = module.parents.get(update)
    if not (
        isinstance(statement, ast.Expr)
        and module.parents.get(statement) is module.tree
        and len(update.args) == 2
        and isinstance(update.args[0], ast.Constant)
        and not update.keywords
        and not isinstance(update.args[1], ast.Starred)
    ):
        return None
    value = _string_value(evaluator, update.args[1], ctx)
    return (value, update) if value is not None else None


def _string_value(evaluator: Evaluator, expr: ast.expr, ctx: Ctx) -> str | None:
    """The one string `expr` evaluates to here, if it is known."""
    values = evaluator.eval(expr, ctx)
    if values and len(values) == 1 and isinstance(values[0], Const):
        value = values[0].value
        if isinstance(value, str):
            return value
    return None


def _context_key(found: tuple[str, ast.Call] | _Unknown | None) -> object:
    return found[0] if isinstance(found, tuple) else found


def _enclosing_context(
    evaluator: Evaluator, module: ModuleInfo, node: ast.AST, fn: ast.AST | None, ctx: Ctx
) -> tuple[str, ast.Call] | _Unknown | None:
    """The innermost `with jax.default_matmul_precision(...)` around `node` in its function,
    or that function's decorator of that kind (the decorator nearest the def is entered
    last). `fn`: the function `node` must be in (None: whichever it is in). Stops at the
    function: what its callers set is not known here."""
    child = node
    for parent in module.ancestors(node):
        if isinstance(parent, ast.With | ast.AsyncWith) and any(s is child for s in parent.body):
            for item in reversed(parent.items):
                found = _context_of(evaluator, module, item.context_expr, ctx)
                if found is not None:
                    return found
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            if fn is not None and parent is not fn:
                return _UNKNOWN  # not the function it was reached in: do not guess
            if not isinstance(parent, ast.Lambda):
                for decorator in reversed(parent.decorator_list):
                    found = _context_of(evaluator, module, decorator, ctx)
                    if found is not None:
                        return found
            return None
        if isinstance(parent, ast.ClassDef | ast.GeneratorExp):
            return _UNKNOWN  # a generator runs where it is consumed: not known here
        child = parent
    return None


def _site_trace_points(site: KernelSite) -> list[ast.AST]:
    """Where the site traces its kernel body, when that is visible: the trace point below,
    or where the built kernel is called, also through `jax.jit(...)`, `jax.export.export(...)`
    and `.lower(...)`, and through a local name it is bound to when the function does nothing
    else with that name (`k = pl.kernel(...)`, then `k(x)`). Empty: not known."""
    point = _site_trace_point(site)
    if point is not None:
        return [point]
    if site.via is not None or site.decorated is not None:
        return []
    module = site.ctx.module
    return _traced_where(module, site.anchor, module.enclosing_function(site.anchor), 0) or []


# Calls that give back a function tracing their first argument when it is called.
_TRACING_WRAPPERS = frozenset({"jax.jit", "jax.export.export"})


def _traced_where(
    module: ModuleInfo, expr: ast.AST, fn: FunctionNode | None, depth: int
) -> list[ast.AST] | None:
    """The calls that trace the function `expr` evaluates to, in the function `fn` it sits
    in; None when it may also be traced somewhere else (passed on, returned, stored)."""
    if depth > 6:
        return None
    parent = module.parents.get(expr)
    if isinstance(parent, ast.Call):
        if parent.func is expr:
            return [parent]
        if (
            parent.args
            and parent.args[0] is expr
            and module.qualname(parent.func) in _TRACING_WRAPPERS
        ):
            return _traced_where(module, parent, fn, depth + 1)
        return None
    if isinstance(parent, ast.Attribute) and parent.value is expr and parent.attr == "lower":
        call = module.parents.get(parent)
        return [call] if isinstance(call, ast.Call) and call.func is parent else None
    if not (
        fn is not None  # a module-level name: called from anywhere
        and isinstance(parent, ast.Assign)
        and parent.value is expr
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
    ):
        return None
    name = parent.targets[0].id
    points: list[ast.AST] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == name:
            if isinstance(n.ctx, ast.Load):
                found = _traced_where(module, n, fn, depth + 1)
                if found is None:
                    return None
                points.extend(found)
            elif n is not parent.targets[0]:
                return None  # rebound
        elif isinstance(n, ast.Global | ast.Nonlocal) and name in n.names:
            return None
    return points


def _site_trace_point(site: KernelSite) -> ast.AST | None:
    """Where the site traces its kernel body, when that is visible: `pl.pallas_call(...)(x)`
    (built and called at once) or `@pl.core_map(mesh)` (runs the def as it decorates it).
    A kernel built here and called elsewhere is traced where it is called: unknown."""
    anchor = site.anchor
    parent = site.ctx.module.parents.get(anchor)
    if site.decorated is not None:
        return site.decorated if site.entry.entry == "core_map" else None
    if site.via is None and isinstance(parent, ast.Call) and parent.func is anchor:
        return parent
    return None


def _default_precision(
    ctx: RuleContext, site: KernelSite, reached: Reached, call: ast.Call, conv: str
) -> _Context | None:
    """The `jax.default_matmul_precision` a conv given no precision is provably traced
    under, when that makes Mosaic reject it; else None. Walks from the conv out through each
    function that traces it (the innermost context wins) to where the site traces the
    kernel, and no further."""
    if conv == "jax.lax.conv_general_dilated_local":
        return None  # it pairs the default with DEFAULT itself (a documented miss)
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None  # *args may pass a precision
    if any(k.arg is None for k in call.keywords):
        spread = spread_keywords(reached.ctx.module, call)
        if spread is None or any(k == "precision" for k, *_ in spread):
            return None  # **kwargs may pass a precision
    evaluator = ctx.evaluator
    node: ast.AST = call
    item = reached
    found: tuple[str, ast.Call] | _Unknown | None = None
    while True:
        found = _enclosing_context(evaluator, item.ctx.module, node, item.fn, item.ctx)
        if found is not None or item.trace is None:
            break
        node, item = item.trace
    if found is None:
        points = _site_trace_points(site)
        if not points:
            return None
        module = site.ctx.module
        contexts = [_enclosing_context(evaluator, module, p, None, site.ctx) for p in points]
        if len({_context_key(c) for c in contexts}) != 1:
            return None  # called under different contexts
        found = contexts[0]
        if found is None:
            found = _module_config(evaluator, module, site.ctx)
    else:
        module = item.ctx.module
    if not isinstance(found, tuple):
        return None
    value, context_call = found
    if value not in _CONFIG_VALUES:
        return None  # ValueError when the context is entered
    # `conv_general_dilated_patches` hands None on: its conv takes the default as is.
    verdict = _classify_one(Const(value), "jax.lax.conv_general_dilated")
    if verdict is None:
        return None
    return _Context(value, context_call, module, verdict)


@immutable
class _Where:
    """Where a conv's precision is given: the argument, the call it is in (the conv, or the
    functools.partial that made the function called) and that call's context."""

    arg: ast.keyword | ast.expr
    call: ast.Call
    ctx: Ctx
    # `conv(x, w, **CONV_KW)`: the `**` argument of the conv call the precision comes
    # through (the finding is shown there; `arg` is the entry of the dict, in `call`).
    spread: ast.keyword | None = None


class _NotGiven:
    """A conv partial whose partial and call give no precision: it takes the default."""


_NOT_GIVEN = _NotGiven()


def _through_partial(
    evaluator: Evaluator, call: ast.Call, func: ast.Name, ctx: Ctx
) -> tuple[str | None, _Where | _NotGiven | None]:
    """`conv(x, w, ...)` with `conv = functools.partial(lax.conv_general_dilated, ...,
    precision=...)`: the convolution and where its precision is given (the call's own
    arguments first: they override the partial's); `_NOT_GIVEN` when neither gives one."""
    values = evaluator.eval(func, ctx)
    if not values or len(values) != 1 or not isinstance(values[0], LibraryPartial):
        return None, None
    partial = values[0]
    conv = jaxapi.canonical(partial.qualname)
    if conv not in jaxapi.CONV_PRECISION_INDEX:
        return None, None
    if not _binds_cleanly(conv, partial, call):
        return None, None  # TypeError when traced, before anything is lowered
    index = jaxapi.CONV_PRECISION_INDEX[conv]
    given = len(partial.args)
    # Positions the partial fills are not the call's: only a keyword could be (a TypeError).
    rest = None if index is None or index < given else index - given
    own = call_argument(call, rest, "precision")
    if own is not None:
        return conv, _Where(own, call, ctx)
    if any(k.arg is None for k in call.keywords):
        return None, None  # **kwargs may give it
    for keyword, keyword_ctx in reversed(partial.keywords):
        if keyword.arg == "precision":
            return conv, _Where(keyword, partial.node, keyword_ctx)
    if index is not None and index < given:
        expr, expr_ctx = partial.args[index]
        return conv, _Where(expr, partial.node, expr_ctx)
    if any(isinstance(expr, ast.Starred) for expr, _ in partial.args) or any(
        keyword.arg is None for keyword, _ in partial.keywords
    ):
        return None, None  # `*args` / `**kwargs` in the partial may give it
    return conv, _NOT_GIVEN


def _binds_cleanly(conv: str, partial: LibraryPartial, call: ast.Call) -> bool:
    """The partial's and the call's arguments bind to the convolution's parameters: none
    given twice, none it does not take."""
    names = jaxapi.CONV_PARAMS.get(conv)
    if names is None:
        return True
    count = len(partial.args) + len(call.args)
    if count > len(names):
        return False
    positional = set(names[:count])
    for keyword in (*(k for k, _ in partial.keywords), *call.keywords):
        if keyword.arg not in names or keyword.arg in positional:
            return False
    return True


def _finding(
    ctx: RuleContext,
    site: KernelSite,
    reached: Reached,
    where: _Where,
    value_expr: ast.expr,
    conv: str,
    verdict: Verdict,
) -> Finding:
    rule = RULES[verdict.code]
    record = rule.record
    arg, call = where.arg, where.call
    module = where.ctx.module
    local = module is ctx.module
    if verdict.code == "PAL002":
        head = f"{record.error_class}: {record.error_message}"
    else:
        head = f"{record.error_class}: {_unsupported_template()}{verdict.shown}"
    when = _when(site)
    message = (
        f"{head} — `{conv.replace('jax.numpy.', 'jnp.').replace('jax.lax.', 'lax.')}` in "
        f"`{getattr(reached.fn, 'name', '<lambda>')}`, traced in kernel "
        f"`{site.body_name}` ({site.label}, {site.kind.value}: {site.kind_reason}); "
        f"{verdict.why}. Mosaic raises {when}."
    )
    related = list(reached.chain)
    fixes: list[Fix] = []
    if local:
        span = module.span(arg)
        if where.spread is not None:
            # Shown at the conv's `**CONV_KW`; the entry that gives the precision is where
            # the fix edits.
            related.append(Related("the precision is given here", span, module.path))
            span = module.span(where.spread)
        # The preset named DEFAULT asked for the default: dropping it keeps that meaning.
        keep_default = conv in jaxapi.PAIRS_WITH_DEFAULT or verdict.shown == "DEFAULT"
        if conv not in jaxapi.PAIRS_WITH_DEFAULT:
            highest = _precision_spelling(module, value_expr, where.ctx)
            fixes.append(
                Fix(
                    f"{record.solutions[0]}: `{highest}` for both operands",
                    (Edit(module.span(value_expr), highest),),
                    not keep_default,
                )
            )
        if isinstance(arg, ast.keyword):
            edit = remove_argument(module, call, arg)
        else:
            edit = Edit(module.span(arg), "None")
        if edit is not None:
            fixes.append(
                Fix(
                    f"{record.solutions[1]}: use the default precision",
                    (edit,),
                    keep_default,
                )
            )
    else:
        span = _shown_at(ctx, site, reached, related, module, arg)
    return Finding(
        verdict.code,
        message,
        span,
        fixes=tuple(fixes),
        related=tuple(related),
        record_id=record.id,
    )


def _when(site: KernelSite) -> str:
    if site.mosaic is Mosaic.USED_UNLESS_INTERPRET:
        return "when the kernel is lowered for TPU without interpret mode"
    return "when the kernel is lowered for TPU"


def _shown_at(
    ctx: RuleContext,
    site: KernelSite,
    reached: Reached,
    related: list[Related],
    module: ModuleInfo,
    node: ast.AST,
) -> Span:
    """Where a finding about a conv in another module is shown in the analysed file (the
    last call on the way there), with the conv itself added to `related`."""
    via = reached.via
    related.append(Related("the convolution is here", module.span(node), module.path))
    return ctx.module.span(via) if via is not None else ctx.module.span(site.entry_node)


def _context_finding(
    ctx: RuleContext,
    site: KernelSite,
    reached: Reached,
    call: ast.Call,
    given: ast.keyword | ast.expr | None,
    conv: str,
    context: _Context,
) -> Finding:
    """A conv given no precision (or None) under a `jax.default_matmul_precision` Mosaic
    rejects for convolutions."""
    verdict = context.verdict
    record = RULES[verdict.code].record
    module = reached.ctx.module
    local = module is ctx.module
    when = _when(site)
    setting = context.module.text(context.call)
    line = context.call.lineno
    message = (
        f"{record.error_class}: {_unsupported_template()}{verdict.shown} — "
        f"`{conv.replace('jax.lax.', 'lax.')}` in `{getattr(reached.fn, 'name', '<lambda>')}`, "
        f"traced in kernel `{site.body_name}` ({site.label}, {site.kind.value}: "
        f"{site.kind_reason}); it is given no precision, so it takes the default matmul "
        f"precision of `{setting}` (line {line}): {verdict.why}. Mosaic raises {when}."
    )
    related = [
        *reached.chain,
        Related(
            "the default matmul precision is set here",
            context.module.span(context.call),
            None if context.module is ctx.module else context.module.path,
        ),
    ]
    fixes: list[Fix] = []
    if local:
        value_expr = given.value if isinstance(given, ast.keyword) else given
        span = module.span(value_expr) if value_expr is not None else module.span(call.func)
        highest = _precision_spelling(module, call, reached.ctx)
        default = (
            highest[: -len("HIGHEST")] + "DEFAULT" if highest.endswith("HIGHEST") else ('"default"')
        )
        choices = [(highest, True), (default, False)]
        if conv in jaxapi.PAIRS_WITH_DEFAULT:
            # It pairs a precision with DEFAULT: only DEFAULT keeps the pair uniform, and a
            # string would make a mixed (str, enum) pair (ValueError).
            choices = [(default, True)] if highest.endswith("HIGHEST") else []
        for choice, preferred in choices:
            edit = _give_precision(module, call, value_expr, choice)
            if edit is not None:
                fixes.append(
                    Fix(
                        f"{record.solutions[0]}: `{choice}` for this convolution",
                        (edit,),
                        preferred,
                    )
                )
    else:
        span = _shown_at(ctx, site, reached, related, module, call)
    return Finding(
        verdict.code,
        message,
        span,
        fixes=tuple(fixes),
        related=tuple(related),
        record_id=record.id,
    )


def _give_precision(
    module: ModuleInfo, call: ast.Call, value_expr: ast.expr | None, precision: str
) -> Edit | None:
    """Pass `precision` to the conv: in place of its `None`, or as a keyword after its last
    argument (a precision given explicitly does not read the default)."""
    if value_expr is not None:
        return Edit(module.span(value_expr), precision)
    arguments: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    if not arguments:
        return None
    last = max(arguments, key=lambda a: (a.end_lineno or 0, a.end_col_offset or 0))
    end = module.span(last)
    return Edit(
        Span(end.end_line, end.end_col, end.end_line, end.end_col), f", precision={precision}"
    )
