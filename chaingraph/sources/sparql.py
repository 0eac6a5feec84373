"""A careful SPARQL client: POST, descriptive User-Agent, retries, and a response cache.

:class:`SparqlClient` sends SELECT queries over HTTP (``urllib``) and returns the parsed
SPARQL JSON. It is built for the Wikidata Query Service's rules (``reference/wikidata.md``
§5) and works unchanged against any SPARQL 1.1 endpoint (Oxigraph, QLever, Fuseki):

* every request is a POST with ``Accept: application/sparql-results+json`` and the
  configured User-Agent (WDQS refuses anonymous or library-default agents);
* HTTP 429 waits for ``Retry-After`` (seconds or an HTTP date, capped by
  ``RetryPolicy.retry_after_cap``; 60 s when the header is missing); 5xx, connection
  errors and time-outs back off exponentially (``backoff · 2^attempt``, at most
  ``max_backoff``); all waiting together never exceeds ``RetryPolicy.total`` seconds;
* a 200 whose body is not complete SPARQL JSON (truncated, a Java ``TimeoutException``
  trace, an HTML or plain-text notice) is retried, never stored as an empty result;
* the server is not trusted: only ``http(s)`` endpoints are asked and a redirect may not
  change the scheme; a body larger than ``max_response_bytes`` (default
  :data:`~chaingraph.settings.DEFAULT_MAX_RESPONSE_BYTES`, 128 MiB) is refused, not read on,
  and never cached; one request ends after ``deadline`` seconds (default
  :data:`~chaingraph.settings.DEFAULT_DEADLINE`, 120 s) however slowly the server sends;
  bindings that are not SPARQL JSON terms make the body bad (reading the terms as values,
  where only IRIs under ``http://www.wikidata.org/entity/`` become entities, is
  :mod:`chaingraph.sources.sparql_terms`);
* every good response is written to the store's ``responses`` table under its query hash
  before it is returned, so an interrupted collection keeps what it fetched and
  ``offline=True`` replays a collection with no network at all
  (:class:`~chaingraph.errors.OfflineCacheMiss` when an answer is missing).

After the retry budget the client raises :class:`~chaingraph.errors.EndpointUnavailable`
(connection, time-out, HTTP errors) or :class:`~chaingraph.errors.EndpointResponseError`
(bodies that never parsed); both name the endpoint.

>>> query_hash("http://localhost:7878/query", "SELECT * WHERE { ?s ?p ?o }")[:12]
'c4d6519a3c8a'
>>> parse_retry_after("7"), parse_retry_after(None), parse_retry_after("soon")
(7.0, None, None)
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import math
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from chaingraph.errors import (
    EndpointError,
    EndpointResponseError,
    EndpointUnavailable,
    InvalidInput,
    OfflineCacheMiss,
)
from chaingraph.settings import (
    DEFAULT_DEADLINE,
    DEFAULT_ENDPOINT,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_USER_AGENT,
    RetryPolicy,
    endpoint_url_problem,
    user_agent_problem,
)

if TYPE_CHECKING:  # the store (DuckDB) is imported by whoever passes one as the cache
    from chaingraph.store import CachedResponse, Store

__all__ = [
    "Response",
    "SparqlClient",
    "parse_retry_after",
    "query_hash",
]



def query_hash(endpoint: str, query: str) -> str:
    """The cache key and provenance hash of ``query`` sent to ``endpoint`` (SHA-256, hex)."""
    return hashlib.sha256(f"{endpoint}\n{query}".encode()).hexdigest()


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


@dataclass(frozen=True)
class Response:
    """A parsed SPARQL JSON answer and where it came from."""

    bindings: list[dict[str, Any]]
    query_hash: str
    query_file: str
    retrieved_at: datetime
    from_cache: bool


class _Retry(Exception):
    """Internal: one attempt failed in a way worth retrying."""

    def __init__(self, reason: str, *, wait: float | None = None, body: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.body = body


def _check_body(body: bytes) -> list[dict[str, Any]]:
    """The bindings of a complete SPARQL JSON body, or raise :class:`_Retry`."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Retry("body is not UTF-8", body=True) from exc
    if "TimeoutException" in text[:4096] or "TimeoutException" in text[-4096:]:
        raise _Retry("endpoint reported a query time-out in the body", body=True)
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise _Retry(f"body is not complete JSON ({len(body)} bytes)", body=True) from exc
    except RecursionError:
        raise _Retry("body is JSON nested too deeply to be a SPARQL result", body=True) from None
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("head"), dict)
        or not isinstance(doc.get("results"), dict)
        or not isinstance(doc["results"].get("bindings"), list)
    ):
        raise _Retry("body is JSON but not a SPARQL SELECT result", body=True)
    bindings: list[dict[str, Any]] = doc["results"]["bindings"]
    for row in bindings:
        if not isinstance(row, dict) or not all(
                isinstance(term, dict) and isinstance(term.get("value"), str)
                and isinstance(term.get("type"), str) for term in row.values()):
            raise _Retry("body is JSON but a binding is not a map of SPARQL JSON terms", body=True)
    return bindings


