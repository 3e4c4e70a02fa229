"""Test helpers: the real engram server as a subprocess, and small local HTTP stubs."""

from __future__ import annotations

import http.server
import json
import os
import re
import signal
import socketserver
import subprocess
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Tuple


def server_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment of an engram subprocess: none of the caller's engram or model
    settings (the store, home, user and model endpoints come from the test)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") and k != "OPENAI_API_KEY"}
    env.update(extra or {})
    return env


def binary_from_env(test_name: str) -> str:
    """ENGRAM_BINARY, checked: the test fails (never skips) without an executable engram."""
    import pytest  # only the tests use this module

    path = os.environ.get("ENGRAM_BINARY", "")
    if not path:
        pytest.fail(f"ENGRAM_BINARY is not set: point it at the engram binary (ctest -R {test_name} sets it)")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"ENGRAM_BINARY={path!r} is not an executable file")
    return path


class EngramServer:
    """`engram serve` on 127.0.0.1 (a free port chosen by the server) with its own --home."""

    LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")

    def __init__(self, binary: str, home: str, *, env: Optional[Dict[str, str]] = None,
                 args: Tuple[str, ...] = ()) -> None:
        self.binary = binary
        self.home = home
        self.env = server_env(env)
        self.args = args
        self.proc: Optional[subprocess.Popen] = None
        self.port: Optional[int] = None
        self.lines: List[str] = []
        self._reader: Optional[threading.Thread] = None
        self._port_seen = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cli(self, *args: str, tenant: Optional[str] = None) -> str:
        cmd = [self.binary, "--home", self.home]
        if tenant:
            cmd += ["--tenant", tenant]
        cmd += list(args)
        r = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
        return r.stdout

    def create_key(self, tenant: str, role: str, users: Optional[str] = None) -> str:
        args = ["keys", "create", "--role", role, "--name", f"pytest {tenant} {role}"]
        if users:
            args += ["--users", users]
        out = self.cli(*args, tenant=tenant).strip().splitlines()
        if not out or not out[-1].strip():
            raise RuntimeError("engram keys create printed no key")
        return out[-1].strip()

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            m = self.LISTENING.search(line)
            if m and self.port is None:
                self.port = int(m.group(1))
                self._port_seen.set()

    def start(self, timeout: float = 60.0) -> None:
        cmd = [self.binary, "--home", self.home, "serve", "--listen", "127.0.0.1:0", *self.args]
        self.proc = subprocess.Popen(cmd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, bufsize=1)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while not self._port_seen.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("engram serve did not start:\n" + self.output())
        # /healthz answers once the port serves; /readyz once the store is open.
        for path in ("/healthz", "/readyz"):
            while True:
                try:
                    with urllib.request.urlopen(self.url + path, timeout=2) as r:
                        if r.status == 200:
                            break
                except (urllib.error.URLError, OSError):
                    pass
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"engram serve: {path} never answered 200:\n" + self.output())
                time.sleep(0.05)

    def stop(self) -> int:
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self._reader is not None:
            self._reader.join(timeout=5)
        return self.proc.returncode

    def output(self) -> str:
        return "\n".join(self.lines)

    def __enter__(self) -> "EngramServer":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        code = self.stop()
        assert code == 0, f"engram serve exited {code}:\n{self.output()}"


# --- local HTTP stubs ---------------------------------------------------------------------


class _ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Recorded:
    def __init__(self, method: str, path: str, headers: Dict[str, str], body: bytes) -> None:
        self.method = method
        self.path = path
        self.headers = headers  # lower-case names
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None


# A scripted reply: (status, headers, body), or "drop" (close the connection without
# answering), or a callable(Recorded) -> one of those.
Reply = Any


