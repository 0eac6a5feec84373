"""The fusion calculator: operations, refusals, statement-set rules, hand-worked BCE/Julian cases."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from chaingraph.errors import InvalidSpec
from chaingraph.fusion import (
    OPERATIONS,
    REASONS,
    Component,
    FusionRefusal,
    FusionResult,
    FusionSpec,
    RationalValue,
    fuse,
    fuse_spec,
)
from chaingraph.values import GREGORIAN, JULIAN, EntityValue, QuantityValue, StringValue, TimeValue

JULIAN_IRI = "http://www.wikidata.org/entity/Q1985786"


def q(amount: str, unit: str = "1", lower: str | None = None, upper: str | None = None) -> QuantityValue:
    return QuantityValue.from_rdf(amount, unit, upper, lower)


def day(y: int, m: int, d: int, calendar: str = GREGORIAN) -> TimeValue:
    return TimeValue.make(y, m, d, precision=11, calendar=calendar)


def year(y: int, precision: int = 9) -> TimeValue:
    return TimeValue.make(y, precision=precision)


def ok(outcome: FusionResult | FusionRefusal) -> FusionResult:
    assert isinstance(outcome, FusionResult), getattr(outcome, "message", outcome)
    return outcome


def refused(outcome: FusionResult | FusionRefusal, reason: str) -> FusionRefusal:
    assert isinstance(outcome, FusionRefusal), f"expected a refusal, got {outcome.result}"
    assert outcome.reason == reason, outcome.message
    assert outcome.message and "\n" not in outcome.message
    return outcome


# -- hand-worked dates -------------------------------------------------------------------
def test_years_from_44_bce_to_14_ce_are_57_not_58() -> None:
    """Caesar died 44 BCE, Augustus 14 CE. There is no year 0: 44 BCE is astronomical -43,
    so the difference is 14 - (-43) = 57 (naively 14 + 44 = 58 counts a year 0 that never was).
    The JSON form writes 44 BCE as ``-0044``; the RDF form at year precision as ``-0043``."""
    json_form = {"type": "time", "value": {"time": "-0044-00-00T00:00:00Z", "precision": 9,
                                           "calendarmodel": JULIAN_IRI}}
    rdf_form = {"rdf": "time", "time": "-0043-01-01T00:00:00Z", "precision": 9, "calendar": JULIAN_IRI}
    augustus = {"type": "time", "value": {"time": "+0014-00-00T00:00:00Z", "precision": 9}}
    for caesar in (json_form, rdf_form):
        r = ok(fuse([{"id": "caesar", "value": caesar}, {"id": "augustus", "value": augustus}],
                    "year_difference", minuend="augustus"))
        assert (r.result, r.fraction(), r.value.unit) == ("+57", 57, "Q577")  # type: ignore[union-attr]
        assert r.inputs[0].value == TimeValue.make(-44, precision=9, calendar=JULIAN)


def test_one_bce_to_one_ce_is_one_year_and_sign_follows_the_minuend() -> None:
    """1 BCE (astronomical 0) to 1 CE (astronomical 1): one year. Without a minuend the
    difference is absolute; with one it is minuend - other."""
    a, b = year(-1), year(1)
    assert ok(fuse([a, b], "year_difference")).result == "+1"
    assert ok(fuse([a, b], "year_difference", minuend="c1")).result == "-1"
    assert ok(fuse([a, b], "year_difference", minuend="c2")).result == "+1"


def test_caesar_to_augustus_in_days_across_the_bce_boundary() -> None:
    """15 March 44 BCE to 19 August 14 CE, both Julian. From 15 March 44 BCE to 15 March
    14 CE are 57 Julian years: 57 × 365 = 20805 days plus one leap day in each astronomical
    year divisible by 4 from -40 to 12 (14 of them) = 20819. Then 15 March → 19 August:
    31 + 30 + 31 + 30 + 31 + 4 = 157. Total 20976 days."""
    r = ok(fuse([day(-44, 3, 15, JULIAN), day(14, 8, 19, JULIAN)], "day_difference", minuend="c2"))
    assert (r.result, r.value.unit) == ("+20976", "Q573")  # type: ignore[union-attr]


def test_shakespeare_and_cervantes_did_not_die_on_the_same_day() -> None:
    """Both died on "23 April 1616" — Shakespeare in England's Julian calendar, Cervantes in
    Spain's Gregorian. Julian 23 April 1616 is Gregorian 3 May 1616: ten days later (the
    calendars differed by 10 days between 1582 and 1700). Cervantes died first."""
    comps = [Component(id="shakespeare", entity="Q692", label="William Shakespeare",
                       value=day(1616, 4, 23, JULIAN)),
             Component(id="cervantes", entity="Q5682", label="Miguel de Cervantes",
                       value=day(1616, 4, 23, GREGORIAN))]
    assert ok(fuse(comps, "day_difference", minuend="shakespeare")).result == "+10"
    first = ok(fuse(comps, "select_earliest"))
    assert (first.value, first.selected) == (EntityValue(id="Q5682"), "cervantes")
    off = refused(fuse(comps, "day_difference", calendar_conversion=False), "invalid_arithmetic")
    assert "different calendars" in off.message


def test_gregorian_reform_days_are_consecutive() -> None:
    """Julian Thursday 4 October 1582 was followed by Gregorian Friday 15 October 1582."""
    assert ok(fuse([day(1582, 10, 4, JULIAN), day(1582, 10, 15)], "day_difference")).result == "+1"


def test_newton_birth_year_depends_on_the_calendar() -> None:
    """Newton was born 25 December 1642 (Julian) = 4 January 1643 (Gregorian). Against a
    Gregorian day in 1643 the year difference is 0 once the Julian date is converted; with
    conversion switched off the calculator refuses instead of mixing calendars."""
    newton, later = day(1642, 12, 25, JULIAN), day(1643, 6, 1)
    assert ok(fuse([newton, later], "year_difference")).result == "+0"
    refused(fuse([newton, later], "year_difference", calendar_conversion=False), "invalid_arithmetic")


def test_coarse_dates_refuse_what_they_cannot_give() -> None:
    """A century cannot give a year; a year cannot give a day count."""
    r = refused(fuse([year(20, precision=7), year(1950)], "year_difference"), "precision_too_coarse")
    assert r.component == "c1"
    refused(fuse([year(1950), day(1950, 1, 1)], "day_difference"), "precision_too_coarse")
    # but ordering needs no year: the 5th century BCE is certainly before 1950
    assert ok(fuse([year(-5, precision=7), year(1950)], "min")).selected == "c1"


def test_bce_centuries_from_rdf_are_not_shifted() -> None:
    """At precision < 9 the RDF export does not shift BCE years: RDF ``-0500`` at century
    precision is JSON ``-0500`` (the 5th century BCE, 500–401 BCE), which overlaps 450 BCE."""
    c5 = {"rdf": "time", "time": "-0500-01-01T00:00:00Z", "precision": 7}
    r = refused(fuse([{"id": "c", "value": c5}, year(-450)], "max"), "undefined_ordering")
    assert r.inputs[0].value == TimeValue.make(-500, precision=7)
    assert ok(fuse([{"id": "c", "value": c5}, year(-400)], "max")).selected == "c2"


def test_overlapping_date_intervals_are_not_ordered() -> None:
    """1969 (a year) contains 20 July 1969: which is later is not certain."""
    refused(fuse([year(1969), day(1969, 7, 20)], "select_latest"), "undefined_ordering")
    refused(fuse([day(1969, 7, 20), day(1969, 7, 20)], "max"), "undefined_ordering")
    assert ok(fuse([year(1968), day(1969, 7, 20)], "max")).value == day(1969, 7, 20)


# -- quantities ---------------------------------------------------------------------------
def test_areas_in_square_kilometres_add_exactly() -> None:
    """Karlsruhe 173.46 km² + Bielefeld 258.82 km² (Wikidata values) = 432.28 km²; and
    0.1 + 0.2 is 0.3, which floats get wrong."""
    r = ok(fuse([q("+173.46", "Q712226"), q("+258.82", "Q712226")], "add"))
    assert (r.result, r.value.unit) == ("+432.28", "Q712226")  # type: ignore[union-attr]
    assert 0.1 + 0.2 != 0.3
    assert ok(fuse([q("+0.1", "Q828224"), q("+0.2", "Q828224")], "add")).result == "+0.3"


def test_mixed_units_meet_in_the_coherent_unit() -> None:
    """1 km + 1 ft: mixed inputs are added in metres (the dimension's coherent unit), so
    finite decimals stay finite: 1000 m + 0.3048 m. Asked for feet, the result is exact
    but has no finite decimal form (1000.3048 / 0.3048), so it is a rational."""
    r = ok(fuse([q("+1", "Q828224"), q("+1", "Q3710")], "add"))
    assert (r.result, r.unit) == ("+1000.3048", "Q11573")
    feet = ok(fuse([q("+1", "Q828224"), q("+1", "Q3710")], "add", unit="Q3710"))
    assert isinstance(feet.value, RationalValue)
    assert feet.fraction() == 1 + Fraction(1000) / Fraction("0.3048")


def test_requested_unit_and_tonne_is_not_a_short_ton() -> None:
    r = ok(fuse([q("+2", "Q191118"), q("+500", "Q11570")], "add", unit="Q11570"))
    assert (r.result, r.unit) == ("+2500", "Q11570")


def test_bounds_propagate_by_interval_arithmetic() -> None:
    r = ok(fuse([q("+10", "Q11573", "9", "11"), q("+4", "Q11573", "3.5", "4.5")], "subtract", minuend="c1"))
    assert (r.value.amount, r.value.lower, r.value.upper) == ("+6", "+4.5", "+7.5")  # type: ignore[union-attr]


def test_average_is_an_exact_rational_rounded_only_when_asked() -> None:
    plain = ok(fuse([q("+1"), q("+1"), q("+2")], "average"))
    assert plain.result == "4/3" and isinstance(plain.value, RationalValue)
    rounded = ok(fuse([q("+1"), q("+1"), q("+2")], "average", rounding={"places": 2}))
    assert (rounded.result, rounded.exact) == ("+1.33", "4/3")
    assert rounded.steps[-1].action == "round"
    half = ok(fuse([q("+2"), q("+3")], "average", rounding={"places": 0, "mode": "half_even"}))
    assert half.result == "+2"  # 2.5 to even
    assert ok(fuse([q("+2"), q("+3")], "average", rounding={"places": 0, "mode": "half_up"})).result == "+3"


def test_multiply_by_an_exact_constant() -> None:
    r = ok(fuse([q("+0.1", "Q11573", "0.05", "0.15")], "multiply", factor="-3"))
    assert (r.value.amount, r.value.lower, r.value.upper) == ("-0.3", "-0.45", "-0.15")  # type: ignore[union-attr]


def test_divide_like_quantities_and_by_zero() -> None:
    a, b = q("+258.82", "Q712226"), q("+173.46", "Q712226")
    r = ok(fuse([{"id": "a", "value": a}, {"id": "b", "value": b}], "divide", dividend="a"))
    assert r.fraction() == Fraction("258.82") / Fraction("173.46") and r.unit == "Q199"
    refused(fuse([q("+1", "Q11573"), q("+0")], "divide", dividend="c1"), "invalid_arithmetic")
    refused(fuse([q("+1"), q("+1", "1", "-1", "2")], "divide", dividend="c1"), "invalid_arithmetic")
    refused(fuse([q("+1", "Q11573"), q("+1", "Q11570")], "divide", dividend="c1"), "unsupported_operation")


def test_temperatures_subtract_and_compare_but_do_not_add() -> None:
    """30 °C - 68 °F: 68 °F is 20 °C, so the difference is 10 K."""
    r = ok(fuse([q("+30", "Q25267"), q("+68", "Q42289")], "subtract", minuend="c1"))
    assert (r.result, r.unit) == ("+10", "Q11579")
    refused(fuse([q("+30", "Q25267"), q("+20", "Q25267")], "add"), "invalid_arithmetic")
    assert ok(fuse([q("+30", "Q25267"), q("+68", "Q42289")], "max")).selected == "c1"


def test_max_min_and_selection_of_quantities() -> None:
    comps = [Component(id="ka", entity="Q1040", label="Karlsruhe", value=q("+173.46", "Q712226")),
             Component(id="bi", entity="Q2112", label="Bielefeld", value=q("+258.82", "Q712226")),
             Component(id="small", label="a square mile", value=q("+1", "Q232291"))]
    assert ok(fuse(comps, "max")).selected == "bi"
    assert ok(fuse(comps, "min")).value == q("+1", "Q232291")
    assert ok(fuse(comps, "select_max")).value == EntityValue(id="Q2112")
    assert ok(fuse(comps, "select_min")).value == StringValue(text="a square mile")
    assert ok(fuse(comps, "max", unit="Q25343")).result == "+258820000"


def test_ordinals_given_as_strings_order_as_integers() -> None:
    """P1545 series ordinals are strings; "10" comes after "9"."""
    comps = [{"id": "a", "value": {"kind": "string", "text": "9"}},
             {"id": "b", "value": {"kind": "string", "text": "10"}}]
    assert ok(fuse(comps, "select_max")).selected == "b"


def test_count_counts_distinct_values_and_targets() -> None:
    langs = [{"value": {"kind": "entity", "id": "Q188"}}, {"value": {"kind": "entity", "id": "Q150"}},
             {"value": {"kind": "entity", "id": "Q7411"}}, {"value": {"kind": "entity", "id": "Q150"},
                                                          "rank": "deprecated"}]
    r = ok(fuse([{"id": "be", "entity": "Q31", "property": "P37", "statements": langs},
                 {"id": "x", "entity": "Q42"}], "count"))
    assert (r.result, r.value.unit) == ("+4", "1")  # type: ignore[union-attr]


# -- refusals -----------------------------------------------------------------------------
def test_every_reason_code_is_documented_and_reachable() -> None:
    cases: dict[str, Any] = {
        "missing_value": fuse([{"id": "a"}, q("+1")], "add"),
        "multi_valued": fuse([{"id": "a", "statements": [{"value": q("+1").model_dump()},
                                                         {"value": q("+2").model_dump()}]}, q("+1")], "add"),
        "precision_too_coarse": fuse([year(19, 7), year(1950)], "year_difference"),
        "incompatible_dimensions": fuse([q("+1", "Q11573"), q("+1", "Q11570")], "add"),
        "unknown_unit": fuse([q("+1", "Q105839488"), q("+1")], "add"),
        "undefined_ordering": fuse([q("+5"), q("+5")], "max"),
        "invalid_arithmetic": fuse([], "average"),
        "unsupported_operation": fuse([year(1950), year(1960)], "add"),
        "duplicate_target": fuse([Component(id="a", entity="Q1040", property="P2046", value=q("+1")),
                                  Component(id="b", entity="Q1040", property="P2046", value=q("+2"))], "add"),
    }
    assert set(cases) == set(REASONS)
    for reason, outcome in cases.items():
        refused(outcome, reason)


def test_currencies_are_never_converted() -> None:
    r = refused(fuse([q("+1", "Q4917"), q("+1", "Q4916")], "add"), "incompatible_dimensions")
    assert "currencies" in r.message
    assert ok(fuse([q("+1.5", "Q4917"), q("+2", "Q4917")], "add")).result == "+3.5"


def test_years_are_not_converted_to_days() -> None:
    refused(fuse([q("+1", "Q577"), q("+10", "Q573")], "add"), "incompatible_dimensions")
    r = ok(fuse([q("+1", "Q577"), q("+6", "Q5151")], "add"))  # a year and six months
    assert (r.result, r.unit) == ("+1.5", "Q577")


def test_overlapping_uncertainty_ranges_refuse_ordering() -> None:
    refused(fuse([q("+10", "1", "9", "11"), q("+10.5", "1", "10.4", "10.6")], "max"), "undefined_ordering")
    assert ok(fuse([q("+10", "1", "9", "10.3"), q("+10.5", "1", "10.4", "10.6")], "max")).selected == "c2"


def test_refusal_keeps_what_was_normalised() -> None:
    r = refused(fuse([q("+1", "Q11573"), q("+1", "Q4917")], "add"), "incompatible_dimensions")
    assert [i.component for i in r.inputs] == ["c1", "c2"]
    assert r.inputs[0].scale and r.inputs[0].upper == "+1"


def test_post_fusion_checks_are_recorded() -> None:
    r = ok(fuse([Component(id="a", entity="Q1040", property="P571", value=year(1715)),
                 Component(id="b", entity="Q2112", property="P571", value=year(1214))],
                "year_difference", minuend="a"))
    assert r.result == "+501"
    assert [(c.name, c.passed) for c in r.checks] == [("targets_unique", True), ("single_valued", True)]
    # the same entity with two different properties is not a duplicate (birth and death of one person)
    ok(fuse([Component(id="b", entity="Q42", property="P569", value=day(1952, 3, 11)),
             Component(id="d", entity="Q42", property="P570", value=day(2001, 5, 11))], "year_difference"))


# -- statement sets ------------------------------------------------------------------------
def _population(amount: str, when: TimeValue, rank: str = "normal") -> dict[str, Any]:
    return {"value": q(amount).model_dump(), "rank": rank,
            "qualifiers": [{"property": "P585", "value": when.model_dump()}]}


POPS = [_population("+290000", year(2011)), _population("+300051", day(2015, 12, 31)),
        _population("+308436", day(2019, 12, 31), "preferred"),
        _population("+100000", year(1940), "deprecated")]


@pytest.mark.parametrize("rule, expected", [
    ({"kind": "preferred"}, "+308436"),
    ({"kind": "latest"}, "+308436"),
    ({"kind": "earliest"}, "+290000"),  # the deprecated 1940 value is dropped first
    ({"kind": "qualifier", "property": "P585", "value": year(2015).model_dump()}, "+300051"),
])
def test_statement_sets_resolve_only_by_a_stated_rule(rule: dict[str, Any], expected: str) -> None:
    comp = {"id": "ka", "entity": "Q1040", "property": "P1082", "statements": POPS}
    refused(fuse([comp], "add"), "multi_valued")
    r = ok(fuse([comp], "add", rule=rule))
    assert r.result == expected
    assert r.inputs[0].resolution.startswith("dropped 1 deprecated")


def test_rules_refuse_when_they_cannot_decide() -> None:
    tied = [_population("+1", year(2011)), _population("+2", day(2011, 5, 9))]
    comp = {"id": "a", "statements": tied}
    refused(fuse([comp], "add", rule={"kind": "latest"}), "undefined_ordering")
    in_2011 = {"kind": "qualifier", "value": year(2011).model_dump()}
    refused(fuse([comp], "add", rule=in_2011), "multi_valued")
    in_1999 = {"kind": "qualifier", "value": year(1999).model_dump()}
    refused(fuse([comp], "add", rule=in_1999), "missing_value")
    # a component's own rule wins over the spec's
    on_day = {"kind": "qualifier", "value": day(2011, 5, 9).model_dump()}
    own = {"id": "a", "statements": tied, "rule": on_day}
    assert ok(fuse([own], "add", rule={"kind": "latest"})).result == "+2"


def test_wikidata_json_statements_are_accepted_as_is() -> None:
    st = {"mainsnak": {"snaktype": "value", "property": "P1082",
                       "datavalue": {"type": "quantity", "value": {"amount": "+313092", "unit": "1"}}},
          "rank": "normal", "id": "Q1040$X", "type": "statement",
          "qualifiers": {"P585": [{"snaktype": "value", "property": "P585", "datavalue": {
              "type": "time", "value": {"time": "+2021-12-31T00:00:00Z", "precision": 11, "timezone": 0,
                                        "before": 0, "after": 0,
                                        "calendarmodel": "http://www.wikidata.org/entity/Q1985727"}}}]}}
    novalue = {"mainsnak": {"snaktype": "novalue", "property": "P1082"}, "rank": "normal"}
    r = ok(fuse([{"id": "a", "statements": [st]}], "add"))
    assert (r.result, r.inputs[0].statement_id) == ("+313092", "Q1040$X")
    refused(fuse([{"id": "a", "statements": [novalue]}], "add"), "missing_value")


# -- spec validation -------------------------------------------------------------------------
@pytest.mark.parametrize("spec, path", [
    ({"operation": "subtract", "components": [{"id": "a"}, {"id": "b"}]}, ""),
    ({"operation": "add", "components": [{"id": "a", "value": {"kind": "quantity", "amount": "1x"}}]},
     "components[0].value"),
    ({"operation": "add", "components": [{"id": "a", "value": {"rdf": "time", "time": "x", "precision": 9}}]},
     "components[0].value"),
    ({"operation": "nope", "components": []}, "operation"),
    ({"operation": "multiply", "factor": 0.1, "components": [{"id": "a"}]}, "factor"),
    ({"operation": "add", "components": [{"id": "a"}, {"id": "a"}]}, ""),
    ({"operation": "add", "components": [{"id": "a", "statements": [{"rank": "best"}]}]},
     "components[0].statements[0].rank"),
])
def test_bad_specs_raise_invalid_spec_with_a_json_path(spec: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        fuse(spec["components"], spec["operation"], factor=spec.get("factor"))
    assert info.value.path == path
    assert "\n" not in str(info.value)


def test_every_operation_is_documented_in_the_schema() -> None:
    schema = FusionSpec.model_json_schema()
    assert set(schema["properties"]["operation"]["enum"]) == set(OPERATIONS)


def test_results_serialise_and_parse_back() -> None:
    r = ok(fuse([q("+1"), q("+2")], "average"))
    again = FusionResult.model_validate_json(r.model_dump_json())
    assert again == r and again.fraction() == Fraction(3, 2)
    spec = FusionSpec.model_validate({"operation": "add", "components": [{"id": "a", "value": q("+1")}]})
    assert fuse_spec(FusionSpec.model_validate_json(spec.model_dump_json())) == fuse_spec(spec)


def test_temperature_difference_refuses_a_result_unit_of_another_dimension() -> None:
    """30 °C - 68 °F is 10 K; asking for it in metres must be refused, not answered '+10 m'."""
    from chaingraph.fusion import FusionRefusal, FusionResult, fuse
    from chaingraph.values import QuantityValue

    celsius = QuantityValue(amount="+30", unit="Q25267")
    fahrenheit = QuantityValue(amount="+68", unit="Q42289")
    refused = fuse([celsius, fahrenheit], "subtract", minuend="c1", unit="Q11573")
    assert isinstance(refused, FusionRefusal) and refused.reason == "incompatible_dimensions"
    kelvin = fuse([celsius, fahrenheit], "subtract", minuend="c1", unit="Q11579")
    assert isinstance(kelvin, FusionResult) and (kelvin.result, kelvin.unit) == ("+10", "Q11579")
