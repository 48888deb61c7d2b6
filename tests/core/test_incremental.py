"""Incremental re-parsing: after any sequence of edits, the parse and the findings equal a
from-scratch analysis of the same text."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pallas_ls.core import resolve, textedit
from pallas_ls.core.engine import _may_matter, analyse, parse_recovering
from pallas_ls.core.incremental import IncrementalModule
from pallas_ls.core.model import Config, Finding
from pallas_ls.core.textedit import split_lines
from tests.core.expectations import fixture_files

SEEDS = [p.read_text(encoding="utf-8") for p in fixture_files() if "xmod" not in p.parts]
SEEDS += [p.read_text(encoding="utf-8") for p in sorted(Path("examples").glob("*.py"))]
SNIPPETS = [
    "",
    "\n",
    "    ",
    "x",
    ")",
    "(",
    '"""',
    "#",
    ", opt_level=2",
    "opt_level=None",
    "precision=(P.DEFAULT, P.HIGHEST)",
    "def f():\n    pass\n",
    "@pl.when(True)\n",
    "import jax\n",
    "\\\n",
    "pltpu.CompilerParams(opt_level=3)",
    # rebinding module-level names that kernels in other statements read
    "MIXED = (P.HIGHEST, P.HIGHEST)\n",
    "MIXED = (P.DEFAULT, P.HIGH)\n",
    "def _helper(x, w, precision):\n    return x\n",
    "SHARED = None\n",
    "DN = None\n",
    "from jax.lax import Precision as P\n",
    "P = None\n",
    "lax = None\n",
    # what decides reachability: returns, literal and undecided tests, rebinding after use
    "    return o_ref[...]\n",
    "    return\n",
    "if True:\n",
    "if False:\n",
    "if x_ref.shape[0] == 8:\n",
    "kernel = plain_kernel\n",
    # the default matmul precision a conv given none takes where it is traced
    'TF32 = "float32"\n',
    '    with jax.default_matmul_precision("high"):\n',
    '@jax.default_matmul_precision("tensorfloat32")\n',
    "precision=None",
    # a kernel that returns what a helper returns
    "    return _store(x_ref, o_ref)\n",
    "    return y\n",
]


def _key(findings: list[Finding]) -> list[tuple[object, ...]]:
    return [(f.code, f.span, f.message, f.fixes, f.related) for f in findings]


def _edit(text: str, data: st.DataObject) -> str:
    lines = text.splitlines(keepends=True)
    kind = data.draw(st.sampled_from(["insert", "delete", "replace_line", "dup_line", "del_line"]))
    if kind in {"insert", "delete"} or not lines:
        pos = data.draw(st.integers(0, len(text)))
        if kind == "delete":
            end = data.draw(st.integers(pos, min(len(text), pos + 40)))
            return text[:pos] + text[end:]
        return text[:pos] + data.draw(st.sampled_from(SNIPPETS)) + text[pos:]
    i = data.draw(st.integers(0, len(lines) - 1))
    if kind == "replace_line":
        lines[i] = data.draw(st.sampled_from(SNIPPETS)) + "\n"
    elif kind == "dup_line":
        lines.insert(i, lines[i])
    else:
        del lines[i]
    return "".join(lines)


@settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(seed=st.sampled_from(SEEDS), data=st.data())
def test_edit_sequences_match_from_scratch(seed: str, data: st.DataObject) -> None:
    state = IncrementalModule("/virtual/k.py")
    text = seed
    config = Config()
    assert _key(analyse(text, "/virtual/k.py", config, state=state)) == _key(
        analyse(text, "/virtual/k.py", config)
    )
    for _ in range(data.draw(st.integers(1, 8))):
        text = _edit(text, data)
        incremental = analyse(text, "/virtual/k.py", config, state=state)
        scratch = analyse(text, "/virtual/k.py", config)
        assert _key(incremental) == _key(scratch), text
        fresh = parse_recovering(text, "/virtual/k.py")
        # A text the pre-check skips leaves the state as it was (nothing reads it then).
        if state.module is not None and fresh is not None and _may_matter(text, "/virtual/k.py"):
            assert state.module.lines == textedit._split(text)
            assert ast.dump(state.module.tree, include_attributes=True) == ast.dump(
                fresh.tree, include_attributes=True
            )


