"""Time windows, validity on a date and time sensitivity on tiny hand-written worlds
(DESIGN §11): a town whose population is counted three times, a player who changed
teams, a country with two heads of government of different rank, an award."""

from __future__ import annotations

from typing import Any

import pytest

from chaingraph.errors import InvalidInput
from chaingraph.expand import expand
from chaingraph.graph import EvidenceGraph
from chaingraph.necessity import check_necessity
from chaingraph.settings import TraversalPolicy, settings
from chaingraph.store import Batch, Store, qualifier_row, statement_row
from chaingraph.tasks import Target, Task
from chaingraph.timeline import Timeline, day_text, parse_as_of
from chaingraph.values import JULIAN, EntityValue, QuantityValue, TimeValue, Value


def _t(year: int, month: int = 0, day: int = 0, precision: int = 9, **kw: Any) -> TimeValue:
    return TimeValue.make(year, month, day, precision=precision, **kw)


def _put(store: Store, sid: str, s: str, p: str, value: Value | None,
         quals: list[tuple[str, Value | None, str]] = (), rank: str = "normal") -> None:  # type: ignore[assignment]
    store.write(Batch(statements=[statement_row(sid, s, p, value, rank=rank)],
                      qualifiers=[qualifier_row(sid, q, v, snaktype=t) for q, v, t in quals]))


@pytest.fixture
def world(store: Store) -> Store:
    return _fill(store)


def _fill(store: Store) -> Store:
    def pop(n: int) -> QuantityValue:
        return QuantityValue(amount=f"+{n}", unit="1")

    for sid, n, year in (("town$2000", 900, 2000), ("town$2010", 1000, 2010), ("town$2020", 1100, 2020)):
        _put(store, sid, "Q10", "P1082", pop(n), [("P585", _t(year), "value")])
    # a player: team Q21 1990-1995, team Q22 from 1996
    _put(store, "p$a", "Q20", "P54", EntityValue(id="Q21"), [("P580", _t(1990), "value"),
                                                             ("P582", _t(1995), "value")])
    _put(store, "p$b", "Q20", "P54", EntityValue(id="Q22"), [("P580", _t(1996), "value")])
    # an award received in 1990 (an event: it stays received)
    _put(store, "p$award", "Q20", "P166", EntityValue(id="Q23"), [("P585", _t(1990), "value")])
    # heads of government: a normal one from 2010, a preferred one from 2015
    _put(store, "c$normal", "Q30", "P6", EntityValue(id="Q31"), [("P580", _t(2010), "value")])
    _put(store, "c$pref", "Q30", "P6", EntityValue(id="Q32"), [("P580", _t(2015), "value")], rank="preferred")
    # odd qualifiers
    _put(store, "x$both", "Q40", "P39", EntityValue(id="Q41"),
         [("P585", _t(1970), "value"), ("P580", _t(1980), "value"), ("P582", _t(1985), "value")])
    _put(store, "x$two", "Q40", "P108", EntityValue(id="Q42"),
         [("P580", _t(1960), "value"), ("P580", _t(1962), "value")])
    _put(store, "x$some", "Q40", "P463", EntityValue(id="Q43"),
         [("P580", _t(1950), "value"), ("P582", None, "somevalue")])
    _put(store, "x$none", "Q40", "P1344", EntityValue(id="Q44"),
         [("P580", _t(1950), "value"), ("P582", None, "novalue")])
    _put(store, "x$decade", "Q50", "P1344", EntityValue(id="Q51"),
         [("P580", _t(1995, precision=8), "value"), ("P582", _t(2000, precision=7), "value")])
    _put(store, "x$bce", "Q52", "P1344", EntityValue(id="Q53"), [("P580", _t(-44), "value")])
    _put(store, "x$julian", "Q54", "P1344", EntityValue(id="Q55"),
         [("P580", _t(1582, 10, 5, precision=11, calendar=JULIAN), "value")])
    _put(store, "x$plain", "Q20", "P27", EntityValue(id="Q60"))
    _put(store, "x$team", "Q22", "P17", EntityValue(id="Q61"))  # the team Q22 exists whatever the date
    return store


