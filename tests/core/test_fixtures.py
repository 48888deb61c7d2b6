"""Every fixture's findings equal its inline expectations; every fix round-trips."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from pallas_ls.core.engine import analyse
from pallas_ls.core.model import Config, Finding
from pallas_ls.core.textedit import apply_edits, line_starts, offset_of
from pallas_ls.core.workspace import Workspace
from tests.core.expectations import FIXTURES, expected_findings, fixture_files

LATEST = Config()


def _analyse(path: Path, source: str | None = None) -> list[Finding]:
    text = path.read_text(encoding="utf-8") if source is None else source
    return analyse(text, str(path), LATEST, Workspace(str(path.parent)))


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_findings_match_expectations(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    got = Counter((f.span.start_line, f.code) for f in _analyse(path))
    want = expected_findings(source)
    missing = want - got
    unexpected = got - want
    assert not missing and not unexpected, (
        f"missing (line+1, code): {sorted((ln + 1, c) for ln, c in missing)}; "
        f"unexpected: {sorted((ln + 1, c) for ln, c in unexpected)}"
    )


def _outside_edits_unchanged(before: str, after: str, finding: Finding, fix_index: int) -> None:
    """Every byte outside the fix's edits is unchanged."""
    edits = sorted(
        finding.fixes[fix_index].edits, key=lambda e: (e.span.start_line, e.span.start_col)
    )
    starts = line_starts(before)
    pos = 0
    rebuilt_parts = []
    for e in edits:
        s = offset_of(starts, before, e.span.start_line, e.span.start_col)
        t = offset_of(starts, before, e.span.end_line, e.span.end_col)
        rebuilt_parts.append(before[pos:s])
        rebuilt_parts.append(e.new_text)
        pos = t
    rebuilt_parts.append(before[pos:])
    assert "".join(rebuilt_parts) == after
    # and the untouched prefix/suffix really are byte-identical
    first = offset_of(starts, before, edits[0].span.start_line, edits[0].span.start_col)
    last = offset_of(starts, before, edits[-1].span.end_line, edits[-1].span.end_col)
    assert after.startswith(before[:first])
    assert after.endswith(before[last:])


def _fix_cases() -> list[tuple[Path, int, int]]:
    cases = []
    for path in fixture_files():
        for i, finding in enumerate(_analyse(path)):
            for j in range(len(finding.fixes)):
                cases.append((path, i, j))
    return cases


@pytest.mark.parametrize(
    ("path", "finding_index", "fix_index"),
    _fix_cases(),
    ids=lambda v: v.name if isinstance(v, Path) else str(v),
)
def test_fix_round_trip(path: Path, finding_index: int, fix_index: int) -> None:
    source = path.read_text(encoding="utf-8")
    before = _analyse(path, source)
    finding = before[finding_index]
    fix = finding.fixes[fix_index]
    fixed = apply_edits(source, fix.edits)
    assert fixed != source
    ast.parse(fixed)  # the fixed file parses
    _outside_edits_unchanged(source, fixed, finding, fix_index)
    after = _analyse(path, fixed)
    # The fixed finding is gone and nothing new appears. Other findings may move by the
    # lines the fix removed, so compare codes and messages; a fix may clear more than its own
    # finding (the other arm of a conditional is no longer provably set).
    key = lambda f: (f.code, f.message.split(" at line ")[0])  # noqa: E731
    remaining = Counter(key(f) for f in after)
    previous = Counter(key(f) for f in before)
    previous[key(finding)] -= 1
    assert not (remaining - previous), [f.message for f in after]
    assert len(after) < len(before)


def test_every_finding_has_a_preferred_fix_and_evidence() -> None:
    for path in fixture_files():
        for finding in _analyse(path):
            if finding.fixes:
                assert sum(f.preferred for f in finding.fixes) == 1, finding
            assert finding.related, finding
            assert finding.record_id


def test_fixture_dir_is_not_empty() -> None:
    assert len(fixture_files()) >= 4


def test_a_finding_in_a_helper_shows_the_way_from_the_kernel() -> None:
    """The related information walks from the pallas_call to the helper: the site's
    evidence first, then one entry per call on the way (built when the finding is)."""
    path = FIXTURES / "pal002_positive.py"
    lines = path.read_text(encoding="utf-8").splitlines()
    helper_line = next(i for i, t in enumerate(lines) if t.startswith("def _helper"))
    finding = next(f for f in _analyse(path) if f.span.start_line == helper_line + 1)
    related = [
        (r.message.split(" (")[0], lines[r.span.start_line].strip()) for r in finding.related
    ]
    assert related == [
        (
            "kernel `helper_kernel` enters pl.pallas_call here",
            "pl.pallas_call(helper_kernel, out_shape=out)(x, w)",
        ),
        (
            "reaches `_helper` here",
            "o_ref[...] = _helper(x_ref[...], w_ref[...], (P.HIGHEST, P.DEFAULT))",
        ),
    ]
