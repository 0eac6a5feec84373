"""The operations of the fusion calculator, on normalised inputs, in exact arithmetic.

Every function takes normalised values (:class:`~chaingraph.fusion.inputs.Number`,
:class:`~chaingraph.fusion.inputs.Date`), appends human-readable
:class:`~chaingraph.fusion.records.Step` records to ``steps`` and returns an
:class:`Outcome`, or raises :class:`~chaingraph.fusion.inputs.Refused`. Magnitudes are
``Decimal`` or ``Fraction`` throughout (:mod:`chaingraph.fusion.exact`); a float never appears.

Ordering (max, min, selection) is *certain* ordering: the winner's whole interval (a
quantity's bounds, a date's span at its precision) must lie strictly beyond every other
interval; a tie or an overlap is refused as ``undefined_ordering``.

>>> round_exact(Fraction(10, 3), 2, "half_even"), round_exact(Fraction(-5, 2), 0, "half_up")
(Decimal('3.33'), Decimal('-3'))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Union

from chaingraph.fusion import exact as X
from chaingraph.fusion.inputs import Date, Number, Refused
from chaingraph.fusion.records import RationalValue, Step, trusted
from chaingraph.units import Unit, UnitTable
from chaingraph.values import (
    GREGORIAN,
    EntityValue,
    QuantityValue,
    StringValue,
    TimeValue,
    gregorian_to_julian,
    julian_to_gregorian,
)

__all__ = [
    "Outcome",
    "add",
    "average",
    "day_difference",
    "divide",
    "extreme",
    "multiply",
    "quantity",
    "round_exact",
    "subtract",
    "year_difference",
]

ResultValue = Union[QuantityValue, TimeValue, EntityValue, StringValue, RationalValue]
KELVIN = "Q11579"
YEAR = "Q577"
DAY = "Q573"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an operation produced: a typed value, its exact number if numeric, the unit."""

    value: ResultValue
    exact: X.Exact | None = None
    unit: str | None = None
    selected: str | None = None
    lower: X.Exact | None = None
    upper: X.Exact | None = None


def quantity(amount: X.Exact, unit: str, lower: X.Exact | None = None,
             upper: X.Exact | None = None) -> QuantityValue | RationalValue:
    """A typed value for an exact amount: a quantity when it has a finite decimal form."""
    wd_unit = "1" if unit == "Q199" else unit
    if type(amount) is Fraction:
        return RationalValue(numerator=str(amount.numerator),
                                             denominator=str(amount.denominator), unit=wd_unit)
    lo = hi = None
    if lower is not None and upper is not None and type(lower) is Decimal and type(upper) is Decimal:
        lo, hi = X.text(lower), X.text(upper)
    return QuantityValue(amount=X.text(amount), unit=wd_unit, lower=lo, upper=hi)


def round_exact(value: X.Exact, places: int, mode: str) -> X.Exact:
    """Round to ``places`` decimals with integer arithmetic (modes as in :mod:`decimal`)."""
    scaled = X.fraction(value) * 10**places
    q, r = divmod(scaled.numerator, scaled.denominator)  # floor division
    d = scaled.denominator
    if r:
        positive = scaled > 0
        if mode == "ceiling" or (mode == "up" and positive) or (mode == "down" and not positive):
            q += 1
        elif mode in ("half_even", "half_up", "half_down"):
            twice = 2 * r
            if twice > d:
                q += 1
            elif twice == d:
                q += {"half_even": q % 2, "half_up": int(positive), "half_down": int(not positive)}[mode]
    return X.exact(Fraction(q, 10**places))


# -- helpers ---------------------------------------------------------------------------
def _u(unit: Unit) -> str:
    """`` km²``-style suffix for step text; nothing for a plain number."""
    return "" if unit.qid == "Q199" else f" {unit.label}"


