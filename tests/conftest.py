"""Shared test helpers: sample Pallas sources, a fake analysed environment, a test LSP client."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pathlib
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

SERVER_COMMAND = [sys.executable, "-m", "pallas_ls", "serve"]
# Generous: only a hang should ever hit it.
WAIT_SECONDS = 60.0

# PAL001 on `opt_level=2`, with non-ASCII text before it on the same line.
OPT_LEVEL_SOURCE = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    label = "π→✓ ünïcødé 🙂"; params = pltpu.CompilerParams(opt_level=2)
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=params,
    )(x)
"""
OPT_LEVEL_LINE = 10
OPT_LEVEL_TEXT = "opt_level=2"

CLEAN_SOURCE = """\
import jax
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""


def code_point_span(source: str, line: int, needle: str) -> tuple[int, int]:
    """(start, end) code-point columns of `needle` on `line` (the test's own oracle)."""
    text = source.splitlines()[line]
    start = text.index(needle)
    return start, start + len(needle)


def units(text: str, encoding: str) -> int:
    """Length of `text` in LSP code units of `encoding` ("utf-8", "utf-16", "utf-32")."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def make_fake_venv(directory: pathlib.Path, jax_version: str | None) -> pathlib.Path:
    """A real (pip-less) virtualenv, with a `jax-X.dist-info` when jax_version is given."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(directory)],
        check=True,
        env=clean_env(),
    )
    if jax_version:
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        site = directory / "lib" / f"python{version}" / "site-packages"
        info = site / f"jax-{jax_version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: jax\nVersion: {jax_version}\n", encoding="utf-8"
        )
    return directory


def pytest_sessionstart(session: pytest.Session) -> None:
    """`make test-compiled` runs the tests on the compiled build: make sure they do."""
    if not expect_compiled():
        return
    import importlib.util

    import pallas_ls

    for name in pallas_ls.COMPILED_MODULES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin is None or origin.endswith(".py"):
            pytest.exit(f"PALLAS_LS_EXPECT_COMPILED=1, but {name} loads from {origin}", 3)


class _RuleFailures(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("pallas-ls: rule "):
            self.messages.append(self.format(record))


@pytest.fixture(autouse=True)
def no_rule_fails(request: pytest.FixtureRequest) -> Iterator[None]:
    """A rule that raises is logged and the other rules still report (engine.py), so a crash
    could pass for "no findings": any test that makes a rule fail in this process fails,
    unless it is marked `rule_failure` (it makes one fail on purpose)."""
    handler = _RuleFailures()
    logger = logging.getLogger("pallas_ls")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
    if handler.messages and request.node.get_closest_marker("rule_failure") is None:
        pytest.fail("a rule failed:\n" + "\n".join(handler.messages))


def expect_compiled() -> bool:
    """Whether this run is on the compiled build (see pytest_sessionstart)."""
    return os.environ.get("PALLAS_LS_EXPECT_COMPILED") == "1"


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for a pallas-ls process: no inherited virtualenv."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


class Recorder:
    """Everything the server pushed, in order, with versions."""

    def __init__(self) -> None:
        self.publishes: list[types.PublishDiagnosticsParams] = []

    def for_uri(self, uri: str) -> list[types.PublishDiagnosticsParams]:
        return [p for p in self.publishes if p.uri == uri]


async def wait_until(predicate: Callable[[], Any], what: str) -> Any:
    """Poll until predicate() is truthy; a safety net for hangs, not a timing assertion."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_SECONDS
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def lsp_session(
    profile: str | types.ClientCapabilities = "visual-studio-code",
    *,
    root: pathlib.Path | None = None,
    initialization_options: Any = None,
    configuration: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[tuple[LanguageClient, Recorder, types.InitializeResult]]:
    """Start the real server over stdio, initialize with a client profile, shut down after."""
    recorder = Recorder()
    client = LanguageClient(converter_factory=default_converter, configuration=configuration)
    features = dict(DEFAULT_CLIENT_FEATURES)
    default_publish = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def on_publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        recorder.publishes.append(params)
        default_publish(client, params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish
    register_lsp_features(client, features)
    await client.start_io(*SERVER_COMMAND, env=env or clean_env())
    capabilities = client_capabilities(profile) if isinstance(profile, str) else profile
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri() if root else None,
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")]
            if root
            else None,
            initialization_options=initialization_options,
        )
    )
    try:
        yield client, recorder, result
        assert client.error is None, client.error
        # As no_rule_fails does in process: the server logs a rule that raised to the client.
        failed = [
            m.message for m in client.log_messages if m.message.startswith("pallas-ls: rule ")
        ]
        assert not failed, failed
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), WAIT_SECONDS)
        await client.stop()


@pytest.fixture
def workdir(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path
