"""Which JAX the analysed code will run on, read from package metadata (never imported)."""

from __future__ import annotations

import glob
import os
import re
import sys
from functools import lru_cache

_DIST_INFO = re.compile(r"^jax-([^-]+?)(?:-py[\d.]+)?\.(?:dist|egg)-info$", re.IGNORECASE)
_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_jax_version(text: str) -> tuple[int, int, int] | None:
    """'0.10.2' -> (0, 10, 2); '0.11' -> (0, 11, 0); pre/post suffixes are ignored."""
    match = _VERSION.match(text)
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def _site_dirs(prefix: str) -> list[str]:
    """The site-packages folders of a virtualenv or conda prefix, POSIX and Windows layouts."""
    patterns = ("lib/python3*/site-packages", "lib64/python3*/site-packages", "Lib/site-packages")
    found: list[str] = []
    for pattern in patterns:
        found += sorted(glob.glob(os.path.join(glob.escape(prefix), pattern)))
    return [path for path in found if os.path.isdir(path)]


def _shares_system_site(venv: str) -> bool:
    """pyvenv.cfg's `include-system-site-packages = true`."""
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8", errors="replace") as cfg:
            for line in cfg:
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages":
                    return value.strip().lower() == "true"
    except OSError:
        pass
    return False


def _search_path(root: str | None) -> tuple[list[str], str | None]:
    """Where the analysed code's packages live: (folders, a virtualenv whose Python must be
    asked for the rest, or None).

    The project's own virtualenv (`<root>/.venv`, `<root>/venv`) is the most specific
    answer, then the activated one (`VIRTUAL_ENV`, then `CONDA_PREFIX`, jedi's order), else
    this interpreter's own `sys.path`. A virtualenv's folders are read from its layout:
    no interpreter is started, so detection costs neither a process nor jedi's memory. Only
    a virtualenv that shares the system's site-packages needs its Python asked (through
    jedi) for the folders it inherits.
    """
    candidates: list[str] = []
    if root:
        candidates += [os.path.join(root, name) for name in (".venv", "venv")]
    if os.environ.get("VIRTUAL_ENV"):
        candidates.append(os.environ["VIRTUAL_ENV"])
    for path in candidates:
        if os.path.isfile(os.path.join(path, "pyvenv.cfg")):
            return _site_dirs(path), path if _shares_system_site(path) else None
    conda = os.environ.get("CONDA_PREFIX")
    if conda and os.path.isdir(conda):
        return _site_dirs(conda), None
    return [p for p in sys.path if os.path.isdir(p)], None


def _inherited_dirs(venv: str) -> list[str]:
    """The folders a virtualenv sharing the system's site-packages sees, from its Python."""
    try:
        import jedi

        environment = jedi.create_environment(venv, safe=False)
        return [p for p in environment.get_sys_path() if os.path.isdir(p)]
    except Exception:
        return []


def _jax_in(paths: list[str]) -> tuple[int, int, int] | None:
    """The version in the first `jax-<version>.dist-info` (or `.egg-info`) folder on `paths`.

    Installers name the folder after the distribution and its version (the wheel and
    installed-project formats), so a directory listing answers: no metadata file is read,
    and importlib.metadata (about 1 MB of imports kept for the server's life) is not needed.
    """
    for path in paths:
        try:
            names = os.listdir(path)
        except OSError:
            continue
        for name in sorted(names):
            match = _DIST_INFO.match(name)
            if match is not None:
                version = parse_jax_version(match.group(1))
                if version is not None:
                    return version
    return None


@lru_cache(maxsize=16)
def detect_jax_version(root: str | None = None) -> tuple[int, int, int] | None:
    """The version of the `jax` distribution in the analysed environment, or None if unknown.

    The environment is `<root>/.venv` or `<root>/venv`, else the active virtualenv or conda
    environment, else this interpreter's; the version comes from `jax-*.dist-info`.
    """
    paths, ask = _search_path(root)
    version = _jax_in(paths)
    if version is None and ask is not None:
        version = _jax_in(_inherited_dirs(ask))
    return version