def test_windows_follow_qualifiers_at_their_precision(world: Store) -> None:
    t = Timeline.from_store(world)
    desc = {sid: t.window(sid).describe() for sid in (
        "p$a", "p$b", "p$award", "x$both", "x$two", "x$some", "x$none", "x$decade", "x$bce",
        "x$julian", "x$plain", "town$2000", "town$2010", "town$2020")}
    assert desc == {
        "p$a": "1990-01-01..1995-12-31", "p$b": "1996-01-01..…", "p$award": "1990-01-01..…",
        "x$both": "1980-01-01..1985-12-31",  # start/end decide over the point in time
        "x$two": "1960-01-01..… (ambiguous_window)",  # the widest window
        "x$some": "1950-01-01..… (uncertain_end)", "x$none": "1950-01-01..…",
        "x$decade": "1990-01-01..2000-12-31",  # 1995 at decade precision; 2000 at century: 1901-2000
        "x$bce": "-0043-01-01..…",  # 44 BCE is astronomical year -43
        "x$julian": "1582-10-15..…",  # Julian 5 October 1582 is Gregorian 15 October
        "x$plain": "always",
        "town$2000": "2000-01-01..2009-12-31", "town$2010": "2010-01-01..2019-12-31",
        "town$2020": "2020-01-01..…"}
    assert t.window("town$2010").kind == "superseding" and t.window("p$award").kind == "event"


def test_sensitivity_reasons(world: Store) -> None:
    t = Timeline.from_store(world)
    got = {sid: t.sensitivity(sid, prop) for sid, prop in (
        ("p$a", "P54"), ("p$b", "P54"), ("p$award", "P166"), ("town$2020", "P1082"), ("x$some", "P463"),
        ("x$none", "P1344"), ("x$plain", "P27"), ("c$pref", "P6"), ("unknown$1", "P102"))}
    assert got == {"p$a": "ended", "p$b": "superseded", "p$award": "stable", "town$2020": "superseded",
                   "x$some": "ended", "x$none": "stable", "x$plain": "stable", "c$pref": "superseded",
                   "unknown$1": "changing_property"}


@pytest.mark.parametrize(("as_of", "valid"), [
    ("1989", {"town$2000": False, "p$a": False, "p$b": False, "p$award": False, "c$normal": False}),
    ("1995-12-31", {"p$a": True, "p$b": False, "p$award": True}),
    ("1996-01-01", {"p$a": False, "p$b": True}),
    ("2005-06", {"town$2000": True, "town$2010": False, "town$2020": False}),
    ("2015-03-01", {"town$2000": False, "town$2010": True, "c$normal": False, "c$pref": True}),
    ("2012", {"c$normal": True, "c$pref": False}),  # the preferred value does not hold yet
    ("2030", {"town$2020": True, "town$2010": False, "x$plain": True}),
])
def test_validity_on_a_date(world: Store, as_of: str, valid: dict[str, bool]) -> None:
    t = Timeline.from_store(world)
    assert dict(zip(valid, t.valid(list(valid), parse_as_of(as_of)).tolist())) == valid


def test_a_store_marking_the_single_best_value_constraint_makes_a_property_superseding(store: Store) -> None:
    _put(store, "P9$c", "P9", "P2302", EntityValue(id="Q52060874"))
    for sid, year in (("s$1", 2000), ("s$2", 2010)):
        _put(store, sid, "Q1", "P9", EntityValue(id=f"Q{year}"), [("P585", _t(year), "value")])
    t = Timeline.from_store(store)
    assert t.window("s$1").describe() == "2000-01-01..2009-12-31"


