"""Names imported from other modules of the workspace, resolved with jedi.

jedi only reads files (it never imports the user's code). Where an import leads is cached
by the import itself (file, module, level, name), so editing the importing file elsewhere
does not ask jedi again (an import jedi could not follow is asked again after an edit);
the target module's parse is cached by its text, so an edit to that file invalidates what
depends on it.
"""

from __future__ import annotations

import ast
import gc
import logging
import os
from typing import Any

from pallas_ls.core.resolve import ImportBinding, ModuleInfo, parse_module
from pallas_ls.core.workspace import Workspace

log = logging.getLogger(__name__)
MAX_CACHE = 512


def workspace_module(head: str, path: str | None, workspace: Workspace | None) -> bool:
    """Whether a top-level module name is a package or module of the workspace: in its
    root, or where Python would find the importing file's own top-level package (the
    folder above its outermost `__init__.py`, e.g. `src/` in a src layout; the file's own
    folder when it is not in a package, as for a script)."""
    roots = {_import_root(os.path.dirname(path or ""))}
    if workspace is not None and workspace.root:
        roots.add(workspace.root)
    return any(
        os.path.isdir(os.path.join(r, head)) or os.path.isfile(os.path.join(r, head + ".py"))
        for r in roots
        if r
    )


def _import_root(folder: str) -> str:
    """The folder whose subfolders are the file's packages: the first one up from `folder`
    without an `__init__.py`. In a package, `import numpy` is never `./numpy/`."""
    for _ in range(64):
        if not folder or not os.path.isfile(os.path.join(folder, "__init__.py")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return folder
        folder = parent
    return folder


class ImportResolver:
    def __init__(self, workspace: Workspace | None) -> None:
        self.workspace = workspace or Workspace()
        # (file, level, module, name) -> (where it leads, or None and the text that missed)
        self._goto: dict[tuple[str, int, str, str], tuple[tuple[str, str] | None, str | None]] = {}
        self._modules: dict[str, tuple[str, ModuleInfo | None]] = {}
        self._project: Any = None
        self._environment: Any = None

    def resolve(self, module: ModuleInfo, binding: ImportBinding) -> tuple[ModuleInfo, str] | None:
        if module.path is None or not os.path.isabs(module.path):
            return None
        alias = binding.alias
        if not hasattr(alias, "lineno") or not self._in_workspace(module, binding):
            return None
        key = (module.path, binding.level, binding.qualname, alias.name)
        cached = self._goto.get(key)
        if cached is not None and (cached[0] is not None or cached[1] == module.source):
            target = cached[0]
        else:
            if len(self._goto) > MAX_CACHE:
                self._goto.clear()
            target = self._jedi_goto(module, binding)
            # A miss may be the user still typing the import, or the module yet to be
            # written: it is asked again once the importing file changes.
            self._goto[key] = (target, None if target is not None else module.source)
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
        if cached is not None and cached[0] == text:
            return cached[1]
        if len(self._modules) > MAX_CACHE:
            self._modules.clear()
        info = parse_module(text, path)
        self._modules[path] = (text, info)
        return info

    def _jedi_goto(self, module: ModuleInfo, binding: ImportBinding) -> tuple[str, str] | None:
        try:
            import jedi
        except ImportError:  # pragma: no cover - jedi is a dependency
            return None
        _keep_collector_state()
        code, col = _import_line(binding)
        try:
            if self._project is None:
                root = self.workspace.root or os.path.dirname(module.path or ".")
                self._project = jedi.Project(
                    root, smart_sys_path=True, load_unsafe_extensions=False
                )
                # Look-ups only follow the workspace's own .py files (`_in_workspace`):
                # jedi's default environment would start a Python subprocess for compiled
                # modules first (~120 ms, once per process: per `check` worker).
                self._environment = jedi.InterpreterEnvironment()
            # jedi is given the one import, not the whole file: it would parse all of it
            # with parso first, ~10x slower than ast.parse (~180 ms for a large module).
            # It is placed in the importing file's folder (relative imports resolve from
            # there) under a name no module has: jedi caches a module's code by its path,
            # and the one-line text under the file's own path would stand for that module
            # when another file imports from it (its other names then missing).
            probe = os.path.join(os.path.dirname(module.path or "."), _PROBE)
            script = jedi.Script(
                code=code, path=probe, project=self._project, environment=self._environment
            )
            names = script.goto(1, col, follow_imports=True)
            if any(n.type == "module" and n.module_path is None for n in names):
                # jedi 0.19 gives `from . import helpers` a module without its path;
                # inferring the name finds the file.
                names = [*names, *script.infer(1, col)]
        except Exception as exc:  # jedi is best effort: an unknown import is just unknown
            log.debug("jedi goto failed for %s (%s): %s", module.path, code.strip(), exc)
            return None
        for name in names:
            path = name.module_path
            if path is None or not str(path).endswith(".py"):
                continue
            if name.type == "module":
                return str(path), ""  # the import names a module: its attributes are read
            if name.type in {"statement", "function", "instance", "param", "class"}:
                return str(path), name.name
        return None


# The file name jedi is told an import stands in (see _jedi_goto); never a real module.
_PROBE = "__pallas_ls_import_probe__.py"


def _import_line(binding: ImportBinding) -> tuple[str, int]:
    """The binding's import as a statement of its own, and the column of the name it binds
    there (an `as` alias changes nothing about where it leads): the last part of `import
    pkg.helpers as helpers`, the first of a plain `import pkg.helpers`."""
    name = binding.alias.name
    node = binding.node
    if isinstance(node, ast.ImportFrom):
        head = f"from {'.' * node.level}{node.module or ''} import "
        return f"{head}{name}\n", len(head)
    head = "import "
    column = len(head)
    if binding.alias.asname is not None:
        column += name.rfind(".") + 1
    return f"{head}{name}\n", column


class _CollectorState:
    """Stands in for the `gc` module inside parso's cache module, which turns the collector
    off to unpickle a tree from its disk cache and then on again, whatever its state was
    (parso 0.8, `cache._load_from_file_system`). The engine keeps the collector off while
    it analyses, and `check`'s workers for their whole run: switched on there, it made a
    full pass over every tree checked so far at the next allocation. On JAX's own sources
    (617 files) `check` took 3.8 s with it, 2.5 s without. This restores the state it found."""

    def __init__(self) -> None:
        self._was: list[bool] = []

    def disable(self) -> None:
        self._was.append(gc.isenabled())
        gc.disable()

    def enable(self) -> None:
        if not self._was or self._was.pop():
            gc.enable()

    def __getattr__(self, name: str) -> Any:
        return getattr(gc, name)


def _keep_collector_state() -> None:
    try:
        import parso.cache  # jedi's parser
    except ImportError:  # pragma: no cover - a dependency of jedi
        return
    if getattr(parso.cache, "gc", None) is gc:  # once, and only on the parso it was written for
        parso.cache.gc = _CollectorState()  # type: ignore[assignment]
