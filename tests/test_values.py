"""Canonical Wikidata values: the JSON form whichever export a value came from."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.errors import InvalidInput
from chaingraph.values import (
    GREGORIAN,
    JULIAN,
    VALUE_COLUMNS,
    CoordinateValue,
    EntityValue,
    MonolingualValue,
    QuantityValue,
    StringValue,
    TimeValue,
    gregorian_to_julian,
    julian_to_gregorian,
    value_columns,
    value_from_columns,
    value_from_json,
)


def test_rdf_year_zero_is_one_bce_at_year_precision() -> None:
    """RDF (XSD 1.1) writes 1 BCE as 0000 and 2 BCE as -0001 (reference §2.3, Q25299/Q25298)."""
    assert TimeValue.from_rdf("0000-01-01T00:00:00Z", precision=9).year == -1
    assert TimeValue.from_rdf("-0001-01-01T00:00:00Z", precision=9).year == -2
    assert TimeValue.from_rdf("-0043-03-15T00:00:00Z", precision=11).time == "-0044-03-15T00:00:00Z"


def test_rdf_bce_below_year_precision_is_not_shifted() -> None:
    """Wikibase shifts only at precision >= 9; a BCE century is written unshifted."""
    t = TimeValue.from_rdf("-0500-01-01T00:00:00Z", precision=7)
    assert t.year == -500 and t.time == "-0500-00-00T00:00:00Z"


def test_json_and_rdf_forms_meet_in_one_canonical_time() -> None:
    json_form = TimeValue.from_json({"time": "+1912-00-00T00:00:00Z", "precision": 9,
                                     "calendarmodel": "http://www.wikidata.org/entity/Q1985727"})
    rdf_form = TimeValue.from_rdf("1912-01-01T00:00:00Z", precision=9,
                                  calendar="http://www.wikidata.org/entity/Q1985727")
    assert json_form == rdf_form


def test_month_precision_drops_the_day() -> None:
    assert TimeValue.from_rdf("1952-03-01T00:00:00Z", precision=10).time == "+1952-03-00T00:00:00Z"


def test_julian_day_precision_round_trips_through_rdf() -> None:
    """RDF converts Julian day-precision dates to Gregorian; reading them back restores Julian."""
    assert julian_to_gregorian(1521, 8, 13) == (1521, 8, 23)
    t = TimeValue.from_rdf("1521-08-23T00:00:00Z", precision=11, calendar=JULIAN)
    assert (t.year, t.month, t.day, t.calendar) == (1521, 8, 13, JULIAN)


def test_julian_year_precision_is_not_converted() -> None:
    t = TimeValue.from_rdf("1400-01-01T00:00:00Z", precision=9, calendar=JULIAN)
    assert t.year == 1400


@settings(max_examples=200, deadline=None)
@given(st.integers(-4000, 4000), st.integers(1, 12), st.integers(1, 28))
def test_gregorian_julian_conversions_are_inverse(year: int, month: int, day: int) -> None:
    assert julian_to_gregorian(*gregorian_to_julian(year, month, day)) == (year, month, day)


def test_year_zero_is_refused_in_json_form() -> None:
    with pytest.raises(InvalidInput, match="year 0"):
        TimeValue.make(0, precision=9)


def test_astronomical_year() -> None:
    assert TimeValue.make(-44, precision=9).astronomical_year == -43
    assert TimeValue.make(2001, 12, 31, precision=11).astronomical_year == 2001


def test_quantity_unit_one_and_q199_are_the_same() -> None:
    a = QuantityValue.from_json({"amount": "+5", "unit": "1"})
    b = QuantityValue.from_rdf("5", unit="http://www.wikidata.org/entity/Q199")
    assert a == b and a.unit == "1"


def test_quantity_keeps_exact_amount_and_bounds() -> None:
    q = QuantityValue.from_json({"amount": "+10.38", "upperBound": "+10.385", "lowerBound": "+10.375",
                                 "unit": "http://www.wikidata.org/entity/Q712226"})
    assert (q.amount, q.upper, q.lower, q.unit) == ("+10.38", "+10.385", "+10.375", "Q712226")


def test_bad_quantity_is_refused() -> None:
    with pytest.raises(InvalidInput, match="not a decimal"):
        QuantityValue.from_rdf("ten")


@pytest.mark.parametrize("value", [
    TimeValue.make(-44, 3, 15, precision=11, calendar=JULIAN),
    TimeValue.make(1952, 3, 11, precision=11, calendar=GREGORIAN),
    QuantityValue(amount="+1.86", unit="Q11573", upper="+1.87", lower="+1.85"),
    EntityValue(id="Q5"),
    EntityValue(id="P31"),
    StringValue(text="0000 0001 2144 0421"),
    MonolingualValue(text="Douglas Adams", language="en"),
    CoordinateValue(latitude=49.01, longitude=8.4, precision=0.01, globe="Q2"),
])
def test_store_columns_round_trip(value: object) -> None:
    row = dict(zip(VALUE_COLUMNS, value_columns(value)))  # type: ignore[arg-type]
    assert value_from_columns(row) == value


def test_value_from_json_entity_without_id_uses_numeric_id() -> None:
    v = value_from_json({"type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 42}})
    assert v == EntityValue(id="Q42")


def test_unknown_datavalue_type_is_refused() -> None:
    with pytest.raises(InvalidInput, match="unknown datavalue type"):
        value_from_json({"type": "nonsense", "value": 1})
