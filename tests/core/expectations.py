"""Inline expectations in fixture files: `# expect: PAL001 PAL002` on the line a finding starts."""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*((?:PAL\d{3}\s*)+)")


def expected_findings(source: str) -> Counter[tuple[int, str]]:
    """(0-based line, code) -> how many findings should start on that line."""
    out: Counter[tuple[int, str]] = Counter()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            match = EXPECT.search(tok.string)
            if match:
                for code in match.group(1).split():
                    out[(tok.start[0] - 1, code)] += 1
    return out


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.rglob("*.py"))
