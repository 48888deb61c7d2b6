"""The real server process over stdio, driven with recorded editor capability profiles."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from conftest import (
    OPT_LEVEL_LINE,
    OPT_LEVEL_SOURCE,
    OPT_LEVEL_TEXT,
    Recorder,
    code_point_span,
    lsp_session,
    make_fake_venv,
    units,
    wait_until,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities

from pallas_ls import __version__
from pallas_ls.core.rules import RULES

# (profile, negotiated encoding, pull diagnostics?)
PUSH_PROFILES = [
    ("visual-studio-code", "utf-16"),
    ("neovim@v0.7.0", "utf-16"),
    ("emacs", "utf-32"),
]
PULL_PROFILES = [("neovim@v0.11.0", "utf-8"), ("neovim@v0.10.0", "utf-16")]
TWO_FINDINGS = OPT_LEVEL_SOURCE + (
    "\n\ndef run2(x):\n"
    "    return pl.pallas_call(\n"
    "        kernel,\n"
    "        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),\n"
    "        compiler_params=pltpu.CompilerParams(opt_level=2),\n"
    "    )(x)\n"
)


def utf8_push_capabilities() -> types.ClientCapabilities:
    caps = client_capabilities("neovim@v0.9.1")
    caps.general = types.GeneralClientCapabilities(position_encodings=["utf-8"])
    return caps


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A project whose virtualenv has no jax: the target is "latest", so PAL001 applies."""
    directory = tmp_path_factory.mktemp("project")
    make_fake_venv(directory / ".venv", None)
    return directory


def doc_uri(root: pathlib.Path, name: str = "kernels.py") -> str:
    return (root / name).as_uri()


def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=version, text=text
            )
        )
    )


async def published(recorder: Recorder, uri: str, version: int | None) -> list[types.Diagnostic]:
    params = await wait_until(
        lambda: next((p for p in recorder.for_uri(uri) if p.version == version), None),
        f"diagnostics for {uri} version {version}",
    )
    return list(params.diagnostics)


def client_offset(text: str, position: types.Position, encoding: str) -> int:
    """Test oracle: an LSP position in `encoding` units -> offset into text ("\\n" lines)."""
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    used = 0
    for i, char in enumerate(line):
        if used >= position.character:
            return offset + i
        used += units(char, encoding)
    return offset + len(line)


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    spans = sorted(
        (
            client_offset(text, e.range.start, encoding),
            client_offset(text, e.range.end, encoding),
            e.new_text,
        )
        for e in edits
    )
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


