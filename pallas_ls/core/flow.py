"""Python control flow read off the syntax: which loops run, which statements always leave
their block, which bind a name on every way through. Shared by the evaluator (which
binding of a name reaches a read), reachability (which code runs when a kernel is traced)
and the conv rule's liveness (which reads can see a value)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

# Decides an `if` test where it can: True, False, or None (unknown).
Truth = Callable[[ast.expr], "bool | None"]
LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While})
EXITS = frozenset({ast.Return, ast.Raise, ast.Continue, ast.Break})
RETURNS = frozenset({ast.Return, ast.Raise})
ENDS_ITERATION = frozenset({ast.Return, ast.Raise, ast.Break})
_JUMPS = frozenset({ast.Continue, ast.Break})
_OTHER_CODE = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})


def constant_truth(test: ast.expr) -> bool | None:
    """The truth of a test written as a literal (`if True:`, `if 0:`), else None."""
    return bool(test.value) if type(test) is ast.Constant else None


def literal_int(expr: ast.expr) -> int | None:
    """`1`, `-1` (a unary minus on a literal int)."""
    sign = 1
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        sign, expr = -1, expr.operand
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return sign * expr.value
    return None


def own_jump(stmts: Iterable[ast.stmt], jumps: frozenset[type]) -> bool:
    """The statements hold one of `jumps` that leaves them: a `break`/`continue` of the
    loop around them (not of a loop inside), a `return`/`raise` anywhere but in a def."""
    stack: list[ast.AST] = list(stmts)
    inner = jumps & RETURNS
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in jumps:
            return True
        if kind in _OTHER_CODE:
            continue
        if kind in LOOPS:
            loop: Any = node
            if inner and own_jump(loop.body, inner):
                return True
            stack.extend(loop.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def breaks_out(body: list[ast.stmt]) -> bool:
    """A `break` of this loop's own in its body (not in a nested loop or function)."""
    return own_jump(body, frozenset({ast.Break}))


def runs_at_least_once(loop: ast.stmt, truth: Truth = constant_truth) -> bool:
    """A `for` over a non-empty literal tuple or list or a `range` of literal ints, or a
    `while` whose test is true: the body runs at least once."""
    if type(loop) is ast.While:
        return truth(loop.test) is True
    if type(loop) is not ast.For:
        return False
    items = loop.iter
    if isinstance(items, ast.Tuple | ast.List):
        return bool(items.elts) and not any(isinstance(e, ast.Starred) for e in items.elts)
    if not (
        isinstance(items, ast.Call)
        and isinstance(items.func, ast.Name)
        and items.func.id == "range"
        and not items.keywords
        and 1 <= len(items.args) <= 3
    ):
        return False
    bounds = [literal_int(a) for a in items.args]
    if None in bounds or (len(bounds) == 3 and bounds[2] == 0):
        return False
    return len(range(*bounds)) > 0  # type: ignore[arg-type]


def must_bind(
    stmt: ast.stmt, name: str, truth: Truth = constant_truth, in_loop: bool = False
) -> bool:
    """Whether every way through a compound statement that goes on to the next one binds
    `name` (`if c: k = a` / `else: k = b`; a `with` or `try` body that binds it; a
    `match` whose cases all do, the last one `case _`; a loop whose body runs at least
    once and binds it before any `break` or `continue`, or that never breaks and whose
    `else` binds it). `in_loop`: `stmt` is in a loop body this question is about, so a
    `break` or `continue` leaves without binding."""
    kind = type(stmt)
    if kind in LOOPS:
        if runs_at_least_once(stmt, truth) and block_binds(stmt.body, name, truth, True):  # type: ignore[attr-defined]
            return True
        return not breaks_out(stmt.body) and block_binds(stmt.orelse, name, truth, in_loop)  # type: ignore[attr-defined]
    if kind is ast.If:
        assert isinstance(stmt, ast.If)
        body = block_binds(stmt.body, name, truth, in_loop)
        orelse = block_binds(stmt.orelse, name, truth, in_loop)
        if body == orelse:
            return body
        taken = truth(stmt.test)
        if taken is not None:  # `if True:` runs its body, `if False:` its else
            return body if taken else orelse
        return False
    if kind is ast.With or kind is ast.AsyncWith:
        return block_binds(stmt.body, name, truth, in_loop)  # type: ignore[attr-defined]
    if kind is ast.Try:
        assert isinstance(stmt, ast.Try)
        return block_binds(stmt.finalbody, name, truth, in_loop) or (
            block_binds(stmt.body, name, truth, in_loop)
            and all(block_binds(h.body, name, truth, in_loop) for h in stmt.handlers)
        )
    if kind is ast.Match:
        assert isinstance(stmt, ast.Match)
        last = stmt.cases[-1].pattern if stmt.cases else None
        irrefutable = type(last) is ast.MatchAs and last.pattern is None
        return irrefutable and all(block_binds(c.body, name, truth, in_loop) for c in stmt.cases)
    return False


