"""Open documents and their analyses: text sync, a worker thread, stale-work dropping."""

from __future__ import annotations

import asyncio
import gc
import os
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from pallas_ls.core.model import AnalysisCancelled, Config, Finding, HoverInfo
from pallas_ls.core.workspace import Workspace
from pallas_ls.server.convert import TextPositions
from pallas_ls.server.heap import HeapKeeper

# Edits: an edit after a quiet spell (no edit for BURST_GAP seconds) is analysed at once;
# an edit inside a burst (typing fast, a paste split in pieces, an editor's multi-cursor
# change) waits BURST_DEBOUNCE of quiet, so the burst ends in one up-to-date publish.
BURST_GAP = float(os.environ.get("PALLAS_LS_BURST_GAP", "0.1"))
BURST_DEBOUNCE = float(os.environ.get("PALLAS_LS_DEBOUNCE", "0.05"))
# An analysis superseded by an edit stops early; after this many restarts in a row (the
# user typing faster than the file can be analysed) one runs to the end anyway.
MAX_RESTARTS = 3
# Re-analysing other open files after one file changed (cross-module values) can wait longer.
DEPENDENT_DELAY = 0.3


@dataclass
class Document:
    uri: str
    path: str | None
    version: int | None
    text: str


@dataclass(frozen=True)
class Analysis:
    uri: str
    version: int | None
    generation: int
    text: str
    findings: tuple[Finding, ...]


def apply_change(
    text: str, change: types.TextDocumentContentChangeEvent, codec: PositionCodec
) -> str:
    if isinstance(change, types.TextDocumentContentChangePartial):
        positions = TextPositions(text, codec)
        span = positions.span_from_client(change.range)
        start = positions.offset(span.start_line, span.start_col)
        end = positions.offset(span.end_line, span.end_col)
        if end < start:
            start, end = end, start
        return text[:start] + change.text + text[end:]
    return change.text


def _warm_engine() -> None:
    """Import the engine and pay a first fix's one-time cost (see fixes.warm_up)."""
    import pallas_ls.core.engine  # noqa: F401
    from pallas_ls.core.fixes import warm_up

    warm_up()


