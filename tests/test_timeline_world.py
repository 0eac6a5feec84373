"""Time windows and ``--as-of`` on real data: ``world/wikipeople`` (10,580 real time
qualifiers on positions held, teams, spouses, awards, memberships).

* every window agrees with an independent computation here, in plain Python (``datetime``
  and ``calendar``) over the JSON dump;
* validity of 50 random (statement, date) pairs agrees with a pyoxigraph SPARQL query over
  the N-Triples of the same world, filtering on ``pq:``/``pqv:`` P580/P582/P585;
* chains under ``as_of`` never hold a step invalid on that date, and every collected
  statement valid then is an edge;
* a real chain that exists in 1990 and not in 2010 is found and explained.
"""

from __future__ import annotations

import calendar
import gzip
import json
import random
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyoxigraph  # a test dependency: its absence must fail these oracles, not skip them
import pytest

from chaingraph.cli import cli
from chaingraph.collect import collect
from chaingraph.expand import evidence_graph, expand, explain_path
from chaingraph.settings import TraversalPolicy
from chaingraph.store import Store
from chaingraph.timeline import Timeline, parse_as_of, time_properties

pytestmark = pytest.mark.slow

JULIAN = "http://www.wikidata.org/entity/Q1985786"
_TIME = re.compile(r"([+-]\d+)-(\d\d)-(\d\d)T")
# The README example: Meryl Streep -> English -> Jennifer Connelly -(educated at, 1990)-> Stanford ...
EXAMPLE = ["Q873", "Q1860", "Q103343", "Q41506", "Q102379", "Q18419"]
EXAMPLE_STEP = "Q103343$D968740A-0C50-5B7D-7D8B-21B8E272E37A"


# -- the independent oracle: plain Python over the JSON dump ------------------------------
def _julian_to_gregorian(y: int, m: int, d: int) -> date:
    # days the Julian calendar lags behind: +1 each century year not divisible by 400,
    # counted from its Julian 29 February (so January and February count the year before)
    yy = y if m > 2 else y - 1
    lag = yy // 100 - yy // 400 - 2
    last = calendar.monthrange(y, m)[1] if m != 2 else (29 if y % 4 == 0 else 28)
    base = date(y, m, min(d, last))
    return base + timedelta(days=lag + (d - min(d, last)))


