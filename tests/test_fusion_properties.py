"""Invariants of the fusion calculator, checked with hypothesis."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from types import FrameType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.fusion import Component, FusionRefusal, FusionResult, fuse
from chaingraph.fusion.inputs import finite_decimal
from chaingraph.units import unit_table
from chaingraph.values import GREGORIAN, JULIAN, QuantityValue, TimeValue

SETTINGS = settings(max_examples=40, deadline=None)

#: decimal amounts as Wikidata writes them: sign, digits, optional fraction
decimals = st.builds(lambda n, places: Fraction(n, 10**places),
                     st.integers(min_value=-10**9, max_value=10**9), st.integers(min_value=0, max_value=6))
LENGTHS = ["Q11573", "Q828224", "Q174728", "Q3710", "Q218593", "Q253276", "Q93318"]


def text(x: Fraction) -> str:
    out = finite_decimal(x)
    assert out is not None
    return out


def quantity(x: Fraction, unit: str = "1", width: Fraction | None = None) -> QuantityValue:
    if width is None:
        return QuantityValue(amount=text(x), unit=unit)
    return QuantityValue(amount=text(x), unit=unit, lower=text(x - width), upper=text(x + width))


def components(values: list[QuantityValue]) -> list[Component]:
    return [Component(id=f"c{i}", entity=f"Q{100 + i}", value=v) for i, v in enumerate(values)]


def base(value: QuantityValue) -> Fraction:
    return unit_table().unit(value.unit).to_base(Fraction(value.amount))


@contextmanager
def no_float_on_the_path() -> Iterator[list[str]]:
    """Trace every line run in chaingraph.fusion / chaingraph.units and record any float
    held in a local variable (arguments, intermediates, results)."""
    seen: list[str] = []

    def local_tracer(frame: FrameType, event: str, arg: Any) -> Any:
        if event in ("line", "return"):
            for name, value in frame.f_locals.items():
                if type(value) is float:
                    seen.append(f"{frame.f_code.co_filename}:{frame.f_lineno} {name}={value!r}")
            if event == "return" and type(arg) is float:
                seen.append(f"{frame.f_code.co_filename}: returned {arg!r}")
        return local_tracer

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        filename = frame.f_code.co_filename.replace("\\", "/")
        if "/chaingraph/fusion/" in filename or filename.endswith("/chaingraph/units.py"):
            return local_tracer
        return None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        yield seen
    finally:
        sys.settrace(old)


def _walk_floats(obj: Any) -> list[Any]:
    if type(obj) is float:
        return [obj]
    if isinstance(obj, dict):
        return [f for v in obj.values() for f in _walk_floats(v)]
    if isinstance(obj, (list, tuple)):
        return [f for v in obj for f in _walk_floats(v)]
    return []


@settings(max_examples=15, deadline=None)
@given(xs=st.lists(decimals, min_size=2, max_size=5), units=st.lists(st.sampled_from(LENGTHS), min_size=5,
                                                                       max_size=5),
       op=st.sampled_from(["add", "average", "max", "min", "select_max"]))
def test_no_float_anywhere_on_the_path(xs: list[Fraction], units: list[str], op: str) -> None:
    values = [quantity(x, u) for x, u in zip(xs, units)]
    unit_table()  # loaded outside the trace (pint builds its registry with floats of its own)
    with no_float_on_the_path() as seen:
        outcome = fuse(components(values), op)
    assert seen == []
    assert _walk_floats(outcome.model_dump()) == []
    if isinstance(outcome, FusionResult) and outcome.exact is not None:
        assert isinstance(outcome.fraction(), Fraction)


@settings(max_examples=10, deadline=None)
@given(ys=st.lists(st.integers(min_value=-3000, max_value=2500).filter(bool), min_size=2, max_size=2),
       op=st.sampled_from(["year_difference", "day_difference", "select_earliest", "max"]),
       julian=st.booleans())
def test_no_float_on_the_date_path(ys: list[int], op: str, julian: bool) -> None:
    calendar = JULIAN if julian else GREGORIAN
    dates = [TimeValue.make(y, 3, 1, precision=11, calendar=calendar) for y in ys]
    with no_float_on_the_path() as seen:
        outcome = fuse(dates, op)
    assert seen == []
    assert _walk_floats(outcome.model_dump()) == []


@SETTINGS
@given(xs=st.lists(decimals, min_size=1, max_size=6), units=st.lists(st.sampled_from(LENGTHS), min_size=6,
                                                                       max_size=6), data=st.data())
def test_addition_is_exact_and_commutative(xs: list[Fraction], units: list[str], data: st.DataObject) -> None:
    values = [quantity(x, u) for x, u in zip(xs, units)]
    r = fuse(components(values), "add")
    assert isinstance(r, FusionResult)
    expected = sum((base(v) for v in values), Fraction(0))
    assert unit_table().unit(r.unit).to_base(r.fraction()) == expected
    shuffled = data.draw(st.permutations(values))
    again = fuse(components(list(shuffled)), "add")
    assert isinstance(again, FusionResult)
    assert (again.fraction(), again.unit) == (r.fraction(), r.unit)


@SETTINGS
@given(a=decimals, b=decimals, ua=st.sampled_from(LENGTHS), ub=st.sampled_from(LENGTHS))
def test_subtraction_is_ordered_by_the_minuend(a: Fraction, b: Fraction, ua: str, ub: str) -> None:
    comps = components([quantity(a, ua), quantity(b, ub)])
    ab = fuse(comps, "subtract", minuend="c0", unit="Q11573")
    ba = fuse(comps, "subtract", minuend="c1", unit="Q11573")
    assert isinstance(ab, FusionResult) and isinstance(ba, FusionResult)
    assert ab.fraction() == base(quantity(a, ua)) - base(quantity(b, ub)) == -ba.fraction()


@SETTINGS
@given(xs=st.lists(decimals, min_size=1, max_size=6))
def test_average_is_the_exact_rational_mean(xs: list[Fraction]) -> None:
    r = fuse([quantity(x) for x in xs], "average")
    assert isinstance(r, FusionResult)
    assert r.fraction() == sum(xs, Fraction(0)) / len(xs)


@SETTINGS
@given(x=decimals, a=st.sampled_from(LENGTHS), b=st.sampled_from(LENGTHS))
def test_unit_round_trip_through_fuse(x: Fraction, a: str, b: str) -> None:
    there = fuse([quantity(x, a)], "multiply", factor="1", unit=b)
    assert isinstance(there, FusionResult) and there.unit == b
    table = unit_table()
    assert table.unit(a).from_base(table.unit(b).to_base(there.fraction())) == x
    if isinstance(there.value, QuantityValue):  # a finite decimal: feed it back in
        back = fuse([there.value], "multiply", factor="1", unit=a)
        assert isinstance(back, FusionResult) and back.fraction() == x


widths = st.one_of(st.none(), st.builds(lambda n: Fraction(n, 10), st.integers(min_value=0, max_value=50)))


@SETTINGS
@given(xs=st.lists(st.tuples(st.integers(min_value=-30, max_value=30), widths), min_size=2, max_size=6),
       op=st.sampled_from(["max", "min", "select_max", "select_min"]), data=st.data())
def test_ordering_refuses_exactly_when_ranges_overlap_and_ignores_order(
        xs: list[tuple[int, Fraction | None]], op: str, data: st.DataObject) -> None:
    values = [quantity(Fraction(x), "1", w) for x, w in xs]
    comps = components(values)
    spans = [(Fraction(v.lower or v.amount), Fraction(v.upper or v.amount)) for v in values]
    largest = op.endswith("max")
    certain = [i for i, (lo, hi) in enumerate(spans)
               if all((lo > ohi) if largest else (hi < olo) for j, (olo, ohi) in enumerate(spans) if j != i)]
    r = fuse(comps, op)
    if certain:
        assert isinstance(r, FusionResult) and r.selected == f"c{certain[0]}"
    else:
        assert isinstance(r, FusionRefusal) and r.reason == "undefined_ordering"
    shuffled = fuse(list(data.draw(st.permutations(comps))), op)
    assert type(shuffled) is type(r)
    if isinstance(r, FusionResult):
        assert isinstance(shuffled, FusionResult)
        assert (shuffled.selected, shuffled.value) == (r.selected, r.value)


years = st.integers(min_value=-5000, max_value=3000).filter(lambda y: y != 0)


@SETTINGS
@given(a=years, b=years)
def test_year_difference_has_no_year_zero_and_json_equals_rdf(a: int, b: int) -> None:
    def astronomical(y: int) -> int:
        return y + 1 if y < 0 else y

    json_forms = [{"type": "time", "value": {"time": f"{'-' if y < 0 else '+'}{abs(y):04d}-00-00T00:00:00Z",
                                             "precision": 9}} for y in (a, b)]
    rdf_forms = [{"rdf": "time", "time": f"{'-' if astronomical(y) < 0 else ''}{abs(astronomical(y)):04d}"
                  "-01-01T00:00:00Z", "precision": 9} for y in (a, b)]
    results = []
    for forms in (json_forms, rdf_forms):
        r = fuse([{"id": "a", "value": forms[0]}, {"id": "b", "value": forms[1]}], "year_difference",
                 minuend="a")
        assert isinstance(r, FusionResult)
        results.append(r.fraction())
    assert results[0] == results[1] == astronomical(a) - astronomical(b)


def _gregorian_from_jdn(jdn: int) -> tuple[int, int, int]:
    """Astronomical-year Gregorian date of a Julian Day Number (Fliegel & Van Flandern)."""
    ell = jdn + 68569
    n = 4 * ell // 146097
    ell -= (146097 * n + 3) // 4
    i = 4000 * (ell + 1) // 1461001
    ell = ell - 1461 * i // 4 + 31
    j = 80 * ell // 2447
    day = ell - 2447 * j // 80
    ell = j // 11
    return 100 * (n - 49) + i + ell, j + 2 - 12 * ell, day


def _historical(astronomical: int) -> int:
    return astronomical - 1 if astronomical <= 0 else astronomical


@SETTINGS
@given(y=st.integers(min_value=-3000, max_value=3000).filter(lambda y: y != 0),
       m=st.integers(min_value=1, max_value=12), d=st.integers(min_value=1, max_value=28),
       shift=st.integers(min_value=-800, max_value=800))
def test_dates_order_the_same_in_either_calendar(y: int, m: int, d: int, shift: int) -> None:
    """A Julian date and a Gregorian date ``shift`` days later: the day difference is
    ``shift`` and the later one is selected (a tie when ``shift`` is 0)."""
    from chaingraph.fusion.inputs import date_interval

    jul = TimeValue.make(y, m, d, precision=11, calendar=JULIAN)
    gy, gm, gd = _gregorian_from_jdn(date_interval(jul)[0] + shift)
    greg = TimeValue.make(_historical(gy), gm, gd, precision=11, calendar=GREGORIAN)
    diff = fuse([{"id": "g", "value": greg}, {"id": "j", "value": jul}], "day_difference", minuend="g")
    assert isinstance(diff, FusionResult) and diff.fraction() == shift
    latest = fuse([{"id": "g", "value": greg}, {"id": "j", "value": jul}], "select_latest")
    if shift == 0:
        assert isinstance(latest, FusionRefusal) and latest.reason == "undefined_ordering"
    else:
        assert isinstance(latest, FusionResult) and latest.selected == ("g" if shift > 0 else "j")


def test_the_float_tracer_sees_floats() -> None:
    """The no-float check above is only worth something if it can fail."""
    source = "def halve(n):\n    half = n / 2\n    return half\n"
    code = compile(source, "/x/chaingraph/fusion/probe.py", "exec")
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    with no_float_on_the_path() as seen:
        namespace["halve"](Fraction(1))
    assert seen == []
    with no_float_on_the_path() as seen:
        namespace["halve"](1)
    assert seen and "half=0.5" in seen[0]


@SETTINGS
@given(xs=st.lists(st.tuples(decimals, st.sampled_from([*LENGTHS, "Q199", "Q25267", "Q4917"]), widths),
                   min_size=1, max_size=5),
       op=st.sampled_from(["add", "average", "max", "min", "select_max", "multiply", "count"]))
def test_records_round_trip_through_json_unchanged(xs: list[tuple[Fraction, str, Fraction | None]],
                                                   op: str) -> None:
    """Records built without re-validation equal their validated JSON round trip."""
    values = [quantity(x, u, w) for x, u, w in xs]
    comps = components(values[:1] if op == "multiply" else values)
    r = fuse(comps, op, factor="2.5" if op == "multiply" else None)
    again = type(r).model_validate_json(r.model_dump_json())
    assert again == r
    assert again.model_dump() == r.model_dump()