def _common_unit(nums: Sequence[Number], requested: Unit | None, op: str,
                 table: UnitTable | None = None) -> Unit:
    """The unit a result is expressed in: the requested one; the components' own when they
    share one; else the coherent base unit of the dimension (metre, square metre, kelvin,
    year, ...), so the choice does not depend on component order and finite decimals stay
    finite; the finest input unit where the table has no base unit."""
    first = nums[0]
    for n in nums[1:]:
        if not n.unit.compatible(first.unit):
            why = ("currencies are never converted into each other"
                   if "currency" in (n.unit.kind, first.unit.kind) else
                   f"{first.unit.dimension} vs {n.unit.dimension}")
            raise Refused("incompatible_dimensions",
                          f"{op}: {first.resolved.component.id!r} is in {first.unit.label} "
                          f"({first.unit.qid}) but {n.resolved.component.id!r} is in {n.unit.label} "
                          f"({n.unit.qid}): {why}",
                          n.resolved.component.id)
    if requested is not None:
        if not requested.compatible(first.unit):
            raise Refused("incompatible_dimensions",
                          f"{op}: the requested result unit {requested.label} ({requested.qid}) does not "
                          f"measure {first.unit.dimension}")
        return requested
    units = {n.unit.qid: n.unit for n in nums}
    if len(units) == 1:
        return first.unit
    base = table.base_unit(first.unit.dimension) if table is not None else None
    return base or min(units.values(), key=lambda u: (u.factor, u.qid))


def _in(n: Number, unit: Unit, steps: list[Step]) -> tuple[X.Exact, X.Exact, X.Exact]:
    """Amount, lower, upper of ``n`` in ``unit``."""
    if n.unit.qid == unit.qid:
        return n.amount, n.lower, n.upper
    amount = X.convert(n.amount, n.unit, unit)
    if n.bounded:
        out = (amount, X.convert(n.lower, n.unit, unit), X.convert(n.upper, n.unit, unit))
    else:
        out = (amount, amount, amount)
    shown = X.text(amount)
    steps.append(_step("convert", f"{n.resolved.component.id}: {X.text(n.amount)} {n.unit.label} = "
                       f"{shown}{_u(unit)}", shown))
    return out


def _step(action: str, detail: str, value: str | None = None) -> Step:
    return trusted(Step, action=action, detail=detail, value=value)


def _sum(xs: Iterable[X.Exact]) -> X.Exact:
    total: X.Exact = Decimal(0)
    for x in xs:
        total = X.add(total, x)
    return total


def _no_offsets(nums: Sequence[Number], op: str) -> None:
    for n in nums:
        if n.unit.is_offset:
            raise Refused("invalid_arithmetic",
                          f"{op}: {n.resolved.component.id!r} is an absolute temperature in {n.unit.label}, "
                          "an offset unit; it cannot be added or scaled (subtract, compare or average it)",
                          n.resolved.component.id)


def _bounded(nums: Sequence[Number]) -> bool:
    return any(n.bounded for n in nums)


def _numeric(total: X.Exact, lo: X.Exact, hi: X.Exact, unit: Unit, bounded: bool) -> Outcome:
    lower, upper = (lo, hi) if bounded else (None, None)
    return Outcome(quantity(total, unit.qid, lower, upper), total, unit.qid, lower=lower, upper=upper)


# -- arithmetic ---------------------------------------------------------------------------
def add(nums: Sequence[Number], requested: Unit | None, table: UnitTable, steps: list[Step]) -> Outcome:
    if not nums:
        raise Refused("invalid_arithmetic", "add: the sum of nothing has no unit; give a component")
    _no_offsets(nums, "add")
    unit = _common_unit(nums, requested, "add", table)
    parts = [_in(n, unit, steps) for n in nums]
    total = _sum(p[0] for p in parts)
    lo, hi = (_sum(p[1] for p in parts), _sum(p[2] for p in parts)) if _bounded(nums) else (total, total)
    shown = X.text(total)
    steps.append(_step("add", " + ".join(X.text(p[0]) for p in parts) + f" = {shown}{_u(unit)}", shown))
    return _numeric(total, lo, hi, unit, _bounded(nums))


