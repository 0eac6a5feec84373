"""Clue proposal on real data: tasks proposed from chains of ``world/codex-s`` and
``world/ilpc-large`` (chains from the chain engine over the loaded store), re-checked by
an independent evaluator — pyoxigraph running SPARQL over the N-Triples of the same
world: the full clue set has exactly one answer (the target), and without any one clue
there is more than one (the anchor excepted where the task flags it as not necessary).

The SPARQL is written here from the task's clues, not by chaingraph: one nested
``SELECT DISTINCT`` per variable (a chain of per-variable and per-step constraints has the
same answer set as the flat query, and stays tractable with wildcard steps and a free
``x0``); ``wdt:`` triples for steps, types (``P31/P279*``) and item values; ``p:/ps:/psv:``
with precision and calendar for year values.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path
from typing import Any

import pyoxigraph  # a test dependency: its absence must fail, not skip, these oracles
import pytest

from chaingraph.graph import EvidenceGraph
from chaingraph.propose import ChainPath, Proposal, propose_clues, resolve_path
from chaingraph.ranking import top_chains
from chaingraph.settings import TraversalPolicy
from chaingraph.tasks import Clue, Task
from chaingraph.values import TimeValue

ENTITY = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX psv: <http://www.wikidata.org/prop/statement/value/>
PREFIX wikibase: <http://wikiba.se/ontology#>
"""
WORLDS = {"codex-s": 6, "ilpc-large": 4}  # chains per world


class World:
    def __init__(self, shared: Path, name: str, tmp: Path) -> None:
        from chaingraph.lookups import StoreValues
        from chaingraph.sources.loaders import load
        from chaingraph.store import Store

        self.path = tmp / f"{name}.duckdb"
        with Store(self.path) as store:
            load([shared / "world" / f"{name}.json.gz"], store)
        self.store = Store(self.path, read_only=True)
        self.engine = EvidenceGraph.from_store(self.store)  # the chain engine's default policy
        self.graph = EvidenceGraph.from_store(self.store, policy=TraversalPolicy(hub_limit=None))
        self.values = StoreValues(self.store)
        datatypes = self.store.datatypes()
        labels = {**self.graph.labels, **self.store.labels(sorted(datatypes))}
        self.lookups: dict[str, Any] = {"values": self.values, "datatypes": datatypes, "labels": labels}
        self.sparql = pyoxigraph.Store()
        with gzip.open(shared / "world" / f"{name}.nt.gz", "rb") as f:
            raw = f.read()
        self.sparql.bulk_load(raw, format=pyoxigraph.RdfFormat.N_TRIPLES)
        self.step_properties = sorted(set(self.engine.graph.es["property"]))
        self.chains = _chains(self.engine, WORLDS[name])
        self.proposals = tuple(propose_clues(self.graph, c, store=str(self.path), **self.lookups)
                               for c in self.chains)

    def answers(self, task: Task, keep: list[int]) -> set[str]:
        clues = [task.clues[i] for i in keep]
        comp = task.components[0]
        k = comp.k
        props = " ".join(f"wdt:{p}" for p in self.step_properties)

        def layer(i: int) -> str:
            if i == 0:
                anchored = any(c.kind == "anchor" for c in clues)
                return f"VALUES ?x0 {{ wd:{comp.anchor} }}" if anchored else ""
            prev = layer(i - 1)
            below = f"{{ SELECT DISTINCT ?x{i - 1} WHERE {{ {prev} }} }}" if i > 1 else prev
            rel = next((c for c in clues if c.kind == "relation" and c.step == i), None)
            a, b = f"?x{i - 1}", f"?x{i}"
            if rel is not None:
                st = comp.steps[i - 1]
                s, o = (a, b) if st.direction == "forward" else (b, a)
                step = f"{s} wdt:{st.property} {o} ."
            else:
                step = f"{{ {a} ?p{i} {b} }} UNION {{ {b} ?p{i} {a} }} VALUES ?p{i} {{ {props} }}"
            lines = [below, step, f"FILTER(isIRI({b}))"]
            if i == 1:
                lines.append("FILTER(isIRI(?x0))")
            lines += [_constraint(c, b, n) for n, c in enumerate(clues) if c.variable == i]
            return " ".join(lines)

        query = f"{PREFIXES} SELECT DISTINCT ?x{k} WHERE {{ {layer(k)} }}"
        rows = self.sparql.query(query)
        assert isinstance(rows, pyoxigraph.QuerySolutions)
        return {row[f"x{k}"].value.removeprefix(ENTITY) for row in rows}


def _constraint(clue: Clue, var: str, n: int) -> str:
    if clue.kind == "type":
        return f"{var} wdt:P31/wdt:P279* wd:{clue.class_} ."
    assert clue.kind == "value" and clue.property is not None
    if isinstance(clue.value, str):
        return f"{var} wdt:{clue.property} wd:{clue.value} ."
    value = clue.value
    assert isinstance(value, TimeValue) and value.precision == 9, value  # the worlds' only literals
    p = clue.property
    return (f"{var} p:{p} ?s{n} . ?s{n} wikibase:rank ?r{n} ; psv:{p} ?v{n} . "
            f"?v{n} wikibase:timeValue ?t{n} ; wikibase:timePrecision ?pr{n} ; "
            f"wikibase:timeCalendarModel <{value.calendar}> . "
            f"FILTER(?r{n} != wikibase:DeprecatedRank && ?pr{n} >= 9 && YEAR(?t{n}) = {value.year})")