def edits_of(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    if edit.document_changes is not None:
        out: list[types.TextEdit] = []
        for change in edit.document_changes:
            assert isinstance(change, types.TextDocumentEdit)
            assert change.text_document.uri == uri
            out += [e for e in change.edits if isinstance(e, types.TextEdit)]
        return out
    assert edit.changes is not None
    return list(edit.changes[uri])


def expected_range(text: str, line: int, needle: str, encoding: str) -> types.Range:
    start, end = code_point_span(text, line, needle)
    line_text = text.splitlines()[line]
    return types.Range(
        start=types.Position(line=line, character=units(line_text[:start], encoding)),
        end=types.Position(line=line, character=units(line_text[:end], encoding)),
    )


def check_opt_level_diagnostic(diag: types.Diagnostic, text: str, encoding: str) -> None:
    assert diag.code == "PAL001"
    assert diag.source == "pallas-ls"
    assert diag.severity == types.DiagnosticSeverity.Error
    assert diag.code_description is not None
    assert diag.code_description.href == RULES["PAL001"].record.github_url
    assert "explicit opt_level is only supported for SparseCore kernels" in diag.message
    assert diag.range == expected_range(text, OPT_LEVEL_LINE, OPT_LEVEL_TEXT, encoding)


async def test_initialize_advertises_features(root: pathlib.Path) -> None:
    async with lsp_session("visual-studio-code", root=root) as (_, _, result):
        assert result.server_info is not None
        assert (result.server_info.name, result.server_info.version) == ("pallas-ls", __version__)
        caps = result.capabilities
        sync = caps.text_document_sync
        assert isinstance(sync, types.TextDocumentSyncOptions)
        assert sync.change == types.TextDocumentSyncKind.Incremental
        assert caps.hover_provider
        assert isinstance(caps.code_action_provider, types.CodeActionOptions)
        assert "source.fixAll.pallas-ls" in (caps.code_action_provider.code_action_kinds or [])
        assert caps.diagnostic_provider is not None


@pytest.mark.parametrize(("profile", "encoding"), PUSH_PROFILES)
async def test_push_diagnostic_exact_range(root: pathlib.Path, profile: str, encoding: str) -> None:
    async with lsp_session(profile, root=root) as (client, recorder, result):
        assert result.capabilities.position_encoding == encoding
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        diagnostics = await published(recorder, uri, 1)
        assert len(diagnostics) == 1
        check_opt_level_diagnostic(diagnostics[0], OPT_LEVEL_SOURCE, encoding)
        for info in diagnostics[0].related_information or []:
            assert info.location.uri in (uri,) or info.location.uri.startswith("file://")


async def test_push_utf8(root: pathlib.Path) -> None:
    async with lsp_session(utf8_push_capabilities(), root=root) as (client, recorder, result):
        assert result.capabilities.position_encoding == "utf-8"
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        diagnostics = await published(recorder, uri, 1)
        assert len(diagnostics) == 1
        check_opt_level_diagnostic(diagnostics[0], OPT_LEVEL_SOURCE, "utf-8")


@pytest.mark.parametrize(("profile", "encoding"), PULL_PROFILES)
async def test_pull_diagnostics(root: pathlib.Path, profile: str, encoding: str) -> None:
    async with lsp_session(profile, root=root) as (client, recorder, result):
        assert result.capabilities.position_encoding == encoding
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        ident = types.TextDocumentIdentifier(uri=uri)
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident)
        )
        assert report.kind == "full"
        assert len(report.items) == 1
        check_opt_level_diagnostic(report.items[0], OPT_LEVEL_SOURCE, encoding)
        assert report.result_id
        again = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident, previous_result_id=report.result_id)
        )
        assert again.kind == "unchanged"
        assert again.result_id == report.result_id
        # A pull client is never pushed to.
        await client.text_document_hover_async(
            types.HoverParams(text_document=ident, position=types.Position(line=0, character=0))
        )
        assert recorder.for_uri(uri) == []


@pytest.mark.parametrize(("profile", "encoding"), [*PUSH_PROFILES, ("neovim@v0.11.0", "utf-8")])
async def test_hover_on_finding(root: pathlib.Path, profile: str, encoding: str) -> None:
    async with lsp_session(profile, root=root) as (client, _, _):
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        rng = expected_range(OPT_LEVEL_SOURCE, OPT_LEVEL_LINE, OPT_LEVEL_TEXT, encoding)
        inside = types.Position(line=OPT_LEVEL_LINE, character=rng.start.character + 2)
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=inside)
        )
        assert hover is not None
        assert isinstance(hover.contents, types.MarkupContent)
        assert hover.contents.kind == types.MarkupKind.Markdown
        assert "PAL001" in hover.contents.value
        assert hover.range is not None
        assert hover.range.start.line == OPT_LEVEL_LINE
        assert hover.range.start.character <= inside.character <= hover.range.end.character


async def test_hover_plaintext_client(root: pathlib.Path) -> None:
    caps = client_capabilities("visual-studio-code")
    assert caps.text_document is not None
    caps.text_document.hover = types.HoverClientCapabilities(
        content_format=[types.MarkupKind.PlainText]
    )
    async with lsp_session(caps, root=root) as (client, _, _):
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        rng = expected_range(OPT_LEVEL_SOURCE, OPT_LEVEL_LINE, OPT_LEVEL_TEXT, "utf-16")
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=rng.start
            )
        )
        assert hover is not None
        assert isinstance(hover.contents, types.MarkupContent)
        assert hover.contents.kind == types.MarkupKind.PlainText