class SparqlClient:
    """Send SELECT queries to one endpoint, politely and reproducibly.

    ``cache`` is the store whose ``responses`` table caches answers (``None``: no cache).
    ``sleep`` is injectable so tests need not wait. Counters ``requests`` (HTTP requests
    sent), ``retries`` and ``cache_hits`` accumulate over the client's life.
    """

    def __init__(
        self,
        endpoint: str = DEFAULT_ENDPOINT,
        *,
        cache: Store | None = None,
        user_agent: str = DEFAULT_USER_AGENT,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        offline: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        deadline: float = DEFAULT_DEADLINE,
    ) -> None:
        problem = endpoint_url_problem(endpoint)
        if problem:
            raise InvalidInput(f"endpoint: {endpoint!r}: {problem}; pass e.g. "
                               "https://query.wikidata.org/sparql").about("endpoint")
        problem = user_agent_problem(user_agent)
        if problem:
            raise InvalidInput(f"user_agent: {problem}").about("user_agent")
        for name, seconds in (("timeout", timeout), ("deadline", deadline)):
            if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
                raise InvalidInput(f"{name}: must be a positive, finite number of seconds, got {seconds!r}"
                                   ).about(name)
        if isinstance(max_response_bytes, bool) or not isinstance(max_response_bytes, int) \
                or max_response_bytes < 1:
            raise InvalidInput(f"max_response_bytes: must be a positive number of bytes, got "
                               f"{max_response_bytes!r}").about("max_response_bytes")
        self.endpoint = endpoint
        self.cache = cache
        self.user_agent = user_agent
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.deadline = deadline
        self.retry = retry or RetryPolicy()
        self.offline = offline
        self.sleep = sleep
        self.requests = 0
        self.retries = 0
        self.cache_hits = 0

    # -- cache ------------------------------------------------------------------------
    def cached(self, qhash: str) -> CachedResponse | None:
        """The cached ``(body, retrieved_at)`` for query hash ``qhash``, if there is a cache and a hit."""
        return None if self.cache is None else self.cache.cached_response(qhash)

    def _remember(self, qhash: str, query_file: str, query: str, body: str, when: datetime) -> None:
        if self.cache is None:
            return
        self.cache.cache_response(qhash, endpoint=self.endpoint, query_file=query_file, query=query,
                                  body=body, retrieved_at=when)

    # -- the one public call ------------------------------------------------------------
    def select(self, query: str, *, query_file: str = "") -> Response:
        """Run a SELECT query (cache first) and return its bindings."""
        qhash = query_hash(self.endpoint, query)
        hit = self.cached(qhash)
        if hit is not None:
            self.cache_hits += 1
            body, when = hit
            return Response(_check_body(body.encode()), qhash, query_file, when, True)
        if self.offline:
            raise OfflineCacheMiss(
                f"offline: no cached response for {query_file or 'query'} {qhash[:12]} from "
                f"{self.endpoint}; run once without --offline to fetch it"
            )
        waited, retry_no, last = 0.0, 0, "no attempt"
        body_failure = False
        for attempt in range(self.retry.attempts):
            try:
                raw = self._fetch(query)
                bindings = _check_body(raw)
            except _Retry as failure:
                last, body_failure = failure.reason, failure.body
                if attempt + 1 >= self.retry.attempts:
                    break
                wait = failure.wait if failure.wait is not None else self.retry.delay(retry_no)
                if waited + wait > self.retry.total:
                    last += f"; retry budget of {self.retry.total:g} s spent"
                    break
                self.retries += 1
                retry_no += 1
                waited += wait
                self.sleep(wait)
                continue
            when = datetime.now(timezone.utc)
            self._remember(qhash, query_file, query, raw.decode("utf-8"), when)
            return Response(bindings, qhash, query_file, when, False)
        what = f"{self.endpoint} ({query_file or 'query'})"
        if body_failure:
            raise EndpointResponseError(
                f"{what} kept answering with a bad body after "
                f"{attempt + 1} attempts: {last}; try a smaller --batch-size"
            )
        raise EndpointUnavailable(
            f"{what} unavailable after {attempt + 1} attempts: {last}; "
            "check the URL and your network, or use --offline"
        )

    def _fetch(self, query: str) -> bytes:
        """One HTTP round trip within the deadline and the size cap; failures worth
        retrying become :class:`_Retry`."""
        self.requests += 1
        data = urllib.parse.urlencode({"query": query}).encode()
        request = urllib.request.Request(self.endpoint, data=data, method="POST", headers={
            "Accept": "application/sparql-results+json",
            "Content-Type": "application/x-www-form-urlencoded",
            "User-Agent": self.user_agent})
        watch = _Deadline(self.deadline)
        try:
            with watch, _opener(watch).open(request, timeout=min(self.timeout, self.deadline)) as response:
                return self._read(response, watch)
        except urllib.error.HTTPError as exc:  # 429, 502, 503, 504, 403, ...
            if exc.code == 429:
                after = parse_retry_after(exc.headers.get("Retry-After") if exc.headers else None)
                wait = min(self.retry.retry_after_cap, 60.0 if after is None else after)
                raise _Retry("HTTP 429 Too Many Requests", wait=wait) from exc
            if 500 <= exc.code < 600:
                raise _Retry(f"HTTP {exc.code}") from exc
            if exc.code in (401, 404):
                raise EndpointUnavailable(
                    f"{self.endpoint}: HTTP {exc.code} {exc.reason}; check the endpoint URL and credentials"
                ) from exc
            if exc.code in (400, 414):
                first = exc.read(300).decode("utf-8", "replace").splitlines()
                raise EndpointError(f"{self.endpoint} rejected the query: HTTP {exc.code} "
                                    f"{first[0] if first else exc.reason}") from exc
            raise EndpointError(
                f"{self.endpoint} refused the query with HTTP {exc.code} {exc.reason}"
                + ("; set a descriptive --user-agent" if exc.code == 403 else "")
            ) from exc
        except (_Retry, EndpointError):
            raise
        except TimeoutError as exc:
            raise _Retry(self._late(watch)) from exc
        except http.client.IncompleteRead as exc:
            if watch.expired:
                raise _Retry(self._late(watch)) from exc
            raise _Retry("truncated body (connection closed early)", body=True) from exc
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError) or watch.expired:
                raise _Retry(self._late(watch)) from exc
            raise _Retry(f"cannot connect: {reason}") from exc
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            if watch.expired:
                raise _Retry(self._late(watch)) from exc
            raise _Retry(f"connection failed: {type(exc).__name__}: {exc}") from exc

    def _late(self, watch: _Deadline) -> str:
        if watch.expired:
            return f"no complete answer within the {self.deadline:g} s deadline"
        return f"no answer within {self.timeout:g} s"

    def _read(self, response: http.client.HTTPResponse, watch: _Deadline) -> bytes:
        """The body, refused (:class:`EndpointResponseError`) beyond the size cap."""
        cap = self.max_response_bytes
        declared = response.getheader("Content-Length")
        if declared is not None and declared.strip().isdigit() and int(declared) > cap:
            raise self._too_large(f"announces {int(declared):,} bytes")
        chunks: list[bytes] = []
        size = 0
        while chunk := response.read1(1 << 16):
            size += len(chunk)
            if size > cap:
                raise self._too_large("sent more")
            chunks.append(chunk)
            if watch.expired:
                raise _Retry(self._late(watch))
        if watch.expired:
            raise _Retry(self._late(watch))
        if response.length:  # fewer bytes than Content-Length promised
            raise _Retry("truncated body (connection closed early)", body=True)
        return b"".join(chunks)

    def _too_large(self, what: str) -> EndpointResponseError:
        return EndpointResponseError(
            f"{self.endpoint}: the response {what} than the {self.max_response_bytes:,}-byte limit; "
            "ask for less (a smaller --batch-size) or raise --max-response-bytes")


