"""Which JAX the analysed code will run on, read from package metadata (never imported)."""

from __future__ import annotations

import os
import re
from functools import lru_cache

_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_jax_version(text: str) -> tuple[int, int, int] | None:
    """'0.10.2' -> (0, 10, 2); '0.11' -> (0, 11, 0); pre/post suffixes are ignored."""
    match = _VERSION.match(text)
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def _environment_for(root: str | None) -> object | None:
    import jedi

    # The project's own virtualenv is the most specific answer, then the activated one.
    candidates: list[str] = []
    if root:
        candidates += [os.path.join(root, name) for name in (".venv", "venv")]
    if os.environ.get("VIRTUAL_ENV"):
        candidates.append(os.environ["VIRTUAL_ENV"])
    for path in candidates:
        if os.path.isfile(os.path.join(path, "pyvenv.cfg")):
            try:
                return jedi.create_environment(path, safe=False)
            except Exception:
                continue
    try:
        return jedi.get_default_environment()
    except Exception:
        return None


@lru_cache(maxsize=16)
def detect_jax_version(root: str | None = None) -> tuple[int, int, int] | None:
    """The version of the `jax` distribution in the analysed environment, or None if unknown.

    The environment is `<root>/.venv` or `<root>/venv`, else the active virtualenv, else
    jedi's default; its sys.path comes from jedi, the version from `jax-*.dist-info`.
    """
    environment = _environment_for(root)
    if environment is None:
        return None
    try:
        sys_path = [p for p in environment.get_sys_path() if os.path.isdir(p)]  # type: ignore[attr-defined]
    except Exception:
        return None
    import importlib.metadata  # here, not at start-up: ~25 ms of imports

    for dist in importlib.metadata.distributions(name="jax", path=sys_path):
        version = parse_jax_version(dist.version or "")
        if version is not None:
            return version
    return None