async def code_actions(
    client: LanguageClient, uri: str, rng: types.Range, only: list[str] | None = None
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )
    actions = list(result or [])
    assert all(isinstance(a, types.CodeAction) for a in actions)
    return actions  # type: ignore[return-value]


async def apply_and_recheck(
    client: LanguageClient,
    recorder: Recorder,
    uri: str,
    text: str,
    edits: list[types.TextEdit],
    encoding: str,
    version: int,
) -> tuple[str, list[types.Diagnostic]]:
    """Apply edits as an editor does (incremental didChange), return the new diagnostics."""
    new_text = apply_text_edits(text, edits, encoding)
    changes: list[Any] = [
        types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
        for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]
    ]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=changes,
        )
    )
    return new_text, await published(recorder, uri, version)


@pytest.mark.parametrize(
    ("profile", "encoding", "versioned"),
    [
        ("visual-studio-code", "utf-16", True),
        ("neovim@v0.7.0", "utf-16", False),
        ("emacs", "utf-32", True),
        (utf8_push_capabilities(), "utf-8", False),
    ],
)
async def test_quickfix_applied_clears_the_finding(
    root: pathlib.Path, profile: Any, encoding: str, versioned: bool
) -> None:
    async with lsp_session(profile, root=root) as (client, recorder, _):
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        diagnostics = await published(recorder, uri, 1)
        assert len(diagnostics) == 1
        actions = await code_actions(client, uri, diagnostics[0].range)
        quickfixes = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
        assert quickfixes
        preferred = [a for a in quickfixes if a.is_preferred]
        assert len(preferred) == 1
        action = preferred[0]
        assert action.diagnostics and action.diagnostics[0].code == "PAL001"
        assert action.edit is not None
        assert (action.edit.document_changes is not None) == versioned
        if versioned:
            change = action.edit.document_changes[0]  # type: ignore[index]
            assert isinstance(change, types.TextDocumentEdit)
            assert change.text_document.version == 1
        new_text, after = await apply_and_recheck(
            client, recorder, uri, OPT_LEVEL_SOURCE, edits_of(action.edit, uri), encoding, 2
        )
        assert "opt_level" not in new_text
        assert after == []


async def test_fix_all_and_context_only(root: pathlib.Path) -> None:
    async with lsp_session("visual-studio-code", root=root) as (client, recorder, _):
        uri = doc_uri(root)
        open_doc(client, uri, TWO_FINDINGS)
        diagnostics = await published(recorder, uri, 1)
        assert [d.code for d in diagnostics] == ["PAL001", "PAL001"]
        first = diagnostics[0].range

        kinds = {a.kind for a in await code_actions(client, uri, first)}
        assert kinds == {types.CodeActionKind.QuickFix, "source.fixAll.pallas-ls"}
        only_quickfix = await code_actions(client, uri, first, ["quickfix"])
        assert only_quickfix and {a.kind for a in only_quickfix} == {"quickfix"}
        for only in (["source.fixAll"], ["source"], ["source.fixAll.pallas-ls"]):
            actions = await code_actions(client, uri, first, only)
            assert [a.kind for a in actions] == ["source.fixAll.pallas-ls"], only
        assert await code_actions(client, uri, first, ["refactor"]) == []

        (fix_all,) = await code_actions(client, uri, first, ["source.fixAll"])
        assert fix_all.edit is not None
        new_text, after = await apply_and_recheck(
            client, recorder, uri, TWO_FINDINGS, edits_of(fix_all.edit, uri), "utf-16", 2
        )
        assert after == []
        assert "opt_level" not in new_text
        # Nothing left to fix: a second fixAll offers nothing.
        assert await code_actions(client, uri, first, ["source.fixAll"]) == []