def binds_on_every_way_on(stmt: ast.stmt, name: str, truth: Truth = constant_truth) -> bool:
    """Whether every way from `stmt` to the statement after it binds `name` (or none goes
    on: it returns or raises)."""
    return block_binds([stmt], name, truth)


def block_binds(
    block: list[ast.stmt], name: str, truth: Truth = constant_truth, in_loop: bool = False
) -> bool:
    """A block binds `name`, or leaves (return, raise, ...) before it ends."""
    for stmt in block:
        kind = type(stmt)
        if kind in EXITS:
            return not in_loop or kind is ast.Return or kind is ast.Raise
        if kind is ast.Assign and any(
            type(t) is ast.Name and t.id == name
            for t in stmt.targets  # type: ignore[attr-defined]
        ):
            return True
        if kind is ast.AnnAssign and stmt.value is not None:  # type: ignore[attr-defined]
            target = stmt.target  # type: ignore[attr-defined]
            if type(target) is ast.Name and target.id == name:
                return True
        if (kind is ast.FunctionDef or kind is ast.ClassDef) and stmt.name == name:  # type: ignore[attr-defined]
            return True
        if must_bind(stmt, name, truth, in_loop):
            return True
        if in_loop and own_jump([stmt], _JUMPS):
            return False  # a way to the next iteration, or out, that does not bind
    return False


def always_exits(
    stmt: ast.stmt,
    truth: Callable[[ast.expr], bool | None],
    exits: frozenset[type] = EXITS,
) -> bool:
    """Whether `stmt` always leaves its block: return, raise, continue, break (the `exits`
    that count), or an `if`/`with`/`try` all of whose ways out do, or a loop that leaves
    for good (an endless `while True:` with no `break`; a loop that runs at least once
    and whose body always returns or raises). `truth` decides an `if` test (None:
    unknown, both branches must leave)."""
    kind = type(stmt)
    if kind in exits:
        return True
    if kind is ast.Assert:
        return truth(stmt.test) is False  # type: ignore[attr-defined]  # `assert False`: raises
    if kind is ast.If:
        assert isinstance(stmt, ast.If)
        t = truth(stmt.test)
        body = block_exits(stmt.body, truth, exits)
        orelse = block_exits(stmt.orelse, truth, exits)
        return body if t is True else orelse if t is False else body and orelse
    if kind is ast.With or kind is ast.AsyncWith:
        return block_exits(stmt.body, truth, exits)  # type: ignore[attr-defined]
    if kind is ast.Try:
        assert isinstance(stmt, ast.Try)
        if block_exits(stmt.finalbody, truth, exits):
            return True
        return block_exits(stmt.body, truth, exits) and all(
            block_exits(h.body, truth, exits) for h in stmt.handlers
        )
    if kind in LOOPS:
        loop: Any = stmt
        if kind is ast.While and truth(loop.test) is True and not breaks_out(loop.body):
            return True  # endless, or left by a return or raise
        return runs_at_least_once(loop, truth) and block_exits(loop.body, truth, RETURNS)
    return False


def block_exits(
    block: list[ast.stmt], truth: Callable[[ast.expr], bool | None], exits: frozenset[type]
) -> bool:
    """A block that always leaves through one of `exits` before it ends. In a loop body
    asked about returns (or breaks) only, a `break` or `continue` that may come first
    (`if c: continue`) is another way out."""
    others = EXITS - exits
    for stmt in block:
        if always_exits(stmt, truth, exits):
            return True
        if others and own_jump([stmt], others):
            return False
    return False