class _Deadline:
    """A whole-request deadline: when it passes, the request's sockets are shut down, so a
    server that sends a byte now and then cannot hold the client (socket time-outs only
    bound each single wait)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            late = self.expired
        if late:
            self._shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):  # already closed
            sock.shutdown(socket.SHUT_RDWR)


def _tracked(base: type[http.client.HTTPConnection], watch: _Deadline) -> type[http.client.HTTPConnection]:
    class Tracked(base):  # type: ignore[valid-type,misc]
        def connect(self) -> None:
            super().connect()
            watch.track(self.sock)

    return Tracked


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watch: _Deadline) -> None:
        super().__init__()
        self.watch = watch

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_tracked(http.client.HTTPConnection, self.watch), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watch: _Deadline) -> None:
        super().__init__()
        self.watch = watch

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_tracked(http.client.HTTPSConnection, self.watch), req,
                            context=self._context)  # type: ignore[attr-defined]


class _SameScheme(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to the same scheme (no https -> http, no ftp:, no file:)."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                         headers: Any, newurl: str) -> urllib.request.Request | None:
        old = urllib.parse.urlsplit(req.full_url).scheme.lower()
        new = urllib.parse.urlsplit(newurl).scheme.lower()
        if new != old:
            raise EndpointError(f"{req.full_url} redirected to {newurl!r}, another scheme; chaingraph "
                                "follows redirects only within http or https: pass the final URL")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _opener(watch: _Deadline) -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(_HTTPHandler(watch), _HTTPSHandler(watch), _SameScheme())


# -- reading SPARQL JSON bindings as Wikidata values -----------------------------------------
