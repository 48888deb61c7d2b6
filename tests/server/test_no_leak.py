"""What the server holds does not grow with the number of edits and requests.

The protocol is driven in-process (no pipe, frames written to a list) so that the objects it
holds can be counted exactly, whatever the machine's load; the resident memory this costs
over stdio is what tests/robustness/test_storm.py measures, more coarsely.

The leak this pins: pygls 2.1 files the future of every handler it runs and, for anything
but a client request, never takes it out again (one future per didChange, for the life of
the server). `PallasProtocol._execute_handler` makes each leave the table once done.
"""

from __future__ import annotations

import asyncio
import gc
import json
from collections import Counter
from typing import Any

from pallas_ls.server.server import PallasLanguageServer, build_server

URI = "file:///tmp/pallas_ls_leak/kernel.py"
SOURCE = (
    "import jax\n"
    "import jax.experimental.pallas as pl\n"
    "import jax.experimental.pallas.tpu as pltpu\n\n\n"
    "def kernel(x_ref, o_ref):\n"
    "    o_ref[...] = x_ref[...]\n\n\n"
    "def run(x):\n"
    "    return pl.pallas_call(\n"
    "        kernel,\n"
    "        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),\n"
    "        compiler_params=pltpu.CompilerParams(opt_level=2),\n"
    "    )(x)\n"
)


class Writer:
    """Keeps what the test needs of the server's frames, not the frames (they would be
    counted as held)."""

    def __init__(self) -> None:
        self.answered: set[int] = set()
        self.published: int | None = None  # the version of the last publishDiagnostics

    def write(self, data: bytes) -> None:
        frame = json.loads(data.split(b"\r\n\r\n", 1)[1])
        if frame.get("method") == "textDocument/publishDiagnostics":
            self.published = frame["params"].get("version")
        elif "id" in frame and "method" not in frame:
            self.answered.add(frame["id"])

    def close(self) -> None:
        pass


class Driver:
    def __init__(self) -> None:
        self.server: PallasLanguageServer = build_server()
        self.protocol = self.server.protocol
        self.writer = Writer()
        self.protocol.set_writer(self.writer)
        self.version = 1
        self.next_id = 1
        self.pending: set[int] = set()

    def send(self, message: dict[str, Any]) -> None:
        data = {"jsonrpc": "2.0", **message}
        self.protocol.handle_message(self.protocol.structure_message(data))

    def request(self, method: str, params: dict[str, Any], cancel: bool = False) -> None:
        self.next_id += 1
        self.pending.add(self.next_id)
        self.send({"id": self.next_id, "method": method, "params": params})
        if cancel:
            self.send({"method": "$/cancelRequest", "params": {"id": self.next_id}})

    async def until(self, predicate: Any, timeout: float = 10.0) -> bool:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not predicate():
            if loop.time() > end:
                return False
            await asyncio.sleep(0.01)
        return True

    async def start(self) -> None:
        self.send({"id": 1, "method": "initialize", "params": {"capabilities": {}}})
        assert await self.until(lambda: 1 in self.writer.answered)
        self.send({"method": "initialized", "params": {}})
        document = {"uri": URI, "languageId": "python", "version": 1, "text": SOURCE}
        self.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})

    async def edits(self, count: int) -> None:
        """Type a character into the kernel and take it out again, `count` times, with a
        hover, a code action and a cancelled hover among them."""
        line = SOURCE.splitlines().index("    o_ref[...] = x_ref[...]")
        for i in range(count):
            self.version += 1
            typed = i % 2 == 0
            start = {"line": line, "character": 4}
            end = {"line": line, "character": 4 if typed else 5}
            change = {"range": {"start": start, "end": end}, "text": "y" if typed else ""}
            self.send(
                {
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": URI, "version": self.version},
                        "contentChanges": [change],
                    },
                }
            )
            doc = {"uri": URI}
            here = {"line": line + 7, "character": 40}
            if i % 5 == 0:
                self.request("textDocument/hover", {"textDocument": doc, "position": here})
            if i % 7 == 0:
                self.request(
                    "textDocument/codeAction",
                    {
                        "textDocument": doc,
                        "range": {"start": here, "end": here},
                        "context": {"diagnostics": []},
                    },
                )
            if i % 11 == 0:
                params = {"textDocument": doc, "position": here}
                self.request("textDocument/hover", params, cancel=True)
            await asyncio.sleep(0)
        assert await self.until(lambda: self.pending <= self.writer.answered)
        # the last version's diagnostics, then the collector's idle pass (see heap.py)
        assert await self.until(lambda: self.writer.published == self.version)
        await asyncio.sleep(0.05)


def held() -> Counter[str]:
    """Every object the collector tracks, by type, after a full pass."""
    gc.unfreeze()
    gc.collect()
    counts = Counter(type(o).__qualname__ for o in gc.get_objects())
    gc.freeze()
    return counts


def test_objects_held_do_not_grow_with_edits_and_requests() -> None:
    async def scenario() -> None:
        driver = Driver()
        await driver.start()
        await driver.edits(100)  # warm: caches fill, lazy imports run
        before = held()
        await driver.edits(300)
        after = held()
        # handler futures leave pygls's table once done
        assert await driver.until(lambda: not driver.protocol._request_futures, timeout=5.0)
        assert len(driver.protocol._request_futures) == 0
        grown = {k: after[k] - before[k] for k in after if after[k] != before[k]}
        # 300 edits and ~150 requests: a leak of one object each would show as 300+.
        assert sum(after.values()) - sum(before.values()) < 100, grown
        driver.server.session.shutdown()

    asyncio.run(scenario())
