"""The analysis: source text in, findings (with fixes and evidence) out. No LSP imports here.

`analyse` and `hover_at` are loaded on first use, so that importing the model (as the
server does at start-up) does not import the whole engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pallas_ls.core.model import Config, Edit, Finding, Fix, Related, Span

if TYPE_CHECKING:
    from pallas_ls.core.engine import analyse, hover_at

__all__ = ["Config", "Edit", "Finding", "Fix", "Related", "Span", "analyse", "hover_at"]


def __getattr__(name: str) -> Any:
    if name in ("analyse", "hover_at"):
        from pallas_ls.core import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
