"""Does a helper use the value one of its parameters comes in with?

A kernel that hands a value to `helper(y, x)` uses it only if `helper` reads the parameter
`y` is bound to. Two questions ask this: whether a conv's result is live (the conv rule's
dead-code check) and whether an `emit_pipeline` is ever run (reachability). Both treat a
read the same way; anything not provably unread counts as a read.
"""

from __future__ import annotations

import ast

from pallas_ls.core.flow import always_exits, binds_on_every_way_on, constant_truth
from pallas_ls.core.resolve import ModuleInfo
from pallas_ls.core.values import Ctx, Evaluator, Func, Seq

# A helper that names one of these may read any of its locals: every parameter counts.
INTROSPECTION = frozenset({"locals", "vars", "eval", "exec", "globals"})

# Reading these of a traced value needs only its abstract value (shape, dtype), not the
# computation: tracing records no use, and pallas_call's dead-code pass drops it.
METADATA_ATTRS = frozenset({"shape", "dtype", "ndim", "size", "aval", "weak_type", "sharding"})
METADATA_FUNCTIONS = frozenset(
    {
        *(f"jax.numpy.{n}_like" for n in ("zeros", "ones", "empty", "full")),
        *(f"jax.numpy.{n}" for n in ("shape", "ndim", "size", "result_type")),
        *(f"numpy.{n}" for n in ("shape", "ndim", "size")),
        "jax.lax.full_like",
        "jax.typeof",
    }
)


def metadata_only(module: ModuleInfo, node: ast.AST, parent: ast.AST) -> bool:
    """`parent` reads of `node` only what tracing knows without computing it."""
    if isinstance(parent, ast.Attribute):
        return parent.value is node and parent.attr in METADATA_ATTRS
    if isinstance(parent, ast.Compare):
        return all(isinstance(op, ast.Is | ast.IsNot) for op in parent.ops)
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
        func = parent.func
        if isinstance(func, ast.Name) and func.id == "len":
            return module.is_builtin(func)
        qual = module.qualname(func)
        return qual is not None and qual in METADATA_FUNCTIONS
    return False


def passed_to(module: ModuleInfo, node: ast.AST) -> tuple[ast.Call, ast.AST] | None:
    """The call `node` is an argument of (positional, or a keyword's value), and what it is
    passed as (`node` itself, or the keyword)."""
    parent = module.parents.get(node)
    passed: ast.AST = parent if isinstance(parent, ast.keyword) else node
    call = module.parents.get(parent) if passed is parent else parent
    if isinstance(call, ast.Call) and passed is not call.func:
        return call, passed
    return None


def ignored_by_callee(
    evaluator: Evaluator,
    ctx: Ctx,
    call: ast.Call,
    passed: ast.AST,
    depth: int = 0,
    element: tuple[int | str, int] | None = None,
) -> bool:
    """`helper(y, x)` where `helper`, a plain def, never reads the parameter `y` is bound
    to: the value goes nowhere through this call. Also `lax.cond(p, f, g, y)` and
    `lax.switch(i, [f, g], y)` where no branch reads the parameter `y` lands in. `ctx`:
    where `call` is evaluated. `element`: the value is element `index` of the `size`-tuple
    passed (`lax.cond(p, f, g, (x, y))`), and only reads of that element count."""
    if depth > 3:
        return False
    if any(isinstance(a, ast.Starred) for a in call.args):
        return False
    if any(k.arg is None for k in call.keywords):
        return False
    branches = _branches(ctx.module, call)
    if branches is not None:
        return _ignored_by_branches(evaluator, ctx, call, passed, depth, *branches, element)
    values = evaluator.eval(call.func, ctx)
    if not values or len(values) != 1 or not isinstance(values[0], Func):
        return False
    fn = values[0]
    node = fn.node
    if fn.bound or fn.bound_positional or isinstance(node, ast.Lambda) or node.decorator_list:
        return False
    args = node.args
    if isinstance(passed, ast.keyword):
        names = {a.arg for a in (*args.args, *args.kwonlyargs)}
        if passed.arg not in names:
            return False  # into **kwargs
        param = passed.arg
    else:
        positional = [*args.posonlyargs, *args.args]
        index = next(i for i, a in enumerate(call.args) if a is passed)
        if index >= len(positional):
            return False  # into *args
        param = positional[index].arg
    return _never_reads(evaluator, ctx, fn, param, depth, element)


# `lax.cond(pred, true_fun, false_fun, *operands)`, `lax.switch(index, branches, *operands)`:
# where the operands start.
_BRANCHING = {"jax.lax.cond": 3, "jax.lax.switch": 2}


