"""LSP latency benchmark: pallas-ls beside peer servers, interleaved in one run.

A small asyncio JSON-RPC-over-stdio client (standard library only). For every input file
and repetition it runs each server in turn (so drift on a noisy machine hits all alike):

1. spawn and send ``initialize`` at once: cold start = spawn -> ``initialize`` result;
2. ``initialized``, then wait until the process tree stops using CPU (ready);
3. ``didOpen`` -> first ``publishDiagnostics`` for the file (open->diag; when that first
   list is empty, the next non-empty one within ``--empty-grace`` s counts);
4. ``textDocument/hover`` at each target, ``textDocument/codeAction`` on a published
   diagnostic nearest the middle of the file (first request, then warm repeats);
5. K one-character edits (``didChange``, incremental or full as the server asks) inside a
   kernel body, each timed to the next publish for that version (edit->diag);
6. a burst of quick edits: how many publishes came back, and whether the last one is for
   the last version (stale work dropped, versions carried);
7. peak RSS: the sum of ``VmHWM`` over the server and every descendant seen;
8. ``shutdown``/``exit``; anything still alive that it started is killed by PID.

It prints ``median [min-max]`` tables, the ratios issue 4 sets as targets, and writes every
raw measurement with ``--json``.

    python benchmarks/lspbench.py --server "pallas-ls=.venv/bin/python -m pallas_ls serve" \\
        --preset ruff,pylsp,jedi --peers-bin benchmarks/.peers-venv/bin \\
        --server "floor=.venv/bin/python benchmarks/floor_server.py" --file pallas_5000.py
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

now = time.perf_counter
EDIT_MARKER = "bench:edit"
METHOD_NOT_FOUND = -32601
PRESETS = {
    "ruff": ["ruff", "server"],
    "pylsp": ["pylsp"],
    "jedi": ["jedi-language-server"],
}
# '|' marks the cursor; the occurrence nearest the middle of the file is used.
DEFAULT_HOVERS = ["pl.pallas_c|all", "opt_le|vel="]
SUBJECT = "pallas-ls"  # the server the ratios are about


def ms(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round((b - a) * 1000.0, 2)


# --------------------------------------------------------------------------------------- #
# The server's process tree, read from /proc                                               #
# --------------------------------------------------------------------------------------- #


def read_stat(pid: int) -> tuple[int, int, int] | None:
    """(parent pid, CPU ticks including reaped children, start time) or None."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    f = data[data.rindex(b")") + 2 :].split()
    return int(f[1]), int(f[11]) + int(f[12]) + int(f[13]) + int(f[14]), int(f[19])


class ProcTree:
    """A server process and its descendants: peak memory, CPU activity, clean-up."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.hwm_kb: dict[int, int] = {}
        self.started: dict[int, int] = {}  # pid -> start time, so a reused pid is not killed
        self.cmdline: dict[int, str] = {}

    def pids(self) -> list[int]:
        children: dict[int, list[int]] = {}
        stats: dict[int, tuple[int, int, int]] = {}
        for name in os.listdir("/proc"):
            if name.isdigit() and (st := read_stat(int(name))):
                stats[int(name)] = st
                children.setdefault(st[0], []).append(int(name))
        out: list[int] = []
        todo = [self.root] if self.root in stats else []
        while todo:
            pid = todo.pop()
            out.append(pid)
            if pid not in self.started:
                self.started[pid] = stats[pid][2]
                try:
                    raw = Path(f"/proc/{pid}/cmdline").read_bytes()
                    self.cmdline[pid] = raw.replace(b"\0", b" ").decode(errors="replace")[:160]
                except OSError:
                    self.cmdline[pid] = "?"
            todo.extend(children.get(pid, []))
        return out

    def ticks(self) -> int:
        return sum(st[1] for pid in self.pids() if (st := read_stat(pid)))

    def sample(self) -> None:
        for pid in self.pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        kb = int(line.split()[1])
                        self.hwm_kb[pid] = max(self.hwm_kb.get(pid, 0), kb)
            except (OSError, ValueError, IndexError):
                pass

    def peak_rss_mb(self) -> float:
        return round(sum(self.hwm_kb.values()) / 1024, 1)

    async def sampler(self, interval: float) -> None:
        while True:
            self.sample()
            await asyncio.sleep(interval)

    async def wait_idle(self, window: float = 0.3, poll: float = 0.05, cap: float = 20.0) -> float:
        """Wait until the tree's CPU time stops growing; return when it last grew."""
        start = now()
        last, changed = self.ticks(), now()
        while now() - start < cap:
            await asyncio.sleep(poll)
            ticks = self.ticks()
            if ticks != last:
                last, changed = ticks, now()
            elif now() - changed >= window:
                break
        return changed

    def kill_leftovers(self) -> list[int]:
        killed = []
        for pid, started in self.started.items():
            st = read_stat(pid)
            if st and st[2] == started:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except OSError:
                    pass
        return killed


