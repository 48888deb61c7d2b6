"""The scope build links every node of a module to its parent: the fast path over
expression nodes (`_PLAIN_FIELDS` in resolve.py) must miss no child."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pallas_ls.core.resolve import _END_NODES, _LEAVES, _PLAIN_FIELDS, ModuleInfo
from tests.core.expectations import fixture_files

# Every kind of node the fast path handles, and the statements that hold them.
EVERY_SHAPE = """
import jax
from jax import lax as L

async def f(a, *args, b=1, **kw):
    x = a[1:2:3], a[::], a[lo:], {**kw, "k": -a}, {1, 2}, [*args], (a if b else not a)
    y = f"{a!r:>{b}}" f"{x}" and a or b
    z = lambda q=1: q + 1
    assert a < b <= 3, "msg"
    while a:
        break
    else:
        pass
    try:
        raise ValueError(a) from None
    except (ValueError, TypeError) as e:
        continue_ = e
    else:
        pass
    finally:
        await f(a)
    with open(a) as h, open(b):
        del h
    for i in [j async for j in args if j]:
        yield i
    if (n := 3) > 2:
        return [k for k in range(n)]
    match a:
        case [1, *rest] if rest:
            pass
        case {"k": v, **others}:
            pass
        case L.Point(x=0) | None:
            pass
    global G
    return (yield from args)

class C(jax.Array, metaclass=type):
    attr: int = 3
    def m(self) -> "C":
        nonlocal_ = [self.attr for _ in range(2)]
        return nonlocal_
"""


def _sources() -> list[tuple[str, str]]:
    out = [("every-shape", EVERY_SHAPE)]
    out += [(p.name, p.read_text(encoding="utf-8")) for p in fixture_files()]
    out += [(p.name, p.read_text(encoding="utf-8")) for p in sorted(Path("examples").glob("*.py"))]
    return out


@pytest.mark.parametrize(("name", "source"), _sources(), ids=[n for n, _ in _sources()])
def test_every_node_is_linked_to_its_parent(name: str, source: str) -> None:
    """Children of the fast path's nodes link to that very node; every other node links to
    one of its ancestors (a default value links to its function, for instance). Left
    unlinked: the keyword nodes of a class header (their values link to the class) and a
    lambda's parameters (nothing looks them up)."""
    tree = ast.parse(source)
    module = ModuleInfo(tree, source)
    ancestors: dict[int, list[ast.AST]] = {id(tree): []}
    checked = 0
    for parent in ast.walk(tree):  # breadth first: a parent's chain is known before its children's
        for child in ast.iter_child_nodes(parent):
            ancestors[id(child)] = [parent, *ancestors[id(parent)]]
            if type(child) in _LEAVES:
                continue
            linked = module.parents.get(child)
            if isinstance(parent, ast.ClassDef) and isinstance(child, ast.keyword):
                continue
            if isinstance(child, ast.arg) and isinstance(ancestors[id(parent)][0], ast.Lambda):
                continue
            class_keyword = isinstance(parent, ast.keyword) and isinstance(
                ancestors[id(parent)][0], ast.ClassDef
            )
            if type(parent) in _PLAIN_FIELDS and not class_keyword:
                assert linked is parent, (name, ast.dump(child)[:80])
                checked += 1
            else:
                assert any(linked is a for a in ancestors[id(child)]), (name, ast.dump(child)[:80])
            if type(child) in _PLAIN_FIELDS:
                # a name or constant linked by the loop takes its parent's scope (scope_of)
                holder = child
                if "_pl_scope" not in child.__dict__ and type(child) in _END_NODES and linked:
                    holder = linked
                assert "_pl_scope" in holder.__dict__, (name, ast.dump(child)[:80])
                assert module.scope_of(child) is holder.__dict__["_pl_scope"]
    if name == "every-shape":
        assert checked > 50  # the fast path really ran over every shape (86 links)


def test_plain_field_table_names_every_child_field() -> None:
    """A field left out of the table may hold only names, strings, constants or the
    shared context/operator singletons."""
    not_nodes = {"id", "ctx", "value", "kind", "attr", "arg", "op", "ops", "conversion"}
    for kind, fields in _PLAIN_FIELDS.items():
        named = [name for name, _ in fields]
        assert named == [f for f in kind._fields if f in named], kind  # _fields order
        left_out = set(kind._fields) - set(named)
        assert left_out <= not_nodes, (kind.__name__, left_out)
        if kind is not ast.Constant:
            assert "value" not in left_out, kind.__name__
