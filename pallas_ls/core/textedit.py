"""Applying edits given in (line, code-point column) spans to source text."""

from __future__ import annotations

import collections
import re
import threading
from collections.abc import Iterable

from pallas_ls.core.model import Edit

# str.splitlines also breaks on \f, \v, \x1c-\x1e, \x85, \u2028 and \u2029; Python's
# tokenizer (and so ast's line numbers) and the LSP break only on \r\n, \r and \n.
_LINE_END = re.compile(r"\r\n|\r|\n")


_ASCII_EXOTIC = ("\x0c", "\x0b", "\x1c", "\x1d", "\x1e")
_WIDE_EXOTIC = ("\x85", "\u2028", "\u2029")


def _has_exotic_breaks(text: str) -> bool:
    # `in` is a fast C scan; one regex pass over the whole text costs ~10x more.
    if any(c in text for c in _ASCII_EXOTIC):
        return True
    return not text.isascii() and any(c in text for c in _WIDE_EXOTIC)


Lines = tuple[str, ...]


def split_lines(text: str) -> Lines:
    """Lines with their endings, split the way Python and the LSP count lines.

    The last few texts split are remembered by identity: the server and the engine ask
    about the same version of a document (to parse it, to convert positions, to apply the
    next edit), and each version is split once. The split is shared, so it is a tuple.
    """
    lines = _recent(text)
    if lines is None:
        lines = _remember(text, _split(text))
    return lines


def _recent(text: str) -> Lines | None:
    """The split of `text` if it is one of the last few split (see split_lines)."""
    key = id(text)
    with _RECENT_LOCK:
        hit = _RECENT.get(key)
        if hit is not None and hit[0] is text:
            _RECENT.move_to_end(key)
            return hit[1]
    return None


def _remember(text: str, lines: Lines) -> Lines:
    with _RECENT_LOCK:
        _RECENT[id(text)] = (text, lines)
        while len(_RECENT) > _RECENT_MAX:
            _RECENT.popitem(last=False)
    return lines


def _split(text: str) -> Lines:
    if not _has_exotic_breaks(text):
        return tuple(text.splitlines(keepends=True))
    out: list[str] = []
    pos = 0
    for match in _LINE_END.finditer(text):
        out.append(text[pos : match.end()])
        pos = match.end()
    if pos < len(text):
        out.append(text[pos:])
    return tuple(out)


_BLOCK = 16384


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix: block by block, then by bisection inside the first
    block that differs. Only C-speed slice comparisons, and no copy above two blocks."""
    n = min(len(a), len(b))
    lo = 0
    while lo + _BLOCK <= n and a[lo : lo + _BLOCK] == b[lo : lo + _BLOCK]:
        lo += _BLOCK
    hi = min(lo + _BLOCK, n)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: str, b: str) -> int:
    """Length of the common suffix, the same way from the ends (no reversed copies)."""
    n = min(len(a), len(b))
    la, lb = len(a), len(b)
    lo = 0
    while lo + _BLOCK <= n and a[la - lo - _BLOCK : la - lo] == b[lb - lo - _BLOCK : lb - lo]:
        lo += _BLOCK
    hi = min(lo + _BLOCK, n)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def split_lines_after(text: str, before: str, before_lines: Lines) -> Lines:
    """split_lines(text) for a new version of `before` (split as `before_lines`): the lines
    the two share at the start and at the end are the same string objects, only the lines
    between are split anew (an edit of a 5,000-line file: ~0.9 MB of new strings less).
    Texts with a line break other than \n and \r\n are split whole."""
    cached = _recent(text)
    if cached is not None:
        return cached
    if (
        not before_lines
        or _has_exotic_breaks(text)
        or text.count("\r") != text.count("\r\n")
        or before.count("\r") != before.count("\r\n")
        or _has_exotic_breaks(before)
    ):
        return split_lines(text)
    head = common_prefix(before, text)
    tail = min(common_suffix(before, text), min(len(before), len(text)) - head)
    # Whole lines of `before` whose \n lies in the common head; and, at the end, the lines
    # that start after a \n in the common tail (so they start a line in `text` too).
    first = before.count("\n", 0, head)
    last = before.count("\n", len(before) - tail, len(before) - 1) if tail else 0
    if first + last > len(before_lines):
        return split_lines(text)
    kept_head = before_lines[:first]
    kept_tail = before_lines[len(before_lines) - last :] if last else ()
    middle = text[sum(map(len, kept_head)) : len(text) - sum(map(len, kept_tail))]
    return _remember(text, kept_head + tuple(middle.splitlines(keepends=True)) + kept_tail)


# A document's current text and the one before it: a hit is worth ~0.2 ms and ~0.5 MB per
# 5,000 lines.
_RECENT: collections.OrderedDict[int, tuple[str, Lines]] = collections.OrderedDict()
_RECENT_MAX = 2
_RECENT_LOCK = threading.Lock()  # the server's loop and its analysis thread both split


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts; \\r\\n, \\r and \\n all end a line (as in the LSP)."""
    starts = [0]
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\r":
            if i + 1 < n and text[i + 1] == "\n":
                i += 1
            starts.append(i + 1)
        elif ch == "\n":
            starts.append(i + 1)
        i += 1
    return starts


def offset_of(starts: list[int], text: str, line: int, col: int) -> int:
    if line >= len(starts):
        return len(text)
    return min(starts[line] + col, len(text))


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits; raises ValueError if two edits overlap."""
    starts = line_starts(text)
    spans = sorted(
        (
            (
                offset_of(starts, text, e.span.start_line, e.span.start_col),
                offset_of(starts, text, e.span.end_line, e.span.end_col),
                e.new_text,
            )
            for e in edits
        ),
        key=lambda s: (s[0], s[1]),
    )
    out: list[str] = []
    pos = 0
    for start, end, new_text in spans:
        if start < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:start])
        out.append(new_text)
        pos = end
    out.append(text[pos:])
    return "".join(out)