# --------------------------------------------------------------------------------------- #
# JSON-RPC over stdio                                                                      #
# --------------------------------------------------------------------------------------- #


@dataclass
class Publish:
    t: float
    uri: str
    version: int | None
    diagnostics: list[dict]


class RpcTimeout(Exception):
    pass


class Connection:
    def __init__(self, proc: asyncio.subprocess.Process, settings: dict, folder: dict) -> None:
        self.proc = proc
        self.settings = settings
        self.folder = folder
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[tuple[float, dict]]] = {}
        self.publishes: list[Publish] = []
        self.new_publish = asyncio.Event()
        self.closed = False
        self.replies: set[asyncio.Future[None]] = set()  # answers to server requests in flight

    async def read_loop(self) -> None:
        reader = self.proc.stdout
        assert reader is not None
        try:
            while True:
                header = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in header.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = await reader.readexactly(length)
                self.dispatch(json.loads(body), now())
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, StopIteration):
            pass
        finally:
            self.closed = True
            self.new_publish.set()
            for fut in self.pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("server closed its output"))

    def answer(self, method: str, params: Any) -> tuple[bool, Any]:
        if method == "workspace/configuration":
            items = (params or {}).get("items", [])
            return True, [self.settings.get(i.get("section") or "", None) for i in items]
        if method == "workspace/workspaceFolders":
            return True, [self.folder]
        if method == "workspace/applyEdit":
            return True, {"applied": False}
        if method in ("client/registerCapability", "client/unregisterCapability"):
            return True, None
        if method in ("window/workDoneProgress/create", "window/showMessageRequest"):
            return True, None
        if method.endswith("/refresh"):
            return True, None
        return False, None

    def dispatch(self, msg: dict, t: float) -> None:
        method = msg.get("method")
        if method is None:  # a response
            fut = self.pending.pop(msg.get("id", -1), None)
            if fut is not None and not fut.done():
                fut.set_result((t, msg))
        elif "id" in msg:  # a request from the server
            ok, value = self.answer(method, msg.get("params"))
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"]}
            if ok:
                reply["result"] = value
            else:
                reply["error"] = {"code": METHOD_NOT_FOUND, "message": f"unhandled {method}"}
            task = asyncio.ensure_future(self.send_quietly(reply))
            self.replies.add(task)
            task.add_done_callback(self.replies.discard)
        elif method == "textDocument/publishDiagnostics":
            p = msg.get("params") or {}
            diags = p.get("diagnostics") or []
            self.publishes.append(Publish(t, p.get("uri", ""), p.get("version"), diags))
            self.new_publish.set()

    async def send(self, msg: dict) -> None:
        body = json.dumps(msg, separators=(",", ":")).encode()
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await stdin.drain()

    async def send_quietly(self, msg: dict) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.send(msg)

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any, timeout: float) -> tuple[float, float, dict]:
        """(time sent, time answered, response); raises RpcTimeout."""
        self.next_id += 1
        rid = self.next_id
        fut: asyncio.Future[tuple[float, dict]] = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        t_sent = now()
        try:
            await asyncio.wait_for(self.send(msg), timeout)
            t_recv, reply = await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            self.pending.pop(rid, None)
            raise RpcTimeout(f"{method}: no reply within {timeout:g}s") from None
        return t_sent, t_recv, reply

    async def wait_publish(
        self, uri: str, start: int, accept: Callable[[Publish], bool], timeout: float
    ) -> int | None:
        """Index of the first publish for uri from index start on that accept()s, or None."""
        deadline = now() + timeout
        idx = start
        while True:
            while idx < len(self.publishes):
                p = self.publishes[idx]
                if p.uri == uri and accept(p):
                    return idx
                idx += 1
            remaining = deadline - now()
            if remaining <= 0 or self.closed:
                return None
            self.new_publish.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.new_publish.wait(), remaining)

    async def quiet(self, quiet_for: float, cap: float) -> None:
        """Return once no publish arrived for quiet_for seconds (at most cap seconds)."""
        end = now() + cap
        while now() < end and not self.closed:
            seen = len(self.publishes)
            await asyncio.sleep(quiet_for)
            if len(self.publishes) == seen:
                return


# --------------------------------------------------------------------------------------- #
# One server run on one file                                                               #
# --------------------------------------------------------------------------------------- #


@dataclass
class Server:
    name: str
    argv: list[str]


@dataclass
class Target:
    label: str
    line: int
    col: int  # UTF-16


@dataclass
class InputFile:
    path: Path
    text: str
    lines: int
    hovers: list[Target]
    edit_line: int
    edit_col: int  # UTF-16 column of the toggled digit
    edit_chars: tuple[str, str]


@dataclass
class Options:
    runs: int = 5
    warmup: int = 1
    edits: int = 5
    burst: int = 50
    burst_gap: float = 0.02
    burst_quiet: float = 1.0
    settle: float = 0.3
    empty_grace: float = 2.0
    repeat: int = 1
    timeout: float = 60.0
    run_timeout: float = 600.0
    sample_interval: float = 0.2
    python: str = sys.executable
    settings: dict = field(default_factory=dict)


