"""Control flow read off the syntax (pallas_ls/core/flow.py), checked against what Python
itself does: each case runs the statement and looks at whether the name was bound, or
whether control got past it."""

from __future__ import annotations

import ast
import textwrap

import pytest

from pallas_ls.core.flow import always_exits, binds_on_every_way_on

# `c` is unknown to the analysis; each case is run with c = True and c = False.
BINDS = {
    "y = 1": True,
    "if True:\n    y = 1": True,
    "if False:\n    y = 1": False,
    "if c:\n    y = 1\nelse:\n    y = 2": True,
    "if c:\n    y = 1": False,
    'with open("/dev/null"):\n    y = 1': True,
    "try:\n    y = 1\nfinally:\n    pass": True,
    "for _ in range(2):\n    y = 1": True,
    "for _ in range(0):\n    y = 1": False,
    "for _ in (1, 2):\n    y = 1": True,
    "for _ in range(2):\n    if c:\n        continue\n    y = 1": False,
    "for _ in range(2):\n    if c:\n        break\n    y = 1": False,
    "for _ in range(2):\n    y = 1\n    break": True,
    "while True:\n    y = 1\n    break": True,
    "while True:\n    if c:\n        break\n    y = 1\n    break": False,
    "for _ in range(0):\n    pass\nelse:\n    y = 1": True,
    "for _ in range(2):\n    if c:\n        break\nelse:\n    y = 1": False,
    "for _ in range(2):\n    for _ in range(2):\n        break\n    y = 1": True,
}

EXITS = {
    "return": True,
    "for _ in range(2):\n    return": True,
    "for _ in range(0):\n    return": False,
    "while True:\n    return": True,
    "while True:\n    pass": True,
    "while True:\n    break": False,
    "while True:\n    if c:\n        break\n    pass": False,
    "for _ in range(2):\n    if c:\n        continue\n    return": False,
    "for _ in range(2):\n    for _ in range(2):\n        break\n    return": True,
    "for _ in range(2):\n    for _ in range(2):\n        return": True,
    "for _ in range(2):\n    break": False,
    "for _ in range(2):\n    if c:\n        return\n    else:\n        raise ValueError": True,
}


def _run(body: str, c: bool) -> tuple[bool, bool]:
    """(was `y` bound, did control get past the statement), running it for real. Endless
    loops are guarded by a step budget."""
    source = "def f(c):\n" + textwrap.indent(
        "steps = 0\n" + body.replace("pass", "steps += 1\n    if steps > 50: raise SystemExit"),
        "    ",
    )
    source += "\n    return ('y' in locals(), True)\n"
    namespace: dict[str, object] = {}
    exec(compile(source, "<case>", "exec"), namespace)
    try:
        got = namespace["f"](c)  # type: ignore[operator]
    except (ValueError, SystemExit):
        return False, False
    if got is None:
        return False, False  # returned early
    return got  # type: ignore[return-value]


def _stmt(body: str) -> ast.stmt:
    return ast.parse(body).body[0]


@pytest.mark.parametrize("body", sorted(BINDS))
def test_binds_on_every_way_on(body: str) -> None:
    expected = BINDS[body]
    assert binds_on_every_way_on(_stmt(body), "y") is expected
    if expected:
        # Sound: every run that gets past the statement has bound the name.
        for c in (True, False):
            bound, past = _run(body, c)
            assert bound or not past, (body, c)
    else:
        assert any(not _run(body, c)[0] and _run(body, c)[1] for c in (True, False)), body


@pytest.mark.parametrize("body", sorted(EXITS))
def test_always_exits(body: str) -> None:
    expected = EXITS[body]
    assert (
        always_exits(
            _stmt(body), lambda t: None if not isinstance(t, ast.Constant) else bool(t.value)
        )
        is expected
    )
    for c in (True, False):
        past = _run(body, c)[1]
        if expected:
            assert not past, (body, c)
    if not expected:
        assert any(_run(body, c)[1] for c in (True, False)), body
