"""Fusion on real Wikidata values (``../shared/data/entities_full``), from JSON and from RDF.

The JSON export and the RDF export of the same revisions must give the same canonical
values and the same fused answers; populations with point-in-time qualifiers resolve
only by a stated rule; a real DuckDB file serves statement sets and statement ids.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from chaingraph.fusion import Component, FusionRefusal, FusionResult, fuse, fuse_spec
from chaingraph.fusion.spec import FusionSpec
from chaingraph.ids import statement_id_from_rdf
from chaingraph.store import Batch, Store, qualifier_row, statement_row
from chaingraph.values import QuantityValue, TimeValue, value_from_json

WB = "http://wikiba.se/ontology#"
PS_VALUE = "http://www.wikidata.org/prop/statement/value/"
PQ_VALUE = "http://www.wikidata.org/prop/qualifier/value/"


@pytest.fixture(scope="module")
def entities(shared_data: Path) -> dict[str, dict[str, Any]]:
    with gzip.open(shared_data / "entities_full" / "wikidata_entities_full.jsonl.gz", "rt") as f:
        return {e["id"]: e for e in map(json.loads, f)}


@pytest.fixture(scope="module")
def statements(entities: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for e in entities.values() for sts in e.get("claims", {}).values() for s in sts}


@pytest.fixture(scope="module")
def rdf(shared_data: Path) -> ox.Store:
    store = ox.Store()
    with gzip.open(shared_data / "entities_full" / "wikidata_entities_rdf.nt.gz") as f:
        store.bulk_load(f.read(), format=ox.RdfFormat.N_TRIPLES)
    return store


def canonical(form: dict[str, Any]) -> Any:
    """A value through the spec's own validation (exactly what ``chaingraph fuse`` does)."""
    return Component.model_validate({"id": "x", "value": form}).value


def key(value: Any) -> Any:
    """Compare quantities by exact number (RDF writes ``0.7`` where JSON has ``+0.70``)."""
    if isinstance(value, QuantityValue):
        return (Fraction(value.amount), value.unit, value.lower and Fraction(value.lower),
                value.upper and Fraction(value.upper))
    return value


