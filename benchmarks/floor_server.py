"""A near-empty pygls server: what pygls + lsprotocol cost before any analysis.

It answers what the latency benchmark asks for, as cheaply as possible: on open and
change it publishes (with the document version) one diagnostic per line longer than
--max-line characters; hover returns the word under the cursor; code action returns an
empty list. Its cold start, RSS and latencies are the floor for pallas-ls, which is
built on the same libraries.

    python benchmarks/floor_server.py [--max-line 100]
"""

from __future__ import annotations

import argparse
import re

from lsprotocol import types
from pygls.lsp.server import LanguageServer

WORD = re.compile(r"\w+")


def long_lines(text: str, max_line: int) -> list[types.Diagnostic]:
    out = []
    for i, line in enumerate(text.split("\n")):
        if len(line) > max_line:
            out.append(
                types.Diagnostic(
                    range=types.Range(types.Position(i, max_line), types.Position(i, len(line))),
                    message=f"line longer than {max_line} characters",
                    severity=types.DiagnosticSeverity.Information,
                    source="floor",
                )
            )
    return out


def build(max_line: int) -> LanguageServer:
    server = LanguageServer(
        "bench-floor", "1.0", text_document_sync_kind=types.TextDocumentSyncKind.Incremental
    )

    def publish(ls: LanguageServer, uri: str) -> None:
        doc = ls.workspace.get_text_document(uri)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=doc.version, diagnostics=long_lines(doc.source, max_line)
            )
        )

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        publish(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        publish(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover | None:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        lines = doc.lines
        line = lines[params.position.line] if params.position.line < len(lines) else ""
        for m in WORD.finditer(line):
            if m.start() <= params.position.character <= m.end():
                value = f"`{m.group()}`"
                return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, value))
        return None

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION)
    def code_action(ls: LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return []

    return server


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--max-line", type=int, default=100)
    build(ap.parse_args().max_line).start_io()


if __name__ == "__main__":
    main()
