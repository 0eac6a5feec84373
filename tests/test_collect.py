"""Collection over SPARQL from a real Oxigraph on loopback, checked against the dump loader.

The same world (CoDEx-S, ``world/codex-s``) is served by Oxigraph from its N-Triples and
loaded by :func:`chaingraph.sources.loaders.load` from its JSON dump; a SPARQL crawl must store
exactly the dump's rows, and a crawl of the dump-loaded store (:class:`StoreSource`)
must visit the same entities. The rich statement model (ranks, qualifiers, references,
quantities, coordinates, Julian and BCE dates, somevalue / novalue) is checked on
``entities_full`` (RDF served, JSON loaded).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sparql_server import FaultServer, OxigraphServer, codex_s_server, entities_full_server  # noqa: F401  (session fixtures)

from chaingraph.collect import CollectReport, collect
from chaingraph.errors import EndpointUnavailable, InvalidId, InvalidInput, OfflineCacheMiss
from chaingraph.ids import ENTITY
from chaingraph.progress import ProgressEvent
from chaingraph.settings import CrawlLimits, EndpointSettings, RetryPolicy
from chaingraph.sources.loaders import load
from chaingraph.sources.neighbours import Neighbour
from chaingraph.sources.sparql_source import SparqlSource
from chaingraph.sources.store_source import StoreSource
from chaingraph.store import Store

pytestmark = pytest.mark.server



@pytest.fixture(scope="session")
def world(codex_s_server: OxigraphServer) -> OxigraphServer:  # noqa: F811
    return codex_s_server


@pytest.fixture(scope="session")
def rich(entities_full_server: OxigraphServer) -> OxigraphServer:  # noqa: F811
    return entities_full_server

SEEDS = ["Q835", "Q1785"]
CAPS: dict[str, Any] = {"max_neighbours": 6, "select": 2, "in_limit": 2000}
FAST = RetryPolicy(attempts=2, backoff=0.01, max_backoff=0.02, retry_after_cap=0.01, total=1.0)
FAST_ENOUGH = RetryPolicy(attempts=6, backoff=0.01, max_backoff=0.02, retry_after_cap=0.01, total=2.0)
RICH_IDS = ["Q42", "Q1", "Q182397", "Q53713", "Q8413", "Q51605722", "Q17633526", "Q17948861"]


@pytest.fixture(scope="session")
def dump_store(shared_data: Path) -> Iterator[Store]:
    with Store() as s:
        load([shared_data / "world" / "codex-s.json.gz"], s)
        yield s


@pytest.fixture(scope="session")
def crawled(world: OxigraphServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CollectReport]:
    path = tmp_path_factory.mktemp("crawl") / "crawl.duckdb"
    with Store(path) as s:
        report = collect(SEEDS, 2, store=s, endpoint=world.url, **CAPS)
    return path, report


def _hashable(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(tuple(v) if isinstance(v, list) else v for v in row)


def rows(store: Store, table: str, where: str = "", params: list[Any] | None = None) -> set[tuple[Any, ...]]:
    return {
        _hashable(r) for r in store.con.execute(f"SELECT * FROM {table} {where}", params or []).fetchall()
    }


def test_sparql_collection_stores_exactly_the_dump_loaders_rows(
    crawled: tuple[Path, CollectReport], dump_store: Store
) -> None:
    path, report = crawled
    with Store(path, read_only=True) as s:
        got = rows(s, "statements")
        assert len(got) > 500 and report.entities_expanded > 5
        assert got <= rows(dump_store, "statements")
        assert rows(s, "qualifiers") <= rows(dump_store, "qualifiers")
        # every statement of an expanded entity is there, as the dump has it
        expanded = [e for lay in report.layers for e in lay.entities]
        assert rows(s, "statements", "WHERE subject IN (SELECT UNNEST(?))", [expanded]) == rows(
            dump_store, "statements", "WHERE subject IN (SELECT UNNEST(?))", [expanded]
        )
        described = [r[0] for r in s.con.execute("SELECT id FROM entities").fetchall()]
        # the world's JSON has empty sitelink maps (the loader counts 0) and its RDF none at all
        cols = "id, label, label_lang, description, list_sort(aliases)"
        assert rows_of(s, cols, described) == rows_of(dump_store, cols, described)
        assert s.datatypes().items() <= dump_store.datatypes().items()


def rows_of(store: Store, cols: str, ids: list[str]) -> set[tuple[Any, ...]]:
    return {
        _hashable(r)
        for r in store.con.execute(
            f"SELECT {cols} FROM entities WHERE id IN (SELECT UNNEST(?))", [ids]
        ).fetchall()
    }


def test_store_source_crawls_the_same_neighbourhood(
    crawled: tuple[Path, CollectReport], dump_store: Store
) -> None:
    path, report = crawled
    with Store() as target:
        again = collect(
            SEEDS,
            2,
            store=target,
            source=StoreSource(dump_store, limits=CrawlLimits(in_limit=CAPS["in_limit"])),
            max_neighbours=CAPS["max_neighbours"],
            select=CAPS["select"],
        )
        assert [lay.entities for lay in again.layers] == [lay.entities for lay in report.layers]
        assert again.requests == 0
        with Store(path, read_only=True) as s:
            assert rows(target, "statements") == rows(s, "statements")
            assert rows(target, "crawl_neighbours", "ORDER BY ALL") != set()
            picked = "SELECT entity, neighbour, selected FROM crawl_neighbours"
            assert set(target.con.execute(picked).fetchall()) == set(s.con.execute(picked).fetchall())


def test_every_statement_has_sparql_provenance(
    crawled: tuple[Path, CollectReport], world: OxigraphServer
) -> None:
    path, _ = crawled
    with Store(path, read_only=True) as s:
        orphans = s.con.execute(
            "SELECT count(*) FROM statements WHERE statement_id NOT IN "
            "(SELECT statement_id FROM statement_sources)"
        ).fetchone()
        assert orphans == (0,)
        sources = s.con.execute(
            "SELECT kind, location, query_file, query_hash, retrieved_at FROM sources"
        ).fetchall()
        assert {(k, loc) for k, loc, *_ in sources} == {("sparql", world.url)}
        assert all(re.fullmatch(r"[0-9a-f]{64}", h) and when is not None for *_, h, when in sources)
        # one sources row per query sent, and each is a cached response
        cached = {r[0] for r in s.con.execute("SELECT query_hash FROM responses").fetchall()}
        assert {h for *_, h, _ in sources} == cached
        files = {f for _, _, f, _, _ in sources}
        assert {"statements.rq", "in_edges.rq", "entity_info.rq", "properties.rq"} <= files
        assert files <= {p.name for p in (Path(__file__).parent.parent / "queries").glob("*.rq")}


def test_requests_grow_with_batches_not_entities(
    world: OxigraphServer, crawled: tuple[Path, CollectReport]
) -> None:
    _, batched = crawled
    with Store() as s:  # the reference pipeline's way: one entity per request
        one_by_one = SparqlSource(
            EndpointSettings(url=world.url, batch_size=1), store_for_cache=s, describe_size=1,
            limits=CrawlLimits(in_limit=CAPS["in_limit"]),
        )
        single = collect(
            SEEDS, 2, store=s, source=one_by_one, max_neighbours=CAPS["max_neighbours"], select=CAPS["select"]
        )
        assert rows(s, "statements") == _crawl_rows(crawled[0])
    assert single.entities_expanded == batched.entities_expanded
    assert [lay.entities for lay in single.layers] == [lay.entities for lay in batched.layers]
    assert single.requests >= 3 * batched.requests
    assert batched.requests <= 10 * (batched.radius + 1)


def _crawl_rows(path: Path) -> set[tuple[Any, ...]]:
    with Store(path, read_only=True) as s:
        return rows(s, "statements")


def test_hub_in_edges_are_capped_inside_the_query(world: OxigraphServer) -> None:
    with Store() as s:
        collect(["Q30"], 1, store=s, endpoint=world.url, in_limit=3, max_neighbours=5, select=0)
        text, body = s.con.execute(
            "SELECT query_text, body FROM responses WHERE query_file = 'in_edges.rq'"
        ).fetchone()  # type: ignore[misc]
        assert "LIMIT 3" in text
        items = [b["item"]["value"] for b in json.loads(body)["results"]["bindings"]]
        assert items == [ENTITY + "Q30"] * 3  # Q30 has 900+ in-edges in CoDEx-S
        assert len(s.edges(object="Q30", property=["P27", "P17", "P495"])) <= 3


def test_deprecated_statements_are_stored_but_never_selected(rich: OxigraphServer) -> None:
    with Store() as s:
        collect(
            ["Q42", "Q8413", "Q1"], 1, store=s, endpoint=rich.url, in_limit=0, max_neighbours=500, select=500
        )
        deprecated = {
            r[0]
            for r in s.con.execute(
                "SELECT statement_id FROM statements WHERE rank = 'deprecated' AND value_type = 'item'"
            ).fetchall()
        }
        assert deprecated
        kept = {r[0] for r in s.con.execute("SELECT statement_id FROM crawl_neighbours").fetchall()}
        assert kept and not kept & deprecated


_SNAK_HASH = {"qualifiers": 2, "reference_snaks": 3}


def _canonical(row: tuple[Any, ...], table: str) -> tuple[Any, ...]:
    """Oxigraph stores xsd:decimal in canonical form (+0.70 -> +0.7): compare amounts as
    numbers, and leave out the snak hash computed from them."""
    return tuple(
        Decimal(v).normalize() if isinstance(v, str) and re.fullmatch(r"[+-]\d+(\.\d+)?", v) else v
        for i, v in enumerate(row)
        if i != _SNAK_HASH.get(table)
    )


def test_rich_statement_model_equals_the_json_dump(
    rich: OxigraphServer, json_entities: Store, json_datatypes: dict[str, set[str]]
) -> None:
    with Store() as s:
        ids = [*RICH_IDS, "Q120248304"]  # its RDF export has no data node (no revision, sitelinks)
        report = collect(ids, 1, store=s, endpoint=rich.url, in_limit=0, max_neighbours=0)
        assert report.skipped_values == 0
        where = (
            "WHERE statement_id IN (SELECT statement_id FROM statements WHERE subject IN (SELECT UNNEST(?)))"
        )
        for table in ("statements", "qualifiers", "reference_snaks"):
            got = {_canonical(r, table) for r in rows(s, table, where, [ids])}
            want = {_canonical(r, table) for r in rows(json_entities, table, where, [ids])}
            want_kept = {r for r in want if r in got or not _external(json_datatypes, r, table)}
            assert got and got <= want, table
            if table == "statements":
                assert got == want_kept
        kinds = {
            r[0]
            for r in s.con.execute(
                "SELECT DISTINCT coalesce(value_type, snaktype) FROM statements"
            ).fetchall()
        }
        assert {
            "item",
            "time",
            "quantity",
            "string",
            "monolingualtext",
            "globecoordinate",
            "somevalue",
            "novalue",
        } <= kinds
        assert s.con.execute("SELECT count(*) FROM reference_snaks").fetchone()[0] > 500  # type: ignore[index]
        cols = "id, label, label_lang, description, list_sort(aliases), sitelinks, revision, modified"
        assert rows_of(s, cols, RICH_IDS) == rows_of(json_entities, cols, RICH_IDS)


def _external(datatypes: dict[str, set[str]], row: tuple[Any, ...], table: str) -> bool:
    """True when a statement row is of a datatype a crawl does not fetch (external id, URL, ...)."""
    return table == "statements" and not datatypes[row[2]] <= {
        "wikibase-item",
        "time",
        "quantity",
        "string",
        "monolingualtext",
        "globe-coordinate",
    }


@pytest.fixture(scope="session")
def json_datatypes(shared_data: Path) -> dict[str, set[str]]:
    """Property datatypes as the JSON dump's main snaks state them (old revisions of a few
    entities still call external ids ``string``)."""
    out: dict[str, set[str]] = {}
    with gzip.open(shared_data / "entities_full" / "wikidata_entities_full.jsonl.gz", "rt") as f:
        for line in f:
            for prop, sts in json.loads(line).get("claims", {}).items():
                for st in sts:
                    out.setdefault(prop, set()).add(st["mainsnak"].get("datatype", ""))
    return out


def test_offline_replays_the_cache_without_network(
    crawled: tuple[Path, CollectReport], world: OxigraphServer, tmp_path: Path
) -> None:
    path, report = crawled
    replay = tmp_path / "replay.duckdb"
    with Store(replay) as r:
        r.con.execute(f"ATTACH '{path}' AS old (READ_ONLY)")
        r.con.execute("INSERT INTO responses SELECT * FROM old.responses")
        r.con.execute("DETACH old")
        again = collect(SEEDS, 2, store=r, endpoint=EndpointSettings(url=world.url, offline=True), **CAPS)
        assert again.requests == 0 and again.cache_hits == report.requests + report.cache_hits
        with Store(path, read_only=True) as s:
            for table in ("statements", "qualifiers", "sources", "statement_sources", "entities"):
                assert rows(r, table) == rows(s, table), table
    with Store() as empty, pytest.raises(OfflineCacheMiss, match="run once without --offline"):
        collect(SEEDS, 2, store=empty, endpoint=EndpointSettings(url=world.url, offline=True), **CAPS)


def test_endpoint_dying_mid_crawl_keeps_everything_and_resumes(
    world: OxigraphServer, crawled: tuple[Path, CollectReport], tmp_path: Path
) -> None:
    path, clean = crawled
    with FaultServer(world.url) as proxy, Store(tmp_path / "resume.duckdb") as s:
        proxy.script = ["ok"] * 12 + ["503"] * 20
        with pytest.raises(EndpointUnavailable, match=re.escape(proxy.url)):
            collect(SEEDS, 2, store=s, endpoint=EndpointSettings(url=proxy.url, retry=FAST), **CAPS)
        kept = s.con.execute("SELECT count(*) FROM statements").fetchone()[0]  # type: ignore[index]
        assert kept > 0
        assert s.con.execute("SELECT count(*) FROM crawl_entities").fetchone()[0] > 0  # type: ignore[index]
        sent_before = len(proxy.requests)
        proxy.script = []
        done = collect(SEEDS, 2, store=s, endpoint=EndpointSettings(url=proxy.url, retry=FAST), **CAPS)
        assert done.resumed > 0 and done.cache_hits > 0
        assert len(proxy.requests) - sent_before < clean.requests
        with Store(path, read_only=True) as c:
            assert rows(s, "statements") == rows(c, "statements")
            assert [lay.entities for lay in done.layers] == [lay.entities for lay in clean.layers]


def test_ctrl_c_keeps_committed_batches_and_resumes(
    world: OxigraphServer, crawled: tuple[Path, CollectReport], tmp_path: Path
) -> None:
    path, _ = crawled
    calls = 0

    def impatient(entity: str, candidates: Any, k: int) -> list[Neighbour]:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt
        return list(candidates[:k])

    with Store(tmp_path / "ctrl-c.duckdb") as s:
        with pytest.raises(KeyboardInterrupt):
            collect(SEEDS, 2, store=s, endpoint=world.url, selector=impatient, **CAPS)
        assert s.con.execute("SELECT count(*) FROM crawl_entities WHERE stage = 'expanded'").fetchone() == (
            2,
        )
        done = collect(SEEDS, 2, store=s, endpoint=world.url, **CAPS)
        assert done.resumed >= 2
        with Store(path, read_only=True) as c:
            assert rows(s, "statements") == rows(c, "statements")


def test_malformed_seed_is_refused_before_any_request() -> None:
    with FaultServer() as proxy, Store() as s:
        for bad in ("Q42 } ?s ?p ?o {", "P31", "Q0", "q42", ""):
            with pytest.raises(InvalidId):
                collect(["Q1", bad], 1, store=s, endpoint=proxy.url)
        assert proxy.requests == []


def test_bad_arguments_are_refused(dump_store: Store) -> None:
    with Store() as s:
        for kwargs in ({"radius": -1}, {"radius": 1, "select": -2}, {"radius": 1, "layer_budget": 0}):
            name = list(kwargs)[-1]
            with pytest.raises(InvalidInput, match=rf"^{name}: ") as caught:
                collect(["Q1"], source=StoreSource(dump_store), store=s, **kwargs)
            assert caught.value.parameter == name
        # a setting the given source cannot honour is refused, not dropped
        with pytest.raises(InvalidInput, match=r"^in_limit: the given source caps in-edges at 100, not 7"):
            collect(["Q1"], 1, store=s, source=StoreSource(dump_store), in_limit=7)
        with pytest.raises(InvalidInput, match="either a source or an endpoint"):
            collect(["Q1"], 1, store=s, source=StoreSource(dump_store), endpoint="http://127.0.0.1:1/")
        with pytest.raises(InvalidInput, match="selector returned"):
            collect(
                ["Q30"],
                1,
                store=s,
                source=StoreSource(dump_store),
                select=2,
                selector=lambda e, c, k: [Neighbour("Q999999", "P1", "x", True)],
            )


def test_layer_budget_and_selector_are_deterministic(dump_store: Store) -> None:
    def last(entity: str, candidates: Any, k: int) -> list[Neighbour]:
        return list(candidates[-k:]) if k else []

    reports = []
    for _ in range(2):
        with Store() as s:
            reports.append(
                collect(
                    ["Q30", "Q183"],
                    3,
                    store=s,
                    source=StoreSource(dump_store),
                    select=5,
                    layer_budget=4,
                    selector=last,
                )
            )
    a, b = reports
    assert [lay.entities for lay in a.layers] == [lay.entities for lay in b.layers]
    assert all(lay.expanded <= 4 for lay in a.layers[1:]) and a.layers[2].over_budget > 0
    with Store() as s:
        default = collect(
            ["Q30", "Q183"], 3, store=s, source=StoreSource(dump_store), select=5, layer_budget=4
        )
    assert default.layers[1].entities != a.layers[1].entities


def test_radius_zero_describes_the_seeds_only(dump_store: Store) -> None:
    with Store() as s:
        report = collect(["Q30"], 0, store=s, source=StoreSource(dump_store))
        assert report.entities_expanded == 0 and report.entities_described == 1
        assert {e.property for e in s.edges()} == {"P31"}
        assert s.entity("Q30") is not None and s.entity("Q30").label == dump_store.entity("Q30").label  # type: ignore[union-attr]


def test_progress_events_count_each_layer_up_to_its_size(dump_store: Store,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    events: list[ProgressEvent] = []
    with Store() as s:
        report = collect(["Q30"], 2, store=s, source=StoreSource(dump_store), progress=events.append,
                         select=2)
    assert {e.stage for e in events} == {"collect"}
    assert capsys.readouterr().err == ""  # the library draws nothing
    for layer in report.layers:
        mine = [e for e in events if e.item == f"layer {layer.depth}"]
        assert mine and all(e.total == layer.expanded and e.unit == "entities" for e in mine)
        assert [e.done for e in mine] == sorted(e.done for e in mine) and mine[-1].done == layer.expanded
        assert dict(mine[-1].detail) == {"requests": layer.requests, "retries": layer.retries,
                                         "cache_hits": layer.cache_hits}


def test_faults_mid_crawl_are_retried_and_change_nothing(
    world: OxigraphServer, crawled: tuple[Path, CollectReport]
) -> None:
    path, clean = crawled
    with FaultServer(world.url, hang_seconds=3.5) as proxy, Store() as s:
        proxy.script = ["ok", "429", "ok", "500", "truncated", "ok", "hang", "garbage", "timeout-body", "502"]
        report = collect(SEEDS, 2, store=s, **CAPS,
                         endpoint=EndpointSettings(url=proxy.url, timeout=3.0, retry=FAST_ENOUGH))
        assert report.retries == 7
        assert report.requests == clean.requests + 7
        assert [lay.entities for lay in report.layers] == [lay.entities for lay in clean.layers]
        with Store(path, read_only=True) as c:
            for table in ("statements", "qualifiers", "entities", "properties"):
                assert rows(s, table) == rows(c, table), table


def test_values_without_their_value_node_are_skipped_not_guessed(rich: OxigraphServer) -> None:
    # these 2022 extracts carry dates of birth as bare wdt:/ps: literals, without psv: nodes
    partial = ["Q100268605", "Q100906497", "Q101096309", "Q101574081", "Q102150290"]
    with Store() as s:
        report = collect(partial, 1, store=s, endpoint=rich.url, in_limit=0, max_neighbours=0)
        assert report.skipped_values > 0
        assert s.con.execute("SELECT count(*) FROM statements WHERE value_type = 'time'").fetchone() == (0,)
        assert len(s.edges(subject=partial)) > 10
