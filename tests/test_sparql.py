"""The SPARQL client against a real loopback HTTP server that misbehaves on purpose.

Each fault (429 with Retry-After, 5xx, a truncated body, a non-SPARQL 200, a Java
TimeoutException body, a hang) is retried and the answer that finally comes is returned
and cached; what cannot be recovered raises the documented error naming the endpoint.
Waits are recorded through an injected ``sleep`` instead of being slept.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest
from sparql_server import FaultServer, free_port

from chaingraph.errors import (
    EndpointError,
    EndpointResponseError,
    EndpointUnavailable,
    InvalidInput,
    OfflineCacheMiss,
)
from chaingraph.settings import RetryPolicy
from chaingraph.sources.sparql import SparqlClient, parse_retry_after, query_hash
from chaingraph.store import Store

QUERY = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"


@pytest.fixture
def fault() -> Iterator[FaultServer]:
    with FaultServer(hang_seconds=1.5) as server:
        yield server


def client(url: str, store: Store | None = None, **kw: object) -> tuple[SparqlClient, list[float]]:
    waits: list[float] = []
    policy = kw.pop("retry", RetryPolicy(attempts=4, backoff=0.01, max_backoff=0.05, retry_after_cap=0.2,
                                         total=5.0))
    c = SparqlClient(url, cache=store, timeout=kw.pop("timeout", 5.0), retry=policy,  # type: ignore[arg-type]
                     sleep=waits.append, **kw)  # type: ignore[arg-type]
    return c, waits


def test_429_waits_for_retry_after_capped(fault: FaultServer, store: Store) -> None:
    fault.script = ["429", "429"]
    fault.retry_after = "7"
    c, waits = client(fault.url, store)
    resp = c.select(QUERY, query_file="t.rq")
    assert resp.bindings == [] and not resp.from_cache
    assert waits == [0.2, 0.2]  # 7 s asked, capped at retry_after_cap
    assert (c.requests, c.retries) == (3, 2)


def test_429_honours_a_small_retry_after_exactly(fault: FaultServer) -> None:
    fault.script = ["429"]
    fault.retry_after = "0"
    c, waits = client(fault.url)
    c.select(QUERY)
    assert waits == [0.0]


def test_5xx_backs_off_exponentially(fault: FaultServer) -> None:
    fault.script = ["500", "502", "503"]
    c, waits = client(fault.url)
    c.select(QUERY)
    assert waits == [0.01, 0.02, 0.04]
    assert c.retries == 3


@pytest.mark.parametrize("fault_kind", ["truncated", "garbage", "timeout-body"])
def test_bad_bodies_are_retried_not_stored(fault: FaultServer, store: Store, fault_kind: str) -> None:
    fault.script = [fault_kind]
    c, waits = client(fault.url, store)
    resp = c.select(QUERY, query_file="t.rq")
    assert resp.bindings == [] and c.retries == 1 and len(waits) == 1
    bodies = [r[0] for r in store.con.execute("SELECT body FROM responses").fetchall()]
    assert bodies == [FaultServer.EMPTY.decode()]


def test_bad_bodies_every_time_raise_response_error(fault: FaultServer, store: Store) -> None:
    fault.script = ["garbage"] * 10
    c, _ = client(fault.url, store)
    with pytest.raises(EndpointResponseError, match=fault.url.replace("?", r"\?")):
        c.select(QUERY)
    assert c.requests == 4
    assert store.con.execute("SELECT count(*) FROM responses").fetchone() == (0,)


def test_a_hang_times_out_and_is_retried(fault: FaultServer) -> None:
    fault.script = ["hang"]
    c, waits = client(fault.url, timeout=0.3)
    assert c.select(QUERY).bindings == []
    assert c.retries == 1 and len(waits) == 1


def test_retry_budget_is_bounded(fault: FaultServer) -> None:
    fault.script = ["500"] * 50
    c, waits = client(fault.url, retry=RetryPolicy(attempts=50, backoff=1.0, max_backoff=8.0, total=10.0))
    with pytest.raises(EndpointUnavailable, match="retry budget of 10 s spent"):
        c.select(QUERY)
    assert sum(waits) <= 10.0 and waits == [1.0, 2.0, 4.0]


def test_unreachable_endpoint_names_it() -> None:
    url = f"http://127.0.0.1:{free_port()}/sparql"
    c, waits = client(url)
    with pytest.raises(EndpointUnavailable) as info:
        c.select(QUERY)
    assert url in str(info.value) and "\n" not in str(info.value)
    assert len(waits) == 3  # attempts=4


def test_bad_query_is_not_retried(fault: FaultServer) -> None:
    fault.script = ["400"]
    c, waits = client(fault.url)
    with pytest.raises(EndpointError, match="rejected the query"):
        c.select(QUERY)
    assert waits == [] and c.requests == 1


def test_post_with_the_configured_user_agent(fault: FaultServer) -> None:
    agent = "chaingraph-tests/1 (mailto:tests@example.org)"
    c, _ = client(fault.url, user_agent=agent)
    c.select(QUERY)
    method, sent_agent, fields = fault.requests[0]
    assert (method, sent_agent, fields["query"]) == ("POST", agent, [QUERY])


def test_a_guid_that_looks_like_an_update_is_still_sent_as_a_query(fault: FaultServer) -> None:
    # SPARQLWrapper would classify this as SPARQL Update "ADD" and send update=...
    q = "SELECT ?x WHERE { VALUES ?st { <http://www.wikidata.org/entity/statement/Q1-ADD4-DELETE> } }"
    c, _ = client(fault.url)
    c.select(q)
    assert fault.requests[0][2].get("query") == [q] and "update" not in fault.requests[0][2]


def test_cache_answers_repeats_and_offline(fault: FaultServer, store: Store) -> None:
    c, _ = client(fault.url, store)
    first = c.select(QUERY, query_file="t.rq")
    again = c.select(QUERY, query_file="t.rq")
    assert again.from_cache and again.query_hash == first.query_hash == query_hash(fault.url, QUERY)
    assert (c.requests, c.cache_hits) == (1, 1)
    offline, _ = client(fault.url, store, offline=True)
    assert offline.select(QUERY).from_cache and offline.requests == 0
    with pytest.raises(OfflineCacheMiss, match="offline: no cached response"):
        offline.select(QUERY + " # another")
    assert len(fault.requests) == 1


def test_parse_retry_after_http_date() -> None:
    later = datetime.now(timezone.utc) + timedelta(seconds=30)
    assert 25 <= (parse_retry_after(format_datetime(later, usegmt=True)) or 0) <= 30
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_client_arguments_are_checked() -> None:
    # bad arguments are bad input (exit 2), not an endpoint failure (exit 4)
    with pytest.raises(InvalidInput, match="only http and https"):
        SparqlClient("ftp://example.org/sparql")
    with pytest.raises(InvalidInput, match="User-Agent"):
        SparqlClient("http://127.0.0.1/sparql", user_agent=" ")


def test_time_and_quantity_without_value_node_are_refused_not_guessed() -> None:
    from chaingraph.errors import InvalidInput
    from chaingraph.sources.sparql_terms import term_value

    lit = {"type": "literal", "value": "1952-03-11T00:00:00Z"}
    for datatype in ("time", "quantity"):
        with pytest.raises(InvalidInput, match="without its value node"):
            term_value(datatype, {"value": lit})
