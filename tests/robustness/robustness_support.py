"""Shared pieces of the robustness tests: seed files, mutators, a raw JSON-RPC client for
the real server process, position helpers in LSP code units, and time budgets."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import threading
import time
import tokenize
from collections.abc import Callable, Iterator
from typing import Any

REPO = pathlib.Path(__file__).resolve().parents[2]
SERVER_COMMAND = [sys.executable, "-m", "pallas_ls", "serve"]
CLI_COMMAND = [sys.executable, "-m", "pallas_ls", "check"]
# Only a hang should ever reach these; they are safety nets, not speed assertions.
REQUEST_TIMEOUT = 60.0
PROCESS_TIMEOUT = 120.0


def fuzz_budget() -> float:
    """Total fuzzing seconds (engine + CLI + server), from PALLAS_FUZZ_SECONDS."""
    return float(os.environ.get("PALLAS_FUZZ_SECONDS", "150"))


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


def seed_files() -> list[pathlib.Path]:
    """Everything under tests/core/fixtures/ and examples/ (the mutation seeds)."""
    found = sorted((REPO / "tests" / "core" / "fixtures").rglob("*.py"))
    found += sorted((REPO / "examples").rglob("*.py"))
    return found


def seed_texts() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in seed_files()]


# --- time limits ---------------------------------------------------------------------


class Hang(Exception):
    """An input took longer than its (generous) budget."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise Hang in the main thread if the block runs longer than `seconds`."""

    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- mutations -----------------------------------------------------------------------

# fmt: off
EXTRA_TOKENS = [
    "(", ")", "[", "]", "{", "}", ":", ",", "=", "==", "*", "**", "lambda", "lambda:",
    "def", "class", "if", "else", "for", "in", "return", "yield", "await", "async",
    "import", "from", "as", "@", ".", "...", "\\", "\n", "\r\n", "\r", "\t", "    ",
    '"', "'", '"""', "'''", "#", "f'{", "0x", "1e", "None", "opt_level=", "opt_level=2",
    "precision=", "precision=(lax.Precision.DEFAULT, lax.Precision.HIGHEST)",
    "pltpu.CompilerParams(opt_level=2)", "pl.pallas_call(", "compiler_params=",
    "mesh=", "plsc.VectorSubcoreMesh(", ".replace(opt_level=1)", "é", "🙂", "\u200b",
    "\x0c", "\x00", "\ufeff", "ñ=", "*args", "**kw", "global", "nonlocal", "del",
    "match", "case", "type", ":=", "->", "|", "~", "\u2028", "\x85", "\x0b", "\x1c",
]
# fmt: on
TEXT_ALPHABET = "abcxyz_019 \t\n()[]{}:;,.=+-*/%@'\"#\\é🙂\r\x00"


def tokens_of(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the tokens tokenize can find before an error."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT):
                continue
            (l0, c0), (l1, c1) = tok.start, tok.end
            if l0 - 1 >= len(starts) or l1 - 1 >= len(starts):
                break
            start, end = starts[l0 - 1] + c0, starts[l1 - 1] + c1
            if end > start:
                spans.append((start, end))
    except (tokenize.TokenError, SyntaxError, IndentationError, ValueError):
        pass
    return spans


def mutate_once(text: str, rng: random.Random, vocabulary: list[str]) -> str:
    op = rng.randrange(9)
    spans = tokens_of(text) if op < 4 else []
    if op < 4 and spans:
        start, end = spans[rng.randrange(len(spans))]
        if op == 0:  # delete a token
            return text[:start] + text[end:]
        if op == 1:  # insert a token before one
            return text[:start] + rng.choice(vocabulary) + " " * rng.randrange(2) + text[start:]
        if op == 2:  # replace a token
            return text[:start] + rng.choice(vocabulary) + text[end:]
        # duplicate a run of tokens
        j = min(len(spans) - 1, spans.index((start, end)) + rng.randrange(8))
        piece = text[start : spans[j][1]]
        return text[: spans[j][1]] + piece + text[spans[j][1] :]
    if op == 4:  # truncate
        return text[: rng.randrange(len(text) + 1)]
    if op == 5:  # random character edits
        chars = list(text)
        for _ in range(rng.randrange(1, 6)):
            i = rng.randrange(len(chars) + 1)
            kind = rng.randrange(3)
            if kind == 0 and i < len(chars):
                del chars[i]
            elif kind == 1:
                chars.insert(i, rng.choice(TEXT_ALPHABET))
            elif i < len(chars):
                chars[i] = rng.choice(TEXT_ALPHABET)
        return "".join(chars)
    lines = text.splitlines(keepends=True)
    if not lines:
        return rng.choice(vocabulary)
    i = rng.randrange(len(lines))
    if op == 6:  # delete or duplicate a line
        if rng.random() < 0.5:
            return "".join(lines[:i] + lines[i + 1 :])
        return "".join(lines[: i + 1] + lines[i:])
    if op == 7:  # re-indent a line
        line = lines[i]
        lines[i] = line.lstrip(" ") if rng.random() < 0.5 else "    " + line
        return "".join(lines)
    # move a line elsewhere
    line = lines.pop(i)
    lines.insert(rng.randrange(len(lines) + 1), line)
    return "".join(lines)


def mutate(text: str, rng: random.Random, vocabulary: list[str]) -> str:
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 5))):
        text = mutate_once(text, rng, vocabulary)
    return text


