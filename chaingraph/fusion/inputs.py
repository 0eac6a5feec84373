"""Normalising fusion inputs: one value per component, then exact numbers and date intervals.

A component's value comes either alone or as a statement set. A set is resolved only by
the rules the caller states (:class:`~chaingraph.fusion.spec.Rule`); deprecated
statements are always dropped first; anything left ambiguous is refused
(``multi_valued``), anything left empty too (``missing_value``).

Quantities become exact amounts (:mod:`chaingraph.fusion.exact`) with an interval (the bounds, in either
order, or the amount itself) and a unit row of the unit table. Dates become closed
intervals of Julian Day Numbers, so dates of any precision and of either calendar lie on
one axis and compare exactly:

>>> from chaingraph.values import TimeValue, JULIAN
>>> date_interval(TimeValue.make(1969, 7, 20, precision=11))
(2440423, 2440423)
>>> date_interval(TimeValue.make(1969, precision=9))
(2440223, 2440587)
>>> date_interval(TimeValue.make(2000, precision=7))   # 20th century: 1901-2000
(2415386, 2451910)
>>> date_interval(TimeValue.make(1582, 10, 5, precision=11, calendar=JULIAN))  # = Gregorian 10-15
(2299161, 2299161)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from chaingraph.errors import InvalidInput, UnknownEntity
from chaingraph.fusion import exact as X
from chaingraph.fusion.records import NormalisedInput, trusted
from chaingraph.fusion.spec import Component, Rule, StatementRef, WikidataStatement
from chaingraph.units import Unit, UnitTable
from chaingraph.values import (
    GREGORIAN,
    JULIAN,
    EntityValue,
    QuantityValue,
    StringValue,
    TimeValue,
    Value,
    julian_day_number,
)

__all__ = [
    "Candidate",
    "Date",
    "Number",
    "Refused",
    "Resolved",
    "apply_rule",
    "candidates",
    "date_interval",
    "effective_precision",
    "exact_text",
    "finite_decimal",
    "record",
    "resolve",
    "to_date",
    "to_number",
    "year_span",
]

PRECISION_NAMES = {0: "billion years", 1: "hundred million years", 2: "ten million years",
                   3: "million years", 4: "hundred thousand years", 5: "ten thousand years",
                   6: "millennium", 7: "century", 8: "decade", 9: "year", 10: "month", 11: "day"}


_ORDINAL = re.compile(r"[+-]?\d{1,30}")


class Refused(Exception):
    """Internal signal: the calculator refuses (becomes a :class:`FusionRefusal`)."""

    def __init__(self, reason: str, message: str, component: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.component = component


# -- exact numbers as text ------------------------------------------------------------
def finite_decimal(value: Fraction) -> str | None:
    """The exact signed decimal string of ``value``, or ``None`` if it has no finite one.

    >>> finite_decimal(Fraction(5, 2)), finite_decimal(Fraction(-1, 8)), finite_decimal(Fraction(1, 3))
    ('+2.5', '-0.125', None)
    """
    x = X.exact(value)
    return None if type(x) is Fraction else X.text(x)


def exact_text(value: X.Exact | int) -> str:
    """A finite decimal when there is one, else ``p/q``.

    >>> exact_text(Fraction(10, 3)), exact_text(Fraction(57)), exact_text(Decimal("2.50"))
    ('10/3', '+57', '+2.5')
    """
    return X.text(value)


# -- statement sets and rules -------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Candidate:
    """One statement of a component's statement set."""

    value: Value | None
    rank: str
    qualifiers: tuple[tuple[str, Value | None], ...]
    statement_id: str | None


@dataclass(frozen=True, slots=True)
class Resolved:
    """A component with the single value the calculator will use."""

    component: Component
    value: Value
    statement_id: str | None
    rank: str | None
    resolution: str


def _canonical(v: Any, store: Any, where: str) -> Value | None:
    if v is None:
        return None
    if isinstance(v, StatementRef):
        return _stored(v.statement, store, where).value
    return v  # type: ignore[no-any-return]  # spec validation made it canonical


def _stored(statement_id: str, store: Any, where: str) -> Candidate:
    if store is None:
        raise InvalidInput(f"{where}: statement {statement_id!r} needs a store (pass `store`)")
    info = store.statement(statement_id)
    if info is None:
        raise UnknownEntity(statement_id, "the store", "load the entity first or give the value inline")
    return Candidate(info.value, info.rank, tuple((p, v) for p, _, v in info.qualifiers), info.statement_id)