def subtract(minuend: Number, subtrahend: Number, requested: Unit | None, table: UnitTable,
             steps: list[Step]) -> Outcome:
    """``minuend - subtrahend``; bounds by interval arithmetic. Temperatures give an interval."""
    unit = _common_unit([minuend, subtrahend], requested, "subtract", table)  # checks requested too
    if minuend.unit.is_offset or subtrahend.unit.is_offset:
        kelvin = table.unit(KELVIN)
        ka = [X.to_base(minuend.unit, x) for x in (minuend.amount, minuend.lower, minuend.upper)]
        kb = [X.to_base(subtrahend.unit, x) for x in (subtrahend.amount, subtrahend.lower, subtrahend.upper)]
        target = requested or (minuend.unit if minuend.unit.qid == subtrahend.unit.qid else kelvin)
        f = X.div(X.exact(kelvin.factor), X.exact(target.factor))
        diff = X.mul(X.sub(ka[0], kb[0]), f)
        lo, hi = X.mul(X.sub(ka[1], kb[2]), f), X.mul(X.sub(ka[2], kb[1]), f)
        steps.append(_step("subtract", f"temperatures in kelvin: {X.text(ka[0])} - {X.text(kb[0])}; the "
                           f"difference is an interval in {target.label}", X.text(diff)))
        return _numeric(diff, lo, hi, target, _bounded([minuend, subtrahend]))
    a, b = _in(minuend, unit, steps), _in(subtrahend, unit, steps)
    diff = X.sub(a[0], b[0])
    steps.append(_step("subtract", f"{minuend.resolved.component.id} - {subtrahend.resolved.component.id}: "
                       f"{X.text(a[0])} - {X.text(b[0])} = {X.text(diff)}{_u(unit)}", X.text(diff)))
    return _numeric(diff, X.sub(a[1], b[2]), X.sub(a[2], b[1]), unit, _bounded([minuend, subtrahend]))


def multiply(num: Number, factor: X.Exact, requested: Unit | None, steps: list[Step]) -> Outcome:
    _no_offsets([num], "multiply")
    unit = _common_unit([num], requested, "multiply")
    a, lo, hi = _in(num, unit, steps)
    total = X.mul(a, factor)
    lo, hi = sorted((X.mul(lo, factor), X.mul(hi, factor)))
    steps.append(_step("multiply", f"{X.text(a)} × {X.text(factor)} = {X.text(total)}{_u(unit)}",
                       X.text(total)))
    return _numeric(total, lo, hi, unit, num.bounded)


def divide(dividend: Number, divisor: Number, requested: Unit | None, table: UnitTable,
           steps: list[Step]) -> Outcome:
    """``dividend / divisor``: a ratio of like quantities, or a quantity divided by a number."""
    _no_offsets([dividend, divisor], "divide")
    a, b = dividend.resolved.component.id, divisor.resolved.component.id
    if divisor.amount == 0:
        raise Refused("invalid_arithmetic", f"divide: division by zero ({b!r} is 0)", b)
    if divisor.lower <= 0 <= divisor.upper:
        raise Refused("invalid_arithmetic", f"divide: the uncertainty range of {b!r} "
                      f"[{X.text(divisor.lower)}, {X.text(divisor.upper)}] includes zero", b)
    one = table.unit("Q199")
    if dividend.unit.compatible(divisor.unit):
        num = [X.to_base(dividend.unit, x) for x in (dividend.amount, dividend.lower, dividend.upper)]
        target = one
    elif divisor.unit.compatible(one):
        num = [dividend.amount, dividend.lower, dividend.upper]
        target = dividend.unit
    else:
        raise Refused("unsupported_operation",
                      f"divide: {dividend.unit.label} per {divisor.unit.label} has no Wikidata unit item; "
                      "divide like quantities, or by a plain number")
    den = [X.to_base(divisor.unit, x) for x in (divisor.amount, divisor.lower, divisor.upper)]
    ratio = X.div(num[0], den[0])
    corners = [X.div(x, y) for x in num[1:] for y in den[1:]]
    lo, hi = min(corners), max(corners)
    if requested is not None and requested.qid != target.qid:
        if not requested.compatible(target):
            raise Refused("incompatible_dimensions", f"divide: the requested unit {requested.label} does not "
                          f"measure {target.dimension}")
        ratio, lo, hi = (X.convert(x, target, requested) for x in (ratio, lo, hi))
        target = requested
    steps.append(_step("divide", f"{a} / {b}: {X.text(num[0])} / {X.text(den[0])} = {X.text(ratio)}"
                       f"{_u(target)} (exact rational)", X.text(ratio)))
    return _numeric(ratio, lo, hi, target, _bounded([dividend, divisor]))