def utf16(line: str, col: int) -> int:
    return len(line[:col].encode("utf-16-le")) // 2


def find_target(lines: list[str], spec: str) -> Target | None:
    text = spec.replace("|", "")
    offset = spec.index("|") if "|" in spec else 0
    hits = [(i, m.start()) for i, ln in enumerate(lines) for m in re.finditer(re.escape(text), ln)]
    if not hits:
        return None
    line, start = min(hits, key=lambda h: abs(h[0] - len(lines) // 2))
    return Target(f"{spec} @{line + 1}", line, utf16(lines[line], start + offset))


def load_input(path: Path, hover_specs: list[str]) -> InputFile:
    text = path.read_text()
    lines = text.split("\n")
    hovers = [t for spec in hover_specs if (t := find_target(lines, spec))]
    edit_line = next((i for i, ln in enumerate(lines) if EDIT_MARKER in ln), len(lines) // 2)
    m = re.search(r"\d", lines[edit_line])
    if m is None:
        raise SystemExit(f"{path}: no digit to toggle on line {edit_line + 1}")
    alt = "1" if m.group() != "1" else "2"
    col = utf16(lines[edit_line], m.start())
    return InputFile(path, text, len(lines), hovers, edit_line, col, (m.group(), alt))


def capabilities() -> dict:
    return {
        "textDocument": {
            "synchronization": {"dynamicRegistration": False, "didSave": True},
            "publishDiagnostics": {
                "relatedInformation": True,
                "versionSupport": True,
                "codeDescriptionSupport": True,
                "dataSupport": True,
            },
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "codeAction": {
                "codeActionLiteralSupport": {
                    "codeActionKind": {"valueSet": ["", "quickfix", "source", "source.fixAll"]}
                },
                "isPreferredSupport": True,
            },
        },
        "workspace": {"configuration": True, "workspaceFolders": True},
        "window": {"workDoneProgress": False},
        "general": {"positionEncodings": ["utf-16"]},
    }


def text_of_result(result: Any) -> str:
    """Plain text of a hover result, for the notes."""
    if not result:
        return ""
    contents = result.get("contents") if isinstance(result, dict) else result
    if isinstance(contents, dict):
        contents = contents.get("value", "")
    elif isinstance(contents, list):
        contents = " ".join(c if isinstance(c, str) else c.get("value", "") for c in contents)
    return " ".join(str(contents or "").split())


class Session:
    def __init__(self, server: Server, opts: Options, workspace: Path, cache: Path) -> None:
        self.server, self.opts, self.workspace, self.cache = server, opts, workspace, cache
        self.folder = {"uri": workspace.resolve().as_uri(), "name": workspace.name}
        self.tasks: list[asyncio.Future[None]] = []

    async def spawn(self) -> float:
        env = dict(os.environ)
        bindir = str(Path(self.opts.python).parent)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        if (Path(bindir).parent / "pyvenv.cfg").exists():
            env["VIRTUAL_ENV"] = str(Path(bindir).parent)
        env["XDG_CACHE_HOME"] = str(self.cache)
        self.log = open(self.workspace / "server.stderr.log", "wb")  # noqa: SIM115
        t0 = now()
        self.proc = await asyncio.create_subprocess_exec(
            *self.server.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self.log,
            cwd=str(self.workspace),
            env=env,
            limit=1 << 24,
        )
        self.conn = Connection(self.proc, self.opts.settings, self.folder)
        self.tree = ProcTree(self.proc.pid)
        self.tasks.append(asyncio.ensure_future(self.conn.read_loop()))
        self.tasks.append(asyncio.ensure_future(self.tree.sampler(self.opts.sample_interval)))
        return t0

    def init_params(self) -> dict:
        return {
            "processId": os.getpid(),
            "clientInfo": {"name": "pallas-ls-bench", "version": "1"},
            "rootUri": self.folder["uri"],
            "rootPath": str(self.workspace),
            "workspaceFolders": [self.folder],
            "capabilities": capabilities(),
        }

    async def close(self) -> dict:
        out: dict[str, Any] = {}
        if not self.conn.closed and self.proc.returncode is None:
            try:
                await self.conn.request("shutdown", None, 10.0)
                await self.conn.notify("exit", None)
            except (RpcTimeout, ConnectionError, RuntimeError) as exc:
                out["shutdown_error"] = str(exc)
        try:
            await asyncio.wait_for(self.proc.wait(), 5.0)
        except asyncio.TimeoutError:
            out["forced_kill"] = True
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.kill(self.proc.pid, sig)
                    await asyncio.wait_for(self.proc.wait(), 3.0)
                    break
                except (OSError, asyncio.TimeoutError):
                    continue
        if leftovers := self.tree.kill_leftovers():
            out["killed_leftover_pids"] = leftovers
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.log.close()
        return out

    def stderr_tail(self, n: int = 1200) -> str:
        try:
            return (self.workspace / "server.stderr.log").read_bytes()[-n:].decode(errors="replace")
        except OSError:
            return ""


def toggled(fs: InputFile, state: int) -> tuple[str, dict]:
    """Full text and incremental change that put the edit line into state (0: original)."""
    old, new = fs.edit_chars[1 - state], fs.edit_chars[state]
    lines = fs.text.split("\n")
    line = lines[fs.edit_line]
    idx = len(line.encode("utf-16-le")[: fs.edit_col * 2].decode("utf-16-le"))
    lines[fs.edit_line] = line[:idx] + new + line[idx + len(old) :]
    start = {"line": fs.edit_line, "character": fs.edit_col}
    end = {"line": fs.edit_line, "character": fs.edit_col + len(old)}
    return "\n".join(lines), {"range": {"start": start, "end": end}, "text": new}


async def timed_requests(
    conn: Connection, method: str, params: dict, opts: Options
) -> tuple[dict[str, Any], Any]:
    """First request and opts.repeat warm repeats: timings and the first result."""
    out: dict[str, Any] = {"first_ms": None, "warm_ms": []}
    first_result = None
    for i in range(1 + opts.repeat):
        t_s, t_r, reply = await conn.request(method, params, opts.timeout)
        if i == 0:
            out["first_ms"] = ms(t_s, t_r)
            first_result = reply.get("result")
            if "error" in reply:
                out["error"] = (reply["error"] or {}).get("message")
        else:
            out["warm_ms"].append(ms(t_s, t_r))
    return out, first_result


async def full_run(server: Server, fs: InputFile, opts: Options, ws: Path, cache: Path) -> dict:
    res: dict[str, Any] = {"server": server.name, "errors": []}
    s = Session(server, opts, ws, cache)
    try:
        await asyncio.wait_for(run_body(s, fs, opts, ws, res), opts.run_timeout)
    except asyncio.TimeoutError:
        res["errors"].append(f"run exceeded {opts.run_timeout:g}s")
    except (ConnectionError, RpcTimeout) as exc:
        res["errors"].append(f"{type(exc).__name__}: {exc}")
    if hasattr(s, "proc"):
        s.tree.sample()
        res["peak_rss_mb"] = s.tree.peak_rss_mb()
        res["processes"] = {s.tree.cmdline.get(p, "?"): kb for p, kb in s.tree.hwm_kb.items()}
        res.update(await s.close())
        if res["errors"]:
            res["stderr_tail"] = s.stderr_tail()
    res["ok"] = not res["errors"]
    return res


async def run_body(s: Session, fs: InputFile, opts: Options, ws: Path, res: dict) -> None:
    t0 = await s.spawn()
    conn = s.conn
    _, t_init, reply = await conn.request("initialize", s.init_params(), opts.timeout)
    if "result" not in reply:
        raise ConnectionError(f"initialize failed: {reply.get('error')}")
    res["cold_start_ms"] = ms(t0, t_init)
    caps = reply["result"].get("capabilities", {})
    res["server_info"] = reply["result"].get("serverInfo")
    await conn.notify("initialized", {})
    res["ready_ms"] = ms(t0, await s.tree.wait_idle())
    sync = caps.get("textDocumentSync")
    kind = int((sync.get("change") if isinstance(sync, dict) else sync) or 0)
    res["sync"] = {0: "none", 1: "full", 2: "incremental"}.get(kind, str(kind))

    # open -> diagnostics
    path = ws / fs.path.name
    uri = path.resolve().as_uri()
    version = 1
    start = len(conn.publishes)
    t_open = now()
    doc = {"uri": uri, "languageId": "python", "version": version, "text": fs.text}
    await conn.notify("textDocument/didOpen", {"textDocument": doc})
    first = await conn.wait_publish(uri, start, lambda p: True, opts.timeout)
    if first is None:
        res["errors"].append(f"no publishDiagnostics within {opts.timeout:g}s of didOpen")
        return
    chosen = first
    if not conn.publishes[first].diagnostics:
        nxt = await conn.wait_publish(
            uri, first + 1, lambda p: bool(p.diagnostics), opts.empty_grace
        )
        chosen = first if nxt is None else nxt
    res["open_first_pub_ms"] = ms(t_open, conn.publishes[first].t)
    res["open_diag_ms"] = ms(t_open, conn.publishes[chosen].t)
    await conn.quiet(opts.settle, opts.timeout)
    own = [p for p in conn.publishes[start:] if p.uri == uri]
    diags = own[-1].diagnostics
    res["n_diags"] = len(diags)
    res["codes"] = sorted({str(d.get("code", "")) for d in diags})
    res["versioned"] = any(p.version is not None for p in own)
    baseline_nonempty = bool(diags)

    # hover, code action
    res["hovers"] = []
    for target in fs.hovers:
        pos = {"line": target.line, "character": target.col}
        h, result = await timed_requests(
            conn, "textDocument/hover", {"textDocument": {"uri": uri}, "position": pos}, opts
        )
        h["target"], h["preview"] = target.label, text_of_result(result)[:60]
        res["hovers"].append(h)
    # code action on the published diagnostic nearest the middle (none published: not asked;
    # jedi-language-server's refactorings take seconds to minutes on a bare range)
    if diags:
        diag = min(diags, key=lambda d: abs(d["range"]["start"]["line"] - fs.lines // 2))
        params = {
            "textDocument": {"uri": uri},
            "range": diag["range"],
            "context": {"diagnostics": [diag]},
        }
        ca, result = await timed_requests(conn, "textDocument/codeAction", params, opts)
        ca["line"] = diag["range"]["start"]["line"] + 1
        ca["actions"] = [a.get("title", "")[:50] for a in (result or [])]
        res["code_action"] = ca

    if kind == 0 or opts.edits <= 0:
        res["edit_ms"] = []
        return
    state = 0
    texts: dict[int, tuple[str, dict]] = {}

    async def send_change() -> None:
        nonlocal state, version
        state, version = 1 - state, version + 1
        if state not in texts:
            texts[state] = toggled(fs, state)
        full, change = texts[state]
        changes = [change] if kind == 2 else [{"text": full}]
        ident = {"uri": uri, "version": version}
        await conn.notify(
            "textDocument/didChange", {"textDocument": ident, "contentChanges": changes}
        )

    # single edits -> diagnostics for that version
    edit_ms: list[float | None] = []
    for _ in range(opts.edits):
        start = len(conn.publishes)
        t_edit = now()
        await send_change()
        want = version

        def fresh(p: Publish, want: int = want) -> bool:
            return p.version is None or p.version >= want

        got = await conn.wait_publish(uri, start, fresh, opts.timeout)
        if got is None:
            res["errors"].append(f"edit v{version}: no diagnostics within {opts.timeout:g}s")
            break
        if baseline_nonempty and not conn.publishes[got].diagnostics:
            nxt = await conn.wait_publish(
                uri, got + 1, lambda p: fresh(p) and bool(p.diagnostics), opts.empty_grace
            )
            got = got if nxt is None else nxt
        edit_ms.append(ms(t_edit, conn.publishes[got].t))
        await conn.quiet(opts.settle, opts.timeout)
    res["edit_ms"] = edit_ms

    # burst of quick edits: publishes, and is the last one for the last version?
    if opts.burst > 0 and not res["errors"]:
        start = len(conn.publishes)
        t_last = now()
        for i in range(opts.burst):
            t_last = now()
            await send_change()
            if i + 1 < opts.burst:
                await asyncio.sleep(opts.burst_gap)
        final = version
        got = await conn.wait_publish(
            uri, start, lambda p: p.version is None or p.version >= final, opts.timeout
        )
        await conn.quiet(opts.burst_quiet, opts.timeout)
        own = [p for p in conn.publishes[start:] if p.uri == uri]
        last = own[-1] if own else None
        res["burst"] = {
            "edits": opts.burst,
            "publishes": len(own),
            "last_version": None if last is None else last.version,
            "final_version": final,
            "last_is_final": last is not None and last.version == final,
            "final_ms": ms(t_last, conn.publishes[got].t) if got is not None else None,
        }


# --------------------------------------------------------------------------------------- #
# Statistics and tables                                                                    #
# --------------------------------------------------------------------------------------- #


def stat(values: list[Any]) -> dict | None:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    return {
        "median": round(statistics.median(vals), 2),
        "min": round(vals[0], 2),
        "max": round(vals[-1], 2),
        "n": len(vals),
    }


def summarise(runs: list[dict]) -> dict[str, Any]:
    counted = [r for r in runs if not r.get("warmup")]
    out: dict[str, Any] = {"runs": len(counted), "failed": sum(not r["ok"] for r in counted)}
    for key in ("cold_start_ms", "ready_ms", "open_diag_ms", "peak_rss_mb", "n_diags"):
        out[key] = stat([r.get(key) for r in counted])
    out["edit_ms"] = stat([v for r in counted for v in r.get("edit_ms", [])])
    hovers = [r.get("hovers", []) for r in counted]
    out["hovers"] = []
    for i in range(max((len(h) for h in hovers), default=0)):
        per = [h[i] for h in hovers if len(h) > i]
        out["hovers"].append(
            {
                "target": per[0]["target"],
                "first_ms": stat([h["first_ms"] for h in per]),
                "warm_ms": stat([v for h in per for v in h["warm_ms"]]),
                "preview": next((h["preview"] for h in per if h["preview"]), ""),
            }
        )
    cas = [r["code_action"] for r in counted if r.get("code_action")]
    if cas:
        out["code_action_ms"] = stat([c["first_ms"] for c in cas])
        out["code_action_warm_ms"] = stat([v for c in cas for v in c["warm_ms"]])
        out["code_action_titles"] = cas[-1]["actions"]
    bursts = [r["burst"] for r in counted if r.get("burst")]
    if bursts:
        out["burst_publishes"] = stat([b["publishes"] for b in bursts])
        out["burst_final_ms"] = stat([b["final_ms"] for b in bursts])
        out["burst_edits"] = bursts[0]["edits"]
        out["burst_last_is_final"] = f"{sum(b['last_is_final'] for b in bursts)}/{len(bursts)}"
    last = counted[-1] if counted else {}
    for key in ("server_info", "sync", "versioned", "codes"):
        out[key] = last.get(key)
    out["errors"] = sorted({e for r in runs for e in r.get("errors", [])})
    return out


def fmt(s: dict | None, digits: int | None = None) -> str:
    if not s:
        return "-"
    d = digits if digits is not None else (1 if abs(s["median"]) < 10 else 0)
    if s["min"] == s["max"]:
        return f"{s['median']:.{d}f}"
    return f"{s['median']:.{d}f} [{s['min']:.{d}f}-{s['max']:.{d}f}]"


def hover_cell(i: int) -> Callable[[dict], str]:
    def cell(s: dict) -> str:
        return fmt(s["hovers"][i]["first_ms"]) if len(s["hovers"]) > i else "-"

    return cell


def print_table(name: str, entry: dict) -> None:
    info, per = entry["file"], entry["servers"]
    cols: list[tuple[str, Callable[[dict], str]]] = [
        ("server", lambda s: ""),
        ("cold start ms", lambda s: fmt(s["cold_start_ms"])),
        ("ready ms", lambda s: fmt(s["ready_ms"])),
        ("open->diag ms", lambda s: fmt(s["open_diag_ms"])),
        ("edit->diag ms", lambda s: fmt(s["edit_ms"])),
    ]
    n_hovers = max((len(s["hovers"]) for s in per.values()), default=0)
    for i in range(n_hovers):
        cols.append((f"hover{i + 1} ms", hover_cell(i)))
    cols += [
        ("code action ms", lambda s: fmt(s.get("code_action_ms"))),
        ("peak RSS MB", lambda s: fmt(s["peak_rss_mb"], 0)),
        ("diags", lambda s: fmt(s["n_diags"], 0)),
        (
            "burst pubs",
            lambda s: fmt(s.get("burst_publishes"), 0) + f"/{s.get('burst_edits', '-')}",
        ),
        ("burst last=final", lambda s: s.get("burst_last_is_final", "-")),
    ]
    print(f"\n== {name}: {info['lines']} lines; ast.parse {fmt(info['parse_ms'])} ms ==")
    print(f"   edit: line {info['edit_line'] + 1}; hovers: {', '.join(info['hovers'])}")
    rows = [[c[0] for c in cols]]
    for sname, s in per.items():
        rows.append([sname] + [fn(s) for _, fn in cols[1:]])
    widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
    for j, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip())
        if j == 0:
            print("  ".join("-" * w for w in widths))
    for sname, s in per.items():
        bits = [f"sync={s['sync']}", "versioned" if s["versioned"] else "unversioned publishes"]
        if s["codes"]:
            bits.append("codes " + ",".join(s["codes"])[:60])
        for i, h in enumerate(s["hovers"], 1):
            bits.append(f"hover{i} " + (repr(h["preview"][:40]) if h["preview"] else "empty"))
        if s.get("code_action_titles") is not None:
            bits.append(f"{len(s['code_action_titles'])} code actions")
        else:
            bits.append("no diagnostic, so no code action asked")
        if s["failed"]:
            bits.append(f"{s['failed']}/{s['runs']} runs failed")
        if s["errors"]:
            bits.append("errors: " + "; ".join(s["errors"])[:300])
        print(f"  {sname}: " + ", ".join(bits))


def ratio_lines(summary: dict) -> list[str]:
    """The issue-4 targets as measured ratios of SUBJECT to the other servers."""
    out = []

    def med(s: dict | None) -> float | None:
        return s["median"] if s else None

    def line(label: str, a: float | None, b: float | None, limit: float, unit: str = "") -> None:
        if a is None or b is None or b <= 0:
            out.append(f"  {label}: n/a")
            return
        r = a / b
        verdict = "meets" if r <= limit else "MISSES"
        out.append(f"  {label}: {a:.1f}{unit} / {b:.1f}{unit} = {r:.2f}x ({verdict} <= {limit}x)")

    for name, entry in summary["files"].items():
        per = entry["servers"]
        subj = per.get(SUBJECT)
        if subj is None:
            continue
        out.append(f"{name} ({entry['file']['lines']} lines):")
        if name.startswith("nojax"):  # no jax import: should cost about what the bare server does
            for key, label in (("open_diag_ms", "open->diag"), ("edit_ms", "edit->diag")):
                a = med(subj[key])
                b = med(per["floor"][key]) if "floor" in per else None
                if a is not None and b:
                    out.append(
                        f"  no jax import, {label}: {a:.1f} ms vs floor {b:.1f} ms ({a / b:.2f}x)"
                    )
            continue
        if "ruff" in per:
            line("edit->diag vs ruff", med(subj["edit_ms"]), med(per["ruff"]["edit_ms"]), 1.0)
        line(
            "open->diag vs ast.parse",
            med(subj["open_diag_ms"]),
            entry["file"]["parse_ms"]["median"],
            1.5,
        )
        if "pylsp" in per:
            line(
                "open->diag vs pylsp",
                med(subj["open_diag_ms"]),
                med(per["pylsp"]["open_diag_ms"]),
                0.25,
            )
        if "floor" in per:
            floor = per["floor"]
            line(
                "cold start vs floor", med(subj["cold_start_ms"]), med(floor["cold_start_ms"]), 1.15
            )
            line("peak RSS vs floor", med(subj["peak_rss_mb"]), med(floor["peak_rss_mb"]), 1.5)
        for h in subj["hovers"]:
            v = med(h["first_ms"])
            out.append(
                f"  hover {h['target']}: {fmt(h['first_ms'])} ms, warm {fmt(h['warm_ms'])} ms"
                + ("" if v is None else f" ({'meets' if v <= 20 else 'MISSES'} <= 20 ms)")
            )
        v = med(subj.get("code_action_ms"))
        out.append(
            f"  code action: {fmt(subj.get('code_action_ms'))} ms, warm {fmt(subj.get('code_action_warm_ms'))} ms"
            + ("" if v is None else f" ({'meets' if v <= 20 else 'MISSES'} <= 20 ms)")
        )
        if subj.get("burst_edits"):
            out.append(
                f"  burst: {fmt(subj['burst_publishes'], 0)} publishes for {subj['burst_edits']} edits, "
                f"last publish for the last version in {subj['burst_last_is_final']} runs"
            )
    return out


# --------------------------------------------------------------------------------------- #
# Main                                                                                     #
# --------------------------------------------------------------------------------------- #


PARSE_SNIPPET = """
import ast, json, sys, time
src = open(sys.argv[1], encoding="utf-8").read()
out = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    ast.parse(src)
    out.append((time.perf_counter() - t) * 1000)
print(json.dumps(out))
"""


def parse_times(python: str, path: Path, n: int = 5) -> list[float]:
    """ast.parse of the file in a fresh interpreter: the floor for a full re-parse."""
    proc = subprocess.run(
        [python, "-c", PARSE_SNIPPET, str(path), str(n)],
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(proc.stdout))


def absolute_paths(argv: list[str]) -> list[str]:
    """Servers run in a temporary workspace: make relative paths to existing files absolute."""
    return [os.path.abspath(a) if "/" in a and os.path.exists(a) else a for a in argv]


def resolve_servers(args: argparse.Namespace) -> tuple[list[Server], list[str]]:
    servers, skipped = [], []
    for item in args.server or []:
        name, sep, cmd = item.partition("=")
        if not sep:
            raise SystemExit(f"--server wants NAME=CMD, got {item!r}")
        servers.append(Server(name.strip(), absolute_paths(shlex.split(cmd))))
    for name in [n.strip() for n in (args.preset or "").split(",") if n.strip()]:
        if name not in PRESETS:
            raise SystemExit(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
        argv = PRESETS[name]
        exe = None
        for d in args.peers_bin or []:
            exe = exe or shutil.which(argv[0], path=d)
        exe = exe or shutil.which(argv[0])
        if exe:
            servers.append(Server(name, [os.path.abspath(exe), *argv[1:]]))
        else:
            skipped.append(name)
    order = [s.strip() for s in (args.order or "").split(",") if s.strip()]
    servers.sort(key=lambda s: order.index(s.name) if s.name in order else len(order))
    return servers, skipped


def host_info(python: str) -> dict:
    cpu = ""
    with contextlib.suppress(OSError, StopIteration):
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    version = subprocess.run(
        [python, "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": version,
    }


async def run_all(
    servers: list[Server], files: list[InputFile], opts: Options
) -> tuple[dict, dict[str, list[float]]]:
    """Every server's runs on each file, and the parse floor of each file: sampled once per
    measured round, between the servers' runs, so that it sees the machine as they do (a
    floor taken once, before the runs, moved the 5k open ratio between 1.3x and 1.6x)."""
    base = Path(tempfile.mkdtemp(prefix="pallas-bench-"))
    raw: dict[str, dict[str, list[dict]]] = {}
    parse_ms: dict[str, list[float]] = {}
    try:
        for fs in files:
            per: dict[str, list[dict]] = {s.name: [] for s in servers}
            raw[fs.path.name] = per
            floor = parse_ms.setdefault(fs.path.name, [])
            for r in range(opts.warmup + opts.runs):
                if r >= opts.warmup:
                    floor.extend(parse_times(opts.python, fs.path))
                # rotate the order too, so no server always runs right after the same one
                for k in range(len(servers)):
                    s = servers[(k + r) % len(servers)]
                    ws = Path(tempfile.mkdtemp(prefix=f"{s.name}-", dir=base))
                    shutil.copyfile(fs.path, ws / fs.path.name)
                    cache = base / f"cache-{s.name}"
                    cache.mkdir(exist_ok=True)
                    res = await full_run(s, fs, opts, ws, cache)
                    res["warmup"] = r < opts.warmup
                    per[s.name].append(res)
                    e = stat(res.get("edit_ms", []))
                    print(
                        f"[{fs.path.name} {'warmup' if res['warmup'] else f'run {r}'}] {s.name}: "
                        f"start {res.get('cold_start_ms')} open {res.get('open_diag_ms')} "
                        f"edit {e and e['median']} rss {res.get('peak_rss_mb')} "
                        f"diags {res.get('n_diags')}"
                        + ("" if res["ok"] else f" ERRORS {res['errors']}"),
                        file=sys.stderr,
                        flush=True,
                    )
                    shutil.rmtree(ws, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return raw, parse_ms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ap.add_argument("--server", action="append", metavar="NAME=CMD", help="a server (repeatable)")
    ap.add_argument("--preset", default="", help=f"comma list of peers: {', '.join(PRESETS)}")
    ap.add_argument("--peers-bin", action="append", help="where to look for presets before PATH")
    ap.add_argument("--order", default="pallas-ls,ruff,pylsp,jedi,floor", help="table order")
    ap.add_argument("--file", action="append", required=True, help="input file (repeatable)")
    ap.add_argument("-R", "--runs", type=int, default=5, help="measured runs per server and file")
    ap.add_argument("--warmup", type=int, default=1, help="discarded first runs")
    ap.add_argument("-K", "--edits", type=int, default=5, help="single edits per run")
    ap.add_argument("--burst", type=int, default=50, help="edits in the quick burst (0: none)")
    ap.add_argument("--burst-gap-ms", type=float, default=20.0)
    ap.add_argument("--settle", type=float, default=0.3, help="quiet seconds between steps")
    ap.add_argument("--empty-grace", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=1, help="warm repeats of hover/code action")
    ap.add_argument("--hover", action="append", help="hover target: text with '|' at the cursor")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per awaited reply")
    ap.add_argument("--run-timeout", type=float, default=600.0, help="seconds per server run")
    ap.add_argument("--python", default=sys.executable, help="environment the servers analyse")
    ap.add_argument("--label", default="", help="free text printed with the results")
    ap.add_argument("--json", help="write meta, summary and raw measurements here")
    args = ap.parse_args(argv)

    servers, skipped = resolve_servers(args)
    if not servers:
        raise SystemExit("no servers: give --server NAME=CMD and/or --preset")
    opts = Options(
        runs=args.runs,
        warmup=args.warmup,
        edits=args.edits,
        burst=args.burst,
        burst_gap=args.burst_gap_ms / 1000,
        settle=args.settle,
        empty_grace=args.empty_grace,
        repeat=args.repeat,
        timeout=args.timeout,
        run_timeout=args.run_timeout,
        python=args.python,
        settings={"python": {"pythonPath": args.python}},
    )
    files = [load_input(Path(f), args.hover or DEFAULT_HOVERS) for f in args.file]
    meta: dict[str, Any] = {
        "label": args.label,
        "host": host_info(args.python),
        "servers": {s.name: s.argv for s in servers},
        "skipped": skipped,
        "options": {k: v for k, v in vars(opts).items() if k != "settings"},
    }
    started = now()
    raw, parse_samples = asyncio.run(run_all(servers, files, opts))
    parse_ms = {name: stat(samples) for name, samples in parse_samples.items()}
    meta["elapsed_s"] = round(now() - started)
    summary: dict[str, Any] = {"files": {}}
    for fs in files:
        summary["files"][fs.path.name] = {
            "file": {
                "lines": fs.lines,
                "parse_ms": parse_ms[fs.path.name],
                "edit_line": fs.edit_line,
                "hovers": [h.label for h in fs.hovers],
            },
            "servers": {name: summarise(runs) for name, runs in raw[fs.path.name].items()},
        }

    h = meta["host"]
    print(
        f"LSP latency: {h['date']}, {h['nproc']} x {h['cpu']}, Python {h['python']}; "
        f"R={opts.runs} (+{opts.warmup} warm-up), K={opts.edits}, burst {opts.burst} "
        f"edits {args.burst_gap_ms:g} ms apart; took {meta['elapsed_s']} s"
    )
    if args.label:
        print(f"  {args.label}")
    for s in servers:
        print(f"  {s.name}: {shlex.join(s.argv)}")
    if skipped:
        print(f"  not installed, skipped: {', '.join(skipped)}")
    for name, entry in summary["files"].items():
        print_table(name, entry)
    ratios = ratio_lines(summary)
    if ratios:
        print(f"\nIssue-4 targets ({SUBJECT}; medians):")
        print("\n".join(ratios))
    if args.json:
        Path(args.json).write_text(
            json.dumps({"meta": meta, "summary": summary, "raw": raw}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