def candidates(component: Component, store: Any = None) -> list[Candidate] | None:
    """The statement set of ``component``, or ``None`` when it gives a single value.

    A component that gives neither but names an entity and a property reads that
    statement set from ``store`` (all ranks) when one is given.
    """
    where = f"component {component.id!r}"
    if component.statements is None:
        if component.value is not None:
            return None
        if store is None or component.entity is None or component.property is None:
            return []
        edges = store.edges(subject=component.entity, property=component.property,
                            ranks=("preferred", "normal", "deprecated"), item_only=False)
        return [_stored(e.statement_id, store, where) for e in edges]
    out: list[Candidate] = []
    for item in component.statements:
        if isinstance(item, StatementRef):
            out.append(_stored(item.statement, store, where))
            continue
        st = item.statement() if isinstance(item, WikidataStatement) else item
        quals = tuple((q.property, _canonical(q.value, store, where)) for q in st.qualifiers)
        out.append(Candidate(_canonical(st.value, store, where), st.rank, quals, st.id))
    return out


def _describe(c: Candidate) -> str:
    return c.statement_id or (_value_text(c.value) if c.value is not None else "no value")


def _qualifier_dates(c: Candidate, prop: str) -> list[TimeValue]:
    return [v for p, v in c.qualifiers if p == prop and isinstance(v, TimeValue)]


def _matches(q: Value | None, target: Value) -> bool:
    if q is None:
        return False
    if isinstance(target, TimeValue):
        if not isinstance(q, TimeValue):
            return False
        lo, hi = date_interval(target)
        qlo, qhi = date_interval(q)
        return lo <= qlo and qhi <= hi
    if isinstance(target, QuantityValue):
        return isinstance(q, QuantityValue) and q.unit == target.unit and Decimal(q.amount) == Decimal(
            target.amount)
    return q == target


def apply_rule(cands: list[Candidate], rule: Rule, comp: str, store: Any,
               notes: list[str]) -> list[Candidate]:
    """Keep the statements ``rule`` selects (may refuse ``undefined_ordering``)."""
    if rule.kind == "preferred":
        best = "preferred" if any(c.rank == "preferred" for c in cands) else "normal"
        kept = [c for c in cands if c.rank == best]
        notes.append(f"rule preferred: kept the {len(kept)} {best}-rank statement(s) of {len(cands)}")
        return kept
    if rule.kind == "qualifier":
        target = _canonical(rule.value, store, f"component {comp!r} rule")
        assert target is not None  # the Rule model requires a value
        kept = [c for c in cands if any(p == rule.property and _matches(v, target) for p, v in c.qualifiers)]
        notes.append(f"rule qualifier {rule.property} = {_value_text(target)}: "
                     f"kept {len(kept)} of {len(cands)}")
        return kept
    dated = [(c, ds) for c in cands if len(ds := _qualifier_dates(c, rule.property)) == 1]
    if not dated:
        notes.append(f"rule {rule.kind}: no statement has exactly one {rule.property} date")
        return []
    spans = [(c, date_interval(ds[0])) for c, ds in dated]
    latest = rule.kind == "latest"
    key = (lambda s: s[1][0]) if latest else (lambda s: -s[1][1])
    winner = max(spans, key=key)
    for other in spans:
        if other is winner:
            continue
        certain = other[1][1] < winner[1][0] if latest else winner[1][1] < other[1][0]
        if not certain:
            raise Refused("undefined_ordering",
                          f"component {comp!r}: rule {rule.kind} {rule.property} cannot order "
                          f"{_describe(winner[0])} and {_describe(other[0])}: their dates overlap or tie",
                          comp)
    notes.append(f"rule {rule.kind} {rule.property}: kept {_describe(winner[0])} "
                 f"({_value_text(_qualifier_dates(winner[0], rule.property)[0])}) of {len(dated)} dated "
                 f"statement(s)")
    return [winner[0]]


def _same(v: Value | None) -> Any:
    """Equality key of a value: quantities by exact number (``+0.70`` is ``+0.7``)."""
    if isinstance(v, QuantityValue):
        return ("q", Decimal(v.amount), v.unit, v.lower and Decimal(v.lower), v.upper and Decimal(v.upper))
    return v