class StubServer:
    """A tiny HTTP server in a thread: answers from a script, then with `default`;
    records every request."""

    def __init__(self, script: Optional[List[Reply]] = None, default: Reply = None) -> None:
        self.script: List[Reply] = list(script or [])
        self.default = default if default is not None else (200, {}, {"status": "ok"})
        self.requests: List[Recorded] = []
        self._lock = threading.Lock()
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _handle(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                rec = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with stub._lock:
                    stub.requests.append(rec)
                    reply = stub.script.pop(0) if stub.script else stub.default
                if callable(reply):
                    reply = reply(rec)
                if reply == "drop":
                    self.close_connection = True
                    try:
                        self.connection.shutdown(2)
                    except OSError:
                        pass
                    return
                status, headers, payload = reply
                if isinstance(payload, (dict, list)):
                    data = json.dumps(payload).encode("utf-8")
                    ctype = "application/json"
                elif isinstance(payload, str):
                    data = payload.encode("utf-8")
                    ctype = "text/plain"
                else:
                    data = payload or b""
                    ctype = "application/octet-stream"
                self.send_response(status)
                hdrs = {"Content-Type": ctype, **headers}
                for k, v in hdrs.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _handle

        self.httpd = _ThreadingServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "StubServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def envelope(code: str, message: str, request_id: str = "stub-req-1", field: Optional[str] = None) -> Dict[str, Any]:
    err: Dict[str, Any] = {"code": code, "message": message, "request_id": request_id}
    if field:
        err["field"] = field
    return {"error": err}


class ForwardingProxy(StubServer):
    """Forwards every request to `target`; `interfere(recorded, upstream_reply)` may
    replace the upstream's answer (e.g. lose it after the server handled the request)."""

    def __init__(self, target: str, interfere: Callable[[Recorded, Tuple[int, Dict[str, str], bytes]], Reply]) -> None:
        def forward(rec: Recorded) -> Reply:
            headers = {k: v for k, v in rec.headers.items()
                       if k in ("authorization", "x-api-key", "idempotency-key", "content-type", "accept",
                                "x-request-id")}
            req = urllib.request.Request(target + rec.path, data=rec.body if rec.method != "GET" else None,
                                         headers=headers, method=rec.method)
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    upstream = (r.status, {"X-Request-Id": r.headers.get("X-Request-Id", "")}, r.read())
            except urllib.error.HTTPError as e:
                upstream = (e.code, {"X-Request-Id": e.headers.get("X-Request-Id", "")}, e.read())
            return interfere(rec, upstream)

        super().__init__(default=forward)


class FakeLlm(StubServer):
    """An OpenAI-compatible model endpoint answering `answer`: POST /v1/chat/completions and
    POST /v1/responses, as one JSON reply or, when the request asks to stream, as events."""

    def __init__(self, answer_pieces: List[str]) -> None:
        self.answer_pieces = answer_pieces

        def responses(req: Dict[str, Any]) -> Reply:
            text = "".join(self.answer_pieces)
            whole = {"id": "resp_fake", "object": "response", "status": "completed",
                     "output": [{"type": "message", "role": "assistant",
                                 "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                     "usage": {"input_tokens": 11, "output_tokens": 7}}
            if not req.get("stream"):
                return (200, {}, whole)
            events = [{"type": "response.created", "response": dict(whole, status="in_progress", output=[])}]
            events += [{"type": "response.output_text.delta", "delta": p} for p in self.answer_pieces]
            events.append({"type": "response.completed", "response": whole})
            body = "".join(f"event: {e['type']}\ndata: {json.dumps(dict(e, sequence_number=i))}\n\n"
                           for i, e in enumerate(events))
            return (200, {"Content-Type": "text/event-stream"}, body.encode("utf-8"))

        def reply(rec: Recorded) -> Reply:
            if rec.path.endswith("/responses"):
                return responses(rec.json() or {})
            if not rec.path.endswith("/chat/completions"):
                return (404, {}, {"error": {"message": "no such route"}})
            req = rec.json() or {}
            if req.get("stream"):
                events = [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in self.answer_pieces]
                events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                events.append({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}})
                text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
                return (200, {"Content-Type": "text/event-stream"}, text.encode("utf-8"))
            return (200, {}, {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(self.answer_pieces)},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7},
            })

        super().__init__(default=reply)
