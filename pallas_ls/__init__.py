"""pallas-ls: finds JAX Pallas TPU lowering errors while you type."""

__version__ = "0.1.0"

# The modules a compiled build (setup.py, `make wheel`) makes C extensions of.
COMPILED_MODULES = (
    "pallas_ls.core.resolve",
    "pallas_ls.core.values",
    "pallas_ls.core.flow",
    "pallas_ls.core.params",
    "pallas_ls.core.kernels",
    "pallas_ls.core.rules.conv_precision",
)


def compiled() -> bool:
    """Whether this is the mypyc-compiled build: its analysis modules load from C extensions
    (found without importing them)."""
    from importlib.util import find_spec

    spec = find_spec(COMPILED_MODULES[0])
    return spec is not None and spec.origin is not None and not spec.origin.endswith(".py")