def average(nums: Sequence[Number], requested: Unit | None, table: UnitTable, steps: list[Step]) -> Outcome:
    if not nums:
        raise Refused("invalid_arithmetic", "average: the average of nothing is undefined (0 components)")
    if requested is None and len({n.unit.qid for n in nums}) > 1 and any(n.unit.is_offset for n in nums):
        requested = table.unit(KELVIN)
    unit = _common_unit(nums, requested, "average", table)
    parts = [_in(n, unit, steps) for n in nums]
    n = len(parts)
    total = _sum(p[0] for p in parts)
    mean = X.div(total, n)
    if _bounded(nums):
        lo, hi = X.div(_sum(p[1] for p in parts), n), X.div(_sum(p[2] for p in parts), n)
    else:
        lo = hi = mean
    steps.append(_step("sum", " + ".join(X.text(p[0]) for p in parts) + f" = {X.text(total)}", X.text(total)))
    steps.append(_step("divide", f"{X.text(total)} / {n} = {X.text(mean)}{_u(unit)} (exact rational)",
                       X.text(mean)))
    return _numeric(mean, lo, hi, unit, _bounded(nums))


# -- ordering ------------------------------------------------------------------------------
def extreme(items: Sequence[Number] | Sequence[Date], largest: bool, op: str,
            steps: list[Step]) -> Number | Date:
    """The item whose interval lies certainly above (``largest``) or below all others."""
    if not items:
        raise Refused("undefined_ordering", f"{op}: there is nothing to order (0 components)")
    spans = [(_span(x), x) for x in items]
    pick = (max(spans, key=lambda s: s[0][0]) if largest else min(spans, key=lambda s: s[0][1]))
    (lo, hi), best = pick
    for (olo, ohi), other in spans:
        if other is best:
            continue
        if (largest and not ohi < lo) or (not largest and not hi < olo):
            a, b = best.resolved.component.id, other.resolved.component.id
            how = "tie" if (lo, hi) == (olo, ohi) and lo == hi else "their intervals overlap"
            raise Refused("undefined_ordering",
                          f"{op}: cannot order {a!r} [{_show(best, lo)}, {_show(best, hi)}] and {b!r} "
                          f"[{_show(other, olo)}, {_show(other, ohi)}]: {how}", b)
    word = "largest" if largest else "smallest"
    steps.append(Step(action="order", detail=f"{best.resolved.component.id} is certainly the {word} of "
                      f"{len(items)} (its interval [{_show(best, lo)}, {_show(best, hi)}] lies beyond every "
                      "other)", value=best.resolved.component.id))
    return best


def _span(x: Number | Date) -> tuple[X.Exact | int, X.Exact | int]:
    if isinstance(x, Date):
        return x.lo, x.hi
    return X.to_base(x.unit, x.lower), X.to_base(x.unit, x.upper)