def _branches(module: ModuleInfo, call: ast.Call) -> tuple[list[ast.expr], int] | None:
    """The branch functions of a `lax.cond`/`lax.switch` call (as written: for a switch,
    its table) and the index of its first operand; None for any other call."""
    first = _BRANCHING.get(module.qualname(call.func) or "")
    if first is None or len(call.args) < first:
        return None
    if first == 3:
        return [call.args[1], call.args[2]], first
    return [call.args[1]], first


def _branch_functions(
    evaluator: Evaluator, ctx: Ctx, branches: list[ast.expr], first: int
) -> list[Func] | None:
    """The functions a cond's two branches, or a switch's table (a display, or a name bound
    to one), evaluate to; None when one is not a known function."""
    if first == 3:
        values = [evaluator.eval(b, ctx) for b in branches]
    else:
        table = evaluator.eval(branches[0], ctx)
        if not table or len(table) != 1 or not isinstance(table[0], Seq):
            return None
        values = list(table[0].items)
    out: list[Func] = []
    for v in values:
        if not v or len(v) != 1 or not isinstance(v[0], Func):
            return None
        out.append(v[0])
    return out or None


def _ignored_by_branches(
    evaluator: Evaluator,
    ctx: Ctx,
    call: ast.Call,
    passed: ast.AST,
    depth: int,
    branches: list[ast.expr],
    first: int,
    element: tuple[int | str, int] | None = None,
) -> bool:
    """An operand that every branch of a cond or switch leaves unread: the traced cond keeps
    no use of it. A branch may be a plain def, a lambda or a `functools.partial` of one
    that binds keywords; the operand may land in `*args`."""
    if isinstance(passed, ast.keyword) or not branches:
        return False
    index = next(i for i, a in enumerate(call.args) if a is passed) - first
    if index < 0:
        return False  # the predicate or a branch itself
    functions = _branch_functions(evaluator, ctx, branches, first)
    if functions is None:
        return False
    operands = len(call.args) - first
    for fn in functions:
        node = fn.node
        if getattr(node, "decorator_list", None):
            return False
        at = len(fn.bound_positional) + index
        positional = [*node.args.posonlyargs, *node.args.args]
        if any(p.arg in fn.bound for p in positional[: at + 1]):
            return False  # a keyword the partial binds meets a positional operand
        if at < len(positional):
            if not _never_reads(evaluator, ctx, fn, positional[at].arg, depth, element):
                return False
            continue
        vararg = node.args.vararg
        if vararg is None or element is not None:
            return False
        extra = len(fn.bound_positional) + operands - len(positional)
        if not _star_element_unread(fn, vararg.arg, at - len(positional), extra):
            return False
    return True


def _star_element_unread(fn: Func, name: str, index: int, size: int) -> bool:
    """`def branch(*args)` reads only `args[k]` with constant `k` other than `index` (of
    `size` operands)."""
    module = fn.ctx.module
    for n in ast.walk(fn.node):
        if isinstance(n, ast.Name) and n.id in INTROSPECTION:
            return False
        if not (isinstance(n, ast.Name) and n.id == name):
            continue
        if not isinstance(n.ctx, ast.Load):
            return False  # rebound
        parent = module.parents.get(n)
        picked = parent.slice if isinstance(parent, ast.Subscript) and parent.value is n else None
        if not (isinstance(picked, ast.Constant) and type(picked.value) is int):
            return False
        position = picked.value + size if picked.value < 0 else picked.value
        if position == index or not 0 <= position < size:
            return False
    return True


def _never_reads(
    evaluator: Evaluator,
    ctx: Ctx,
    fn: Func,
    param: str,
    depth: int,
    element: tuple[int | str, int] | None = None,
) -> bool:
    """`fn`'s body never reads the value its parameter `param` comes in with (its element
    `index` of `size`, when `element` is given)."""
    node = fn.node
    if any(isinstance(n, ast.Name) and n.id in INTROSPECTION for n in ast.walk(node)):
        return False
    where = fn.ctx  # the body reads names where it is defined (maybe another module)
    if isinstance(node, ast.Lambda):
        return not _reads_in(evaluator, where, node.body, param, depth, element)
    return _scan_block(evaluator, where, node.body, param, depth, element) != "read"