def rdf_nodes(rdf: ox.Store, kind: str) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(statement id, 'main'|'qualifier', property, RDF value form) of psv:/pqv: nodes."""
    if kind == "time":
        query = (f"SELECT ?st ?p ?lex ?prec ?cal WHERE {{ ?st ?p ?n . ?n <{WB}timeValue> ?lex ; "
                 f"<{WB}timePrecision> ?prec ; <{WB}timeCalendarModel> ?cal }}")
    else:
        query = (f"SELECT ?st ?p ?amt ?unit ?up ?lo WHERE {{ ?st ?p ?n . ?n <{WB}quantityAmount> ?amt ; "
                 f"<{WB}quantityUnit> ?unit . OPTIONAL {{ ?n <{WB}quantityUpperBound> ?up ; "
                 f"<{WB}quantityLowerBound> ?lo }} }}")
    for row in rdf.query(query):  # type: ignore[union-attr]
        pred = row["p"].value
        if pred.startswith(PS_VALUE):
            where, prop = "main", pred[len(PS_VALUE):]
        elif pred.startswith(PQ_VALUE):
            where, prop = "qualifier", pred[len(PQ_VALUE):]
        else:
            continue  # references, normalised nodes
        stid = statement_id_from_rdf(row["st"].value)
        if kind == "time":
            form = {"rdf": "time", "time": row["lex"].value, "precision": int(row["prec"].value),
                    "calendar": row["cal"].value}
        else:
            form = {"rdf": "quantity", "amount": row["amt"].value, "unit": row["unit"].value,
                    "upper": row["up"].value if row["up"] else None,
                    "lower": row["lo"].value if row["lo"] else None}
        yield stid, where, prop, form


def json_values(statement: dict[str, Any], where: str, prop: str) -> list[dict[str, Any]]:
    snaks = [statement["mainsnak"]] if where == "main" else statement.get("qualifiers", {}).get(prop, [])
    return [s["datavalue"] for s in snaks if s.get("snaktype") == "value"]


@pytest.mark.parametrize("kind", ["time", "quantity"])
def test_rdf_value_nodes_equal_their_json_values(kind: str, rdf: ox.Store,
                                                 statements: dict[str, dict[str, Any]]) -> None:
    """Every psv:/pqv: value node of a statement also in the JSON export normalises to the
    same canonical value (BCE shift and Julian reconversion undone on the RDF side)."""
    compared = 0
    bce = 0
    for stid, where, prop, form in rdf_nodes(rdf, kind):
        st = statements.get(stid)
        if st is None:
            continue
        from_json = [key(canonical(dv)) for dv in json_values(st, where, prop)]
        from_rdf = canonical(form)
        assert key(from_rdf) in from_json, (stid, prop, form, from_json)
        compared += 1
        bce += isinstance(from_rdf, TimeValue) and from_rdf.year < 0
    assert compared >= (150 if kind == "time" else 10)
    if kind == "time":
        assert bce >= 3  # the universe's age and friends: years of -13.8 billion


def test_fused_answers_agree_between_json_and_rdf(rdf: ox.Store,
                                                  statements: dict[str, dict[str, Any]]) -> None:
    """Year differences between every pair of Douglas Adams's main-value dates (birth,
    death, ...) are the same from both exports, and equal the plain year arithmetic."""
    pairs: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for stid, where, prop, form in rdf_nodes(rdf, "time"):
        st = statements.get(stid)
        if where == "main" and st is not None and stid.upper().startswith("Q42$") and form["precision"] >= 9:
            pairs[f"{prop}:{stid}"] = (json_values(st, where, prop)[0], form)
    keys = sorted(pairs)
    assert len(keys) >= 2
    for a in keys:
        for b in keys:
            out = [fuse([{"id": "a", "value": pairs[a][i]}, {"id": "b", "value": pairs[b][i]}],
                        "year_difference", minuend="a") for i in (0, 1)]
            assert out[0].model_dump() == out[1].model_dump()
            assert isinstance(out[0], FusionResult)
            ya, yb = canonical(pairs[a][0]).astronomical_year, canonical(pairs[b][0]).astronomical_year
            assert out[0].fraction() == ya - yb


def test_douglas_adams_lived_49_years_and_17958_days(statements: dict[str, dict[str, Any]],
                                                      entities: dict[str, dict[str, Any]]) -> None:
    """Born 11 March 1952, died 11 May 2001 (Gregorian, day precision): 49 years by year
    numbers; the day count is checked against Python's own calendar arithmetic."""
    claims = entities["Q42"]["claims"]
    birth, death = (claims[p][0]["mainsnak"]["datavalue"] for p in ("P569", "P570"))
    comps = [{"id": "death", "entity": "Q42", "property": "P570", "value": death},
             {"id": "birth", "entity": "Q42", "property": "P569", "value": birth}]
    years = fuse(comps, "year_difference", minuend="death")
    days = fuse(comps, "day_difference", minuend="death")
    assert isinstance(years, FusionResult) and isinstance(days, FusionResult)
    assert years.result == "+49"
    assert days.fraction() == (dt.date(2001, 5, 11) - dt.date(1952, 3, 11)).days == 17958


def _latest_by_point_in_time(sts: list[dict[str, Any]]) -> str | None:
    """Independent expectation: the amount of the non-deprecated statement whose P585 span
    (a day, or a whole year at year precision) starts after every other one ends, else
    ``None`` (the latest is not certain)."""
    spans = []
    for s in sts:
        quals = s.get("qualifiers", {}).get("P585", [])
        if s["rank"] == "deprecated" or len(quals) != 1:
            continue
        v = quals[0]["datavalue"]["value"]
        y, m, d = (int(x) for x in v["time"][1:11].split("-"))
        start, end = ((dt.date(y, m, d), dt.date(y, m, d)) if v["precision"] == 11
                      else (dt.date(y, 1, 1), dt.date(y, 12, 31)))
        assert v["precision"] in (9, 11)
        spans.append((start, end, s["mainsnak"]["datavalue"]["value"]["amount"]))
    for i, (start, _, amount) in enumerate(spans):
        if all(start > end for j, (_, end, _) in enumerate(spans) if j != i):
            return str(amount)
    return None


