"""pallas-ls: finds JAX Pallas TPU lowering errors while you type."""

__version__ = "0.1.0"