def _period(value: dict[str, Any]) -> tuple[date, date]:
    y, m, d = (int(g) for g in _TIME.match(value["time"]).groups())  # type: ignore[union-attr]
    p = value["precision"]
    if p >= 10 and m == 0:
        p = 9
    if p == 11 and d == 0:
        p = 10
    if p == 11:
        lo, hi = (y, m, d), (y, m, d)
    elif p == 10:
        lo, hi = (y, m, 1), (y, m, calendar.monthrange(y, m)[1])
    elif p == 9:
        lo, hi = (y, 1, 1), (y, 12, 31)
    elif p == 8:
        lo, hi = (y // 10 * 10, 1, 1), (y // 10 * 10 + 9, 12, 31)
    else:
        raise AssertionError(f"precision {p} is not in this world; extend the oracle")
    if value["calendarmodel"] == JULIAN:
        return _julian_to_gregorian(*lo), _julian_to_gregorian(*hi)
    return date(*lo), date(*hi)


def oracle_windows(dump: Path) -> tuple[dict[str, tuple[date | None, date | None, bool]], int]:
    """statement id -> (first day, last day, ambiguous) for every statement with a time
    qualifier (``None`` = open), and the number of time qualifiers seen."""
    superseding = time_properties().superseding
    out: dict[str, tuple[date | None, date | None, bool]] = {}
    seen = 0
    events: dict[tuple[str, str], list[tuple[date, str]]] = {}
    with gzip.open(dump, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            entity = json.loads(line)
            for prop, statements in entity.get("claims", {}).items():
                for st in statements:
                    quals = st.get("qualifiers", {})
                    seen += sum(1 for snaks in quals.values() for s in snaks
                                if s.get("datavalue", {}).get("type") == "time")
                    # one value given twice is one value (Wikidata dedupes snaks by hash too)
                    values = {q: {json.dumps(s["datavalue"]["value"], sort_keys=True)
                                  for s in quals.get(q, ())} for q in ("P580", "P582", "P585")}
                    periods = {q: [_period(json.loads(v)) for v in vs] for q, vs in values.items()}
                    if periods["P580"] or periods["P582"]:
                        lo = min((a for a, _ in periods["P580"]), default=None)
                        hi = max((b for _, b in periods["P582"]), default=None)
                        amb = len(periods["P580"]) > 1 or len(periods["P582"]) > 1
                        out[st["id"]] = (lo, hi, amb)
                    elif periods["P585"]:
                        lo = min(a for a, _ in periods["P585"])
                        out[st["id"]] = (lo, None, len(periods["P585"]) > 1)
                        if prop in superseding:
                            events.setdefault((entity["id"], prop), []).append((lo, st["id"]))
    for dated in events.values():  # superseding values end the day before the next later one
        for lo, sid in dated:
            later = [d for d, _ in dated if d > lo]
            if later:
                out[sid] = (lo, min(later) - timedelta(days=1), out[sid][2])
    return out, seen


# -- fixtures -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dump(shared_data: Path) -> Path:
    return shared_data / "world" / "wikipeople.json.gz"


@pytest.fixture(scope="module")
def world(dump: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from chaingraph.sources.loaders import load

    path = tmp_path_factory.mktemp("time") / "wikipeople.duckdb"
    with Store(path) as store:
        load([dump], store)
    return path


@pytest.fixture(scope="module")
def hood(world: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The neighbourhood of Q873 collected once (caps as ``expand``'s defaults, radius 6) and
    then read whole (``collect=False``): the graph ``expand --seed Q873`` builds."""
    path = tmp_path_factory.mktemp("time") / "q873.duckdb"
    with Store(world, read_only=True) as source, Store(path) as target:
        collect(["Q873"], 6, store=target, source=source)
    return path


@pytest.fixture(scope="module")
def oracle(dump: Path) -> tuple[dict[str, tuple[date | None, date | None, bool]], int]:
    return oracle_windows(dump)


@pytest.fixture(scope="module")
def timeline(world: Path) -> Timeline:
    with Store(world, read_only=True) as store:
        return Timeline.from_store(store)


def _valid(window: tuple[date | None, date | None, bool], first: date, last: date) -> bool:
    lo, hi, _ = window
    return (lo is None or lo <= last) and (hi is None or hi >= first)


# -- windows --------------------------------------------------------------------------------
def test_every_window_agrees_with_plain_python_over_the_dump(oracle: Any, timeline: Timeline) -> None:
    windows, seen = oracle
    assert seen == 10_580  # every time qualifier of the world was read
    assert len(windows) > 7_000
    for sid, (lo, hi, ambiguous) in windows.items():
        w = timeline.window(sid)
        assert (w.start, w.end) == (lo and lo.isoformat(), hi and hi.isoformat()), sid
        assert ("ambiguous_window" in w.flags) == ambiguous, sid
    # statements whose only time qualifier is not a window qualifier (P577 on P1343) stay "always"
    assert all(timeline.window(s).kind == "always"
               for s in timeline.statement_id.tolist() if s not in windows)


# -- validity against SPARQL ------------------------------------------------------------------
PREFIXES = """PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX pqv: <http://www.wikidata.org/prop/qualifier/value/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""


def _lit(d: date) -> str:
    return f'"{d.isoformat()}T00:00:00Z"^^xsd:dateTime'


def sparql_valid(store: Any, sid: str, first: date, last: date) -> bool:
    """Is the statement valid on [first, last] by its pq:P580/P582/P585 values? Each bound
    compared at its precision (day, month, year, decade): start <= last and end >= first."""
    node = "<http://www.wikidata.org/entity/statement/" + sid.replace("$", "-") + ">"
    y0, y1 = first.year, last.year

    def starts_by(var: str, prec: str) -> str:  # the period of ?var begins on or before `last`
        return (f"(({prec} >= 9 && {var} <= {_lit(last)}) || "
                f"({prec} = 8 && {var} < {_lit(date((y1 // 10 + 1) * 10, 1, 1))}))")

    def ends_from(var: str, prec: str) -> str:  # the period of ?var ends on or after `first`
        return (f"(({prec} = 11 && {var} >= {_lit(first)}) || "
                f"({prec} = 10 && {var} >= {_lit(first.replace(day=1))}) || "
                f"({prec} = 9 && {var} >= {_lit(date(y0, 1, 1))}) || "
                f"({prec} = 8 && {var} >= {_lit(date(y0 // 10 * 10, 1, 1))}))")

    def exists(q: str, cond: str) -> str:
        return (f"EXISTS {{ {node} pq:{q} ?v ; pqv:{q} ?n . ?n wikibase:timePrecision ?p . "
                f"FILTER({cond.replace('VAR', '?v').replace('PREC', '?p')}) }}")

    def has(q: str) -> str:
        return f"EXISTS {{ {node} pq:{q} ?any }}"

    query = PREFIXES + f"""ASK {{
      FILTER(
        IF({has('P580')} || {has('P582')},
           (!{has('P580')} || {exists('P580', starts_by('VAR', 'PREC'))}) &&
           (!{has('P582')} || {exists('P582', ends_from('VAR', 'PREC'))}),
           !{has('P585')} || {exists('P585', starts_by('VAR', 'PREC'))}))
    }}"""
    return bool(store.query(query))


@pytest.fixture(scope="module")
def rdf(shared_data: Path) -> Any:
    store = pyoxigraph.Store()
    with gzip.open(shared_data / "world" / "wikipeople.nt.gz", "rb") as f:
        store.bulk_load(f.read(), format=pyoxigraph.RdfFormat.N_TRIPLES)
    return store


def test_validity_of_50_random_statement_dates_agrees_with_sparql(oracle: Any, timeline: Timeline,
                                                                   rdf: Any) -> None:
    windows, _ = oracle
    rng = random.Random(16)
    sids = sorted(windows)
    outcomes = []
    for sid in rng.sample(sids, 50):
        lo, hi, _ = windows[sid]
        edge = [d for d in (lo, hi) if d is not None]
        around = rng.choice(edge) + timedelta(days=rng.choice([-400, -1, 0, 1, 400]))
        if rng.random() < 0.3:  # a whole year, as `--as-of 1990` gives
            text, first, last = str(around.year), date(around.year, 1, 1), date(around.year, 12, 31)
        else:
            text, first, last = around.isoformat(), around, around
        ours = bool(timeline.valid([sid], parse_as_of(text))[0])
        assert ours == sparql_valid(rdf, sid, first, last) == _valid(windows[sid], first, last), (sid, text)
        outcomes.append(ours)
    assert 10 < sum(outcomes) < 40  # the sample tells valid from invalid, not one side only


# -- chains under as_of --------------------------------------------------------------------
@pytest.mark.parametrize("as_of", ["1990", "2010-06-30"])
def test_chains_hold_only_valid_steps_and_every_valid_collected_step_is_an_edge(
        hood: Path, oracle: Any, as_of: str) -> None:
    windows, _ = oracle
    a = parse_as_of(as_of)
    first, last = date.fromordinal(a.first - 1721425), date.fromordinal(a.last - 1721425)
    assert first.isoformat() == (as_of + "-01-01" if len(as_of) == 4 else as_of)
    result = expand(["Q873"], store=hood, collect=False, as_of=as_of, top=30, min_hops=5, max_hops=6)
    assert result.records and all(r.as_of == as_of for r in result.records)
    for record in result.records:
        for step in record.steps:
            assert step.statement_id not in windows or _valid(windows[step.statement_id], first, last)
            assert step.window is not None and step.time_sensitivity is not None
    with Store(hood, read_only=True) as collected_store, evidence_graph(
            ["Q873"], store=collected_store, collect=False, policy=TraversalPolicy(as_of=as_of)) as nb:
        graph = nb.graph
        edges = {graph.edge_statement(e) for e in range(graph.ecount())}
        collected = {e.statement_id for e in collected_store.edges() if graph.policy.allows(e.property)}
        expected = {s for s in collected if s not in windows or _valid(windows[s], first, last)}
        assert edges == expected
        assert collected - expected  # the date did leave collected statements out


def test_a_chain_of_1990_is_gone_in_2010_and_explain_names_the_step_and_its_window(hood: Path) -> None:
    in_1990 = expand(["Q873"], store=hood, collect=False, as_of="1990", min_hops=5, max_hops=5, top=50)
    in_2010 = expand(["Q873"], store=hood, collect=False, as_of="2010", min_hops=5, max_hops=5, top=50)
    paths_1990 = {tuple(n.id for n in r.nodes) for r in in_1990.records}
    paths_2010 = {tuple(n.id for n in r.nodes) for r in in_2010.records}
    assert tuple(EXAMPLE) in paths_1990 and tuple(EXAMPLE) not in paths_2010
    record = next(r for r in in_1990.records if tuple(n.id for n in r.nodes) == tuple(EXAMPLE))
    step = record.steps[2]
    assert (step.statement_id, step.window.describe() if step.window else None, step.time_sensitivity) == (
        EXAMPLE_STEP, "1990-01-01..1990-12-31", "ended")
    assert record.time_sensitivity == "ended"
    assert explain_path(EXAMPLE, store=hood, collect=False, as_of="1990").valid
    why = explain_path(EXAMPLE, store=hood, collect=False, as_of="2010")
    assert not why.valid and why.reason == "policy"
    detail = why.violations[0].detail
    assert "Q103343–Q41506" in detail and "1990-01-01..1990-12-31" in detail
    assert explain_path(EXAMPLE, store=hood, collect=False).valid  # without a date the chain stands


def test_the_cli_explains_the_example_and_refuses_a_malformed_date(world: Path, runner: Any) -> None:
    # as in the README: collected from the whole world with the default caps, radius 5
    out = runner.invoke(cli, ["expand", "--store", str(world), "--max-hops", "5", "--min-hops", "5",
                              "--explain", ",".join(EXAMPLE), "--as-of", "2010"])
    assert out.exit_code == 0, out.output
    assert "holds 1990-01-01..1990-12-31, not on 2010" in out.output
    for bad in ("2010-02-30", "1990/05", "soon", "2010-13"):
        out = runner.invoke(cli, ["expand", "--store", str(world), "--seed", "Q873", "--as-of", bad])
        assert out.exit_code == 2
        assert out.output.strip().count("\n") == 0 and "--as-of" in out.output, out.output