def resolve(component: Component, rules: Sequence[Rule], store: Any = None, *,
            allow_many: bool = False, as_of: str | None = None) -> list[Resolved]:
    """The value(s) of a component; exactly one unless ``allow_many`` (for ``count``).
    With ``as_of`` only the statements that hold on that date are candidates (the rules of
    :mod:`chaingraph.timeline`, as for the evidence graph), so ``latest`` picks the latest
    value on or before the date."""
    comp = component.id
    cands = candidates(component, store)
    if cands is None:
        value = _canonical(component.value, store, f"component {comp!r}")
        stid = component.value.statement if isinstance(component.value, StatementRef) else None
        if value is None:
            raise Refused("missing_value", f"component {comp!r} has no value", comp)
        return [Resolved(component, value, stid, None, "single value")]
    notes: list[str] = []
    n_all = len(cands)
    kept = [c for c in cands if c.rank != "deprecated"]
    if len(kept) < n_all:
        notes.append(f"dropped {n_all - len(kept)} deprecated statement(s)")
    if as_of is not None and kept:
        from chaingraph.timeline import valid_statements

        holds = valid_statements([c.qualifiers for c in kept], [c.rank for c in kept], component.property,
                                 as_of)
        if not all(holds):
            notes.append(f"as of {as_of}: dropped {holds.count(False)} statement(s) that do not hold then")
        kept = [c for c, ok in zip(kept, holds) if ok]
    for rule in component.rule or rules:
        if not kept:
            break
        kept = apply_rule(kept, rule, comp, store, notes)
    if not kept:
        what = f"statement set of {n_all}" if n_all else "no statements"
        raise Refused("missing_value", f"component {comp!r} has no usable value ({what}"
                      f"{'; ' + '; '.join(notes) if notes else ''})", comp)
    if len(kept) > 1 and not allow_many and len({_same(c.value) for c in kept}) == 1:
        notes.append(f"{len(kept)} statements agree on the value; used the first")
        kept = kept[:1]
    if len(kept) > 1 and not allow_many:
        raise Refused("multi_valued",
                      f"component {comp!r} has {len(kept)} values "
                      f"({', '.join(_describe(c) for c in kept[:4])}{', ...' if len(kept) > 4 else ''}) "
                      "and no rule picks one: state a rule (preferred, qualifier P585 = date, latest)", comp)
    out = []
    for c in kept:
        if c.value is None:
            raise Refused("missing_value", f"component {comp!r}: statement {_describe(c)} has no value "
                          "(somevalue/novalue)", comp)
        resolution = "; ".join(notes) or f"the only statement of {n_all}"
        out.append(Resolved(component, c.value, c.statement_id, c.rank, resolution))
    return out


# -- quantities ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Number:
    """An exact quantity: amount and interval in its own unit."""

    resolved: Resolved
    amount: X.Exact
    lower: X.Exact
    upper: X.Exact
    unit: Unit
    bounded: bool


def to_number(res: Resolved, table: UnitTable) -> Number:
    """Exact amount, interval and unit row of a quantity (refuses unknown units)."""
    v = res.value
    comp = res.component.id
    if isinstance(v, StringValue) and _ORDINAL.fullmatch(v.text.strip()):
        n = Decimal(int(v.text))  # a series ordinal (P1545) is a string holding an integer
        return Number(res, n, n, n, table.unit("Q199"), False)
    if not isinstance(v, QuantityValue):
        reason = "incompatible_dimensions" if isinstance(v, TimeValue) else "unsupported_operation"
        raise Refused(reason, f"component {comp!r}: expected a quantity, got a "
                      f"{v.kind} value ({_value_text(v)})", comp)
    unit = table.get(v.unit)
    if unit is None:
        raise Refused("unknown_unit", f"component {comp!r}: unit {v.unit} is not in the unit table "
                      f"({table.source or 'data/units.tsv'}); add a row for it", comp)
    amount = Decimal(v.amount)
    if v.upper is None or v.lower is None:
        return Number(res, amount, amount, amount, unit, False)
    a, b = Decimal(v.lower), Decimal(v.upper)
    return Number(res, amount, min(a, b, amount), max(a, b, amount), unit, True)


# -- dates ------------------------------------------------------------------------------
def effective_precision(t: TimeValue, ymd: tuple[int, int, int] | None = None) -> int:
    """Precision capped at day, lowered when the month or day digits are ``00``."""
    _, month, day = ymd or t.ymd
    p = min(t.precision, 11)
    if p >= 10 and month == 0:
        return 9
    if p == 11 and day == 0:
        return 10
    return p


def _astro(year: int) -> int:
    return year + 1 if year < 0 else year


