"""A rule that raises is logged to the client (window/logMessage, with the file and the
rule) and the other rules still report. In process: no input is known to crash a rule, so
one is made to, here, and the real log bridge of the server carries the record."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import OPT_LEVEL_SOURCE
from lsprotocol import types

from pallas_ls.core import engine
from pallas_ls.server.server import ClientLogHandler, build_server, forward_engine_logs


def _boom(ctx: Any) -> Iterator[Any]:
    raise RuntimeError("rule exploded")
    yield  # pragma: no cover


@pytest.fixture
def broken_conv_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    checks = tuple((codes, _boom if "PAL002" in codes else check) for codes, check in engine.CHECKS)
    monkeypatch.setattr(engine, "CHECKS", checks)


@pytest.mark.rule_failure
def test_failing_rule_is_logged_to_the_client_and_others_report(
    broken_conv_rule: None,
) -> None:
    server = build_server()
    sent: list[tuple[str, types.MessageType]] = []
    server._log = lambda message, kind=types.MessageType.Log: sent.append((message, kind))  # type: ignore[method-assign]

    async def run() -> list[Any]:
        loop = asyncio.get_running_loop()
        forward_engine_logs(server, loop)
        # As the server does: the analysis runs on another thread.
        findings = await loop.run_in_executor(
            None, engine.analyse, OPT_LEVEL_SOURCE, "/project/kernels.py"
        )
        await asyncio.sleep(0.05)  # the record is handed to the loop
        return findings

    try:
        findings = asyncio.run(run())
    finally:
        logger = logging.getLogger("pallas_ls")
        for handler in [h for h in logger.handlers if isinstance(h, ClientLogHandler)]:
            logger.removeHandler(handler)
    assert [f.code for f in findings] == ["PAL001"]
    errors = [m for m, kind in sent if kind == types.MessageType.Error]
    assert len(errors) == 1, sent
    assert "rule PAL002/PAL003 failed on /project/kernels.py" in errors[0]
    assert "RuntimeError: rule exploded" in errors[0]