def vocabulary_from(texts: list[str]) -> list[str]:
    words = {text[s:e] for text in texts for s, e in tokens_of(text) if e - s < 60}
    return sorted(words) + EXTRA_TOKENS


# --- LSP positions (the test's own oracle) -------------------------------------------

_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def lsp_lines(text: str) -> list[str]:
    lines = _LSP_LINE.findall(text)
    if not lines or lines[-1].endswith(("\n", "\r")):
        lines.append("")
    return lines


def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    return len(text)


def offset_to_position(text: str, offset: int, encoding: str) -> dict[str, int]:
    line = 0
    start = 0
    for piece in lsp_lines(text):
        if start + len(piece.rstrip("\r\n")) >= offset or start + len(piece) > offset:
            break
        start += len(piece)
        line += 1
    return {"line": line, "character": units(text[start:offset], encoding)}


def position_to_offset(text: str, position: dict[str, int], encoding: str) -> int:
    lines = lsp_lines(text)
    line = position["line"]
    if line >= len(lines):
        return len(text)
    start = sum(len(piece) for piece in lines[:line])
    content = lines[line].rstrip("\r\n")
    used = 0
    for i, char in enumerate(content):
        if used >= position["character"]:
            return start + i
        used += units(char, encoding)
    return start + len(content)


def span_to_range(text: str, span: Any, encoding: str) -> dict[str, dict[str, int]]:
    """A core Span (line, code point) -> an LSP range in `encoding` units."""
    lines = lsp_lines(text)

    def pos(line: int, col: int) -> dict[str, int]:
        if line >= len(lines):
            line, col = len(lines) - 1, len(lines[-1])
        content = lines[line].rstrip("\r\n")
        return {"line": line, "character": units(content[: min(col, len(content))], encoding)}

    return {
        "start": pos(span.start_line, span.start_col),
        "end": pos(span.end_line, span.end_col),
    }


def apply_lsp_edits(text: str, edits: list[dict[str, Any]], encoding: str) -> str:
    spans = sorted(
        (
            position_to_offset(text, e["range"]["start"], encoding),
            position_to_offset(text, e["range"]["end"], encoding),
            e["newText"],
        )
        for e in edits
    )
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


def workspace_edits(edit: dict[str, Any], uri: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for change in edit.get("documentChanges") or []:
        assert change["textDocument"]["uri"] == uri
        out += change["edits"]
    out += (edit.get("changes") or {}).get(uri, [])
    return out


# --- a raw JSON-RPC client over the server's stdio -----------------------------------

PUSH_CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": True},
        "publishDiagnostics": {"versionSupport": True, "relatedInformation": True},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {"valueSet": ["quickfix", "source", "source.fixAll"]}
            },
            "isPreferredSupport": True,
        },
    },
    "workspace": {"workspaceEdit": {"documentChanges": True}},
}


def pull_capabilities(encoding: str = "utf-8") -> dict[str, Any]:
    caps = json.loads(json.dumps(PUSH_CAPABILITIES))
    caps["general"]["positionEncodings"] = [encoding]
    caps["textDocument"]["diagnostic"] = {"dynamicRegistration": False}
    return caps