@pytest.mark.parametrize("qid", ["Q1040", "Q2112", "Q31", "Q148"])
def test_populations_resolve_only_by_a_stated_rule(qid: str, entities: dict[str, dict[str, Any]]) -> None:
    """Karlsruhe has two populations for 31 December 2015 (307263 normal, 307755
    preferred): "latest" is a tie there and is refused; Belgium's latest is the 2020 value
    at year precision, which certainly follows the preferred 1 January 2019."""
    sts = entities[qid]["claims"]["P1082"]
    comp = {"id": qid, "entity": qid, "property": "P1082", "statements": sts}
    bare = fuse([comp], "add")
    assert isinstance(bare, FusionRefusal) and bare.reason == "multi_valued"
    latest = fuse([comp], "add", rule={"kind": "latest"})
    expected = _latest_by_point_in_time(sts)
    if expected is None:
        assert isinstance(latest, FusionRefusal) and latest.reason == "undefined_ordering"
    else:
        assert isinstance(latest, FusionResult) and latest.fraction() == Fraction(expected)
    assert (qid == "Q1040") == (expected is None)
    preferred = [s for s in sts if s["rank"] == "preferred"]
    by_rank = fuse([comp], "add", rule={"kind": "preferred"})
    if len(preferred) == 1:
        assert isinstance(by_rank, FusionResult)
        assert by_rank.result == preferred[0]["mainsnak"]["datavalue"]["value"]["amount"]
    else:  # China has two preferred populations (2017, 2020): rank alone does not decide
        assert isinstance(by_rank, FusionRefusal) and by_rank.reason == "multi_valued"
        both = fuse([comp], "add", rule=[{"kind": "preferred"}, {"kind": "latest"}])
        assert isinstance(both, FusionResult) and both.result == "+1443497378"


def test_population_difference_of_two_cities_in_one_census_year(entities: dict[str, dict[str, Any]]) -> None:
    """Bielefeld minus Karlsruhe, both at P585 = 31 December 2013 (qualifier rule)."""
    def pop(qid: str) -> dict[str, Any]:
        return {"id": qid, "entity": qid, "property": "P1082", "statements": entities[qid]["claims"]["P1082"]}

    day = {"kind": "time", "time": "+2013-12-31T00:00:00Z", "precision": 11}
    rule = {"kind": "qualifier", "property": "P585", "value": day}
    r = fuse([pop("Q2112"), pop("Q1040")], "subtract", minuend="Q2112", rule=rule)
    assert isinstance(r, FusionResult)
    expected = {}
    for qid in ("Q2112", "Q1040"):
        for s in entities[qid]["claims"]["P1082"]:
            q = s.get("qualifiers", {}).get("P585", [])
            if q and q[0]["datavalue"]["value"]["time"] == "+2013-12-31T00:00:00Z":
                expected[qid] = Fraction(s["mainsnak"]["datavalue"]["value"]["amount"])
    assert r.fraction() == expected["Q2112"] - expected["Q1040"]


def test_areas_with_bounds_and_units(entities: dict[str, dict[str, Any]]) -> None:
    """Belgium 30528 [30527, 30529] km² and China 9596961 [9596960, 9596962] km²: China is
    certainly larger; Karlsruhe's two preferred areas agree (173.46 km²) and count as one."""
    def area(qid: str, **extra: Any) -> dict[str, Any]:
        return {"id": qid, "entity": qid, "property": "P2046", "statements": entities[qid]["claims"]["P2046"],
                **extra}

    r = fuse([area("Q31"), area("Q148")], "select_max")
    assert isinstance(r, FusionResult) and r.result == "Q148"
    total = fuse([area("Q31"), area("Q148")], "add", unit="Q25343")
    assert isinstance(total, FusionResult)
    assert (total.value.amount, total.value.lower, total.value.upper) == (  # type: ignore[union-attr]
        "+9627489000000", "+9627487000000", "+9627491000000")
    ka = fuse([area("Q1040"), area("Q2112")], "add", rule={"kind": "preferred"})
    assert isinstance(ka, FusionResult) and ka.result == "+432.28"


