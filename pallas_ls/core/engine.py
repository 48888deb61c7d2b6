"""analyse(source) -> findings; hover_at(source, position) -> hover text."""

from __future__ import annotations

from pallas_ls.core.model import Config, Finding, HoverInfo
from pallas_ls.core.workspace import Workspace


def analyse(
    source: str,
    path: str | None = None,
    config: Config | None = None,
    workspace: Workspace | None = None,
) -> list[Finding]:
    return []


def hover_at(
    source: str,
    line: int,
    col: int,
    path: str | None = None,
    config: Config | None = None,
    workspace: Workspace | None = None,
) -> HoverInfo | None:
    return None
