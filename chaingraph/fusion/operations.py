"""The operations of the fusion calculator, on normalised inputs, in exact arithmetic.

Every function takes normalised values (:class:`~chaingraph.fusion.inputs.Number`,
:class:`~chaingraph.fusion.inputs.Date`), appends human-readable
:class:`~chaingraph.fusion.records.Step` records to ``steps`` and returns an
:class:`Outcome`, or raises :class:`~chaingraph.fusion.inputs.Refused`. Magnitudes are
``fractions.Fraction`` throughout; a float never appears.

Ordering (max, min, selection) is *certain* ordering: the winner's whole interval (a
quantity's bounds, a date's span at its precision) must lie strictly beyond every other
interval; a tie or an overlap is refused as ``undefined_ordering``.

>>> round_exact(Fraction(10, 3), 2, "half_even"), round_exact(Fraction(-5, 2), 0, "half_up")
(Fraction(333, 100), Fraction(-3, 1))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Union

from chaingraph.fusion.inputs import Date, Number, Refused, exact_text, finite_decimal
from chaingraph.fusion.records import RationalValue, Step
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
    exact: Fraction | None = None
    unit: str | None = None
    selected: str | None = None
    lower: Fraction | None = None
    upper: Fraction | None = None


def quantity(amount: Fraction, unit: str, lower: Fraction | None = None,
             upper: Fraction | None = None) -> QuantityValue | RationalValue:
    """A typed value for an exact amount: a quantity when it has a finite decimal form."""
    wd_unit = "1" if unit == "Q199" else unit
    text = finite_decimal(amount)
    if text is None:
        return RationalValue(numerator=str(amount.numerator), denominator=str(amount.denominator),
                             unit=wd_unit)
    lo = None if lower is None else finite_decimal(lower)
    hi = None if upper is None else finite_decimal(upper)
    if lo is None or hi is None:
        lo = hi = None
    return QuantityValue(amount=text, unit=wd_unit, lower=lo, upper=hi)


def round_exact(value: Fraction, places: int, mode: str) -> Fraction:
    """Round to ``places`` decimals with integer arithmetic (modes as in :mod:`decimal`)."""
    scaled = value * 10**places
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
    return Fraction(q, 10**places)


# -- helpers ---------------------------------------------------------------------------
def _u(unit: Unit) -> str:
    """`` km²``-style suffix for step text; nothing for a plain number."""
    return "" if unit.qid == "Q199" else f" {unit.label}"


def _common_unit(nums: Sequence[Number], requested: Unit | None, op: str) -> Unit:
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
    # mixed units: the finest one (smallest factor; then the Q-id), so the choice does not
    # depend on component order and sums of finite decimals stay finite decimals
    return min(units.values(), key=lambda u: (u.factor, u.qid))


def _in(n: Number, unit: Unit, steps: list[Step], *,
        delta: bool = False) -> tuple[Fraction, Fraction, Fraction]:
    """Amount, lower, upper of ``n`` in ``unit`` (``delta``: an interval, offsets ignored)."""
    if n.unit.qid == unit.qid:
        return n.amount, n.lower, n.upper
    if delta:
        f = n.unit.factor / unit.factor
        out = (n.amount * f, n.lower * f, n.upper * f)
    else:
        out = (unit.from_base(n.unit.to_base(n.amount)), unit.from_base(n.unit.to_base(n.lower)),
               unit.from_base(n.unit.to_base(n.upper)))
    steps.append(Step(action="convert", detail=f"{n.resolved.component.id}: {exact_text(n.amount)} "
                      f"{n.unit.label} = {exact_text(out[0])}{_u(unit)}", value=exact_text(out[0])))
    return out


def _no_offsets(nums: Sequence[Number], op: str) -> None:
    for n in nums:
        if n.unit.is_offset:
            raise Refused("invalid_arithmetic",
                          f"{op}: {n.resolved.component.id!r} is an absolute temperature in {n.unit.label}, "
                          "an offset unit; it cannot be added or scaled (subtract, compare or average it)",
                          n.resolved.component.id)


def _bounded(nums: Sequence[Number]) -> bool:
    return any(n.bounded for n in nums)


def _numeric(total: Fraction, lo: Fraction, hi: Fraction, unit: Unit, bounded: bool) -> Outcome:
    lower, upper = (lo, hi) if bounded else (None, None)
    return Outcome(quantity(total, unit.qid, lower, upper), total, unit.qid, lower=lower, upper=upper)


# -- arithmetic ---------------------------------------------------------------------------
def add(nums: Sequence[Number], requested: Unit | None, steps: list[Step]) -> Outcome:
    if not nums:
        raise Refused("invalid_arithmetic", "add: the sum of nothing has no unit; give a component")
    _no_offsets(nums, "add")
    unit = _common_unit(nums, requested, "add")
    parts = [_in(n, unit, steps) for n in nums]
    total = sum((p[0] for p in parts), Fraction(0))
    lo, hi = sum((p[1] for p in parts), Fraction(0)), sum((p[2] for p in parts), Fraction(0))
    steps.append(Step(action="add", detail=" + ".join(exact_text(p[0]) for p in parts)
                      + f" = {exact_text(total)}{_u(unit)}", value=exact_text(total)))
    return _numeric(total, lo, hi, unit, _bounded(nums))


def subtract(minuend: Number, subtrahend: Number, requested: Unit | None, table: UnitTable,
             steps: list[Step]) -> Outcome:
    """``minuend - subtrahend``; bounds by interval arithmetic. Temperatures give an interval."""
    _common_unit([minuend, subtrahend], None, "subtract")
    if minuend.unit.is_offset or subtrahend.unit.is_offset:
        kelvin = table.unit(KELVIN)
        a = tuple(minuend.unit.to_base(x) for x in (minuend.amount, minuend.lower, minuend.upper))
        b = tuple(subtrahend.unit.to_base(x) for x in (subtrahend.amount, subtrahend.lower, subtrahend.upper))
        target = requested or (minuend.unit if minuend.unit.qid == subtrahend.unit.qid else kelvin)
        f = kelvin.factor / target.factor
        diff, lo, hi = (a[0] - b[0]) * f, (a[1] - b[2]) * f, (a[2] - b[1]) * f
        steps.append(Step(action="subtract", detail=f"temperatures in kelvin: {exact_text(a[0])} - "
                          f"{exact_text(b[0])}; the difference is an interval in {target.label}",
                          value=exact_text(diff)))
        return _numeric(diff, lo, hi, target, _bounded([minuend, subtrahend]))
    unit = _common_unit([minuend, subtrahend], requested, "subtract")
    a, b = _in(minuend, unit, steps), _in(subtrahend, unit, steps)
    diff = a[0] - b[0]
    steps.append(Step(action="subtract", detail=f"{minuend.resolved.component.id} - "
                      f"{subtrahend.resolved.component.id}: {exact_text(a[0])} - {exact_text(b[0])} = "
                      f"{exact_text(diff)}{_u(unit)}", value=exact_text(diff)))
    return _numeric(diff, a[1] - b[2], a[2] - b[1], unit, _bounded([minuend, subtrahend]))


def multiply(num: Number, factor: Fraction, requested: Unit | None, steps: list[Step]) -> Outcome:
    _no_offsets([num], "multiply")
    unit = _common_unit([num], requested, "multiply")
    a, lo, hi = _in(num, unit, steps)
    total = a * factor
    lo, hi = sorted((lo * factor, hi * factor))
    steps.append(Step(action="multiply", detail=f"{exact_text(a)} × {exact_text(factor)} = "
                      f"{exact_text(total)}{_u(unit)}", value=exact_text(total)))
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
                      f"[{exact_text(divisor.lower)}, {exact_text(divisor.upper)}] includes zero", b)
    one = table.unit("Q199")
    if dividend.unit.compatible(divisor.unit):
        num = [dividend.unit.to_base(x) for x in (dividend.amount, dividend.lower, dividend.upper)]
        target = one
    elif divisor.unit.compatible(one):
        num = [dividend.amount, dividend.lower, dividend.upper]
        target = dividend.unit
    else:
        raise Refused("unsupported_operation",
                      f"divide: {dividend.unit.label} per {divisor.unit.label} has no Wikidata unit item; "
                      "divide like quantities, or by a plain number")
    den = [divisor.unit.to_base(x) for x in (divisor.amount, divisor.lower, divisor.upper)]
    ratio = num[0] / den[0]
    corners = [x / y for x in num[1:] for y in den[1:]]
    lo, hi = min(corners), max(corners)
    if requested is not None and requested.qid != target.qid:
        if not requested.compatible(target):
            raise Refused("incompatible_dimensions", f"divide: the requested unit {requested.label} does not "
                          f"measure {target.dimension}")
        ratio, lo, hi = (requested.from_base(target.to_base(x)) for x in (ratio, lo, hi))
        target = requested
    steps.append(Step(action="divide", detail=f"{a} / {b}: {exact_text(num[0])} / {exact_text(den[0])} = "
                      f"{exact_text(ratio)}{_u(target)} (exact rational)", value=exact_text(ratio)))
    return _numeric(ratio, lo, hi, target, _bounded([dividend, divisor]))


def average(nums: Sequence[Number], requested: Unit | None, table: UnitTable, steps: list[Step]) -> Outcome:
    if not nums:
        raise Refused("invalid_arithmetic", "average: the average of nothing is undefined (0 components)")
    if requested is None and len({n.unit.qid for n in nums}) > 1 and any(n.unit.is_offset for n in nums):
        requested = table.unit(KELVIN)
    unit = _common_unit(nums, requested, "average")
    parts = [_in(n, unit, steps) for n in nums]
    n = len(parts)
    total = sum((p[0] for p in parts), Fraction(0))
    mean = total / n
    lo = sum((p[1] for p in parts), Fraction(0)) / n
    hi = sum((p[2] for p in parts), Fraction(0)) / n
    steps.append(Step(action="sum", detail=" + ".join(exact_text(p[0]) for p in parts)
                      + f" = {exact_text(total)}", value=exact_text(total)))
    steps.append(Step(action="divide", detail=f"{exact_text(total)} / {n} = {exact_text(mean)}{_u(unit)} "
                      "(exact rational)", value=exact_text(mean)))
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


def _span(x: Number | Date) -> tuple[Fraction, Fraction]:
    if isinstance(x, Date):
        return Fraction(x.lo), Fraction(x.hi)
    return x.unit.to_base(x.lower), x.unit.to_base(x.upper)


def _show(x: Number | Date, v: Fraction) -> str:
    return f"JDN {v}" if isinstance(x, Date) else exact_text(v)


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
                   Fraction(diff), YEAR)


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
                   Fraction(diff), DAY)