def test_elevations_in_metres_need_a_rule(entities: dict[str, dict[str, Any]]) -> None:
    """Karlsruhe has two normal elevations (115 m ±1 and 118 m): multi-valued, refused."""
    elevations = entities["Q1040"]["claims"]["P2044"]
    comp = {"id": "ka", "entity": "Q1040", "property": "P2044", "statements": elevations}
    r = fuse([comp], "max")
    assert isinstance(r, FusionRefusal) and r.reason == "multi_valued"


def test_inceptions_of_a_country_and_a_city(entities: dict[str, dict[str, Any]]) -> None:
    """Belgium 4 October 1830 (day), Bielefeld 1214 (year): 616 years; no day count."""
    def inception(qid: str) -> dict[str, Any]:
        return {"id": qid, "entity": qid, "property": "P571",
                "statements": entities[qid]["claims"]["P571"]}

    r = fuse([inception("Q31"), inception("Q2112")], "year_difference", minuend="Q31",
             rule={"kind": "preferred"})
    assert isinstance(r, FusionResult) and r.result == "+616"
    days = fuse([inception("Q31"), inception("Q2112")], "day_difference", rule={"kind": "preferred"})
    assert isinstance(days, FusionRefusal) and days.reason == "precision_too_coarse"


def test_every_real_quantity_normalises_or_names_its_unknown_unit(
        statements: dict[str, dict[str, Any]]) -> None:
    known = unknown = 0
    for st in statements.values():
        dv = st["mainsnak"].get("datavalue")
        if not dv or dv["type"] != "quantity":
            continue
        r = fuse([{"id": "q", "value": dv}], "max")
        if isinstance(r, FusionResult):
            assert r.fraction() == Fraction(value_from_json(dv).amount)  # type: ignore[union-attr]
            known += 1
        else:
            assert r.reason == "unknown_unit" and dv["value"]["unit"].rsplit("/", 1)[-1] in r.message
            unknown += 1
    assert known > 500 and unknown < known / 20


@pytest.fixture
def population_store(tmp_path: Path, entities: dict[str, dict[str, Any]]) -> Iterator[Store]:
    """A real DuckDB file holding the populations of Karlsruhe and Bielefeld."""
    batch = Batch()
    for qid in ("Q1040", "Q2112"):
        for s in entities[qid]["claims"]["P1082"]:
            value = value_from_json(s["mainsnak"]["datavalue"])
            batch.statements.append(statement_row(s["id"], qid, "P1082", value, rank=s["rank"]))
            for pid, snaks in s.get("qualifiers", {}).items():
                for snak in snaks:
                    if snak.get("snaktype") == "value":
                        qualifier = value_from_json(snak["datavalue"])
                        batch.qualifiers.append(qualifier_row(s["id"], pid, qualifier))
    path = tmp_path / "pop.duckdb"
    with Store(path) as store:
        store.write(batch)
    with Store(path, read_only=True) as store:
        yield store


def test_statement_sets_and_ids_from_a_duckdb_store(population_store: Store,
                                                    entities: dict[str, dict[str, Any]]) -> None:
    spec = FusionSpec.model_validate({
        "operation": "select_max", "rule": [{"kind": "preferred"}, {"kind": "latest"}],
        "components": [{"id": "ka", "entity": "Q1040", "label": "Karlsruhe", "property": "P1082"},
                       {"id": "bi", "entity": "Q2112", "label": "Bielefeld", "property": "P1082"}]})
    r = fuse_spec(spec, store=population_store)
    assert isinstance(r, FusionResult) and r.selected == "bi" and r.result == "Q2112"
    assert r.inputs[0].statement_id and r.inputs[0].statement_id.startswith("Q1040$")
    without = fuse_spec(spec)
    assert isinstance(without, FusionRefusal) and without.reason == "missing_value"
    preferred = next(s for s in entities["Q1040"]["claims"]["P1082"] if s["rank"] == "preferred")
    by_id = fuse([{"id": "ka", "value": {"statement": preferred["id"]}}], "add", store=population_store)
    assert isinstance(by_id, FusionResult)
    assert by_id.result == preferred["mainsnak"]["datavalue"]["value"]["amount"]
    assert by_id.inputs[0].statement_id == preferred["id"]
