"""Findings -> LSP objects. Core positions are (line, code point); every conversion to and
from the client's encoding goes through pygls's position codec."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from pallas_ls.core.model import Edit, Finding, HoverInfo, Span
from pallas_ls.core.textedit import Lines, split_lines

SOURCE = "pallas-ls"
FIX_ALL_KIND = "source.fixAll.pallas-ls"

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "info": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


def lsp_lines(text: str) -> Lines:
    """Lines as the LSP counts them (only \\r\\n, \\r and \\n end a line), endings kept.

    A trailing line break yields a final empty line, so the end of the text is addressable.
    The strings are the engine's split of the same text (shared, see split_lines).
    """
    lines = split_lines(text)
    if not lines or lines[-1].endswith(("\n", "\r")):
        return (*lines, "")
    return lines


def _content(line: str) -> str:
    return line.rstrip("\r\n")


class TextPositions:
    """One text version and the codec: code points <-> client units, offsets."""

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.text = text
        self.codec = codec
        self.lines = lsp_lines(text)
        self._starts: list[int] | None = None

    def _clamp(self, line: int, col: int) -> tuple[int, int]:
        if line < 0:
            return 0, 0
        if line >= len(self.lines):
            last = len(self.lines) - 1
            return last, len(_content(self.lines[last]))
        return line, max(0, min(col, len(_content(self.lines[line]))))

    def position(self, line: int, col: int) -> types.Position:
        line, col = self._clamp(line, col)
        return self.codec.position_to_client_units(self.lines, ServerTextPosition(line, col))

    def range(self, span: Span) -> types.Range:
        return types.Range(
            start=self.position(span.start_line, span.start_col),
            end=self.position(span.end_line, span.end_col),
        )

    def from_client(self, position: types.Position) -> tuple[int, int]:
        """A client position -> (line, code point column), clamped into the text."""
        if position.line >= len(self.lines):
            return self._clamp(len(self.lines), 0)
        pos = types.Position(line=position.line, character=position.character)
        server = self.codec.position_from_client_units(self.lines, pos)
        return self._clamp(server.line, server.character)

    def span_from_client(self, rng: types.Range) -> Span:
        start = self.from_client(rng.start)
        end = self.from_client(rng.end)
        return Span(*start, *end)

    def offset(self, line: int, col: int) -> int:
        if self._starts is None:
            self._starts = [0, *itertools.accumulate(map(len, self.lines[:-1]))]
        line, col = self._clamp(line, col)
        return self._starts[line] + col

    def position_at_offset(self, offset: int) -> types.Position:
        self.offset(0, 0)
        assert self._starts is not None
        import bisect

        line = max(0, bisect.bisect_right(self._starts, offset) - 1)
        return self.position(line, offset - self._starts[line])


def github_url(code: str) -> str | None:
    from pallas_ls.core.rules import RULES  # loaded with the engine, after start-up

    rule = RULES.get(code)
    if rule is None:
        return None
    try:
        return rule.record.github_url
    except KeyError:
        return None


def diagnostic(
    finding: Finding,
    uri: str,
    here: TextPositions,
    elsewhere: Callable[[str], TextPositions | None],
) -> types.Diagnostic:
    related = []
    for item in finding.related:
        if item.path is None:
            location = types.Location(uri=uri, range=here.range(item.span))
        else:
            other = elsewhere(item.path)
            other_uri = from_fs_path(item.path) or item.path
            if other is not None:
                rng = other.range(item.span)
            else:  # unreadable: code points are the best we have
                rng = types.Range(
                    start=types.Position(line=item.span.start_line, character=item.span.start_col),
                    end=types.Position(line=item.span.end_line, character=item.span.end_col),
                )
            location = types.Location(uri=other_uri, range=rng)
        related.append(types.DiagnosticRelatedInformation(location=location, message=item.message))
    href = github_url(finding.code)
    return types.Diagnostic(
        range=here.range(finding.span),
        message=finding.message,
        severity=SEVERITY.get(finding.severity, types.DiagnosticSeverity.Error),
        code=finding.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        related_information=related or None,
        data={"code": finding.code},
    )


def text_edits(edits: Sequence[Edit], here: TextPositions) -> list[types.TextEdit]:
    return [types.TextEdit(range=here.range(e.span), new_text=e.new_text) for e in edits]


def workspace_edit(
    uri: str, version: int | None, edits: list[types.TextEdit], document_changes: bool
) -> types.WorkspaceEdit:
    if document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=list(edits),
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: list(edits)})


def hover(info: HoverInfo, here: TextPositions, markdown: bool) -> types.Hover:
    kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
    return types.Hover(
        contents=types.MarkupContent(kind=kind, value=info.markdown),
        range=here.range(info.span),
    )


def kind_wanted(kind: str, only: Sequence[str] | None) -> bool:
    """`context.only` names kinds or their parents: "source" covers "source.fixAll.x"."""
    if not only:
        return True
    return any(kind == want or kind.startswith(want + ".") for want in only)
