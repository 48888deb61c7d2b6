"""Names imported from other modules of the workspace, resolved with jedi.

jedi only reads files (it never imports the user's code). A result is cached by the
importing file's text and the import's position, and the target module's parse by its text,
so an edit to either file invalidates what depends on it.
"""

from __future__ import annotations

import hashlib
import logging
import os
from typing import Any

from pallas_ls.core.resolve import ImportBinding, ModuleInfo, parse_module
from pallas_ls.core.workspace import Workspace

log = logging.getLogger(__name__)
MAX_CACHE = 512


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def workspace_module(head: str, path: str | None, workspace: Workspace | None) -> bool:
    """Whether a top-level module name is a package or module of the workspace: in its
    root or beside the importing file."""
    roots = {os.path.dirname(path or "")}
    if workspace is not None and workspace.root:
        roots.add(workspace.root)
    return any(
        os.path.isdir(os.path.join(r, head)) or os.path.isfile(os.path.join(r, head + ".py"))
        for r in roots
        if r
    )


class ImportResolver:
    def __init__(self, workspace: Workspace | None) -> None:
        self.workspace = workspace or Workspace()
        self._goto: dict[tuple[str, str, int, int], tuple[str, str] | None] = {}
        self._modules: dict[str, tuple[str, ModuleInfo | None]] = {}
        self._project: Any = None

    def resolve(self, module: ModuleInfo, binding: ImportBinding) -> tuple[ModuleInfo, str] | None:
        if module.path is None or not os.path.isabs(module.path):
            return None
        alias = binding.alias
        if not hasattr(alias, "lineno") or not self._in_workspace(module, binding):
            return None
        key = (module.path, _digest(module.source), alias.lineno, alias.col_offset)
        if key not in self._goto:
            if len(self._goto) > MAX_CACHE:
                self._goto.clear()
            self._goto[key] = self._jedi_goto(module, binding)
        target = self._goto[key]
        if target is None:
            return None
        path, name = target
        other = self.module(path)
        if other is None or other is module:
            return None
        return other, name

    def _in_workspace(self, module: ModuleInfo, binding: ImportBinding) -> bool:
        """Only workspace modules are worth a jedi look-up: relative imports, or absolute
        ones whose top-level package sits in the workspace root or beside the file."""
        if binding.level > 0:
            return True
        return workspace_module(binding.qualname.split(".")[0], module.path, self.workspace)

    def module(self, path: str) -> ModuleInfo | None:
        text = self.workspace.read_source(path)
        if text is None:
            return None
        cached = self._modules.get(path)
        digest = _digest(text)
        if cached is not None and cached[0] == digest:
            return cached[1]
        if len(self._modules) > MAX_CACHE:
            self._modules.clear()
        info = parse_module(text, path)
        self._modules[path] = (digest, info)
        return info

    def _jedi_goto(self, module: ModuleInfo, binding: ImportBinding) -> tuple[str, str] | None:
        try:
            import jedi
        except ImportError:  # pragma: no cover - jedi is a dependency
            return None
        alias = binding.alias
        line = alias.lineno
        col = module.col(line, alias.col_offset)
        try:
            if self._project is None:
                root = self.workspace.root or os.path.dirname(module.path or ".")
                self._project = jedi.Project(
                    root, smart_sys_path=True, load_unsafe_extensions=False
                )
            script = jedi.Script(code=module.source, path=module.path, project=self._project)
            names = script.goto(line, col, follow_imports=True)
        except Exception as exc:  # jedi is best effort: an unknown import is just unknown
            log.debug("jedi goto failed for %s:%s: %s", module.path, line, exc)
            return None
        for name in names:
            path = name.module_path
            if path is None or name.type not in {"statement", "function", "instance", "param"}:
                if name.type != "class":
                    continue
            if path is None or not str(path).endswith(".py"):
                continue
            return str(path), name.name
        return None
