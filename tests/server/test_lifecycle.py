"""Process lifecycle over raw stdio: shutdown/exit codes, stdin closing, the client dying."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import IO, Any

from conftest import SERVER_COMMAND, WAIT_SECONDS, clean_env


def send(stdin: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
    stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdin.flush()


def read(stdout: IO[bytes]) -> dict[str, Any]:
    length = 0
    while True:
        line = stdout.readline()
        assert line, "server closed stdout"
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    message: dict[str, Any] = json.loads(stdout.read(length))
    return message


def read_response(stdout: IO[bytes], msg_id: int) -> dict[str, Any]:
    while True:
        message = read(stdout)
        if message.get("id") == msg_id and "method" not in message:
            return message


def start(process_id: int | None = None, *args: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [*SERVER_COMMAND, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=clean_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    params = {"processId": process_id, "rootUri": None, "capabilities": {}}
    send(proc.stdin, {"id": 1, "method": "initialize", "params": params})
    assert "result" in read_response(proc.stdout, 1)
    send(proc.stdin, {"method": "initialized", "params": {}})
    return proc


def test_shutdown_then_exit_returns_0() -> None:
    proc = start(None, "--stdio")
    assert proc.stdin is not None and proc.stdout is not None
    send(proc.stdin, {"id": 2, "method": "shutdown"})
    assert read_response(proc.stdout, 2).get("result", "missing") is None
    send(proc.stdin, {"method": "exit"})
    assert proc.wait(WAIT_SECONDS) == 0


def test_exit_without_shutdown_returns_1() -> None:
    proc = start()
    assert proc.stdin is not None
    send(proc.stdin, {"method": "exit"})
    assert proc.wait(WAIT_SECONDS) == 1


def test_requests_after_shutdown_are_refused() -> None:
    proc = start()
    assert proc.stdin is not None and proc.stdout is not None
    send(proc.stdin, {"id": 2, "method": "shutdown"})
    read_response(proc.stdout, 2)
    hover = {
        "textDocument": {"uri": "file:///nowhere.py"},
        "position": {"line": 0, "character": 0},
    }
    send(proc.stdin, {"id": 3, "method": "textDocument/hover", "params": hover})
    assert "error" in read_response(proc.stdout, 3)
    send(proc.stdin, {"method": "exit"})
    assert proc.wait(WAIT_SECONDS) == 0


def test_stdin_closing_ends_the_server() -> None:
    proc = start()
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(WAIT_SECONDS) in (0, 1)


def test_server_exits_when_the_client_process_dies() -> None:
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        proc = start(parent.pid)
        parent.kill()
        parent.wait()
        # The server polls the client's pid every few seconds; stdin stays open meanwhile.
        assert proc.wait(WAIT_SECONDS) == 1
    finally:
        if parent.poll() is None:
            parent.kill()
    assert proc.stdin is not None
    proc.stdin.close()


def test_malformed_message_does_not_kill_the_server() -> None:
    proc = start()
    assert proc.stdin is not None and proc.stdout is not None
    garbage = b"{not json"
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(garbage) + garbage)
    proc.stdin.flush()
    bad_change = {
        "textDocument": {"uri": "file:///never-opened.py", "version": 3},
        "contentChanges": [{"text": "x = 1\n"}],
    }
    send(proc.stdin, {"method": "textDocument/didChange", "params": bad_change})
    send(proc.stdin, {"id": 2, "method": "shutdown"})
    assert "result" in read_response(proc.stdout, 2)
    send(proc.stdin, {"method": "exit"})
    assert proc.wait(WAIT_SECONDS) == 0