class Session:
    """All server state. Handlers in server.py stay thin and call into this."""

    def __init__(
        self,
        publish: Callable[[str, int | None, list[Finding], str], None],
        log: Callable[[str, types.MessageType], None],
    ) -> None:
        self.documents: dict[str, Document] = {}
        self.analyses: dict[str, Analysis] = {}
        # Per-document parse state (analysis thread only): edits re-parse what they touch.
        self.states: dict[str, Any] = {}
        # (version, generation) last published per document.
        self.published: dict[str, tuple[int | None, int]] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.last_edit: dict[str, float] = {}
        self.generation = 0
        self.config = Config()
        self.root: str | None = None
        self.pull = False
        self.ready = asyncio.Event()
        self._publish = publish
        self._log = log
        self._loop: asyncio.AbstractEventLoop | None = None
        self._heap: HeapKeeper | None = None
        self._in_flight = 0  # analyses awaiting the worker thread (the collector is off)
        # One thread: jedi is not thread-safe, and a queue of one keeps stale work short.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pallas-analysis")
        self._by_path: dict[str, str] = {}
        self.workspace = Workspace(overlay=self._overlay)

    # --- documents ---------------------------------------------------------------------

    def _overlay(self, path: str) -> str | None:
        uri = self._by_path.get(os.path.abspath(path))
        doc = self.documents.get(uri) if uri else None
        return doc.text if doc else None

    def set_root(self, root: str | None) -> None:
        self.root = root
        self.workspace = Workspace(root=root, overlay=self._overlay)

    def open(self, uri: str, version: int | None, text: str) -> Document:
        path = to_fs_path(uri)
        doc = Document(uri, path, version, text)
        self.documents[uri] = doc
        if path:
            self._by_path[os.path.abspath(path)] = uri
        return doc

    def change(
        self,
        uri: str,
        version: int | None,
        changes: Sequence[types.TextDocumentContentChangeEvent],
        codec: PositionCodec,
    ) -> Document | None:
        doc = self.documents.get(uri)
        if doc is None:
            return None
        text = doc.text
        for change in changes:
            text = apply_change(text, change, codec)
        doc.text = text
        doc.version = version
        return doc

    def close(self, uri: str) -> None:
        doc = self.documents.pop(uri, None)
        if doc and doc.path:
            self._by_path.pop(os.path.abspath(doc.path), None)
        self.analyses.pop(uri, None)
        self.states.pop(uri, None)
        self.published.pop(uri, None)
        self.last_edit.pop(uri, None)
        task = self.tasks.pop(uri, None)
        if task is not None:
            task.cancel()
        self.heap.later(dropped=True)  # its parse is garbage now

    def get(self, uri: str) -> Document | None:
        return self.documents.get(uri)

    # --- analysis ----------------------------------------------------------------------

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    @property
    def heap(self) -> HeapKeeper:
        if self._heap is None:
            self._heap = HeapKeeper(self.loop)
        return self._heap

    def warm_up(self, protocol: Any) -> None:
        """Import the engine on the analysis thread while the client is still starting,
        then have the protocol's converter ready (see warm.py) unless a document is
        already open: its analysis, queued behind, must not wait for that."""
        self.executor.submit(_warm_engine)
        self.executor.submit(self._warm_converter, protocol)

    def _warm_converter(self, protocol: Any) -> None:
        if not self.documents:
            from pallas_ls.server.warm import warm_converter

            warm_converter(protocol)

    def _superseded(self, uri: str, text: str) -> Callable[[], bool]:
        """True once the document's text is no longer `text` (edited or closed). Read from
        the analysis thread: a stale read only delays the cancellation to the next poll."""

        def check() -> bool:
            doc = self.documents.get(uri)
            return doc is None or doc.text is not text

        return check

    def _analyse_safely(
        self,
        text: str,
        path: str | None,
        config: Config,
        uri: str | None = None,
        cancellable: bool = False,
    ) -> list[Finding] | None:
        """Findings, or None when a newer text superseded this one mid-analysis."""
        try:
            from pallas_ls.core.engine import analyse
            from pallas_ls.core.incremental import IncrementalModule

            state = None
            cancelled = None
            if uri is not None and uri in self.documents:
                state = self.states.get(uri)
                if state is None:
                    state = self.states[uri] = IncrementalModule(path)
                if cancellable:
                    cancelled = self._superseded(uri, text)
            return analyse(text, path, config, self.workspace, state=state, cancelled=cancelled)
        except AnalysisCancelled:
            return None
        except Exception:
            detail = traceback.format_exc(limit=8)
            self.loop.call_soon_threadsafe(
                self._log,
                f"pallas-ls: analysis of {path or '<unsaved>'} failed:\n{detail}",
                types.MessageType.Error,
            )
            return []

    async def analysis(self, uri: str) -> Analysis | None:
        """Findings for the document's current text, from the cache or the worker thread.
        An analysis whose text is edited meanwhile stops early and the newer text is
        analysed instead (after a few such restarts, one runs to the end regardless)."""
        await self.ready.wait()
        for attempt in range(MAX_RESTARTS + 1):
            doc = self.documents.get(uri)
            if doc is None:
                return None
            cached = self.analyses.get(uri)
            if (
                cached is not None
                and cached.version == doc.version
                and cached.generation == self.generation
                and cached.text is doc.text
            ):
                return cached
            version, text, generation = doc.version, doc.text, self.generation
            # The cyclic collector stays off (the engine then leaves it off) until the
            # findings are stored and published; then what the analysis built is frozen
            # (see heap.py). Off and on again here, on the loop's thread, so a task
            # cancelled while its job still runs cannot leave it off; on again only when
            # no other analysis is in flight (a hover's may wait behind a publish's).
            gc.disable()
            self._in_flight += 1
            try:
                findings = await self.loop.run_in_executor(
                    self.executor,
                    self._analyse_safely,
                    text,
                    doc.path,
                    self.config,
                    uri,
                    attempt < MAX_RESTARTS,
                )
                if findings is not None:
                    return self._store(uri, version, generation, text, findings)
            finally:
                self._in_flight -= 1
                if not self._in_flight:
                    gc.enable()
                self.heap.settled()
        return None  # not reached: the last attempt is not cancellable

    def _store(
        self, uri: str, version: int | None, generation: int, text: str, findings: list[Finding]
    ) -> Analysis:
        result = Analysis(uri, version, generation, text, tuple(findings))
        current = self.documents.get(uri)
        if current is not None and current.text is text and generation == self.generation:
            self.analyses[uri] = result
            # Fresh findings for the current text: push them now, whoever asked (a hover
            # or code action may get here before the debounced publish).
            self._maybe_publish(uri, result)
        return result

    def edited(self, uri: str) -> None:
        """A didChange arrived: analyse now, or after a quiet spell when in a burst."""
        now = self.loop.time()
        last = self.last_edit.get(uri)
        self.last_edit[uri] = now
        in_burst = last is not None and now - last < BURST_GAP
        self.schedule(uri, BURST_DEBOUNCE if in_burst else 0.0)

    def schedule(self, uri: str, delay: float = 0.0) -> None:
        """(Re-)analyse and publish; a newer request replaces a pending one."""
        old = self.tasks.get(uri)
        if old is not None and not old.done():
            old.cancel()
        self.tasks[uri] = self.loop.create_task(self._analyse_and_publish(uri, delay))

    def schedule_dependents(self, changed_uri: str) -> None:
        """Another file changed: others may read values from it, re-check them soon."""
        for uri in self.documents:
            if uri == changed_uri:
                continue
            task = self.tasks.get(uri)
            if task is None or task.done():
                self.schedule(uri, DEPENDENT_DELAY)

    async def _analyse_and_publish(self, uri: str, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        result = await self.analysis(uri)
        if result is not None:
            self._maybe_publish(uri, result)

    def _maybe_publish(self, uri: str, result: Analysis) -> None:
        if self.pull:
            return
        doc = self.documents.get(uri)
        if doc is None or doc.version != result.version or doc.text is not result.text:
            return  # stale: a newer version is on its way
        key = (result.version, result.generation)
        last = self.published.get(uri)
        if last == key:
            return  # already published
        if last is not None and last[0] is not None and result.version is not None:
            if last[0] > result.version:
                return  # never go back to an older version
        self.published[uri] = key
        self._publish(uri, result.version, list(result.findings), result.text)

    def reanalyse_all(self) -> None:
        self.generation += 1
        for uri in list(self.documents):
            self.schedule(uri)

    def file_changed(self, path: str | None, uri: str) -> None:
        if path:
            self.workspace.invalidate(path)
        self.generation += 1

    # --- requests ----------------------------------------------------------------------

    async def hover(self, uri: str, line: int, col: int) -> tuple[HoverInfo | None, str]:
        await self.ready.wait()
        analysis = await self.analysis(uri)
        doc = self.documents.get(uri)
        if doc is None:  # closed meanwhile
            return None, ""
        text, config = doc.text, self.config
        findings = list(analysis.findings) if analysis and analysis.text is text else None

        def run() -> HoverInfo | None:
            try:
                from pallas_ls.core.engine import hover_at

                state = self.states.get(uri)
                module = state.module if state is not None else None
                if module is not None and module.source is not text:
                    module = None
                return hover_at(text, line, col, doc.path, config, self.workspace, findings, module)
            except Exception:
                self.loop.call_soon_threadsafe(
                    self._log,
                    f"pallas-ls: hover in {doc.path} failed:\n{traceback.format_exc(limit=8)}",
                    types.MessageType.Error,
                )
                return None

        return await self.loop.run_in_executor(self.executor, run), text

    def shutdown(self) -> None:
        if self._heap is not None:
            self._heap.stop()
        for task in self.tasks.values():
            task.cancel()
        self.executor.shutdown(wait=False, cancel_futures=True)
