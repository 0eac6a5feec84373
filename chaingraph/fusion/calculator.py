"""``fuse`` and ``fuse_spec``: resolve, normalise, operate, check, record.

>>> from chaingraph.values import TimeValue, JULIAN
>>> r = fuse([TimeValue.make(-44, 3, 15, precision=11, calendar=JULIAN),
...           TimeValue.make(14, 8, 19, precision=11, calendar=JULIAN)],
...          "year_difference", minuend="c2")
>>> r.result, r.value.unit
('+57', 'Q577')
>>> fuse([TimeValue.make(19, precision=7), TimeValue.make(1950, precision=9)], "year_difference").reason
'precision_too_coarse'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from pydantic import ValidationError

from chaingraph.fusion import exact as X
from chaingraph.fusion import operations as ops
from chaingraph.fusion.inputs import (
    Date,
    Number,
    Refused,
    Resolved,
    candidates,
    record,
    resolve,
    to_date,
    to_number,
)
from chaingraph.fusion.records import (
    Check,
    FusionRefusal,
    FusionResult,
    NormalisedInput,
    Step,
    trusted,
)
from chaingraph.fusion.spec import Component, FusionSpec, Rounding, Rule, spec_error
from chaingraph.units import Unit, UnitTable, unit_table
from chaingraph.values import EntityValue, QuantityValue, StringValue, TimeValue

__all__ = ["fuse", "fuse_spec"]

_NUMERIC = ("add", "subtract", "multiply", "divide", "average")
_ORDER = {"max": True, "min": False, "select_max": True, "select_min": False,
          "select_latest": True, "select_earliest": False}


def _component(item: Any, n: int) -> Any:
    if isinstance(item, (Component, dict)):
        return item
    return {"id": f"c{n}", "value": item}


def fuse(components: Iterable[Any], operation: str, *, minuend: str | None = None,
         dividend: str | None = None,
         rule: Rule | Sequence[Rule] | dict[str, Any] | None = None,
         rounding: Rounding | dict[str, Any] | None = None,
         factor: str | int | None = None, unit: str | None = None, calendar_conversion: bool = True,
         spec_id: str | None = None, store: Any = None,
         table: UnitTable | None = None, as_of: str | None = None) -> FusionResult | FusionRefusal:
    """Fuse component values with ``operation`` (see :data:`~chaingraph.fusion.spec.OPERATIONS`).

    ``components`` are :class:`Component` objects, dicts in the spec's form, or bare values
    (named ``c1``, ``c2``, ... in order). ``minuend`` names the component to subtract from
    (required for ``subtract``; for ``year_difference``/``day_difference`` it makes the result
    signed, otherwise the difference is absolute); ``dividend`` the one ``divide`` divides.
    ``rule`` resolves statement sets, ``rounding`` rounds the exact result once at the end,
    ``factor`` is the constant of ``multiply``, ``unit`` the unit item to express the result
    in; ``as_of`` keeps only the statements that hold on that date. Bad arguments raise
    :class:`~chaingraph.errors.InvalidSpec`; a refusal is returned, not raised.
    """
    raw = {"id": spec_id, "operation": operation,
           "components": [_component(c, i) for i, c in enumerate(components, start=1)],
           "minuend": minuend, "dividend": dividend, "factor": factor, "rule": rule, "rounding": rounding,
           "unit": unit, "calendar_conversion": calendar_conversion, "as_of": as_of}
    try:
        spec = FusionSpec.model_validate(raw)
    except ValidationError as exc:
        raise spec_error(exc) from None
    return fuse_spec(spec, store=store, table=table)


def fuse_spec(spec: FusionSpec, *, store: Any = None,
              table: UnitTable | None = None) -> FusionResult | FusionRefusal:
    """Run one :class:`FusionSpec`. Statement ids in it are read from ``store``."""
    table = table if table is not None else unit_table()
    steps: list[Step] = []
    inputs: list[NormalisedInput] = []
    checks: list[Check] = []
    try:
        outcome, used = _run(spec, store, table, steps, inputs)
        checks = _checks(spec, used, outcome)
        failed = next((c for c in checks if not c.passed), None)
        if failed is not None:
            raise Refused("duplicate_target", failed.detail)
    except Refused as r:
        return FusionRefusal(spec_id=spec.id, operation=spec.operation, reason=r.reason,  # type: ignore[arg-type]
                             message=r.message, component=r.component, inputs=tuple(inputs),
                             steps=tuple(steps), checks=tuple(checks))
    exact = outcome.exact
    value = outcome.value
    result_text = _text(value)
    if spec.rounding is not None and exact is not None:
        rounded = ops.round_exact(exact, spec.rounding.places, spec.rounding.mode)
        lo = hi = None
        if outcome.lower is not None and outcome.upper is not None:
            lo = ops.round_exact(outcome.lower, spec.rounding.places, "floor")
            hi = ops.round_exact(outcome.upper, spec.rounding.places, "ceiling")
        value = ops.quantity(rounded, outcome.unit or "Q199", lo, hi)
        result_text = _fixed(rounded, spec.rounding.places)
        if isinstance(value, QuantityValue):
            value = value.model_copy(update={"amount": result_text})
        steps.append(Step(action="round", detail=f"{X.text(exact)} rounded to {spec.rounding.places} "
                          f"place(s), {spec.rounding.mode} = {result_text}", value=result_text))
    return trusted(
        FusionResult, spec_id=spec.id, operation=spec.operation, inputs=tuple(inputs), steps=tuple(steps),
        result=result_text, value=value, unit=outcome.unit, exact=None if exact is None else X.text(exact),
        rounding=spec.rounding, selected=outcome.selected, checks=tuple(checks))


def _fixed(value: X.Exact, places: int) -> str:
    text = X.text(value)
    sign, body = text[0], text[1:]
    whole, _, frac = body.partition(".")
    return sign + whole + ("." + frac.ljust(places, "0") if places else "")


def _text(value: Any) -> str:
    if isinstance(value, QuantityValue):
        return value.amount
    if isinstance(value, TimeValue):
        return value.time
    if isinstance(value, EntityValue):
        return value.id
    if isinstance(value, StringValue):
        return value.text
    return f"{value.numerator}/{value.denominator}"


def _requested_unit(spec: FusionSpec, table: UnitTable) -> Unit | None:
    if spec.unit is None:
        return None
    found = table.get(spec.unit)
    if found is None:
        raise Refused("unknown_unit", f"the requested result unit {spec.unit} is not in the unit table")
    return found


def _numbers(resolved: Sequence[Resolved], table: UnitTable, inputs: list[NormalisedInput]) -> list[Number]:
    out = []
    for r in resolved:
        if isinstance(r.value, TimeValue):
            inputs.append(record(r))
            raise Refused("unsupported_operation", f"component {r.component.id!r} is a date; dates are "
                          "compared, selected or subtracted with year_difference/day_difference, not "
                          "added, scaled or averaged", r.component.id)
        try:
            n = to_number(r, table)
        except Refused:
            inputs.append(record(r))
            raise
        inputs.append(record(r, n))
        out.append(n)
    return out


def _dates(resolved: Sequence[Resolved], inputs: list[NormalisedInput]) -> list[Date]:
    out = []
    for r in resolved:
        try:
            d = to_date(r)
        except Refused:
            inputs.append(record(r))
            raise
        inputs.append(record(r, d))
        out.append(d)
    return out


def _run(spec: FusionSpec, store: Any, table: UnitTable, steps: list[Step],
         inputs: list[NormalisedInput]) -> tuple[ops.Outcome, list[Resolved]]:
    op = spec.operation
    if op == "count":
        return _count(spec, store, steps, inputs)
    resolved = [resolve(c, spec.rule, store, as_of=spec.as_of)[0] for c in spec.components]
    for r in resolved:
        if r.resolution != "single value":
            steps.append(Step(action="resolve", detail=f"{r.component.id}: {r.resolution}"))
    requested = _requested_unit(spec, table)
    if op in _NUMERIC:
        nums = _numbers(resolved, table, inputs)
        if op == "add":
            return ops.add(nums, requested, table, steps), resolved
        if op == "average":
            return ops.average(nums, requested, table, steps), resolved
        if op == "multiply":
            return ops.multiply(nums[0], X.exact(Fraction(spec.factor or "1")), requested, steps), resolved
        head = spec.minuend if op == "subtract" else spec.dividend
        first, second = nums if nums[0].resolved.component.id == head else nums[::-1]
        if op == "divide":
            return ops.divide(first, second, requested, table, steps), resolved
        return ops.subtract(first, second, requested, table, steps), resolved
    if op in ("year_difference", "day_difference"):
        a, b = _dates(resolved, inputs)
        if spec.minuend is not None and spec.minuend != a.resolved.component.id:
            a, b = b, a
        run = ops.year_difference if op == "year_difference" else ops.day_difference
        return run(a, b, spec.minuend is not None, spec.calendar_conversion, steps), resolved
    return _order(spec, resolved, requested, table, steps, inputs), resolved


def _order(spec: FusionSpec, resolved: list[Resolved], requested: Unit | None, table: UnitTable,
           steps: list[Step], inputs: list[NormalisedInput]) -> ops.Outcome:
    op = spec.operation
    kinds = {r.value.kind for r in resolved}
    if kinds == {"time"} or (op in ("select_earliest", "select_latest") and resolved):
        items: list[Number] | list[Date] = _dates(resolved, inputs)
    elif kinds and kinds <= {"quantity", "string"}:  # strings: integer ordinals (P1545)
        items = _numbers(resolved, table, inputs)
        ops._common_unit(items, requested, op)  # refuses different dimensions
    elif not resolved:
        items = []
    else:
        for r in resolved:
            inputs.append(record(r))
        what = ", ".join(sorted(kinds))
        reason = "incompatible_dimensions" if kinds <= {"time", "quantity"} else "unsupported_operation"
        raise Refused(reason, f"{op}: values of kinds {what} cannot be ordered against each other")
    best = ops.extreme(items, _ORDER[op], op, steps)
    comp = best.resolved.component
    if op.startswith("select_"):
        value: Any = (EntityValue(id=comp.entity) if comp.entity else StringValue(text=comp.label or comp.id))
        steps.append(Step(action="select", detail=f"selected component {comp.id}"
                          + (f" ({comp.label})" if comp.label else ""), value=_text(value)))
        return ops.Outcome(value, None, None, comp.id)
    if isinstance(best, Date):
        return ops.Outcome(best.time, None, None, comp.id)
    unit = requested or best.unit
    amount, lo, hi = ops._in(best, unit, steps)
    out = ops._numeric(amount, lo, hi, unit, best.bounded)
    return ops.Outcome(out.value, out.exact, out.unit, comp.id, out.lower, out.upper)


def _count(spec: FusionSpec, store: Any, steps: list[Step],
           inputs: list[NormalisedInput]) -> tuple[ops.Outcome, list[Resolved]]:
    total = 0
    used: list[Resolved] = []
    for c in spec.components:
        if c.value is None and not candidates(c, store) and c.entity is not None:
            total += 1
            steps.append(Step(action="count", detail=f"{c.id}: the target entity {c.entity} counts 1"))
            continue
        values = resolve(c, spec.rule, store, allow_many=True, as_of=spec.as_of)
        distinct = {v.value.model_dump_json() for v in values}
        for v in values:
            inputs.append(record(v))
        used.extend(values)
        total += len(distinct)
        steps.append(Step(action="count", detail=f"{c.id}: {len(distinct)} distinct value(s)",
                          value=str(len(distinct))))
    steps.append(Step(action="count", detail=f"total {total}", value=str(total)))
    return ops.Outcome(QuantityValue(amount=f"+{total}", unit="1"), Decimal(total), "Q199"), used


def _checks(spec: FusionSpec, used: list[Resolved], outcome: ops.Outcome) -> list[Check]:
    seen: dict[tuple[str, ...], str] = {}
    dup: list[str] = []
    for c in spec.components:
        stids = sorted({r.statement_id for r in used if r.component.id == c.id and r.statement_id})
        if c.entity is not None:
            key: tuple[str, ...] = ("entity", c.entity, c.property or "")
        elif stids:
            key = ("statement", *stids)
        else:
            continue
        if key in seen:
            dup.append(f"{seen[key]!r} and {c.id!r} both resolve to {' '.join(k for k in key[1:] if k)}")
        seen[key] = c.id
    unique_detail = ("; ".join(dup) if dup else f"{len(seen)} component target(s) distinct after "
                     "normalisation" + ("" if seen else " (no component names an entity or statement)"))
    unique = trusted(Check, name="targets_unique", passed=not dup, detail=unique_detail)
    per_component = {c.id: sum(1 for r in used if r.component.id == c.id) for c in spec.components}
    multi = [k for k, n in per_component.items() if n > 1]
    single = spec.operation == "count" or not multi
    detail = ("one result value" + ("" if spec.operation == "count" else
                                    ", each component resolved to exactly one value"))
    if not single:
        detail = f"components with several values: {', '.join(multi)}"
    return [unique, trusted(Check, name="single_valued", passed=single and outcome.value is not None,
                            detail=detail)]