@pytest.mark.parametrize(("text", "first", "last"), [
    ("2010", "2010-01-01", "2010-12-31"), ("2010-02", "2010-02-01", "2010-02-28"),
    ("2012-02-29", "2012-02-29", "2012-02-29"), (" 1990 ", "1990-01-01", "1990-12-31"),
    ("-0043", "-0043-01-01", "-0043-12-31")])
def test_as_of_forms(text: str, first: str, last: str) -> None:
    a = parse_as_of(text)
    assert (day_text(a.first), day_text(a.last)) == (first, last)


@pytest.mark.parametrize("text", ["2010-02-30", "2011-02-29", "2010-00", "2010-13-01", "", "May 2010",
                                  "2010/05/01", "12345678901234567"])
def test_malformed_as_of_is_one_line_naming_the_option(text: str) -> None:
    with pytest.raises(InvalidInput) as err:
        settings(TraversalPolicy, as_of=text)
    assert str(err.value).startswith("as_of: ") and "\n" not in str(err.value)
    assert err.value.parameter == "as_of"


def test_the_graph_as_of_a_date_has_only_valid_edges_and_says_why_others_are_missing(world: Store) -> None:
    g = EvidenceGraph.from_store(world, policy=TraversalPolicy(as_of="1993", hub_limit=None))
    sids = {g.edge_statement(e) for e in range(g.ecount())}
    assert "p$a" in sids and "p$b" not in sids and "c$normal" not in sids and "x$plain" in sids
    assert {"p$b", "c$normal", "c$pref"} <= g.time_excluded
    assert g.policy.describe()["as_of"] == "1993"
    assert g.timeline is not None and "not on 1993" in g.timeline.why_invalid("p$b", parse_as_of("1993"))
    hidden = EvidenceGraph.from_store(world, policy=TraversalPolicy(as_of="2016")).timeline
    assert hidden is not None and "preferred-rank" in hidden.why_invalid("c$normal", parse_as_of("2016"))


def test_necessity_as_of_uses_the_dated_graph_for_answer_sets(tmp_path: Any) -> None:
    path = tmp_path / "w.duckdb"
    with Store(path) as s:
        _fill(s)
    task = Task.model_validate({
        "id": "team", "anchors": [{"entity": "Q20"}], "target": {"entity": "Q22"}, "store": str(path),
        "components": [{"anchor": "Q20", "target": {"entity": "Q22"}, "steps": [{"property": "P54"}]}],
        "clues": [{"kind": "anchor"}, {"kind": "relation", "step": 1}], "policy": {"hub_limit": None}})
    now = check_necessity(task)
    assert now.components[0].full.count == 2 and now.time_sensitivity == "superseded"
    later = check_necessity(task, as_of="2001")
    assert later.as_of == "2001" and later.components[0].full.unique and later.policy["as_of"] == "2001"
    dated = Task.model_validate({**task.model_dump(), "policy": {"hub_limit": None, "as_of": "1998"}})
    assert dated.policy.as_of == "1998"
    earlier = check_necessity(dated, as_of="1991")  # the argument wins over the task's date
    assert earlier.as_of == "1991" and earlier.components[0].full.first == ("Q21",)
    assert not earlier.components[0].full.target_in
    old_team = task.model_copy(update={"target": Target(entity="Q21"), "components": (
        task.components[0].model_copy(update={"target": Target(entity="Q21")}),)})
    assert check_necessity(old_team, as_of="1991").components[0].full.unique
    with pytest.raises(InvalidInput, match="Q21 is not in the evidence graph as of 2001"):
        check_necessity(old_team, as_of="2001")


def test_stable_only_keeps_chains_of_stable_steps(world: Store) -> None:
    every = expand(["Q20"], store=world, collect=False, min_hops=1, max_hops=1, top=10)
    stable = expand(["Q20"], store=world, collect=False, min_hops=1, max_hops=1, top=10, stable_only=True)
    assert {r.time_sensitivity for r in every.records} >= {"ended", "superseded", "stable"}
    assert stable.records and {r.time_sensitivity for r in stable.records} == {"stable"}
    assert {r.target for r in stable.records} == {"Q23", "Q60"}