class RpcClient:
    """Drives `pallas-ls serve` over stdio with raw JSON-RPC frames, from a reader thread.

    Server-to-client requests are answered with null results, so nothing waits on us.
    """

    def __init__(self, cwd: pathlib.Path | None = None, env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(
            SERVER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env or clean_env(),
        )
        self.pid = self.proc.pid
        self._lock = threading.Condition()
        self._write_lock = threading.Lock()
        self._next_id = 0
        self.responses: dict[int, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.stderr = bytearray()
        self.read_error: str | None = None
        self.encoding = "utf-16"
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # -- transport --

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        stream: Any = self.proc.stderr
        for chunk in iter(lambda: stream.read1(65536), b""):
            self.stderr += chunk

    def _read_stdout(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length is None:
                    self.read_error = "frame without Content-Length"
                    return
                message = json.loads(stream.read(length).decode("utf-8"))
                self._dispatch(message)
        except Exception as exc:  # recorded; the test asserts read_error is None
            self.read_error = repr(exc)
        finally:
            with self._lock:
                self._lock.notify_all()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.server_requests.append(message)
            result: Any = None
            if message["method"] == "workspace/configuration":
                result = [None for _ in message["params"]["items"]]
            with contextlib.suppress(OSError, ValueError):
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            return
        with self._lock:
            if "method" in message:
                self.notifications.append(message)
            else:
                self.responses[message["id"]] = message
            self._lock.notify_all()

    # -- API --

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def send_request(self, method: str, params: Any = None) -> int:
        with self._lock:
            self._next_id += 1
            ident = self._next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        return ident

    def wait_for(
        self, predicate: Callable[[], Any], what: str, timeout: float = REQUEST_TIMEOUT
    ) -> Any:
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                value = predicate()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}; {self.describe()}")
                if self.proc.poll() is not None and not value:
                    raise AssertionError(
                        f"server exited ({self.proc.returncode}) while waiting for {what}; "
                        f"{self.describe()}"
                    )
                self._lock.wait(min(left, 0.2))

    def response(self, ident: int, timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        reply: dict[str, Any] = self.wait_for(
            lambda: self.responses.get(ident), f"response {ident}", timeout
        )
        return reply

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        return self.response(self.send_request(method, params))

    def result(self, method: str, params: Any = None) -> Any:
        reply = self.request(method, params)
        assert "error" not in reply, (method, reply)
        return reply.get("result")

    def describe(self) -> str:
        tail = self.stderr[-3000:].decode("utf-8", "replace")
        return f"server rc={self.proc.poll()}, read_error={self.read_error}, stderr tail:\n{tail}"

    def initialize(
        self,
        root: pathlib.Path | None,
        capabilities: dict[str, Any] | None = None,
        initialization_options: Any = None,
        process_id: int | None = None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "processId": process_id,
            "rootUri": root.as_uri() if root else None,
            "capabilities": capabilities or PUSH_CAPABILITIES,
            "initializationOptions": initialization_options,
        }
        if root:
            params["workspaceFolders"] = [{"uri": root.as_uri(), "name": "ws"}]
        result = self.result("initialize", params)
        self.encoding = result["capabilities"].get("positionEncoding", "utf-16")
        self.notify("initialized", {})
        return dict(result)

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "python",
                    "version": version,
                    "text": text,
                }
            },
        )

    def replace_all(self, uri: str, text: str, version: int) -> None:
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )

    def published(self, uri: str) -> list[dict[str, Any]]:
        return [
            n["params"]
            for n in self.notifications
            if n["method"] == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri
        ]

    def wait_published(self, uri: str, version: int | None) -> list[dict[str, Any]]:
        def find() -> Any:
            for params in reversed(self.published(uri)):
                if params.get("version") == version:
                    return params
            return None

        return find_diagnostics(self.wait_for(find, f"diagnostics for {uri} v{version}"))

    def messages(self, method: str) -> list[dict[str, Any]]:
        return [n["params"] for n in self.notifications if n["method"] == method]

    def rss_kib(self) -> int:
        return rss_kib(self.pid)

    def shutdown(self) -> int:
        """shutdown + exit; the exit code."""
        try:
            self.result("shutdown")
            self.notify("exit")
            return self.proc.wait(PROCESS_TIMEOUT)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(PROCESS_TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(Exception):
                stream.close()  # type: ignore[union-attr]

    def __enter__(self) -> RpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def find_diagnostics(params: dict[str, Any]) -> list[dict[str, Any]]:
    return list(params["diagnostics"])


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def descendants(pid: int) -> set[int]:
    """Every live process whose ancestry leads to pid (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields and fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] != "Z"


def make_project(directory: pathlib.Path) -> pathlib.Path:
    """A project whose virtualenv has no jax: the target JAX is "latest" (PAL001 applies)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(directory / ".venv")],
        check=True,
        env=clean_env(),
    )
    return directory
