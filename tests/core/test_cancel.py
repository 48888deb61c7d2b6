"""Cancelling an analysis midway (the server does when the text changes) raises
AnalysisCancelled and leaves the document's caches usable: the next analysis equals a
from-scratch one."""

from __future__ import annotations

from pathlib import Path

import pytest

from pallas_ls.core.engine import analyse
from pallas_ls.core.incremental import IncrementalModule
from pallas_ls.core.model import AnalysisCancelled

FIXTURES = Path(__file__).parent / "fixtures"
SOURCE = (FIXTURES / "pal001_positive.py").read_text(encoding="utf-8")
CONV = (FIXTURES / "pal002_positive.py").read_text(encoding="utf-8")


def key(findings: list) -> list:  # type: ignore[type-arg]
    return sorted((f.code, f.span) for f in findings)


class CancelAfter:
    """Says 'cancelled' from its n-th poll on; counts the polls."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.polls = 0

    def __call__(self) -> bool:
        self.polls += 1
        return self.polls > self.n


def test_cancelled_from_the_start_raises() -> None:
    with pytest.raises(AnalysisCancelled):
        analyse(SOURCE, "/nowhere/a.py", cancelled=lambda: True)


def test_never_cancelled_polls_and_finishes() -> None:
    poll = CancelAfter(10**9)
    assert key(analyse(SOURCE, "/nowhere/a.py", cancelled=poll)) == key(
        analyse(SOURCE, "/nowhere/a.py")
    )
    assert poll.polls > 3  # after the parse, per site, per rule


@pytest.mark.parametrize(
    ("first", "second"), [(SOURCE, CONV), (CONV, SOURCE), (SOURCE, SOURCE + "\n# edit\n")]
)
def test_cancelled_at_any_point_leaves_the_state_consistent(first: str, second: str) -> None:
    n = 0
    while True:  # cancel at the 1st, 2nd, ... poll until the analysis polls no more
        state = IncrementalModule("/nowhere/a.py")
        analyse(first, "/nowhere/a.py", state=state)
        try:
            analyse(second, "/nowhere/a.py", state=state, cancelled=CancelAfter(n))
            finished = True
        except AnalysisCancelled:
            finished = False
        # Whatever was interrupted, the next analyses are right.
        assert key(analyse(second, "/nowhere/a.py", state=state)) == key(
            analyse(second, "/nowhere/a.py")
        )
        assert key(analyse(first, "/nowhere/a.py", state=state)) == key(
            analyse(first, "/nowhere/a.py")
        )
        if finished:
            break
        n += 1
    assert n >= 2  # it was cancelled at two points at least
