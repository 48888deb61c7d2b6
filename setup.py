"""Build hook: the analysis core compiled with mypyc, when asked for.

`PALLAS_LS_COMPILE=1 pip wheel .` (or `make wheel`) builds a wheel whose hottest analysis
modules are C extensions made by mypyc from the same Python sources; any other build
(`pip install .`, `pip install -e .`) is pure Python. Both behave the same: CI runs the tests
on both. The metadata lives in pyproject.toml; this file only adds the extensions.

A compiled build needs mypy (it ships mypyc) and a C compiler. Under PEP 517, setuptools
asks this file for its build requirements first (`setup_requires`), so pip puts mypy into
the isolated build environment before the second pass compiles.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup

# pallas_ls/__init__.py imports nothing; a build runs this file with the project directory
# as its working directory but not on sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pallas_ls import COMPILED_MODULES

# The modules where the analysis spends its time (benchmarks/README.md); the others (server,
# CLI, the rules' messages and fixes) are not hot and stay Python.
COMPILED = [name.replace(".", "/") + ".py" for name in COMPILED_MODULES]
MYPY = "mypy>=1.10,<3"


def _wanted() -> bool:
    return os.environ.get("PALLAS_LS_COMPILE", "").strip().lower() in {"1", "true", "yes"}


def _options() -> dict[str, object]:
    if not _wanted():
        return {}
    try:
        from mypyc.build import mypycify
    except ImportError:
        # First pass (the build requirements): ask for mypy; setuptools returns it to pip.
        return {"setup_requires": [MYPY]}
    return {
        "ext_modules": mypycify(COMPILED, opt_level="3", debug_level="0", group_name="pallas_ls")
    }


setup(**_options())
