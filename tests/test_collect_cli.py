"""``chaingraph collect`` through CliRunner and once as a real subprocess, on loopback servers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from sparql_server import (
    FaultServer,
    OxigraphServer,
    codex_s_server,  # noqa: F401  (session fixture)
    free_port,
)

from chaingraph.cli import cli
from chaingraph.store import Store

pytestmark = pytest.mark.server



@pytest.fixture(scope="session")
def world(codex_s_server: OxigraphServer) -> OxigraphServer:  # noqa: F811
    return codex_s_server


ARGS = ["--radius", "1", "--max-neighbours", "4", "--select", "2"]


def test_collect_prints_a_json_report_and_fills_the_store(world: OxigraphServer, runner: CliRunner,
                                                          tmp_path: Path) -> None:
    store = tmp_path / "c.duckdb"
    seeds = ["--seed", "Q835", "--seed", "Q1785"]
    result = runner.invoke(cli, ["collect", *seeds, *ARGS, "--endpoint", world.url, "--store", str(store),
                                 "--format", "json", "--no-progress"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["seeds"] == ["Q835", "Q1785"] and report["entities_expanded"] == 2
    assert (report["max_neighbours"], report["select"], report["in_limit"]) == (4, 2, 100)
    with Store(store, read_only=True) as s:
        assert len(s.edges(subject=["Q835", "Q1785"])) > 10
        assert s.con.execute("SELECT count(*) FROM responses").fetchone()[0] == report["requests"]  # type: ignore[index]
    # the same command offline replays the cache; a table is the default output
    again = runner.invoke(cli, ["collect", *seeds, *ARGS, "--endpoint", world.url, "--store", str(store),
                                "--offline"])
    assert again.exit_code == 0, again.output
    assert "collected Q835, Q1785" in again.output


def test_malformed_seed_is_refused_before_any_request(runner: CliRunner, tmp_path: Path) -> None:
    with FaultServer() as server:
        for bad in ("Q12x", "P31", "42", "Q1;DROP"):
            result = runner.invoke(cli, ["collect", "--seed", "Q1", "--seed", bad, "--radius", "1",
                                         "--endpoint", server.url, "--store", str(tmp_path / "s.duckdb")])
            assert result.exit_code == 2
            assert result.output.strip().splitlines() == [
                f"error: --seed: {bad!r} is not a Wikidata id (expected Q followed by digits, e.g. Q42)"]
        assert server.requests == []


def test_unreachable_endpoint_is_one_line_naming_it(runner: CliRunner, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/sparql"
    result = runner.invoke(cli, ["collect", "--seed", "Q42", "--radius", "1", "--endpoint", url,
                                 "--store", str(tmp_path / "s.duckdb"), "--retries", "0"])
    assert result.exit_code == 4
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and url in lines[0]


def test_offline_without_cache_says_what_to_do(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["collect", "--seed", "Q42", "--radius", "1", "--offline",
                                 "--store", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 4 and "run once without --offline" in result.output


def test_collect_as_a_subprocess(world: OxigraphServer, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "chaingraph", "collect", "--seed", "Q835", *ARGS,
                           "--endpoint", world.url, "--store", str(tmp_path / "p.duckdb"), "--format", "json",
                           "--user-agent", "chaingraph-tests/1 (mailto:tests@example.org)"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["source"] == f"sparql:{world.url}" and report["requests"] > 0
    assert [lay["depth"] for lay in report["layers"]] == [0, 1]


def test_help_names_every_option(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["collect", "--help"])
    for option in ("--seed", "--radius", "--endpoint", "--store", "--max-neighbours", "--select",
                   "--layer-budget", "--user-agent", "--timeout", "--offline"):
        assert option in result.output
    # every option the command really has, not only the list above
    from chaingraph.cli.collect import collect as command

    assert result.exit_code == 0, result.output
    for param in command.params:
        for option in (*param.opts, *param.secondary_opts):
            assert option in result.output, option
