"""The converter warm-up: its samples are real messages of the installed lsprotocol, they
cover the methods the server lives on, and a sample that no longer fits is skipped."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from pallas_ls.server.server import build_server
from pallas_ls.server.warm import incoming, outgoing, warm_converter


def test_samples_are_messages_of_the_installed_lsprotocol() -> None:
    protocol = build_server().protocol
    assert warm_converter(protocol) is True
    converter = protocol._converter
    for method, params in incoming():
        message_type = protocol.get_message_type(method)
        assert message_type is not None, method
        data: dict[str, Any] = {"jsonrpc": "2.0", "id": 0, "method": method, "params": params}
        if "Notification" in message_type.__name__:
            del data["id"]
        message = converter.structure(data, message_type)
        # The round trip keeps every field: nothing in the sample was ignored.
        assert converter.unstructure(message)["params"] == params, method
    for message in outgoing():
        raw = converter.unstructure(message)
        assert converter.unstructure(converter.structure(raw, type(message))) == raw


def test_samples_cover_the_document_methods_the_server_handles() -> None:
    server = build_server()
    handled = set(server.protocol.fm.features)
    sampled = {method for method, _ in incoming()}
    for method in (
        types.TEXT_DOCUMENT_DID_OPEN,
        types.TEXT_DOCUMENT_DID_CHANGE,
        types.TEXT_DOCUMENT_HOVER,
        types.TEXT_DOCUMENT_CODE_ACTION,
    ):
        assert method in handled and method in sampled, method
    sent = {type(message) for message in outgoing()}
    assert {
        types.PublishDiagnosticsNotification,
        types.HoverResponse,
        types.CodeActionResponse,
    } <= sent


def test_a_sample_that_does_not_fit_is_skipped_without_raising() -> None:
    class Broken:
        def structure(self, data: Any, kind: Any) -> Any:
            raise TypeError("no such field")

    protocol = build_server().protocol

    class Wrapped:
        _converter = Broken()
        get_message_type = staticmethod(protocol.get_message_type)

    assert warm_converter(Wrapped()) is False


def test_a_protocol_without_a_converter_is_skipped_without_raising() -> None:
    class Bare:
        pass

    assert warm_converter(Bare()) is False