def _scan_block(
    evaluator: Evaluator,
    ctx: Ctx,
    block: list[ast.stmt],
    name: str,
    depth: int,
    element: tuple[int | str, int] | None = None,
) -> str:
    """Whether a helper's statements read the value its parameter `name` came in with:
    "read", "gone" (a `return`/`raise`, or a rebinding on every way on, comes first) or "open" (not
    yet). A branch a literal test skips does not read; a read of only the value's
    metadata (`.shape`, `len()`, ...) or a hand-over to a helper that ignores it does
    not either. Any other mention counts (loops, undecided branches, closures)."""
    for stmt in block:
        if type(stmt) is ast.If:
            assert isinstance(stmt, ast.If)
            truth = constant_truth(stmt.test)
            if truth is not None:
                branch = stmt.body if truth else stmt.orelse
                status = _scan_block(evaluator, ctx, branch, name, depth, element)
                if status != "open":
                    return status
                continue
        if _reads_in(evaluator, ctx, stmt, name, depth, element):
            return "read"
        if always_exits(stmt, constant_truth) or binds_on_every_way_on(stmt, name):
            return "gone"  # returns or raises (also from a loop), or rebinds the name
    return "open"


def _reads_in(
    evaluator: Evaluator,
    ctx: Ctx,
    stmt: ast.AST,
    name: str,
    depth: int,
    element: tuple[int | str, int] | None = None,
) -> bool:
    module = ctx.module
    for n in ast.walk(stmt):
        if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
            continue
        parent = module.parents.get(n)
        if parent is None:
            return True
        if element is not None and _other_element(module, n, parent, *element):
            continue
        if metadata_only(module, n, parent):
            continue
        hand_over = passed_to(module, n)
        if hand_over is not None and ignored_by_callee(evaluator, ctx, *hand_over, depth + 1):
            continue
        if _into_unread_local(module, n):
            continue
        return True
    return False


def _other_element(
    module: ModuleInfo, n: ast.Name, parent: ast.AST, index: int | str, size: int
) -> bool:
    """A read of a tuple parameter that takes none of its element `index`: `ops[0]`, or
    `a, _ = ops` with the element's name never read; of a dict parameter (`index` a string
    key) that takes another constant key: `d["a"]`."""
    if isinstance(index, str):
        picked = parent.slice if isinstance(parent, ast.Subscript) else None
        return (
            isinstance(parent, ast.Subscript)
            and parent.value is n
            and isinstance(parent.ctx, ast.Load)
            and isinstance(picked, ast.Constant)
            and isinstance(picked.value, str)
            and picked.value != index
        )
    if isinstance(parent, ast.Subscript) and parent.value is n:
        picked = parent.slice
        if isinstance(picked, ast.Constant) and type(picked.value) is int:
            position = picked.value + size if picked.value < 0 else picked.value
            return 0 <= position < size and position != index
        return False
    names = unpacked_names(parent, n, size)
    if names is not None:
        return _never_loaded(module, names[index])
    return False


def unpacked_names(parent: ast.AST | None, value: ast.AST, size: int) -> list[ast.Name] | None:
    """The names of `a, b = value` when `parent` is such an assignment of `value` into
    exactly `size` plain names; else None."""
    if not (
        isinstance(parent, ast.Assign)
        and parent.value is value
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Tuple | ast.List)
        and len(parent.targets[0].elts) == size
    ):
        return None
    names = [e for e in parent.targets[0].elts if isinstance(e, ast.Name)]
    return names if len(names) == size else None


def _into_unread_local(module: ModuleInfo, n: ast.Name) -> bool:
    """`bias = b * 0.1` where the function never reads `bias`: the read goes nowhere. Only
    through operators, subscripts and jax.numpy calls (no call that may store it)."""
    node: ast.AST = n
    parent = module.parents.get(node)
    while isinstance(parent, ast.expr):
        if isinstance(parent, ast.Call):
            qual = module.qualname(parent.func) or ""
            if node is parent.func or not qual.startswith("jax.numpy."):
                return False
        elif isinstance(parent, ast.Lambda | ast.NamedExpr):
            return False
        node, parent = parent, module.parents.get(parent)
    if not (
        isinstance(parent, ast.Assign)
        and parent.value is node
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
    ):
        return False
    return _never_loaded(module, parent.targets[0])


def _never_loaded(module: ModuleInfo, target: ast.Name) -> bool:
    """Nothing in the function that binds `target` reads that name (nor declares it
    `global`/`nonlocal`, nor inspects its locals)."""
    fn = module.enclosing_function(target)
    if fn is None:
        return False
    for m in ast.walk(fn):
        if isinstance(m, ast.Name) and (
            m.id in INTROSPECTION or (m.id == target.id and isinstance(m.ctx, ast.Load))
        ):
            return False
        if isinstance(m, ast.Global | ast.Nonlocal) and target.id in m.names:
            return False
    return True