def year_span(year: int, precision: int) -> tuple[int, int]:
    """Historical years (no 0) a coarse value covers, per Wikibase's display rules (§2.4).

    >>> year_span(1957, 8), year_span(1901, 7), year_span(2000, 7), year_span(-44, 7)
    ((1950, 1959), (1901, 2000), (1901, 2000), (-100, -1))
    """
    mag, sign = abs(year), (1 if year > 0 else -1)
    if precision >= 9:
        return year, year
    if precision == 8:
        start = mag // 10 * 10
        a, b = max(start, 1), start + 9
    elif precision >= 6:
        span = 10 ** (9 - precision)
        c = -(-mag // span)
        a, b = (c - 1) * span + 1, c * span
    else:  # ten thousand years and coarser: a magnitude, +- one unit
        span = 10 ** (9 - precision)
        a, b = max(mag - span, 1), mag + span
    return (a, b) if sign > 0 else (-b, -a)


def date_interval(t: TimeValue) -> tuple[int, int]:
    """Closed interval of Julian Day Numbers the value covers (its own calendar),
    widened by ``before``/``after`` in units of its precision."""
    ymd = t.ymd
    return _interval(t, ymd, effective_precision(t, ymd))


def _interval(t: TimeValue, ymd: tuple[int, int, int], p: int) -> tuple[int, int]:
    year, month, day = ymd
    julian = t.calendar == JULIAN
    if p == 11:
        lo = hi = julian_day_number(_astro(year), month, day, julian)
        unit = 1
    elif p == 10:
        a, m = _astro(year), month
        lo = julian_day_number(a, m, 1, julian)
        hi = julian_day_number(a + m // 12, m % 12 + 1, 1, julian) - 1
        unit = 31
    else:
        first, last = year_span(year, p)
        lo = julian_day_number(_astro(first), 1, 1, julian)
        hi = julian_day_number(_astro(last) + 1, 1, 1, julian) - 1
        unit = 366 * (10 ** max(0, 9 - p))
    return lo - t.before * unit, hi + t.after * unit


@dataclass(frozen=True, slots=True)
class Date:
    """A time value with its effective precision and JDN interval."""

    resolved: Resolved
    time: TimeValue
    precision: int
    lo: int
    hi: int


def to_date(res: Resolved) -> Date:
    v = res.value
    comp = res.component.id
    if not isinstance(v, TimeValue):
        raise Refused("incompatible_dimensions", f"component {comp!r}: expected a date, got a {v.kind} "
                      f"value ({_value_text(v)})", comp)
    if v.calendar not in (GREGORIAN, JULIAN):
        raise Refused("invalid_arithmetic", f"component {comp!r}: calendar model {v.calendar} is neither "
                      "Gregorian (Q1985727) nor Julian (Q1985786)", comp)
    ymd = v.ymd
    p = effective_precision(v, ymd)
    lo, hi = _interval(v, ymd, p)
    return Date(res, v, p, lo, hi)


# -- records -------------------------------------------------------------------------------
def _value_text(v: Value) -> str:
    if isinstance(v, TimeValue):
        cal = " Julian" if v.calendar == JULIAN else ""
        return f"{v.time} ({PRECISION_NAMES.get(min(v.precision, 11), v.precision)}{cal})"
    if isinstance(v, QuantityValue):
        bounds = f" [{v.lower}, {v.upper}]" if v.upper is not None else ""
        return f"{v.amount}{bounds} {'' if v.unit == '1' else v.unit}".rstrip()
    if isinstance(v, EntityValue):
        return v.id
    if isinstance(v, StringValue):
        return repr(v.text)
    return repr(v)


def _number_text(n: Number, amount: str) -> str:
    u = n.unit
    text = amount
    if n.bounded:
        text += f" [{X.text(n.lower)}, {X.text(n.upper)}]"
    if u.qid == "Q199":
        return f"{text} (a plain number)"
    if u.is_base:
        return f"{text} {u.label} ({u.qid})"
    return f"{text} {u.label} ({u.qid}) = {X.text(X.to_base(u, n.amount))} {u.base}"


def record(res: Resolved, normalised: Number | Date | None = None) -> NormalisedInput:
    """The :class:`NormalisedInput` of one resolved component."""
    c = res.component
    value = res.value if isinstance(res.value, (QuantityValue, TimeValue, EntityValue, StringValue)) \
        else StringValue(text=repr(res.value))
    fields: dict[str, Any] = {}
    if isinstance(normalised, Number):
        u = normalised.unit
        amount = X.text(normalised.amount)
        if normalised.bounded:
            lower, upper = X.text(X.to_base(u, normalised.lower)), X.text(X.to_base(u, normalised.upper))
        else:
            lower = upper = amount if u.is_base else X.text(X.to_base(u, normalised.amount))
        fields = {"scale": u.base, "lower": lower, "upper": upper,
                  "normalised": _number_text(normalised, amount)}
    elif isinstance(normalised, Date):
        t = normalised.time
        fields = {"scale": "JDN", "lower": str(normalised.lo), "upper": str(normalised.hi),
                  "normalised": f"{_value_text(t)}, astronomical year {t.astronomical_year}, "
                                f"JDN {normalised.lo}..{normalised.hi}"}
    else:
        fields = {"normalised": _value_text(res.value)}
    return trusted(NormalisedInput, component=c.id, entity=c.entity, label=c.label, property=c.property,
                   statement_id=res.statement_id, rank=res.rank, value=value, resolution=res.resolution,
                   **fields)
