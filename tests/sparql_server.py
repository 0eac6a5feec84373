"""Loopback SPARQL servers for tests: a real Oxigraph and a scriptable faulty proxy.

* :class:`OxigraphServer` loads N-Triples files into a store directory with the
  ``oxigraph`` CLI (``pip install oxigraph``) and serves it read-only on 127.0.0.1;
  ``with OxigraphServer(files, tmpdir) as server: server.url``. The process is always
  stopped on exit.
* :class:`FaultServer` is a stdlib HTTP server in a thread that answers each POST from a
  script of faults (``"429"``, ``"500"``, ``"truncated"``, ``"garbage"``, ``"hang"``,
  ``"ok"``) and forwards ``"ok"`` requests to a real endpoint, recording what it saw.
  Hostile modes: ``"huge"`` streams an endless valid-looking body without a length,
  ``"drip"`` sends one byte every ``drip_seconds``, ``"redirect-ftp"`` and
  ``"redirect-https"`` redirect to another scheme, ``"bad-bindings"`` answers bindings
  that are not SPARQL JSON terms, ``"deep"`` answers JSON nested 100,000 levels; with
  ``hostile_labels`` every forwarded literal with a language tag gets terminal escape
  sequences (clear screen, window title) prepended.

Other tests import these helpers (``from sparql_server import OxigraphServer``) and the
fixture factory :func:`oxigraph_fixture`.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs

import pytest

__all__ = ["FaultServer", "OxigraphServer", "free_port", "oxigraph_binary", "oxigraph_fixture"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def oxigraph_binary() -> str:
    """Path of the ``oxigraph`` CLI (next to the running Python, else on PATH)."""
    import sys

    beside = Path(sys.executable).parent / "oxigraph"
    found = str(beside) if beside.exists() else shutil.which("oxigraph")
    if not found:
        pytest.fail("the oxigraph CLI is missing; pip install -e '.[test]' installs it")
    return found


class OxigraphServer:
    """``oxigraph load`` + ``oxigraph serve-read-only`` on a free loopback port."""

    def __init__(self, files: Sequence[Path], workdir: Path) -> None:
        self.files = [Path(f) for f in files]
        self.location = workdir / "oxigraph"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/query"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> OxigraphServer:
        exe = oxigraph_binary()
        if not self.location.exists():
            subprocess.run([exe, "load", "--location", str(self.location), "--file",
                            *map(str, self.files)], check=True, capture_output=True, timeout=300)
        self.proc = subprocess.Popen([exe, "serve-read-only", "--location", str(self.location),
                                      "--bind", f"127.0.0.1:{self.port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"oxigraph serve exited: {err[:500]}")
            try:
                req = urllib.request.Request(self.url, data=b"query=ASK%7B%7D", method="POST",
                                             headers={"Content-Type": "application/x-www-form-urlencoded"})
                with urllib.request.urlopen(req, timeout=1):
                    return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"oxigraph did not answer on {self.url} within 30 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self) -> OxigraphServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def oxigraph_fixture(*relative: str, name: str) -> Any:
    """A session fixture serving ``shared_data/<relative>`` files; ``name`` tags its work dir."""

    @pytest.fixture(scope="session")
    def _server(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OxigraphServer]:
        files = [shared_data / r for r in relative]
        with OxigraphServer(files, tmp_path_factory.mktemp(name)) as server:
            yield server

    return _server


class FaultServer:
    """An HTTP endpoint on loopback that plays a script of faults, then forwards.

    ``script`` is consumed one entry per request; when it is empty every request is
    forwarded to ``upstream`` (or answered with an empty SPARQL result without one).
    ``requests`` records ``(method, user agent, form fields)`` of every request.
    """

    EMPTY = b'{"head":{"vars":[]},"results":{"bindings":[]}}'

    HOSTILE = "\x1b[2J\x1b]0;pwned\x07\x9b31m"

    def __init__(self, upstream: str | None = None, *, hang_seconds: float = 2.0,
                 drip_seconds: float = 0.3) -> None:
        self.upstream = upstream
        self.hang_seconds = hang_seconds
        self.drip_seconds = drip_seconds
        self.hostile_labels = False
        self.streamed = 0  # bytes the "huge" mode managed to send
        self.script: list[str] = []
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []
        self.retry_after = "0"
        self.down = False  # when True every request gets a 503
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/query"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    def _next(self) -> str:
        with self._lock:
            if self.down:
                return "503"
            return self.script.pop(0) if self.script else "ok"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                fields = parse_qs(body.decode())
                with server._lock:
                    server.requests.append(("POST", self.headers.get("User-Agent", ""), fields))
                action = server._next()
                if action == "429":
                    self._send(429, b"slow down", {"Retry-After": server.retry_after})
                elif action in ("500", "502", "503"):
                    self._send(int(action), b"java.lang.RuntimeException: boom")
                elif action == "truncated":  # promises more bytes than it sends, then closes
                    self.send_response(200)
                    self.send_header("Content-Type", "application/sparql-results+json")
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    self.wfile.write(b'{"head":{"vars":["s"]},"results":{"bindings":[{"s":')
                    self.wfile.flush()
                    self.close_connection = True
                elif action == "garbage":  # a complete 200 that is not SPARQL JSON
                    self._send(200, b"Please set a user-agent and respect our robot policy")
                elif action == "timeout-body":
                    self._send(200, b'{"head":{"vars":["s"]},"results":{"bindings":[\n'
                                    b"java.util.concurrent.TimeoutException")
                elif action == "hang":
                    time.sleep(server.hang_seconds)
                    self._send(200, server.EMPTY)
                elif action == "400":
                    self._send(400, b"Parse error")
                elif action == "huge":  # an endless body, no Content-Length, until the client hangs up
                    self.send_response(200)
                    self.send_header("Content-Type", "application/sparql-results+json")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    row = b'{"s":{"type":"literal","value":"' + b"x" * 4000 + b'"}},'
                    with contextlib.suppress(OSError):  # streams until the client hangs up
                        self.wfile.write(b'{"head":{"vars":["s"]},"results":{"bindings":[')
                        while True:
                            self.wfile.write(row * 16)
                            server.streamed += len(row) * 16
                    self.close_connection = True
                elif action == "drip":  # a complete answer, one byte at a time
                    body = server.EMPTY
                    self.send_response(200)
                    self.send_header("Content-Type", "application/sparql-results+json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    with contextlib.suppress(OSError):  # the client may give up mid-drip
                        for i in range(len(body)):
                            self.wfile.write(body[i : i + 1])
                            self.wfile.flush()
                            time.sleep(server.drip_seconds)
                    self.close_connection = True
                elif action in ("redirect-ftp", "redirect-https"):
                    target = ("ftp://127.0.0.1/query" if action == "redirect-ftp"
                              else f"https://127.0.0.1:{server.httpd.server_address[1]}/query")
                    self._send(307, b"", {"Location": target})
                elif action == "bad-bindings":
                    self._send(200, b'{"head":{"vars":["s"]},"results":{"bindings":[{"s":"Q5"},[1,2]]}}')
                elif action == "deep":
                    self._send(200, b'{"head":{"vars":[]},"results":{"bindings":[' + b"[" * 100_000
                               + b"]" * 100_000 + b"]}}")
                else:
                    self._forward(fields)

            def _forward(self, fields: dict[str, list[str]]) -> None:
                if server.upstream is None:
                    self._send(200, server.EMPTY)
                    return
                data = urllib.parse.urlencode({"query": fields.get("query", [""])[0]}).encode()
                req = urllib.request.Request(server.upstream, data=data, method="POST", headers={
                    "Accept": "application/sparql-results+json",
                    "Content-Type": "application/x-www-form-urlencoded"})
                try:
                    with urllib.request.urlopen(req, timeout=60) as resp:
                        body = resp.read()
                    if server.hostile_labels:
                        body = server.poison_labels(body)
                    self._send(200, body)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (its time-out): nothing to answer

            def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    return

        return Handler

    def poison_labels(self, body: bytes) -> bytes:
        """Prepend terminal escapes to every literal with a language tag (labels, texts)."""
        import json

        doc = json.loads(body)
        for row in doc["results"]["bindings"]:
            for term in row.values():
                if term.get("xml:lang"):
                    term["value"] = self.HOSTILE + term["value"]
        return json.dumps(doc).encode()

    def queries(self) -> list[str]:
        return [fields.get("query", [""])[0] for _, _, fields in self.requests]

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


#: session fixtures shared by every test module that imports them (one server per process)
codex_s_server = oxigraph_fixture("world/codex-s.nt.gz", name="codex-s")
entities_full_server = oxigraph_fixture("entities_full/wikidata_entities_rdf.nt.gz", name="entities-full")
