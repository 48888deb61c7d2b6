"""Long files are parsed in pieces (less peak memory); the tree must be the very tree a
whole-file parse gives, or the pieces must give up and let the whole file be parsed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pallas_ls.core import resolve
from pallas_ls.core.engine import analyse
from pallas_ls.core.textedit import split_lines

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "tests" / "core" / "fixtures").rglob("*.py")) + sorted(
    (ROOT / "examples").rglob("*.py")
)
TRAPS = {
    "string": 'x = """\n\ndef not_code():\n    pass\n"""\n\ndef f():\n    return x\n',
    "brackets": "m = 2\nx = [\n1\n\n@ m]\n\ndef f():\n    pass\n",  # 1 @ m, a matmul
    "decorator": "@functools.cache\n\ndef f():\n    pass\n\n@dec\ndef g():\n    pass\n",
    "continuation": "x = 1 + \\\n\\\n2\n\ndef f():\n    pass\n",
    "else": "if x:\n    pass\n\nelse:\n    pass\n\ndef f():\n    pass\n",
    "crlf": "import jax\r\n\r\ndef f():\r\n    pass\r\n\r\nclass C:\r\n    pass\r\n",
    "formfeed": "import jax\n\x0c\ndef f():\n    pass\n\n\x0cclass C:\n    pass\n",
}


def whole(text: str) -> str:
    return ast.dump(ast.parse(text), include_attributes=True)


@pytest.fixture
def tiny_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resolve, "PIECE_LINES", 2)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_pieces_give_the_whole_file_tree(path: Path, tiny_pieces: None) -> None:
    text = path.read_text(encoding="utf-8")
    tree = resolve._parse_in_pieces(split_lines(text), str(path))
    if len(split_lines(text)) < 4:
        assert tree is None  # too short to cut
        return
    assert tree is not None, "these files cut cleanly"
    assert ast.dump(tree, include_attributes=True) == whole(text)


@pytest.mark.parametrize("name", sorted(TRAPS))
def test_a_bad_cut_falls_back_to_the_whole_parse(name: str, tiny_pieces: None) -> None:
    text = TRAPS[name]
    tree = resolve._parse_in_pieces(split_lines(text), None)
    if tree is not None:
        assert ast.dump(tree, include_attributes=True) == whole(text)
    module = resolve.parse_module(text, None, lines=split_lines(text))
    assert module is not None
    assert ast.dump(module.tree, include_attributes=True) == whole(text)


def test_findings_do_not_depend_on_the_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        monkeypatch.setattr(resolve, "PIECE_LINES", 10**9)
        want = [(f.code, f.span) for f in analyse(text, str(path))]
        monkeypatch.setattr(resolve, "PIECE_LINES", 3)
        assert [(f.code, f.span) for f in analyse(text, str(path))] == want, path.name
