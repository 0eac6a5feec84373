"""The JSON-dump loader: every value type, labels with ``mul`` fallback, compressions,
idempotence on a real DuckDB file, and the bundled sample's shape."""

from __future__ import annotations

import bz2
import gzip
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_store_parquet import Watched

from chaingraph.cli import cli
from chaingraph.graph import EvidenceGraph
from chaingraph.progress import ProgressEvent
from chaingraph.resources import data_file
from chaingraph.settings import TraversalPolicy
from chaingraph.sources.loaders import LoadReport, load, summarize
from chaingraph.store import Store
from chaingraph.values import (
    JULIAN,
    CoordinateValue,
    EntityValue,
    MonolingualValue,
    QuantityValue,
    TimeValue,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "load"
VALUES = FIXTURES / "values.json"
SAMPLE = data_file("sample/douglas-adams.json")
CONTENT_TABLES = ("entities", "properties", "statements", "qualifiers", "reference_snaks")


def contents(store: Store, tables: tuple[str, ...] = CONTENT_TABLES) -> dict[str, list[tuple[Any, ...]]]:
    """Full, sorted contents of the given tables (provenance tables excluded by default)."""
    out = {}
    for table in tables:
        rows = store.con.execute(f"SELECT * FROM {table}").fetchall()
        out[table] = sorted(rows, key=repr)
    return out


def test_every_value_type_of_the_fixture_is_stored_in_canonical_form(store: Store) -> None:
    load([VALUES], store)
    assert store.statement("Q1001$A1").value == TimeValue.make(1521, 8, 13, precision=11, calendar=JULIAN)
    assert store.statement("Q1001$A1").rank == "preferred"
    assert store.statement("Q1001$A2").value == QuantityValue(amount="+10.38", unit="Q712226",
                                                               upper="+10.385", lower="+10.375")
    some, no = store.statement("Q1001$A3"), store.statement("Q1001$A4")
    assert (some.snaktype, some.value) == ("somevalue", None)
    assert (no.snaktype, no.value, no.rank) == ("novalue", None, "deprecated")
    assert store.statement("Q1001$A5").value == EntityValue(id="Q1002")  # numeric-id only
    assert store.statement("Q1001$A6").value == CoordinateValue(latitude=51.5, longitude=-0.12,
                                                                precision=0.0001, globe="Q2")
    assert store.statement("Q1001$A7").value == MonolingualValue(text="Alpha Omega", language="en")


def test_qualifiers_and_references_are_kept_with_the_reference_hash(store: Store) -> None:
    load([VALUES], store)
    st = store.statement("Q1001$A1")
    assert set(st.qualifiers) == {
        ("P580", "value", TimeValue.make(-44, precision=9, calendar=JULIAN)),
        ("P40", "somevalue", None)}
    assert set(st.references) == {
        ("fa278ebfc458360e5aed63d5058cca83c46134f1", "P248", "value", EntityValue(id="Q5375741")),
        ("fa278ebfc458360e5aed63d5058cca83c46134f1", "P813", "value",
         TimeValue.make(2013, 12, 7, precision=11))}
    assert [s["kind"] for s in st.sources] == ["json-dump"]


def test_labels_fall_back_to_mul_and_sitelinks_are_counted(store: Store) -> None:
    load([VALUES], store)
    alpha, beta = store.entity("Q1001"), store.entity("Q1002")
    assert (alpha.label, alpha.aliases, alpha.sitelinks) == ("Alpha", ("A",), 2)
    assert (beta.label, beta.aliases, beta.sitelinks) == ("Beta", ("B",), None)
    assert store.property("P625").label == "coordinate location"
    assert store.datatypes()["P2046"] == "quantity"


def test_compressed_and_bracketless_files_give_the_same_store(tmp_path: Path) -> None:
    raw = VALUES.read_bytes()
    lines = raw.splitlines(keepends=True)
    half = len(lines) // 2
    variants = {
        "multi.json.gz": gzip.compress(b"".join(lines[:half])) + gzip.compress(b"".join(lines[half:])),
        "dump.json.bz2": bz2.compress(raw),
        "lines.jsonl": b"".join(ln.rstrip().rstrip(b",") + b"\n" for ln in lines[1:-1]),
    }
    with Store() as reference:
        load([VALUES], reference)
        expected = contents(reference)
    for name, data in variants.items():
        path = tmp_path / name
        path.write_bytes(data)
        with Store() as s:
            report = load([path], s)
            assert contents(s) == expected, name
            assert report.files[0].statements == 8


def test_loading_the_same_files_twice_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    with Store(db) as s:
        load([VALUES, SAMPLE], s)
        first = contents(s, (*CONTENT_TABLES, "sources", "statement_sources"))
    with Store(db) as s:
        load([VALUES, SAMPLE], s)
        load([SAMPLE], s)
        assert contents(s, (*CONTENT_TABLES, "sources", "statement_sources")) == first


def test_sample_is_a_real_neighbourhood_of_douglas_adams(store: Store) -> None:
    report = load([SAMPLE], store)
    q42 = store.entity("Q42")
    assert q42.label == "Douglas Adams" and q42.sitelinks == 129 and q42.classes == ("Q5",)
    assert 40 <= report.summary.entities <= 120
    by_type = report.summary.statements_by_value_type
    assert {"item", "time", "quantity", "monolingualtext", "string"} <= set(by_type)
    born = store.statement("q42$D8404CDA-25E4-4334-AF13-A3290BCD9C0F")
    assert born.value == TimeValue.make(1952, 3, 11, precision=11)
    assert store.statement("Q42$b0bf3caf-481c-356b-03a2-e61174b8e6da").value == QuantityValue(
        amount="+1.96", unit="Q11573")
    assert report.summary.ranks.get("deprecated") == 1


@pytest.mark.parametrize("policy", [TraversalPolicy(), TraversalPolicy(hub_limit=None)],
                         ids=["default", "no-hub-limit"])
def test_sample_has_entities_five_to_seven_hops_from_q42(store: Store, policy: TraversalPolicy) -> None:
    load([SAMPLE], store)
    g = EvidenceGraph.from_store(store, policy=policy)
    seed = g.vertex("Q42")
    dist = {seed: 0}
    queue = [seed]
    for v in queue:
        if v != seed and not g.passable(v):
            continue
        for u, _, _ in g.neighbours(v):
            if u not in dist:
                dist[u] = dist[v] + 1
                queue.append(u)
    by_distance = Counter(dist.values())
    assert sum(n for d, n in by_distance.items() if d >= 5) >= 12
    assert max(by_distance) == 7
    far = {g.name(v) for v, d in dist.items() if d >= 6}
    assert {"Q334648", "Q2265719", "Q214801"} <= far  # Roxy Music, I.R.S. Records, The Truman Show


def test_cli_load_then_summary_agree(runner: Any, tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    loaded = runner.invoke(cli, ["load", str(SAMPLE), "--store", str(db), "--format", "json"])
    assert loaded.exit_code == 0, loaded.output
    assert LoadReport.model_validate_json(loaded.stdout).summary.entities == 84
    assert "LoadReport" in runner.invoke(cli, ["schema", "load-report"]).output
    shown = runner.invoke(cli, ["summary", "--store", str(db), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    with Store(db, read_only=True) as s:
        assert shown.output.strip() == summarize(s).model_dump_json(indent=2)
    table = runner.invoke(cli, ["summary", "--store", str(db)])
    assert "statements: quantity" in table.output and "124" in table.output


def test_summarize_holds_duckdb_to_its_budget_and_lets_the_blocks_go(tmp_path: Path) -> None:
    """The summary's grouped counts scan whole statement columns, and DuckDB keeps every block
    it reads up to its own limit (77 MB after the summary of an 18 M-statement store): a store
    file is summarised within DEFAULT_SUMMARY_MEMORY_MB, between two releases of DuckDB's
    cache, and has its own limit back after; an in-memory store, which cannot spill, is left
    alone. The figures are the same either way."""
    from chaingraph.settings import DEFAULT_SUMMARY_MEMORY_MB
    from chaingraph.store_memory import memory_limit, setting

    def noting_releases(store: Store, events: list[str]) -> None:
        release = store.release_cache

        def noted() -> None:
            events.append("release")
            release()
        store.release_cache = noted  # type: ignore[method-assign]

    figures = []
    for store in (Store(tmp_path / "s.duckdb"), Store()):
        with store:
            load([SAMPLE], store)
            opened, events = memory_limit(store.con), []
            noting_releases(store, events)
            store.con = Watched(store.con, "SELECT count(*) FROM", events)  # type: ignore[assignment]
            figures.append(summarize(store).model_dump(exclude={"store"}))
            limits = events[1:-1]  # a count per table, then the references, between the releases
            assert events[0] == events[-1] == "release" and len(limits) >= 6 and len(set(limits)) == 1
            if store.path is None:
                assert limits[0] == opened
            else:  # what DuckDB holds of this small store (well under 64 MiB) and the budget
                held, unit = limits[0].split()
                budget = DEFAULT_SUMMARY_MEMORY_MB * (int(setting(store.con, "threads")) + 2)
                assert unit == "MiB" and budget <= float(held) < budget + 64
            assert memory_limit(store.con) == opened
    assert figures[0] == figures[1] and figures[0]["entities"] == 84


def test_cli_load_as_a_subprocess(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    out = subprocess.run([sys.executable, "-m", "chaingraph", "load", str(VALUES), "--store", str(db)],
                         capture_output=True, text=True, check=True)
    assert "statements" in out.stdout and "seconds" in out.stdout
    assert out.stderr == ""  # no progress bar when stderr is not a terminal


@pytest.mark.parametrize("name", ["values.json", "values.nt"])
def test_progress_reports_bytes_up_to_the_file_size(store: Store, name: str) -> None:
    path = FIXTURES / name
    events: list[ProgressEvent] = []
    load([path], store, progress=events.append)
    assert {(e.stage, e.unit) for e in events} == {("load", "bytes")}
    seen = [(e.item, e.done, e.total) for e in events]
    assert seen and all(p == str(path) for p, _, _ in seen)
    assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)
    assert seen[-1][1:] == (path.stat().st_size, path.stat().st_size)


def test_cli_progress_bar_can_be_forced(runner: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    loaders = importlib.import_module("chaingraph.sources.loaders")  # the command imports load() when it runs
    callbacks: list[Any] = []
    real = loaders.load

    def spy(files: Any, store: Store, **kw: Any) -> LoadReport:
        callbacks.append(kw["progress"])
        return real(files, store, **kw)

    monkeypatch.setattr(loaders, "load", spy)
    for flag, store in (("--progress", "s.duckdb"), ("--no-progress", "t.duckdb")):
        result = runner.invoke(cli, ["load", str(VALUES), "--store", str(tmp_path / store), flag])
        assert result.exit_code == 0, result.output
    # stderr is not a terminal under the runner: only --progress turns the bar on
    assert callable(callbacks[0]) and callbacks[1] is None


def test_cli_load_tunes_malloc_before_it_opens_the_store(runner: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The arena cap takes only before DuckDB's threads have made arenas of their own (see
    ``store_memory.tune_malloc_for_load``): the command sets it first."""
    from chaingraph import store_memory

    events: list[str] = []
    opened = Store.__init__

    def store(self: Store, *args: Any, **kwargs: Any) -> None:
        events.append("store")
        opened(self, *args, **kwargs)

    monkeypatch.setattr(store_memory, "tune_malloc_for_load", lambda: events.append("tune") or [])
    monkeypatch.setattr(Store, "__init__", store)
    result = runner.invoke(cli, ["load", str(VALUES), "--store", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 0, result.output
    assert events[:2] == ["tune", "store"]
