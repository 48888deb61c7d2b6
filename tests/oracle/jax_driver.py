"""Runs inside the real-JAX venv (.venv-jax), never in the tool's environment.

Reads a JSON request on stdin: {"snippets": {name: path}, "sources": {name: code},
"precision": {name: code}}. Each snippet is imported by path and its `run()` (which exports a
kernel for TPU) is called; each source is executed as a module; each precision program is
traced (the canonical precision of its convs) and exported. Prints one JSON object: what
JAX did for each.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import re
import sys
import traceback
import types
from typing import Any

UNIMPLEMENTED = re.compile(r"Unimplemented primitive in Pallas TPU lowering for (\w+): (\w+)")
# Frames that only run when Mosaic lowers a Pallas kernel (TensorCore or SparseCore).
MOSAIC_FILES = (
    "pallas/mosaic/lowering.py",
    "pallas/mosaic/sc_lowering.py",
    "pallas/mosaic/pallas_call_registration.py",
)


def _error(exc: BaseException, source_name: str | None = None) -> dict[str, Any]:
    frames = traceback.extract_tb(exc.__traceback__)
    files = [f.filename.replace("\\", "/") for f in frames]
    message = str(exc)
    match = UNIMPLEMENTED.search(message)
    line = None
    if source_name is not None:
        lines = [f.lineno for f in frames if f.filename == source_name]
        line = lines[-1] if lines else None
    return {
        "status": "error",
        "type": type(exc).__name__,
        "message": message,
        "unimplemented": list(match.groups()) if match else None,
        "mosaic_frames": any(f.endswith(MOSAIC_FILES) for f in files),
        "line": line,
    }


def run_snippet(name: str, path: str) -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location(f"oracle_snippet_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        exported = module.run()
    except Exception as exc:
        return _error(exc)
    text = exported.mlir_module()
    return {"status": "ok", "mosaic_custom_call": "tpu_custom_call" in text}


def run_source(name: str, code: str) -> dict[str, Any]:
    filename = f"<oracle-source {name}>"
    # A registered module, as for an imported file (dataclasses look their module up).
    module = types.ModuleType(f"oracle_source_{len(sys.modules)}")
    sys.modules[module.__name__] = module
    try:
        exec(compile(code, filename, "exec"), module.__dict__)
    except Exception as exc:
        return _error(exc, filename)
    finally:
        del sys.modules[module.__name__]
    return {"status": "ok"}


def _conv_precisions(jaxpr: Any, out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `precision` parameter of every conv equation, nested jaxprs (a pallas_call's
    kernel) included: the canonical precision JAX gives the conv, which Mosaic reads. Its
    repr, and for a tuple (a DotAlgorithm is one) the repr of its first two items."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "conv_general_dilated":
            precision = eqn.params["precision"]
            pair = [repr(p) for p in precision[:2]] if isinstance(precision, tuple) else None
            out.append({"repr": repr(precision), "pair": pair})
        for param in eqn.params.values():
            for sub in param if isinstance(param, list | tuple) else [param]:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    _conv_precisions(inner, out)
    return out


def run_precision(name: str, code: str) -> dict[str, Any]:
    """A program defining `f` and `ARGS`: exported for TPU (whether Mosaic reaches the conv),
    and traced (the conv's canonical precision)."""
    import jax

    filename = f"<oracle-precision {name}>"
    module = types.ModuleType(f"oracle_precision_{len(sys.modules)}")
    sys.modules[module.__name__] = module
    # A program may set the default precision for the whole process
    # (`jax.config.update(...)` at module level): the next program must not inherit it.
    saved = jax.config.jax_default_matmul_precision
    try:
        exec(compile(code, filename, "exec"), module.__dict__)
        try:
            jaxpr = jax.make_jaxpr(module.f)(*module.ARGS)
        except Exception as exc:
            return {"trace": _error(exc, filename), "precisions": None, "export": None}
        precisions = _conv_precisions(jaxpr.jaxpr, [])
        try:
            exported = jax.export.export(jax.jit(module.f), platforms=["tpu"])(*module.ARGS)
        except Exception as exc:
            export = _error(exc, filename)
        else:
            export = {
                "status": "ok",
                "mosaic_custom_call": "tpu_custom_call" in exported.mlir_module(),
            }
    finally:
        del sys.modules[module.__name__]
        jax.config.update("jax_default_matmul_precision", saved)
    return {"trace": {"status": "ok"}, "precisions": precisions, "export": export}


def main() -> None:
    request = json.load(sys.stdin)
    import jax

    # Keep JAX's own frames in tracebacks: they show whether Mosaic lowering ran.
    jax.config.update("jax_traceback_filtering", "off")
    # What the programs print (a `print` in a kernel runs while it is traced) goes to
    # stderr: stdout carries the result only.
    with contextlib.redirect_stdout(sys.stderr):
        result = {
            "jax_version": jax.__version__,
            "snippets": {n: run_snippet(n, p) for n, p in request.get("snippets", {}).items()},
            "sources": {n: run_source(n, c) for n, c in request.get("sources", {}).items()},
            "precision": {n: run_precision(n, c) for n, c in request.get("precision", {}).items()},
        }
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
