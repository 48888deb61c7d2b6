"""The pygls language server: handler registration; state lives in documents.Session."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import FeatureRequestError, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from pallas_ls import __version__
from pallas_ls.core.model import Config
from pallas_ls.server import convert
from pallas_ls.server.documents import Document, Session
from pallas_ls.server.fixall import adapt_edit, compatible_fixes, line_ending_of
from pallas_ls.server.jaxversion import detect_jax_version
from pallas_ls.server.settings import SECTION, ParsedSettings, parse_settings, warning_text

PARENT_POLL_SECONDS = 3.0


_ANSWERED = object()  # a malformed request already answered with an error


class PallasProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        # pygls raises on params that do not fit the method's types and never answers, so a
        # client would wait forever: answer InvalidParams instead.
        try:
            return super().structure_message(data)
        except (JsonRpcInvalidParams, JsonRpcInternalError) as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                self._send_response(
                    data["id"],
                    error=types.ResponseError(
                        code=exc.code, message=f"{data['method']}: params do not fit the method"
                    ),
                )
                return _ANSWERED
            raise

    def handle_message(self, message: Any) -> None:
        if message is _ANSWERED:
            return
        # pygls drops requests after `shutdown` silently; the spec wants InvalidRequest.
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, types.EXIT) and hasattr(message, "id"):
            self._send_response(
                message.id,
                error=types.ResponseError(
                    code=types.ErrorCodes.InvalidRequest,
                    message=f"pallas-ls is shutting down: {method} refused",
                ),
            )
            return
        super().handle_message(message)

    # pygls 2.1 files the future of every handler it runs under an id in `_request_futures`,
    # but only a client request's answer takes it out again. A notification's future (an
    # id made up per message, e.g. each didChange) and the futures of the handlers a
    # built-in hands over to stayed for the life of the server: +2,000 futures (with their
    # conditions, locks and callbacks) per 2,000 edits (tests/server/test_no_leak.py). Each
    # now leaves the table once done, unless its id was taken by another meanwhile. The
    # removal is queued on the loop: a future may finish on a worker thread, or while pygls
    # walks the table (`shutdown` cancels every future in it).
    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is None:
            return
        futures = self._request_futures
        loop = asyncio.get_running_loop()

        def drop(done: Any) -> None:
            if futures.get(msg_id) is done:
                del futures[msg_id]

        def forget(done: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing to keep
                loop.call_soon_threadsafe(drop, done)

        future.add_done_callback(forget)

    # pygls keeps its own copy of each open document, and updating that copy clamps the
    # client's change ranges *in place* to its own line model (str.splitlines, which also
    # breaks lines at \f, \v, \x1c-\x1e, \x85, \u2028, \u2029): the session, applying
    # the same change after it, cut the text in the wrong place. The session holds the only
    # copy (split at LSP line breaks only); these built-ins pass the params on untouched.
    def _user_handler(self, method: str, params: Any) -> Iterator[Any]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Any:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Any:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)


class PallasLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("pallas-ls", __version__, protocol_cls=PallasProtocol)
        self.session = Session(self._publish, self._log)
        self.shutdown_received = False
        self.init_settings = ParsedSettings(parse_settings(None).settings)
        self.detected_jax: asyncio.Future[tuple[int, ...] | None] | None = None
        self._env_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pallas-env")
        self._warned: set[str] = set()
        # Per document: the last diagnostics converted, by finding (see diagnostics()).
        self._converted: dict[str, dict[int, tuple[Any, tuple[str, ...], types.Diagnostic]]] = {}
        self._watcher: asyncio.Task[None] | None = None

    async def detect_jax_later(self, root: str | None) -> tuple[int, ...] | None:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._env_executor, detect_jax_version, root)

    # --- capabilities ------------------------------------------------------------------

    def _cap(self, path: str, default: Any = None) -> Any:
        return get_capability(self.client_capabilities, path, default)

    @property
    def supports_pull(self) -> bool:
        return self._cap("text_document.diagnostic") is not None

    @property
    def supports_configuration(self) -> bool:
        return bool(self._cap("workspace.configuration", False))

    @property
    def supports_document_changes(self) -> bool:
        return bool(self._cap("workspace.workspace_edit.document_changes", False))

    @property
    def hover_markdown(self) -> bool:
        formats = self._cap("text_document.hover.content_format") or []
        return not formats or types.MarkupKind.Markdown in formats

    # --- messages ----------------------------------------------------------------------

    def _log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def _warn_once(self, message: str) -> None:
        if message in self._warned:
            return
        self._warned.add(message)
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Log instead of popping up an error window: one bad message must not nag the user.
        if source is FeatureRequestError:
            return  # already answered with an error response
        with contextlib.suppress(Exception):
            self._log(f"pallas-ls: internal error ({source.__name__}): {error}")

    def positions(self, text: str) -> convert.TextPositions:
        return convert.TextPositions(text, self.workspace.position_codec)

    def _elsewhere(self) -> Any:
        cache: dict[str, convert.TextPositions | None] = {}

        def lookup(path: str) -> convert.TextPositions | None:
            if path not in cache:
                text = self.session.workspace.read_source(path)
                cache[path] = self.positions(text) if text is not None else None
            return cache[path]

        return lookup

    def diagnostics(self, uri: str, findings: list[Any], text: str) -> list[types.Diagnostic]:
        """LSP diagnostics for the findings. A finding the engine reused from its cache
        (the same object) whose lines still read the same converts as it did last time."""
        here = self.positions(text)
        lookup = self._elsewhere()
        ordered = sorted(findings, key=lambda f: (f.span, f.code))
        last = self._converted.get(uri, {})
        now: dict[int, tuple[Any, tuple[str, ...], types.Diagnostic]] = {}
        out = []
        for finding in ordered:
            lines = _lines_under(finding, here)
            hit = last.get(id(finding))
            if lines is not None and hit is not None and hit[0] is finding and hit[1] == lines:
                diag = hit[2]
            else:
                diag = convert.diagnostic(finding, uri, here, lookup)
            if lines is not None:
                now[id(finding)] = (finding, lines, diag)
            out.append(diag)
        self._converted[uri] = now
        return out

    def _publish(self, uri: str, version: int | None, findings: list[Any], text: str) -> None:
        try:
            diagnostics = self.diagnostics(uri, findings, text)
        except Exception as exc:
            self._log(f"pallas-ls: cannot convert findings for {uri}: {exc!r}")
            diagnostics = []
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    # --- settings ----------------------------------------------------------------------

    async def _fetch_configuration(self) -> ParsedSettings | None:
        if not self.supports_configuration:
            return None
        scope = self.workspace.root_uri
        try:
            result = await asyncio.wait_for(
                self.workspace_configuration_async(
                    types.ConfigurationParams(
                        items=[types.ConfigurationItem(scope_uri=scope, section=SECTION)]
                    )
                ),
                timeout=10,
            )
        except Exception as exc:
            self._log(f"pallas-ls: workspace/configuration failed: {exc!r}")
            return None
        parsed = parse_settings(list(result) if result is not None else None)
        return parsed if parsed.given else None

    async def apply_settings(self, parsed: ParsedSettings) -> None:
        if parsed.problems:
            self._warn_once(warning_text(parsed.problems))
        settings = parsed.settings
        jax_version = settings.jax_version
        if jax_version is None:
            if self.detected_jax is None:
                self.detected_jax = asyncio.get_running_loop().run_in_executor(
                    self._env_executor, detect_jax_version, self.session.root
                )
            try:
                jax_version = await self.detected_jax
            except Exception as exc:
                self._log(f"pallas-ls: cannot detect the JAX version: {exc!r}")
        self.session.config = Config(settings.select, settings.ignore, jax_version)
        self._log(
            f"pallas-ls {__version__}: select={sorted(settings.select) or 'all'}, "
            f"ignore={sorted(settings.ignore)}, jax={jax_version or 'latest'}",
            types.MessageType.Info,
        )

    async def watch_parent(self, pid: int) -> None:
        while True:
            await asyncio.sleep(PARENT_POLL_SECONDS)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                self.exit_now(1)
            except OSError:
                pass  # exists, owned by someone else

    def exit_now(self, code: int) -> None:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os._exit(code)


def _document(ls: PallasLanguageServer, uri: str) -> Document:
    doc = ls.session.get(uri)
    if doc is None:
        raise JsonRpcInvalidParams(f"pallas-ls: unknown document {uri} (not open)")
    return doc


def _lines_under(finding: Any, here: convert.TextPositions) -> tuple[str, ...] | None:
    """The text of every line the finding's positions fall on (span and related spans in
    this file), or None when it points into another file (that file may change alone)."""
    spans = [finding.span]
    for item in finding.related:
        if item.path is not None:
            return None
        spans.append(item.span)
    lines = here.lines
    out = []
    for span in spans:
        for line in (span.start_line, span.end_line):
            out.append(lines[line] if 0 <= line < len(lines) else "")
    return tuple(out)


class ClientLogHandler(logging.Handler):
    """Forwards the engine's warnings and errors (a rule that failed on a file, a file
    nested too deeply) to the client as window/logMessage. Records may come from the
    analysis thread: they are handed to the event loop."""

    KINDS = (
        (logging.ERROR, types.MessageType.Error),
        (logging.WARNING, types.MessageType.Warning),
    )

    def __init__(self, server: PallasLanguageServer, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(logging.WARNING)
        self.server = server
        self.loop = loop

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
            kind = next(k for level, k in self.KINDS if record.levelno >= level)
            self.loop.call_soon_threadsafe(self.server._log, message, kind)
        except Exception:  # a closed loop at exit: nothing to tell
            self.handleError(record)


def forward_engine_logs(server: PallasLanguageServer, loop: asyncio.AbstractEventLoop) -> None:
    logger = logging.getLogger("pallas_ls")
    for handler in [h for h in logger.handlers if isinstance(h, ClientLogHandler)]:
        logger.removeHandler(handler)
    logger.addHandler(ClientLogHandler(server, loop))


def build_server() -> PallasLanguageServer:
    server = PallasLanguageServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: PallasLanguageServer, params: types.InitializeParams) -> None:
        root = ls.workspace.root_path
        if root is None and params.workspace_folders:
            root = to_fs_path(params.workspace_folders[0].uri)
        ls.session.set_root(root)
        ls.session.pull = ls.supports_pull
        ls.init_settings = parse_settings(params.initialization_options)
        loop = asyncio.get_running_loop()
        forward_engine_logs(ls, loop)
        # Background work starts once this handler has returned and its result is written:
        # threads started now would hold the GIL while the client waits for the answer.
        loop.call_soon(ls.session.warm_up, ls.protocol)
        if ls.init_settings.settings.jax_version is None:
            ls.detected_jax = loop.create_task(ls.detect_jax_later(root))
        if params.process_id:
            ls._watcher = asyncio.get_running_loop().create_task(ls.watch_parent(params.process_id))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: PallasLanguageServer, params: types.InitializedParams) -> None:
        try:
            parsed = await ls._fetch_configuration() or ls.init_settings
            await ls.apply_settings(parsed)
        finally:
            ls.session.ready.set()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: PallasLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        parsed = await ls._fetch_configuration()
        if parsed is None:
            pushed = parse_settings(params.settings)
            parsed = pushed if pushed.given else ls.init_settings
        await ls.apply_settings(parsed)
        ls.session.reanalyse_all()
        if ls.session.pull and ls._cap("workspace.diagnostics.refresh_support", False):
            ls.workspace_diagnostic_refresh(None)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PallasLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.session.open(item.uri, item.version, item.text)
        ls.session.schedule(item.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PallasLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        doc = ls.session.change(
            uri, params.text_document.version, params.content_changes, ls.workspace.position_codec
        )
        if doc is None:
            ls._log(f"pallas-ls: didChange for a document that is not open: {uri}")
            return
        ls.session.file_changed(doc.path, uri)
        ls.session.edited(uri)
        ls.session.schedule_dependents(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PallasLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.session.file_changed(to_fs_path(uri), uri)
        ls.session.schedule_dependents(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PallasLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.session.close(uri)
        ls._converted.pop(uri, None)
        if not ls.session.pull:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier="pallas-ls", inter_file_dependencies=True, workspace_diagnostics=False
        ),
    )
    async def pull_diagnostics(
        ls: PallasLanguageServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        _document(ls, uri)
        result = await ls.session.analysis(uri)
        if result is None:
            raise JsonRpcInvalidParams(f"pallas-ls: document closed: {uri}")
        result_id = f"{result.version}:{result.generation}"
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(
            items=ls.diagnostics(uri, list(result.findings), result.text), result_id=result_id
        )

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: PallasLanguageServer, params: types.HoverParams) -> types.Hover | None:
        doc = _document(ls, params.text_document.uri)
        line, col = ls.positions(doc.text).from_client(params.position)
        info, text = await ls.session.hover(doc.uri, line, col)
        if info is None:
            return None
        return convert.hover(info, ls.positions(text), ls.hover_markdown)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, convert.FIX_ALL_KIND],
            resolve_provider=False,
        ),
    )
    async def code_action(
        ls: PallasLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        _document(ls, uri)
        result = await ls.session.analysis(uri)
        if result is None:
            return None
        only = params.context.only
        here = ls.positions(result.text)
        newline = line_ending_of(result.text)
        doc_changes = ls.supports_document_changes
        actions: list[types.CodeAction] = []
        if convert.kind_wanted(types.CodeActionKind.QuickFix, only):
            wanted = here.span_from_client(params.range)
            lookup = ls._elsewhere()
            for finding in sorted(result.findings, key=lambda f: (f.span, f.code)):
                if not finding.span.overlaps(wanted):
                    continue
                diag = convert.diagnostic(finding, uri, here, lookup)
                preferred = finding.preferred_fix
                for fix in finding.fixes:
                    edits = [adapt_edit(e, newline) for e in fix.edits]
                    actions.append(
                        types.CodeAction(
                            title=fix.title,
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[diag],
                            is_preferred=fix is preferred,
                            edit=convert.workspace_edit(
                                uri, result.version, convert.text_edits(edits, here), doc_changes
                            ),
                        )
                    )
        if convert.kind_wanted(convert.FIX_ALL_KIND, only):
            # One pass over the current findings, no re-analysis: code actions must be fast.
            # The edits of one TextDocumentEdit all refer to the original text.
            fixes = compatible_fixes(result.findings)
            if fixes:
                edits = [adapt_edit(e, newline) for fix in fixes for e in fix.edits]
                actions.append(
                    types.CodeAction(
                        title="pallas-ls: fix all auto-fixable problems",
                        kind=convert.FIX_ALL_KIND,
                        edit=convert.workspace_edit(
                            uri, result.version, convert.text_edits(edits, here), doc_changes
                        ),
                    )
                )
        return actions

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: PallasLanguageServer, params: Any) -> None:
        ls.shutdown_received = True
        ls.session.shutdown()

    @server.feature(types.EXIT)
    def exit_(ls: PallasLanguageServer, params: Any) -> None:
        # Exit at once: pygls would otherwise wait for its stdin reader thread.
        ls.exit_now(0 if ls.shutdown_received else 1)

    return server


def _one_malloc_arena() -> None:
    """Let the analysis thread share the main thread's malloc arena (glibc only).

    glibc gives each thread that allocates an arena of its own. Under the GIL the loop
    and the analysis thread never allocate at the same moment, so the second arena buys
    nothing and holds ~1.3 MB of a 5,000-line file's analysis (measured with
    benchmarks/lspbench.py). An explicit MALLOC_ARENA_MAX in the environment wins.
    """
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc: nothing to tune
        return
    m_arena_max = -8  # from glibc's <malloc.h>
    mallopt(m_arena_max, 1)


def serve() -> int:
    _one_malloc_arena()  # before the first thread starts
    server = build_server()
    server.start_io()
    # stdin closed (or the loop ended): leave no threads behind.
    server.exit_now(0 if server.shutdown_received else 1)
    return 0