SETTINGS_CASES = [
    ({"select": ["PAL002"]}, []),
    ({"ignore": ["PAL001"]}, []),
    ({"ignore": "PAL001"}, []),
    ({"jaxVersion": "0.10.2"}, ["PAL004"]),
    ({"settings": {"jaxVersion": "0.10.2"}}, ["PAL004"]),
    ({"pallas-ls": {"select": ["PAL004"], "jaxVersion": "0.10.2"}}, ["PAL004"]),
    ([{"jaxVersion": "0.10.2"}], ["PAL004"]),
    ({}, ["PAL001"]),
]


@pytest.mark.parametrize(("options", "codes"), SETTINGS_CASES)
async def test_settings_from_initialization_options(
    root: pathlib.Path, options: Any, codes: list[str]
) -> None:
    async with lsp_session("neovim@v0.7.0", root=root, initialization_options=options) as (
        client,
        recorder,
        _,
    ):
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        assert [d.code for d in await published(recorder, uri, 1)] == codes
        assert client.messages == []


@pytest.mark.parametrize(
    ("section", "codes"),
    [
        ({"jaxVersion": "0.10.2"}, ["PAL004"]),
        ({"ignore": ["PAL0"]}, []),
        ({"select": "PAL001,PAL002"}, ["PAL001"]),
    ],
)
async def test_settings_from_workspace_configuration(
    root: pathlib.Path, section: dict[str, Any], codes: list[str]
) -> None:
    config = {"": {"pallas-ls": section}}
    async with lsp_session("visual-studio-code", root=root, configuration=config) as (
        client,
        recorder,
        _,
    ):
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        assert [d.code for d in await published(recorder, uri, 1)] == codes


async def test_invalid_settings_warn_once_and_use_defaults(root: pathlib.Path) -> None:
    options = {"select": 5, "ignore": ["BOGUS1"], "jaxVersion": 3}
    async with lsp_session("neovim@v0.7.0", root=root, initialization_options=options) as (
        client,
        recorder,
        _,
    ):
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        assert [d.code for d in await published(recorder, uri, 1)] == ["PAL001"]
        warnings = [m for m in client.messages if m.type == types.MessageType.Warning]
        assert len(warnings) == 1
        for word in ("select", "BOGUS1", "jaxVersion"):
            assert word in warnings[0].message


async def test_did_change_configuration_repulls_and_reanalyses(root: pathlib.Path) -> None:
    async with lsp_session("visual-studio-code", root=root) as (client, recorder, _):
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        assert [d.code for d in await published(recorder, uri, 1)] == ["PAL001"]
        count = len(recorder.for_uri(uri))
        client.set_configuration({"ignore": ["PAL001"]}, section="pallas-ls")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        latest = await wait_until(
            lambda: recorder.for_uri(uri)[count:], "diagnostics after the settings change"
        )
        assert list(latest[-1].diagnostics) == []


async def test_did_close_clears_diagnostics(root: pathlib.Path) -> None:
    async with lsp_session("visual-studio-code", root=root) as (client, recorder, _):
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        assert len(await published(recorder, uri, 1)) == 1
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        await wait_until(
            lambda: list(recorder.for_uri(uri)[-1].diagnostics) == [],
            "an empty publish after didClose",
        )


async def test_unknown_document_requests_get_errors(root: pathlib.Path) -> None:
    async with lsp_session("neovim@v0.10.0", root=root) as (client, _, _):
        ident = types.TextDocumentIdentifier(uri=doc_uri(root, "never_opened.py"))
        origin = types.Position(line=0, character=0)
        with pytest.raises(JsonRpcException):
            await client.text_document_hover_async(
                types.HoverParams(text_document=ident, position=origin)
            )
        with pytest.raises(JsonRpcException):
            await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=ident,
                    range=types.Range(start=origin, end=origin),
                    context=types.CodeActionContext(diagnostics=[]),
                )
            )
        with pytest.raises(JsonRpcException):
            await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=ident)
            )
        # Still alive and answering.
        uri = doc_uri(root)
        open_doc(client, uri, OPT_LEVEL_SOURCE)
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert report.kind == "full"
        assert [d.code for d in report.items] == ["PAL001"]


