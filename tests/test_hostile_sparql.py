"""The SPARQL client against a hostile loopback server: endless bodies, a byte every few
tenths of a second, redirects to other schemes, bindings that are not terms, JSON nested
100,000 deep, labels full of terminal escapes, IRIs that only look like Wikidata's.
Memory is bounded by running the command under an address-space limit.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sparql_server import FaultServer, OxigraphServer, codex_s_server  # noqa: F401  (session fixture)

import chaingraph
from chaingraph.cli import cli
from chaingraph.errors import EndpointError, EndpointResponseError, EndpointUnavailable, InvalidInput
from chaingraph.settings import RetryPolicy
from chaingraph.sources.sparql import SparqlClient, query_hash
from chaingraph.sources.sparql_terms import term_value
from chaingraph.store import Store

QUERY = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"
ONE_TRY = RetryPolicy(attempts=1)
#: the subprocess runs the chaingraph this test process imported
CODE = str(Path(chaingraph.__file__).resolve().parent.parent)


@pytest.fixture
def fault() -> Iterator[FaultServer]:
    with FaultServer(drip_seconds=0.4) as server:
        yield server


def _limited(megabytes: int) -> None:
    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_limited(args: list[str], *, megabytes: int = 2000,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m chaingraph ARGS`` under an address-space limit and a time-out."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([CODE, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "chaingraph", *args], cwd=CODE, capture_output=True,
                          text=True, timeout=timeout, env=env, preexec_fn=lambda: _limited(megabytes))


def test_an_endless_body_is_refused_at_the_cap_and_not_cached(fault: FaultServer, store: Store) -> None:
    fault.script = ["huge"]
    client = SparqlClient(fault.url, cache=store, retry=ONE_TRY, max_response_bytes=1_000_000)
    with pytest.raises(EndpointResponseError, match="1,000,000-byte limit"):
        client.select(QUERY)
    assert client.cached(query_hash(fault.url, QUERY)) is None


def test_collect_against_an_endless_body_stays_within_memory(fault: FaultServer, tmp_path: Path) -> None:
    fault.script = ["huge"] * 3
    res = run_limited(["collect", "--seed", "Q42", "--radius", "1", "--endpoint", fault.url, "--store",
                       str(tmp_path / "c.duckdb"), "--retries", "0", "--max-response-bytes", "8000000"])
    assert res.returncode == 4, res.stderr
    assert "8,000,000-byte limit" in res.stderr and "Traceback" not in res.stderr
    with Store(tmp_path / "c.duckdb", read_only=True) as s:
        assert s.con.execute("SELECT count(*) FROM responses").fetchall()[0][0] == 0


def test_a_dripping_server_is_cut_at_the_deadline(fault: FaultServer) -> None:
    fault.script = ["drip"]  # 47 bytes at 0.4 s each: about 19 s in all
    client = SparqlClient(fault.url, retry=ONE_TRY, timeout=2, deadline=1.5)
    with pytest.raises(EndpointUnavailable, match=r"1\.5 s deadline"):
        client.select(QUERY)


def test_collect_with_timeout_and_deadline_ends_on_a_dripping_server(fault: FaultServer,
                                                                    tmp_path: Path) -> None:
    fault.script = ["drip"] * 3
    res = run_limited(["collect", "--seed", "Q42", "--radius", "1", "--endpoint", fault.url, "--store",
                       str(tmp_path / "d.duckdb"), "--timeout", "2", "--deadline", "2", "--retries", "0"],
                      timeout=60)
    assert res.returncode == 4 and "deadline" in res.stderr, res.stderr


@pytest.mark.parametrize("kind", ["redirect-ftp", "redirect-https"])
def test_a_redirect_to_another_scheme_is_not_followed(fault: FaultServer, kind: str) -> None:
    fault.script = [kind]
    client = SparqlClient(fault.url, retry=ONE_TRY)
    with pytest.raises(EndpointError, match="another scheme"):
        client.select(QUERY)
    assert len(fault.requests) == 1


@pytest.mark.parametrize("kind", ["bad-bindings", "deep"])
def test_bodies_that_are_not_sparql_results_are_endpoint_errors(fault: FaultServer, tmp_path: Path,
                                                                kind: str) -> None:
    fault.script = [kind] * 3
    res = CliRunner().invoke(cli, ["collect", "--seed", "Q42", "--radius", "1", "--endpoint", fault.url,
                                   "--store", str(tmp_path / "b.duckdb"), "--retries", "0"])
    assert res.exit_code == 4, res.output
    assert "bad body" in res.stderr and "Traceback" not in res.output


def test_only_wikidata_entity_iris_become_items() -> None:
    assert term_value("wikibase-item", {"value": {"type": "uri", "value": "http://www.wikidata.org/entity/Q5"}}
                      )[1].id == "Q5"  # type: ignore[union-attr]
    with pytest.raises(InvalidInput, match="not a Wikidata entity IRI"):
        term_value("wikibase-item", {"value": {"type": "uri", "value": "http://evil.example/x/Q5"}})


@pytest.mark.parametrize(("command", "option", "value", "needle"), [
    ("collect", "--endpoint", "", "endpoint"),
    ("collect", "--endpoint", "http://[::1", "Invalid IPv6 URL"),
    ("collect", "--endpoint", "ftp://example.org/sparql", "only http and https"),
    ("collect", "--user-agent", "me/1.0\r\nX-Evil: 1", "line breaks"),
    ("collect", "--user-agent", "bot \u2603 (me@example.org)", "Latin-1"),
    ("collect", "--timeout", "nan", "--timeout"),
    ("collect", "--timeout", "inf", "finite"),
    ("collect", "--deadline", "0", "deadline"),
    ("collect", "--max-response-bytes", "-1", "max-response-bytes"),
    ("expand", "--endpoint", "", "endpoint"),
    ("expand", "--endpoint", "http://[::1", "Invalid IPv6 URL"),
    ("expand", "--timeout", "nan", "--timeout"),
])
def test_bad_endpoint_options_are_one_line_and_exit_2(tmp_path: Path, command: str, option: str, value: str,
                                                      needle: str) -> None:
    store = tmp_path / "never.duckdb"
    base = {"collect": ["collect", "--seed", "Q42", "--radius", "1", "--store", str(store)],
            "expand": ["expand", "--seed", "Q42"]}[command]
    if option != "--endpoint":
        base += ["--endpoint", "http://127.0.0.1:9/sparql"]
    res = CliRunner().invoke(cli, [*base, option, value])
    assert res.exit_code == 2, res.output
    assert needle in res.stderr and res.stderr.count("\n") == 1 and "Traceback" not in res.output
    assert not store.exists()  # refused before anything was opened or sent


def test_hostile_labels_are_neutralised_on_the_terminal(codex_s_server: OxigraphServer) -> None:  # noqa: F811
    with FaultServer(upstream=codex_s_server.url) as server:
        server.hostile_labels = True
        res = CliRunner().invoke(cli, [
            "expand", "--seed", "Q835", "--endpoint", server.url, "--format", "table", "--min-hops", "2",
            "--max-hops", "2", "--top", "3", "--max-neighbours", "4", "--select", "1", "--in-limit", "10"])
    assert res.exit_code == 0, res.output
    assert "\\x1b[2J" in res.stdout  # the label is shown, escaped ...
    assert not any(c in res.output for c in "\x1b\x07\x9b")  # ... and nothing reaches the terminal raw
