"""The unit table: coverage of reference §3.3, pint agreement, pitfalls, exact round trips."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pint
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.errors import IncompatibleUnits, InvalidInput, UnknownUnit
from chaingraph.resources import data_file
from chaingraph.units import UnitTable, convert, unit_id, unit_table

#: the 77 unit items of reference/wikidata.md §3.3, in its order
REFERENCE_UNITS = tuple(re.findall(r"Q\d+", (
    "Q199 Q11229 Q11573 Q828224 Q174728 Q174789 Q175821 Q178674 Q218593 Q3710 Q482798 Q253276 Q93318 "
    "Q531 Q1811 Q12129 Q25343 Q712226 Q35852 Q81292 Q232291 Q857027 Q25517 Q11582 Q2332346 Q4243638 "
    "Q23925413 Q89187604 Q11570 Q41803 Q3241121 Q191118 Q100995 Q48013 Q261247 Q11574 Q723733 Q7727 "
    "Q25235 Q573 Q23387 Q577 Q1092296 Q182429 Q180154 Q211256 Q128822 Q11579 Q25267 Q42289 Q25269 "
    "Q4989854 Q14786969 Q182098 Q2051195 Q26708069 Q83327 Q25236 Q3320608 Q6982035 Q160857 Q44395 "
    "Q5139563 Q21064807 Q103510 Q177974 Q39369 Q732707 Q3276763 Q25250 Q25272 Q28390 Q8799 Q8805 "
    "Q79726 Q79735 Q79738")))
#: the currencies of the same section (Q-id, ISO 4217)
REFERENCE_CURRENCIES = {
    "Q4917": "USD", "Q4916": "EUR", "Q25224": "GBP", "Q8146": "JPY", "Q39099": "CNY", "Q80524": "INR",
    "Q41044": "RUB", "Q25344": "CHF", "Q1104069": "CAD", "Q259502": "AUD", "Q173117": "BRL",
    "Q202040": "KRW", "Q4730": "MXN", "Q122922": "SEK", "Q132643": "NOK", "Q123213": "PLN",
    "Q172872": "TRY", "Q181907": "ZAR", "Q190951": "SGD", "Q1472704": "NZD", "Q199857": "SAR",
    "Q200294": "AED", "Q131309": "ILS", "Q199462": "EGP", "Q203567": "NGN", "Q41588": "IDR",
    "Q177882": "THB", "Q208526": "TWD", "Q188289": "PKR", "Q199578": "ARS", "Q25417": "DKK",
    "Q31015": "HKD"}


@pytest.fixture(scope="module")
def table() -> UnitTable:
    return unit_table()


_REGISTRY = pint.UnitRegistry(non_int_type=Fraction)
_REGISTRY.load_definitions(str(data_file("units_pint.txt")))


@pytest.fixture(scope="module")
def ureg() -> pint.UnitRegistry:
    return _REGISTRY


def test_table_covers_the_reference_units_and_currencies(table: UnitTable) -> None:
    assert len(REFERENCE_UNITS) == 77
    assert set(REFERENCE_UNITS) <= {u.qid for u in table}
    for qid, iso in REFERENCE_CURRENCIES.items():
        assert table[qid].kind == "currency"
        assert table[qid].pint == f"currency_{iso}"


def test_header_documents_every_column() -> None:
    text = data_file("units.tsv").read_text(encoding="utf-8")
    header = [ln for ln in text.splitlines() if ln.startswith("#")]
    columns = next(ln for ln in text.splitlines() if not ln.startswith("#")).split("\t")
    for col in columns:
        assert any(re.match(rf"#\s+{col}\s", ln) for ln in header), col


def test_no_wikidata_symbol_is_fed_to_pint(table: UnitTable) -> None:
    symbols = {"t", "kt", "Mt", "ton", "acre", "a", "m", "km", "ft", "mi", "h", "d", "s", "g", "kg", "L",
               "ml", "B", "kB", "MB", "GB", "°C", "°F", "degC", "degF", "parsec", "year", "bit", "byte"}
    for unit in table:
        tokens = set(re.findall(r"[A-Za-z_°]+", unit.pint))
        assert not tokens & symbols, (unit.qid, unit.pint)


@pytest.mark.parametrize("qid, factor, dimension", [
    ("Q191118", Fraction(1000), "[mass]"),                    # tonne, not pint's short ton
    ("Q81292", Fraction("4046.8564224"), "[length]^2"),        # international acre, not US survey
    ("Q3710", Fraction("0.3048"), "[length]"),
    ("Q23925413", Fraction("0.003785411784"), "[length]^3"),
    ("Q128822", Fraction(1852, 3600), "[length] [time]^-1"),   # knot (pint's kt) is a speed
    ("Q577", Fraction(1), "[calendar_time]"),                  # years are not seconds
    ("Q5151", Fraction(1, 12), "[calendar_time]"),
    ("Q8799", Fraction(8), "[information]"),                   # bytes do not add to counts
    ("Q11229", Fraction(1, 100), "dimensionless"),
    ("Q712226", Fraction(10**6), "[length]^2"),
])
def test_pitfall_rows(table: UnitTable, qid: str, factor: Fraction, dimension: str) -> None:
    assert (table[qid].factor, table[qid].dimension) == (factor, dimension)


def test_currencies_and_calendar_years_never_convert(table: UnitTable) -> None:
    with pytest.raises(IncompatibleUnits, match="currencies are never converted"):
        convert(Fraction(1), table["Q4917"], table["Q4916"])
    with pytest.raises(IncompatibleUnits):
        convert(Fraction(1), table["Q577"], table["Q573"])  # a year in days is ambiguous
    assert convert(Fraction(3), table["Q577"], table["Q5151"]) == 36
    assert not table["Q8799"].compatible(table["Q199"])


def test_offset_temperatures_convert_exactly(table: UnitTable) -> None:
    c, f, k = table["Q25267"], table["Q42289"], table["Q11579"]
    assert convert(Fraction(100), c, f) == 212
    assert convert(Fraction(-40), f, c) == -40
    assert convert(Fraction(0), c, k) == Fraction("273.15")
    assert c.is_offset and not k.is_offset


def test_unit_ids_and_unknown_units(table: UnitTable) -> None:
    assert unit_id("http://www.wikidata.org/entity/Q199") == unit_id("1") == "Q199"
    assert table.unit("1") is table["Q199"]
    assert "Q712226" in table and "Q105839488" not in table
    with pytest.raises(UnknownUnit, match="Q105839488"):
        table.unit("Q105839488")


def test_every_row_agrees_with_pint(table: UnitTable, ureg: pint.UnitRegistry) -> None:
    """The load already checks this; here independently, including dimensionality."""
    for unit in table:
        if unit.kind == "currency":
            continue
        q = ureg.Quantity(Fraction(7, 3), unit.pint).to_base_units()
        assert isinstance(q.magnitude, Fraction)
        assert q.magnitude == unit.to_base(Fraction(7, 3)), unit.qid
        # the dimension column ("[length]^2", "[length] [time]^-1", "dimensionless") is pint's
        stated = {} if unit.dimension == "dimensionless" else {
            name: int(power or 1) for name, _, power in (t.partition("^") for t in unit.dimension.split())}
        assert {k: int(v) for k, v in dict(q.dimensionality).items()} == stated, unit.qid


def _write(tmp: Path, row: str) -> Path:
    path = tmp / "units.tsv"
    header = "qid\tlabel\tpint\tfactor\toffset\tkind\twikibase_factor\tnote"
    path.write_text(f"# test table\n{header}\n{row}\n", encoding="utf-8")
    return path


def test_a_row_that_disagrees_with_pint_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="pint gives 45359237/100000000"):
        UnitTable.load(_write(tmp_path, "Q100995\tpound\tpound\t0.5\t0\tunit\t\t"))
    with pytest.raises(InvalidInput, match="kind 'weird'"):
        UnitTable.load(_write(tmp_path, "Q1\tx\tmeter\t1\t0\tweird\t\t"))
    with pytest.raises(InvalidInput, match="pint cannot use"):
        UnitTable.load(_write(tmp_path, "Q1\tx\tno_such_unit_name\t1\t0\tunit\t\t"))
    table = UnitTable.load(_write(tmp_path, "Q11573\tmetre\tmeter\t1\t0\tunit\t1\t"))
    assert len(table) == 1


exact = st.fractions(min_value=-10**12, max_value=10**12, max_denominator=10**6)


@settings(max_examples=60, deadline=None)
@given(x=exact, data=st.data())
def test_conversion_round_trips_exactly_and_matches_pint(x: Fraction, data: st.DataObject) -> None:
    table = unit_table()
    units = [u for u in table if u.kind != "currency"]
    a = data.draw(st.sampled_from(units))
    b = data.draw(st.sampled_from([u for u in units if u.compatible(a)]))
    there = convert(x, a, b)
    assert isinstance(there, Fraction)
    assert convert(there, b, a) == x
    assert _REGISTRY.Quantity(x, a.pint).to(b.pint).magnitude == there
