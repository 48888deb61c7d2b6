"""Have pygls's converter ready for the messages the server reads and writes.

pygls (un)structures messages with cattrs, which writes the function for a message type
the first time it meets that type: 1-4 ms each here, paid by the first didOpen, didChange,
publish, hover and code action (about 13 ms in all, against 0.01-1 ms afterwards). The
session runs one sample of each through the converter on the analysis thread, after the
engine import and before any document is open, so no request waits for it.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from pallas_ls.core.model import Edit, Finding, HoverInfo, Related, Span
from pallas_ls.server import convert

log = logging.getLogger("pallas_ls")

_URI = "file:///pallas-ls-warm-up.py"


def _range() -> dict[str, Any]:
    return {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}


def incoming() -> list[tuple[str, dict[str, Any]]]:
    """(method, params) of the messages a session lives on."""
    doc = {"uri": _URI}
    return [
        (
            types.TEXT_DOCUMENT_DID_OPEN,
            {"textDocument": {**doc, "languageId": "python", "version": 1, "text": "x = 1\n"}},
        ),
        (
            types.TEXT_DOCUMENT_DID_CHANGE,
            {
                "textDocument": {**doc, "version": 2},
                "contentChanges": [{"range": _range(), "text": "y"}, {"text": "y = 1\n"}],
            },
        ),
        (types.TEXT_DOCUMENT_HOVER, {"textDocument": doc, "position": {"line": 0, "character": 0}}),
        (
            types.TEXT_DOCUMENT_CODE_ACTION,
            {
                "textDocument": doc,
                "range": _range(),
                "context": {
                    "diagnostics": [
                        {
                            "range": _range(),
                            "message": "m",
                            "severity": 1,
                            "code": "PAL001",
                            "codeDescription": {"href": "https://example.invalid"},
                            "source": "pallas-ls",
                            "relatedInformation": [
                                {"location": {"uri": _URI, "range": _range()}, "message": "m"}
                            ],
                            "data": {"code": "PAL001"},
                        }
                    ],
                    "only": [types.CodeActionKind.QuickFix],
                },
            },
        ),
    ]


def outgoing() -> list[Any]:
    """One of each message the server sends about documents, made by the functions that
    make the real ones (convert.py), so the parts it fills in are the ones warmed."""
    here = convert.TextPositions("x = 1\n", PositionCodec())
    span = Span(0, 0, 0, 1)
    finding = Finding("PAL001", "m", span, related=(Related("m", span),))
    diagnostic = convert.diagnostic(finding, _URI, here, lambda path: None)
    edits = convert.text_edits([Edit(span, "y")], here)
    actions: list[types.Command | types.CodeAction] = [
        types.CodeAction(
            title="t",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            is_preferred=True,
            edit=convert.workspace_edit(_URI, 1, edits, document_changes=True),
        ),
        types.CodeAction(
            title="t",
            kind=convert.FIX_ALL_KIND,
            edit=convert.workspace_edit(_URI, 1, edits, document_changes=False),
        ),
    ]
    return [
        types.PublishDiagnosticsNotification(
            params=types.PublishDiagnosticsParams(uri=_URI, diagnostics=[diagnostic], version=1)
        ),
        types.HoverResponse(id=0, result=convert.hover(HoverInfo("m", span), here, True)),
        types.CodeActionResponse(id=0, result=actions),
    ]


def warm_converter(protocol: Any) -> bool:
    """Run the samples through the protocol's converter; False (and a debug log) when one
    does not fit this version of lsprotocol: only the first such message is slower then."""
    try:
        converter = protocol._converter  # pygls's; a later pygls may name it otherwise
        for method, params in incoming():
            message_type = protocol.get_message_type(method)
            if message_type is None:
                continue
            data: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
            if method in (types.TEXT_DOCUMENT_HOVER, types.TEXT_DOCUMENT_CODE_ACTION):
                data["id"] = 0
            converter.structure(data, message_type)
        for message in outgoing():
            converter.unstructure(message)
    except Exception:
        log.debug("pallas-ls: converter warm-up skipped", exc_info=True)
        return False
    return True