def _chains(graph: EvidenceGraph, count: int) -> list[ChainPath]:
    """The best chain (5 hops) of seeds drawn deterministically, as the chain engine finds them."""
    rng = random.Random(13)
    seeds = sorted(graph.name(v) for v in range(graph.vcount()) if 4 <= graph.degree(v) <= 60)
    out: list[ChainPath] = []
    for seed in rng.sample(seeds, 60):
        for ranked in top_chains(graph, seed, 1, 5, 5):
            ch = ranked.chain
            nodes = tuple(graph.name(v) for v in ch.nodes)
            dirs = tuple("forward" if graph.edge_endpoints(e)[0] == a else "backward"
                         for e, a in zip(ch.edges, ch.nodes))
            out.append(ChainPath(nodes=nodes, properties=tuple(graph.edge_property(e) for e in ch.edges),
                                 directions=dirs,  # type: ignore[arg-type]
                                 statements=tuple(graph.edge_statement(e) for e in ch.edges)))
        if len(out) == count:
            break
    assert len(out) == count
    return out


@pytest.fixture(scope="module", params=sorted(WORLDS))
def world(request: pytest.FixtureRequest, shared_data: Path,
          tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(shared_data, request.param, tmp_path_factory.mktemp(request.param))


def test_proposed_tasks_agree_with_sparql(world: World) -> None:
    made = [p for p in world.proposals if p.task is not None]
    assert len(made) >= len(world.proposals) // 2  # most real chains become tasks
    checked = 0
    for proposal in made:
        task = proposal.task
        assert task is not None
        target = task.target.entity
        every = list(range(len(task.clues)))
        assert world.answers(task, every) == {target}, task.id
        for i, clue in enumerate(task.clues):
            without = world.answers(task, [j for j in every if j != i])
            if clue.kind == "anchor" and task.anchor_necessary is False:
                assert without == {target}, task.id  # flagged honestly: the text alone suffices
            else:
                assert target in without and len(without) > 1, (task.id, clue.id)
            checked += 1
    assert checked > 10


def test_proposals_are_minimal_and_recorded(world: World) -> None:
    for proposal in world.proposals:
        rec = proposal.record
        assert len(rec.candidates) >= 10  # anchor, 5 relations, types and values of 5 nodes
        assert set(rec.kept) | set(rec.removed) <= {c.id for c in rec.candidates}
        if proposal.task is None:
            assert proposal.cannot
            continue
        assert [c.id for c in proposal.task.clues] == list(rec.kept)
        assert rec.anchor_necessary == (rec.answers_without_anchor != 1)
        assert rec.evidence_steps is not None and rec.difficulty is not None


def test_a_hub_on_the_chain_of_a_real_task(world: World) -> None:
    if world.path.stem != "ilpc-large":
        pytest.skip("the hub case is in ilpc-large")
    from chaingraph.necessity import check_necessity

    path = ["Q100507", "P106", "Q40348", "P106", "Q100595", "P19", "Q24879"]  # x1: lawyer, 1,052 edges
    blocked = propose_clues(world.engine, resolve_path(world.engine, path), **world.lookups)  # hub limit 1000
    assert blocked.task is None and blocked.cannot is not None
    assert "x1 Q40348 has 1,052 step edges > hub limit 1000" in blocked.cannot
    free = propose_clues(world.graph, resolve_path(world.graph, path), **world.lookups)
    assert free.task is not None
    under_limit = check_necessity(free.task, world.engine, values=world.values)
    assert any("x1 Q40348 has 1,052 step edges > hub limit 1000" in n for n in under_limit.notes)
    assert under_limit.evidence_steps is None and under_limit.difficulty is None
    every = check_necessity(free.task, world.graph, values=world.values)
    assert every.policy["hub_limit"] is None and every.pruned_unique and every.evidence_steps is not None
    assert set(every.necessary) | set(every.redundant) == {c.id for c in free.task.clues}
    assert set(every.redundant) <= ({"anchor"} if free.task.anchor_necessary is False else set())


def _first(proposals: tuple[Proposal, ...]) -> Any:
    return next(p for p in proposals if p.task is not None)


def test_embedded_evidence_gives_the_same_verdicts(world: World) -> None:
    from chaingraph.embed import embed_evidence
    from chaingraph.necessity import check_necessity

    task = _first(world.proposals).task
    full = check_necessity(task, world.graph, values=world.values)
    alone = embed_evidence(world.graph, task, world.values)
    assert alone.evidence is not None and alone.store is None
    small = check_necessity(alone)
    assert {a.clue: a.verdict for a in small.clues} == {a.clue: a.verdict for a in full.clues}
    assert len(alone.evidence.edges) < 200  # a subgraph, not the store
