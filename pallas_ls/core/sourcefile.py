"""Reading Python source bytes the way Python does (PEP 263 cookies, BOM)."""

from __future__ import annotations

import io
import tokenize


def decode_source(data: bytes) -> str:
    """Decode bytes as Python would; raises ValueError on an unknown codec or bad bytes."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise ValueError(str(exc)) from exc
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise ValueError(f"cannot decode as {encoding}: {exc}") from exc
    return text[1:] if text.startswith("\ufeff") else text