def _show(x: Number | Date, v: X.Exact | int) -> str:
    return f"JDN {v}" if isinstance(x, Date) else X.text(v)


# -- dates --------------------------------------------------------------------------------
def _year_of(d: Date, calendar: str) -> int:
    """Astronomical year of ``d`` read in ``calendar`` (converting a day-precision date)."""
    t = d.time
    if t.calendar == calendar or d.precision < 11:
        return t.astronomical_year
    a = t.astronomical_year
    y, _, _ = (julian_to_gregorian(a, t.month, t.day) if calendar == GREGORIAN
               else gregorian_to_julian(a, t.month, t.day))
    return y


def year_difference(a: Date, b: Date, signed: bool, convert: bool, steps: list[Step]) -> Outcome:
    """Difference of year numbers (astronomical, so 44 BCE to 14 CE is 57)."""
    for d in (a, b):
        if d.precision < 9:
            raise Refused("precision_too_coarse",
                          f"year_difference: {d.resolved.component.id!r} is {d.time.time} at precision "
                          f"{d.time.precision} (coarser than a year): it cannot give a year",
                          d.resolved.component.id)
    ca, cb = a.time.calendar, b.time.calendar
    calendar = ca
    if ca != cb:
        day = [d for d in (a, b) if d.precision >= 11]
        if day and not convert:
            raise Refused("invalid_arithmetic",
                          f"year_difference: {a.resolved.component.id!r} and {b.resolved.component.id!r} are "
                          "dated in different calendars at day precision and calendar conversion is off")
        # convert a day-precision date into the calendar of the other one (Gregorian if both are days)
        calendar = GREGORIAN if len(day) != 1 else (cb if day[0] is a else ca)
        steps.append(Step(action="calendar", detail=f"calendars differ ({ca} vs {cb}); years read in "
                          f"{calendar} (day-precision dates converted through the Julian Day Number)"))
    ya, yb = _year_of(a, calendar), _year_of(b, calendar)
    diff = ya - yb
    steps.append(Step(action="years", detail=f"astronomical years {a.resolved.component.id}={ya}, "
                      f"{b.resolved.component.id}={yb} (1 BCE is 0; there is no year 0 in BCE/CE "
                      "numbering)"))
    if not signed:
        diff = abs(diff)
    steps.append(Step(action="year_difference", detail=f"{ya} - {yb}" + ("" if signed else " (absolute)")
                      + f" = {diff} years", value=str(diff)))
    return Outcome(QuantityValue(amount=f"{'-' if diff < 0 else '+'}{abs(diff)}", unit=YEAR),
                   Decimal(diff), YEAR)


def day_difference(a: Date, b: Date, signed: bool, convert: bool, steps: list[Step]) -> Outcome:
    """Difference in days between two day-precision dates (calendars converted by JDN)."""
    for d in (a, b):
        if d.precision < 11:
            raise Refused("precision_too_coarse",
                          f"day_difference: {d.resolved.component.id!r} is {d.time.time} at precision "
                          f"{d.time.precision} (coarser than a day): it cannot give a day count",
                          d.resolved.component.id)
    if a.time.calendar != b.time.calendar:
        if not convert:
            raise Refused("invalid_arithmetic",
                          f"day_difference: {a.resolved.component.id!r} and {b.resolved.component.id!r} are "
                          "in different calendars and calendar conversion is off")
        steps.append(Step(action="calendar", detail="calendars differ; both dates placed on the Julian Day "
                          "Number axis, which converts exactly"))
    diff = a.lo - b.lo
    if not signed:
        diff = abs(diff)
    steps.append(Step(action="day_difference", detail=f"JDN {a.lo} - JDN {b.lo}" + ("" if signed else
                      " (absolute)") + f" = {diff} days", value=str(diff)))
    return Outcome(QuantityValue(amount=f"{'-' if diff < 0 else '+'}{abs(diff)}", unit=DAY),
                   Decimal(diff), DAY)