def test_audit_reports_the_share_of_time_sensitive_tasks_and_steps(world: Store, tmp_path: Any) -> None:
    from collections import Counter

    from chaingraph.audit import audit
    from chaingraph.audit.report import to_markdown

    records = expand(["Q20", "Q40"], store=world, collect=False, min_hops=1, max_hops=1, top=10).records
    corpus = tmp_path / "chains.jsonl"
    corpus.write_text("".join(r.model_dump_json() + "\n" for r in records)
                      + '{"steps": [["Q1", "P31", "Q2"]]}\n')  # a record without time information
    report = audit([corpus])
    rows = {r.reason: (r.tasks, r.steps) for r in report.time_sensitivity}
    tasks = Counter(r.time_sensitivity for r in records)
    steps = Counter(s.time_sensitivity for r in records for s in r.steps)
    assert rows == {reason: (tasks[reason], steps[reason]) for reason in
                    ("ended", "superseded", "changing_property", "stable") if tasks[reason] or steps[reason]
                    } | {"unrecorded": (1, 0)}
    assert report.time_sensitive_tasks == len(records) - tasks["stable"] > 0
    assert "### Time sensitivity" in to_markdown(report)


@pytest.mark.parametrize(("as_of", "expected"), [("2015", "+900"), ("2005-06-30", "+800"), ("2030", "+1000")])
def test_fusion_as_of_picks_the_value_the_dated_graph_keeps(world: Store, as_of: str, expected: str) -> None:
    from chaingraph.fusion import FusionResult, fuse

    base = {"id": "base", "value": {"kind": "quantity", "amount": "+100", "unit": "1"}}
    town = {"id": "town", "entity": "Q10", "property": "P1082"}
    by_rule = fuse([{**town, "rule": {"kind": "latest"}}, base], "subtract", minuend="town", store=world,
                   as_of=as_of)
    by_date = fuse([town, base], "subtract", minuend="town", store=world, as_of=as_of)  # no rule needed
    assert isinstance(by_rule, FusionResult) and isinstance(by_date, FusionResult)
    assert by_rule.result == by_date.result == expected
    graph = EvidenceGraph.from_store(world, policy=TraversalPolicy(as_of=as_of, include_literals=True))
    kept = {graph.edge_statement(e) for e in range(graph.ecount()) if graph.edge_property(e) == "P1082"}
    assert kept == {by_date.inputs[0].statement_id}
    undated = fuse([town, base], "subtract", minuend="town", store=world)
    assert not isinstance(undated, FusionResult) and undated.reason == "multi_valued"


@pytest.mark.parametrize("command", [
    ["necessity", "tests/fixtures/necessity/story/anchor-shortcut.json"],
    ["expand", "--seed", "Q42"],
    ["fuse", "SPEC"]])
def test_each_command_refuses_a_malformed_as_of_in_one_line_naming_the_option(
        runner: Any, tmp_path: Any, command: list[str]) -> None:
    from chaingraph.cli import cli

    spec = tmp_path / "spec.json"
    spec.write_text('{"operation": "max", "components": [{"id": "a", "value": {"kind": "quantity", '
                    '"amount": "+1", "unit": "1"}}, {"id": "b", "value": {"kind": "quantity", '
                    '"amount": "+2", "unit": "1"}}]}')
    args = [str(spec) if a == "SPEC" else a for a in command]
    out = runner.invoke(cli, [*args, "--as-of", "1990-02-30"])
    assert out.exit_code == 2
    assert out.output.strip().splitlines() == [
        "error: --as-of: '1990-02-30' is not a date; give an ISO date (2010-05-31), a month (2010-05) "
        "or a year (2010)"]