async def test_burst_of_edits_publishes_the_last_version(root: pathlib.Path) -> None:
    async with lsp_session("visual-studio-code", root=root) as (client, recorder, _):
        uri = doc_uri(root)
        text = OPT_LEVEL_SOURCE + "# \n"
        open_doc(client, uri, text)
        assert len(await published(recorder, uri, 1)) == 1
        before = len(recorder.for_uri(uri))
        last_line = text.count("\n") - 1
        for i in range(50):
            at = types.Position(line=last_line, character=2 + i)
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2 + i),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(start=at, end=at), text="é"
                        )
                    ],
                )
            )
        final = await published(recorder, uri, 51)
        assert len(final) == 1
        check_opt_level_diagnostic(final[0], OPT_LEVEL_SOURCE, "utf-16")
        burst = recorder.for_uri(uri)[before:]
        versions = [p.version for p in burst]
        assert versions == sorted(versions), versions  # never back to an older version
        assert versions[-1] == 51
        # Coalesced: superseded versions are dropped instead of published one by one.
        assert len(burst) <= 10, versions
        # The server's text matches ours: a quick fix still lands on the right bytes.
        actions = await code_actions(client, uri, final[0].range, ["quickfix"])
        edited = text[:-1] + "é" * 50 + "\n"
        new_text, after = await apply_and_recheck(
            client, recorder, uri, edited, edits_of(actions[0].edit, uri), "utf-16", 52
        )  # type: ignore[arg-type]
        assert after == []
        assert new_text.endswith("# " + "é" * 50 + "\n")


# Python's str.splitlines() ends a line at these; the LSP (and Python's tokenizer) do not.
NON_LSP_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@pytest.mark.parametrize(("profile", "encoding"), PUSH_PROFILES)
async def test_edit_range_past_non_lsp_line_breaks(
    root: pathlib.Path, profile: str, encoding: str
) -> None:
    """A string holding \\f, \\u2028, ... keeps its line one line; an edit whose range ends
    after them on that line cuts the server's copy exactly where the client's was cut."""
    line = OPT_LEVEL_SOURCE.splitlines()[OPT_LEVEL_LINE]
    exotic = line.replace('"π→✓', f'"π{NON_LSP_BREAKS}→✓')
    text = OPT_LEVEL_SOURCE.replace(line, exotic)
    start = exotic.index("→✓")
    end = exotic.index("opt_level=2") + len("opt_level=2")
    async with lsp_session(profile, root=root) as (client, recorder, _):
        uri = doc_uri(root)
        open_doc(client, uri, text)
        assert len(await published(recorder, uri, 1)) == 1
        replacement = '"; params = pltpu.CompilerParams(opt_level=3'
        edit = types.TextEdit(
            range=types.Range(
                start=types.Position(
                    line=OPT_LEVEL_LINE, character=units(exotic[:start], encoding)
                ),
                end=types.Position(line=OPT_LEVEL_LINE, character=units(exotic[:end], encoding)),
            ),
            new_text=replacement,
        )
        edited, diagnostics = await apply_and_recheck(
            client, recorder, uri, text, [edit], encoding, 2
        )
        assert edited.split("\n")[OPT_LEVEL_LINE] == (
            f'    label = "π{NON_LSP_BREAKS}"; params = pltpu.CompilerParams(opt_level=3)'
        )
        assert len(diagnostics) == 1, diagnostics
        assert "opt_level=3 reaches kernel" in diagnostics[0].message
        assert diagnostics[0].range == types.Range(
            start=types.Position(
                line=OPT_LEVEL_LINE,
                character=units(
                    edited.split("\n")[OPT_LEVEL_LINE][: -len("opt_level=3)")], encoding
                ),
            ),
            end=types.Position(
                line=OPT_LEVEL_LINE,
                character=units(edited.split("\n")[OPT_LEVEL_LINE][:-1], encoding),
            ),
        )
        # The server's copy is the client's: its quick fix applies cleanly.
        actions = await code_actions(client, uri, diagnostics[0].range, ["quickfix"])
        fixed, after = await apply_and_recheck(
            client, recorder, uri, edited, edits_of(actions[0].edit, uri), encoding, 3
        )  # type: ignore[arg-type]
        assert after == []
        assert fixed.split("\n")[OPT_LEVEL_LINE].endswith("pltpu.CompilerParams()")