WRAPPED = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def body(x_ref, o_ref):
    o_ref[...] = x_ref[...]


BLOCK = 128  # the edit below re-reads this neighbour too
INTERPRET = True


def launch(kernel, x, level):
    params = pltpu.CompilerParams(opt_level=level)
    return pl.pallas_call(kernel, out_shape=x, compiler_params=params, interpret=INTERPRET)


def run(x):
    return launch(body, x, 2)(x)
"""


def test_a_wrappers_inputs_invalidate_its_callers() -> None:
    """`run` gives `launch` its opt_level. While interpret mode is on, `launch`'s kernel
    is decided without its callers; turning it off in another statement makes it depend
    on them, and changes neither `launch` nor `run`: the finding in `run` must appear
    all the same."""
    state = IncrementalModule("/virtual/k.py")
    config = Config()
    assert analyse(WRAPPED, "/virtual/k.py", config, state=state) == []
    edited = WRAPPED.replace("INTERPRET = True", "INTERPRET = False")
    incremental = analyse(edited, "/virtual/k.py", config, state=state)
    assert [(f.code, f.span.start_line) for f in incremental] == [("PAL001", 13)]  # opt_level=level
    assert _key(incremental) == _key(analyse(edited, "/virtual/k.py", config))
    back = analyse(WRAPPED, "/virtual/k.py", config, state=state)
    assert back == []


def test_typing_inside_a_function_reparses_only_that_statement() -> None:
    source = SEEDS[0]
    state = IncrementalModule("/virtual/k.py")
    state.update(source)
    lines = source.splitlines(keepends=True)
    target = next(i for i, line in enumerate(lines) if "opt_level=2" in line)
    lines[target] = lines[target].replace("opt_level=2", "opt_level=3")
    module = state.update("".join(lines))
    assert module is not None
    assert 0 < state.reparsed_lines < len(lines) // 4
    assert ast.dump(module.tree, include_attributes=True) == ast.dump(
        ast.parse("".join(lines)), include_attributes=True
    )


@settings(max_examples=300, deadline=None)
@given(
    a=st.text(alphabet="ab\n", max_size=40),
    edits=st.lists(
        st.tuples(st.integers(0, 40), st.integers(0, 2), st.sampled_from(["", "a", "b\n", "xy"])),
        max_size=3,
    ),
    block=st.sampled_from([1, 3, 16384]),
)
def test_common_prefix_and_suffix_match_a_plain_scan(
    a: str, edits: list[tuple[int, int, str]], block: int
) -> None:
    """The block-and-bisect comparisons that locate an edit agree with a character scan,
    whatever the block size (the server's is 16 KiB; small ones exercise the block loop)."""
    b = a
    for at, cut, text in edits:
        at = min(at, len(b))
        b = b[:at] + text + b[at + cut :]
    prefix = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    suffix = next(
        (i for i, (x, y) in enumerate(zip(a[::-1], b[::-1], strict=False)) if x != y), None
    )
    shortest = min(len(a), len(b))
    old = textedit._BLOCK
    textedit._BLOCK = block
    try:
        assert textedit.common_prefix(a, b) == (shortest if prefix is None else prefix)
        assert textedit.common_suffix(a, b) == (shortest if suffix is None else suffix)
    finally:
        textedit._BLOCK = old


@settings(max_examples=500, deadline=None)
@given(
    a=st.text(alphabet="ab\n", max_size=40).map(lambda t: t.replace("b\n", "b\r\n", 1)),
    edits=st.lists(
        st.tuples(
            st.integers(0, 40),
            st.integers(0, 3),
            st.sampled_from(["", "a", "b\n", "\n", "\n\n", "\r\n", "x\ny", "\r", "\x0c"]),
        ),
        max_size=3,
    ),
)
def test_a_split_after_an_edit_equals_a_whole_split(
    a: str, edits: list[tuple[int, int, str]]
) -> None:
    b = a
    for at, cut, text in edits:
        at = min(at, len(b))
        b = b[:at] + text + b[at + cut :]
    a, b = a + "", b + ""  # new objects: the split cache is keyed by identity
    assert textedit.split_lines_after(b, a, textedit._split(a)) == textedit._split(b), (a, b)


def test_a_split_after_an_edit_shares_the_unchanged_lines() -> None:
    before = "".join(f"line {i}\n" for i in range(100))
    old = textedit._split(before)
    after = before.replace("line 50\n", "line 50 edited\nand one more\n")
    new = textedit.split_lines_after(after, before, old)
    assert new == textedit._split(after)
    assert all(x is y for x, y in zip(new[:50], old[:50], strict=True))
    assert all(x is y for x, y in zip(new[-49:], old[-49:], strict=True))
    assert new[50] is not old[50]


def test_recovering_from_a_syntax_error_leaves_the_shared_line_split_intact() -> None:
    """split_lines hands the same split to every caller asking about one text (so it is a
    tuple); the recovery blanks statements in a list of its own (it once blanked the shared
    list, and the server then converted positions, and parsed the next edit, against
    blanked lines)."""
    source = (
        "from jax.experimental import pallas as pl\n\n"
        "def broken(:\n    pass\n\n"
        "def run(x):\n    return pl.pallas_call(run, out_shape=x)(x)\n"
    )
    assert isinstance(split_lines(source), tuple)
    analyse(source, "m.py")
    assert split_lines(source) == tuple(source.splitlines(keepends=True))


DELEGATING = """\
from jax import lax
from jax.experimental import pallas as pl


def _store(o_ref, y):
    o_ref[...] = y


def kernel(x_ref, w_ref, o_ref):
    return _store(o_ref, lax.conv(x_ref[...], w_ref[...], (1, 1), "SAME", precision="high"))


def run(x, w):
    return pl.pallas_call(kernel, out_shape=x)(x, w)
"""


def test_a_helper_the_kernel_returns_invalidates_the_kernel() -> None:
    """`return _store(...)`: the kernel returns None while `_store` does. Once `_store`
    returns a value (an edit in another statement), JAX fails before lowering and the
    finding must go, in the incremental analysis as from scratch."""
    state = IncrementalModule("/virtual/k.py")
    config = Config()
    first = analyse(DELEGATING, "/virtual/k.py", config, state=state)
    assert [f.code for f in first] == ["PAL003"]
    edited = DELEGATING.replace("    o_ref[...] = y\n", "    o_ref[...] = y\n    return y\n")
    assert analyse(edited, "/virtual/k.py", config, state=state) == []
    assert analyse(edited, "/virtual/k.py", config) == []
    assert [f.code for f in analyse(DELEGATING, "/virtual/k.py", config, state=state)] == ["PAL003"]


HANDED_OVER = """\
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def launch(pipeline, x_hbm, o_hbm):
    pltpu.sync_copy(x_hbm, o_hbm)


def body(x_ref, o_ref):
    o_ref[...] = lax.conv(x_ref[...], x_ref[...], (1, 1), "SAME", precision="high")


def kernel(x_hbm, o_hbm):
    pipeline = pltpu.emit_pipeline(body, grid=(1,))
    launch(pipeline, x_hbm, o_hbm)


def run(x):
    return pl.pallas_call(kernel, out_shape=x)(x)
"""


def test_a_helper_a_pipeline_is_handed_to_invalidates_the_kernel() -> None:
    """`launch(pipeline, ...)` never reads `pipeline`, so the body is never traced. Once
    `launch` runs it (an edit in another statement), the conv is reached and reported, in
    the incremental analysis as from scratch; undoing the edit removes it again."""
    state = IncrementalModule("/virtual/k.py")
    config = Config()
    assert analyse(HANDED_OVER, "/virtual/k.py", config, state=state) == []
    edited = HANDED_OVER.replace(
        "    pltpu.sync_copy(x_hbm, o_hbm)\n", "    pipeline(x_hbm, o_hbm)\n"
    )
    assert [f.code for f in analyse(edited, "/virtual/k.py", config, state=state)] == ["PAL003"]
    assert [f.code for f in analyse(edited, "/virtual/k.py", config)] == ["PAL003"]
    assert analyse(HANDED_OVER, "/virtual/k.py", config, state=state) == []


CONFIGURED = """\
import dataclasses
import functools

from jax import lax
from jax.experimental import pallas as pl


@dataclasses.dataclass(frozen=True)
class Config:
    layers: int = 0


def kernel(x_ref, w_ref, o_ref, *, cfg):
    h = x_ref[...]
    for _ in range(cfg.layers):
        h = lax.conv(h, w_ref[...], (1, 1), "SAME", precision="high")
    o_ref[...] = h


def run(x, w):
    return pl.pallas_call(functools.partial(kernel, cfg=Config()), out_shape=x)(x, w)
"""


def test_a_dataclass_default_invalidates_the_kernel_that_reads_it() -> None:
    """`range(cfg.layers)` with `layers: int = 0`: the loop never runs. Editing the class's
    default (another statement) to 2 makes the conv run, in the incremental analysis as
    from scratch; undoing it removes the finding again."""
    state = IncrementalModule("/virtual/k.py")
    config = Config()
    assert analyse(CONFIGURED, "/virtual/k.py", config, state=state) == []
    edited = CONFIGURED.replace("layers: int = 0", "layers: int = 2")
    assert [f.code for f in analyse(edited, "/virtual/k.py", config, state=state)] == ["PAL003"]
    assert [f.code for f in analyse(edited, "/virtual/k.py", config)] == ["PAL003"]
    assert analyse(CONFIGURED, "/virtual/k.py", config, state=state) == []


def _past_256(tree: ast.AST) -> list[ast.AST]:
    """The nodes past line 256 that the build links (not, e.g., parameter annotations)."""
    return [
        n for n in ast.walk(tree) if getattr(n, "lineno", 0) > 256 and "_pl_parent" in n.__dict__
    ]


def test_a_kept_tree_shares_its_line_numbers() -> None:
    """The server keeps a document's tree: the line numbers past 256 of the nodes the build
    links are shared int objects (the parser makes two new ones a node), on open and after
    an edit's partial re-parse; a tree checked and dropped (`parse_module` alone) is left
    as parsed."""
    path = Path(__file__).parent / "fixtures" / "pal002_negative.py"
    source = path.read_text(encoding="utf-8")
    shared = resolve._LINE_INTS
    state = IncrementalModule(str(path))
    for text in (source, source.replace("\n\n\n", "\n\n\n# edited\n\n\n", 1)):
        want = analyse(text, str(path))
        assert analyse(text, str(path), state=state) == want
        assert state.module is not None
        nodes = _past_256(state.module.tree)
        assert nodes
        for node in nodes:
            assert node.lineno is shared[node.lineno], ast.dump(node)  # type: ignore[attr-defined]
            assert node.end_lineno is shared[node.end_lineno], ast.dump(node)  # type: ignore[attr-defined]
    assert state.reparsed_lines < len(split_lines(source)), "the edit was re-parsed in part"
    module = resolve.parse_module(source, str(path))
    assert module is not None
    assert any(n.lineno is not shared[n.lineno] for n in _past_256(module.tree))  # type: ignore[attr-defined]
