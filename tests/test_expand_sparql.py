"""``expand --endpoint``: a real Oxigraph on loopback serving world/codex-s gives the same
chains as the same world's JSON dump used as a store source (DESIGN §3: same store and
same records whichever source is used)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sparql_server import OxigraphServer, codex_s_server  # noqa: F401  (session fixture)

from chaingraph.cli import cli
from chaingraph.expand import expand
from chaingraph.records import ChainRecord
from chaingraph.settings import ChainBounds, CrawlLimits
from chaingraph.sources.loaders import load
from chaingraph.sources.neighbours import Neighbour
from chaingraph.store import Store

pytestmark = [pytest.mark.server, pytest.mark.slow]
CAPS: dict[str, Any] = {"bounds": ChainBounds(min_hops=4, max_hops=4, top=30),
                        "limits": CrawlLimits(max_neighbours=6, select=2, layer_budget=40, in_limit=2000)}


def essence(records: Sequence[ChainRecord]) -> list[tuple[Any, ...]]:
    """Everything but provenance (where the statements came from differs by design)."""
    return [(r.seed, r.k, r.s_div, tuple((n.id, n.label, n.type) for n in r.nodes),
             tuple((s.statement_id, s.property, s.direction, s.relation_class) for s in r.steps))
            for r in records]


@pytest.fixture(scope="module")
def dump_file(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("expand-sparql") / "codex-s.duckdb"
    with Store(path) as s:
        load([shared_data / "world" / "codex-s.json.gz"], s)
    return path


def test_endpoint_and_store_sources_give_the_same_chains(codex_s_server: OxigraphServer,  # noqa: F811
                                                         dump_file: Path) -> None:
    over_sparql = expand(["Q835"], endpoint=codex_s_server.url, **CAPS)
    from_store = expand(["Q835"], store=dump_file, **CAPS)
    assert over_sparql.records and essence(over_sparql.records) == essence(from_store.records)
    assert over_sparql.collected is not None and over_sparql.collected.requests > 0
    assert from_store.collected is not None and from_store.collected.requests == 0
    step = over_sparql.records[0].steps[0]
    assert step.provenance[0].kind == "sparql" and step.provenance[0].location == codex_s_server.url
    assert step.provenance[0].query_hash and step.provenance[0].retrieved_at


def test_custom_selector_changes_what_is_expanded(dump_file: Path) -> None:
    def last_k(entity: str, candidates: Sequence[Neighbour], k: int) -> Sequence[Neighbour]:
        return list(candidates[-k:]) if k else []

    default = expand(["Q835"], store=dump_file, **CAPS)
    custom = expand(["Q835"], store=dump_file, selector=last_k, **CAPS)
    assert custom.records[0].parameters.model_dump()["selector"] == "last_k"
    assert default.collected is not None and custom.collected is not None
    layers = [lay.entities for lay in default.collected.layers]
    assert layers != [lay.entities for lay in custom.collected.layers]


def test_cli_endpoint(codex_s_server: OxigraphServer) -> None:  # noqa: F811
    res = CliRunner().invoke(cli, ["expand", "--seed", "Q835", "--endpoint", codex_s_server.url,
                                   "--min-hops", "4", "--max-hops", "4", "--max-neighbours", "6",
                                   "--select", "2", "--layer-budget", "40", "--top", "3",
                                   "--format", "jsonl"])
    assert res.exit_code == 0, res.output
    recs = [ChainRecord.model_validate_json(ln) for ln in res.stdout.splitlines() if ln.startswith("{")]
    assert len(recs) == 3 and all(r.parameters.source == codex_s_server.url for r in recs)