CONV_SOURCE = """\
from jax import lax
from jax.experimental import pallas as pl


def conv_kernel(x_ref, w_ref, o_ref):
    o_ref[...] = lax.conv(x_ref[...], w_ref[...], (1, 1), "SAME", precision=(lax.Precision.DEFAULT, lax.Precision.HIGHEST))


def conv(x, w):
    return pl.pallas_call(conv_kernel, out_shape=x)(x, w)
"""


async def test_conv_precision_two_fixes_preferred_applied(root: pathlib.Path) -> None:
    async with lsp_session("emacs", root=root) as (client, recorder, _):
        uri = doc_uri(root, "conv.py")
        open_doc(client, uri, CONV_SOURCE)
        diagnostics = await published(recorder, uri, 1)
        assert [d.code for d in diagnostics] == ["PAL002"]
        assert diagnostics[0].range.start.line == 5
        actions = await code_actions(client, uri, diagnostics[0].range, ["quickfix"])
        assert len(actions) == 2
        preferred = [a for a in actions if a.is_preferred]
        assert len(preferred) == 1 and "HIGHEST" in preferred[0].title
        assert preferred[0].edit is not None
        new_text, after = await apply_and_recheck(
            client, recorder, uri, CONV_SOURCE, edits_of(preferred[0].edit, uri), "utf-32", 2
        )
        assert after == []
        assert "lax.Precision.DEFAULT" not in new_text


async def test_unsaved_edit_in_another_module_reanalyses_importers(
    tmp_path: pathlib.Path,
) -> None:
    make_fake_venv(tmp_path / ".venv", None)
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    settings_text = (
        "from jax.experimental.pallas import tpu as pltpu\n\n"
        "PARAMS = pltpu.CompilerParams(opt_level=2)\n"
    )
    (package / "settings.py").write_text(settings_text, encoding="utf-8")
    kern_text = (
        "from jax.experimental import pallas as pl\n\n"
        "from .settings import PARAMS\n\n\n"
        "def k(x_ref, o_ref):\n"
        "    o_ref[...] = x_ref[...]\n\n\n"
        "def run(x):\n"
        "    return pl.pallas_call(k, out_shape=x, compiler_params=PARAMS)(x)\n"
    )
    (package / "kern.py").write_text(kern_text, encoding="utf-8")
    async with lsp_session("visual-studio-code", root=tmp_path) as (client, recorder, _):
        kern_uri = (package / "kern.py").as_uri()
        settings_uri = (package / "settings.py").as_uri()
        open_doc(client, settings_uri, settings_text)
        open_doc(client, kern_uri, kern_text)
        assert [d.code for d in await published(recorder, kern_uri, 1)] == ["PAL001"]
        seen = len(recorder.for_uri(kern_uri))
        # Unsaved edit in settings.py: opt_level=2 -> opt_level=None.
        line = settings_text.splitlines()[2]
        start = line.index("2)")
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=settings_uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=2, character=start),
                            end=types.Position(line=2, character=start + 1),
                        ),
                        text="None",
                    )
                ],
            )
        )
        fresh = await wait_until(
            lambda: recorder.for_uri(kern_uri)[seen:], "kern.py re-analysed after the edit"
        )
        assert list(fresh[-1].diagnostics) == []
