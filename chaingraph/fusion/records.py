"""Fusion records: a result or a refusal, each explaining itself.

Both carry the normalised inputs (which statement was used and why, the value, its exact
interval in a stated scale), and the steps taken. A :class:`FusionResult` adds the
exact result, as text (``"+57"``, ``"10/3"``, ``"Q1040"``) and as a typed value with its
unit, and the post-fusion checks. A :class:`FusionRefusal` adds a reason code from
:data:`REASONS` and a one-line message.

>>> r = FusionRefusal(operation="max", reason="undefined_ordering", message="tie")
>>> r.status, r.reason in REASONS
('refusal', True)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field

from chaingraph.fusion.spec import Rounding
from chaingraph.values import EntityValue, QuantityValue, StringValue, TimeValue

__all__ = [
    "FUSION_RESULT_VERSION",
    "REASONS",
    "Check",
    "FusionRefusal",
    "FusionResult",
    "NormalisedInput",
    "RationalValue",
    "Reason",
    "Step",
    "trusted",
]

FUSION_RESULT_VERSION = "chaingraph.fusion-result/1"
_FROZEN = ConfigDict(frozen=True, extra="forbid")

Reason = Literal["missing_value", "multi_valued", "precision_too_coarse", "incompatible_dimensions",
                 "unknown_unit", "undefined_ordering", "invalid_arithmetic", "unsupported_operation",
                 "duplicate_target"]

#: reason code -> when it is given
REASONS: dict[str, str] = {
    "missing_value": "a component has no value (none given, somevalue/novalue, or a rule kept none)",
    "multi_valued": "a component has several values and no stated rule picks one",
    "precision_too_coarse": "a date is too coarse for the operation (a century cannot give a year; "
                            "a year cannot give a day count)",
    "incompatible_dimensions": "values of different dimensions or kinds, or different currencies",
    "unknown_unit": "a unit item is not in the unit table (data/units.tsv)",
    "undefined_ordering": "a tie, or uncertainty ranges / date intervals that overlap, so the order "
                          "is not certain",
    "invalid_arithmetic": "division by zero, an average or sum of nothing, adding or scaling absolute "
                          "temperatures, dates in different calendars without conversion",
    "unsupported_operation": "the operation is not defined on these kinds of values "
                             "(e.g. the average of dates, the sum of entities)",
    "duplicate_target": "post-fusion check: two components normalise to the same target "
                        "(entity and property, or statement)",
}


M = TypeVar("M", bound=BaseModel)
_SHAPES: dict[type[BaseModel], tuple[dict[str, Any], set[str]]] = {}
_set = object.__setattr__


def trusted(cls: type[M], **values: Any) -> M:
    """Build a record from values the calculator itself produced (already of the declared
    types), without pydantic re-validating them — a third of the calculator's time went
    there. The result is an ordinary model: equal to, and serialised exactly like, the
    validated one (the test suite round-trips results through JSON to keep it so).

    >>> trusted(Step, action="add", detail="1 + 2 = 3") == Step(action="add", detail="1 + 2 = 3")
    True
    """
    shape = _SHAPES.get(cls)
    if shape is None:
        fields = cls.model_fields
        shape = _SHAPES[cls] = ({name: f.get_default(call_default_factory=True)
                                 for name, f in fields.items() if not f.is_required()}, set(fields))
    data = shape[0].copy()
    data.update(values)
    model = cls.__new__(cls)
    _set(model, "__dict__", data)
    _set(model, "__pydantic_fields_set__", set(shape[1]))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


class RationalValue(BaseModel):
    """An exact rational with a unit, for results without a finite decimal form (``10/3``)."""

    model_config = _FROZEN
    kind: Literal["rational"] = "rational"
    numerator: str
    denominator: str
    unit: str = "1"

    def fraction(self) -> Fraction:
        return Fraction(int(self.numerator), int(self.denominator))


ResultValue = Annotated[Union[QuantityValue, TimeValue, EntityValue, StringValue, RationalValue],
                        Field(discriminator="kind")]
InputRecordValue = Annotated[Union[QuantityValue, TimeValue, EntityValue, StringValue],
                             Field(discriminator="kind")]


class NormalisedInput(BaseModel):
    """One value that entered the calculation, after parsing and rule resolution.

    ``lower``/``upper`` are exact bounds in ``scale``: pint base units of the quantity's
    dimension (e.g. ``meter ** 2``), ``JDN`` (Julian Day Number: dates in any calendar on
    one axis), or ``year`` (astronomical year numbers: 1 BCE is 0).
    """

    model_config = _FROZEN
    component: str
    entity: str | None = None
    label: str | None = None
    property: str | None = None
    statement_id: str | None = None
    rank: str | None = None
    value: InputRecordValue
    resolution: str
    normalised: str
    scale: str | None = None
    lower: str | None = None
    upper: str | None = None


class Step(BaseModel):
    """One step of the calculation, with its exact intermediate value when there is one."""

    model_config = _FROZEN
    action: str
    detail: str
    value: str | None = None


class Check(BaseModel):
    """A post-fusion check."""

    model_config = _FROZEN
    name: Literal["targets_unique", "single_valued"]
    passed: bool
    detail: str


class FusionResult(BaseModel):
    """An exact fused answer and how it was reached (schema ``fusion-result``)."""

    model_config = _FROZEN
    version: Literal["chaingraph.fusion-result/1"] = "chaingraph.fusion-result/1"
    status: Literal["result"] = "result"
    spec_id: str | None = None
    operation: str
    inputs: tuple[NormalisedInput, ...] = Field(default=(), description="the values used, after resolution")
    steps: tuple[Step, ...] = Field(default=(), description="each step, with exact intermediate values")
    result: str = Field(description="the answer as text: a signed decimal, p/q, a date or an entity id")
    value: ResultValue = Field(description="the answer as a typed value (quantity units in Wikidata's "
                                           "spelling: \"1\" for a plain number)")
    unit: str | None = Field(default=None, description="unit item of a numeric answer (Q199 for a plain "
                                                       "number); null for dates and selections")
    exact: str | None = Field(default=None, description="the exact numeric answer before rounding")
    rounding: Rounding | None = None
    selected: str | None = Field(default=None, description="the component an ordering picked")
    checks: tuple[Check, ...] = Field(default=(), description="post-fusion checks")

    def fraction(self) -> Fraction:
        """The exact numeric result (before rounding); ``ValueError`` for a date or entity."""
        if self.exact is None:
            raise ValueError(f"the result of {self.operation!r} is not a number: {self.result}")
        return Fraction(self.exact)


class FusionRefusal(BaseModel):
    """The calculator said no, with a reason code and a one-line message (schema ``fusion-refusal``)."""

    model_config = _FROZEN
    version: Literal["chaingraph.fusion-result/1"] = "chaingraph.fusion-result/1"
    status: Literal["refusal"] = "refusal"
    spec_id: str | None = None
    operation: str
    reason: Reason
    message: str
    component: str | None = None
    inputs: tuple[NormalisedInput, ...] = ()
    steps: tuple[Step, ...] = ()
    checks: tuple[Check, ...] = ()
