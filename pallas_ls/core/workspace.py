"""What the analysis may know beyond one file: other workspace modules and the JAX version.

Files are only read, never imported or executed. The server gives an overlay so that
unsaved editor buffers win over the disk.
"""

from __future__ import annotations

import os
from collections.abc import Callable


class Workspace:
    def __init__(
        self,
        root: str | None = None,
        overlay: Callable[[str], str | None] | None = None,
        environment: str | None = None,
    ) -> None:
        self.root = os.path.abspath(root) if root else None
        self._overlay = overlay
        self.environment = environment
        self._generation: dict[str, int] = {}

    def read_source(self, path: str) -> str | None:
        if self._overlay is not None:
            text = self._overlay(path)
            if text is not None:
                return text
        try:
            with open(path, "rb") as handle:
                data = handle.read(2_000_000)
        except OSError:
            return None
        from pallas_ls.core.sourcefile import decode_source

        try:
            return decode_source(data)
        except ValueError:
            return None

    def invalidate(self, path: str) -> None:
        """Another file changed: drop anything cached about it."""
        key = os.path.abspath(path)
        self._generation[key] = self._generation.get(key, 0) + 1
