"""The fusion spec: what the pipeline writes (``chaingraph fuse spec.json``).

A spec names an operation and its components. A component is one chain's answer: the
target entity it reached (``entity``, ``label``), the property read there, and either one
value or a statement set (several statements with rank and qualifiers, resolved only by a
rule the spec states). Values may be written in any form Wikidata gives them:

* a chaingraph canonical value (``{"kind": "time", "time": "+1715-00-00T00:00:00Z", ...}``),
* a Wikidata JSON datavalue (``{"type": "time", "value": {"time": ..., "precision": 9}}``),
* an RDF value node (``{"rdf": "time", "time": "-0043-01-01T00:00:00Z", "precision": 9,
  "calendar": "...Q1985786"}``) — RDF years at precision ≥ 9 are astronomical and are
  shifted back (``-0043`` is 44 BCE), Julian day dates are reconverted,
* a whole Wikidata JSON statement (``{"mainsnak": ..., "rank": ..., "qualifiers": ...}``),
* a store statement id (``{"statement": "Q42$..."}``), resolved when a store is given.

>>> spec = FusionSpec.model_validate({"operation": "year_difference", "components": [
...     {"id": "a", "value": {"rdf": "time", "time": "-0043-01-01T00:00:00Z", "precision": 9}},
...     {"id": "b", "value": {"type": "time", "value": {"time": "+0014-00-00T00:00:00Z",
...                                                     "precision": 9}}}]})
>>> [c.id for c in spec.components], spec.components[0].value.year
(['a', 'b'], -44)
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from chaingraph.errors import BadFile, InvalidInput, InvalidSpec
from chaingraph.files import parse_json, read_text
from chaingraph.values import EntityValue, QuantityValue, StringValue, TimeValue, Value, value_from_json

__all__ = [
    "FUSION_SPEC_VERSION",
    "OPERATIONS",
    "Component",
    "DataValue",
    "FusionSpec",
    "InputValue",
    "Qualifier",
    "RdfQuantity",
    "RdfTime",
    "Rounding",
    "Rule",
    "StatementInput",
    "StatementRef",
    "WikidataStatement",
    "read_spec",
    "spec_error",
]

FUSION_SPEC_VERSION = "chaingraph.fusion-spec/1"
_FROZEN = ConfigDict(frozen=True, extra="forbid")

Operation = Literal["add", "subtract", "multiply", "divide", "max", "min", "average", "count",
                    "year_difference", "day_difference",
                    "select_max", "select_min", "select_earliest", "select_latest"]
#: every operation, in the order the docs list them
OPERATIONS: tuple[str, ...] = Operation.__args__  # type: ignore[attr-defined]


class DataValue(BaseModel):
    """A Wikidata JSON ``datavalue``: ``{"type": ..., "value": ...}``."""

    model_config = _FROZEN
    type: Literal["time", "quantity", "wikibase-entityid", "string"]
    value: Any

    def canonical(self) -> Value:
        return value_from_json({"type": self.type, "value": self.value})


class RdfTime(BaseModel):
    """An RDF ``wikibase:TimeValue`` node (XSD 1.1 years: ``-0043`` is 44 BCE at precision ≥ 9)."""

    model_config = _FROZEN
    rdf: Literal["time"]
    time: str
    precision: int = Field(ge=0, le=14)
    calendar: str | None = None
    timezone: int = 0

    def canonical(self) -> Value:
        return TimeValue.from_rdf(self.time, self.precision, self.calendar, self.timezone)


class RdfQuantity(BaseModel):
    """An RDF ``wikibase:QuantityValue`` node (unit ``wd:Q199`` is the plain number 1)."""

    model_config = _FROZEN
    rdf: Literal["quantity"]
    amount: str
    unit: str | None = None
    upper: str | None = None
    lower: str | None = None

    def canonical(self) -> Value:
        return QuantityValue.from_rdf(self.amount, self.unit, self.upper, self.lower)


class StatementRef(BaseModel):
    """A statement in the store, by id (``Q42$...``); needs a store to resolve."""

    model_config = _FROZEN
    statement: str = Field(min_length=1)


def _value_tag(v: Any) -> str | None:
    if isinstance(v, dict):
        for key, tag in (("statement", "statement"), ("type", "datavalue"), ("kind", None)):
            if key in v:
                return tag or str(v["kind"])
        if "rdf" in v:
            return f"rdf-{v['rdf']}"
        return None
    for cls, tag in _TAGS:
        if isinstance(v, cls):
            return tag
    return None


_TAGS: tuple[tuple[type, str], ...] = (
    (TimeValue, "time"), (QuantityValue, "quantity"), (EntityValue, "entity"), (StringValue, "string"),
    (DataValue, "datavalue"), (RdfTime, "rdf-time"), (RdfQuantity, "rdf-quantity"),
    (StatementRef, "statement"))

def _time(v: TimeValue) -> TimeValue:
    return TimeValue.from_json({"time": v.time, "precision": v.precision, "calendarmodel": v.calendar,
                                "timezone": v.timezone, "before": v.before, "after": v.after})


def _quantity(v: QuantityValue) -> QuantityValue:
    return QuantityValue.from_rdf(v.amount, v.unit, v.upper, v.lower)


def _canonical(v: DataValue | RdfTime | RdfQuantity) -> Value:
    return v.canonical()


#: any accepted form of one value (see the module docstring); after validation it is a
#: canonical value (time, quantity, entity, string) or a :class:`StatementRef`
InputValue = Annotated[
    Union[Annotated[TimeValue, AfterValidator(_time), Tag("time")],
          Annotated[QuantityValue, AfterValidator(_quantity), Tag("quantity")],
          Annotated[EntityValue, Tag("entity")], Annotated[StringValue, Tag("string")],
          Annotated[DataValue, AfterValidator(_canonical), Tag("datavalue")],
          Annotated[RdfTime, AfterValidator(_canonical), Tag("rdf-time")],
          Annotated[RdfQuantity, AfterValidator(_canonical), Tag("rdf-quantity")],
          Annotated[StatementRef, Tag("statement")]],
    Discriminator(_value_tag, custom_error_type="value_form",
                  custom_error_message="not a value: expected a canonical value (kind), a Wikidata "
                  "datavalue (type), an RDF node (rdf) or a statement id (statement)")]


class Qualifier(BaseModel):
    """A qualifier snak of a statement; ``value`` ``None`` is somevalue/novalue."""

    model_config = _FROZEN
    property: str = Field(pattern=r"^P[1-9]\d*$")
    value: InputValue | None = None


class StatementInput(BaseModel):
    """One statement of a statement set, written out."""

    model_config = _FROZEN
    value: InputValue | None = None
    rank: Literal["preferred", "normal", "deprecated"] = "normal"
    qualifiers: tuple[Qualifier, ...] = ()
    id: str | None = None


class WikidataStatement(BaseModel):
    """A statement exactly as in the Wikidata JSON (``mainsnak``, ``rank``, ``qualifiers``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    mainsnak: dict[str, Any]
    rank: Literal["preferred", "normal", "deprecated"] = "normal"
    qualifiers: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    id: str | None = None

    def statement(self) -> StatementInput:
        """The same statement as a :class:`StatementInput`."""
        quals = tuple(Qualifier(property=snak.get("property", pid), value=_snak_value(snak))
                      for pid, snaks in sorted(self.qualifiers.items()) for snak in snaks)
        return StatementInput(value=_snak_value(self.mainsnak), rank=self.rank, qualifiers=quals, id=self.id)


def _snak_value(snak: dict[str, Any]) -> Any:
    if snak.get("snaktype", "value") != "value" or "datavalue" not in snak:
        return None
    return value_from_json(snak["datavalue"])


def _statement_tag(v: Any) -> str:
    if isinstance(v, dict):
        return "ref" if "statement" in v else "wikidata" if "mainsnak" in v else "input"
    if isinstance(v, StatementRef):
        return "ref"
    return "wikidata" if isinstance(v, WikidataStatement) else "input"


def _as_input(w: WikidataStatement) -> StatementInput:
    return w.statement()


#: a statement of a set: written out, as Wikidata JSON (converted on validation), or a store id
StatementItem = Annotated[
    Union[Annotated[StatementInput, Tag("input")],
          Annotated[WikidataStatement, AfterValidator(_as_input), Tag("wikidata")],
          Annotated[StatementRef, Tag("ref")]],
    Discriminator(_statement_tag)]


class Rule(BaseModel):
    """How to pick one statement of a statement set (rules apply in the order given).

    * ``preferred``: keep the best rank (preferred if any, else normal);
    * ``qualifier``: keep statements whose ``property`` qualifier equals ``value`` (a date
      matches when the qualifier's date lies within it: ``2011`` matches ``2011-05-09``);
    * ``latest`` / ``earliest``: keep the statement whose ``property`` qualifier (default
      ``P585`` point in time) is certainly the latest / earliest.

    Deprecated statements are always dropped first.
    """

    model_config = _FROZEN
    kind: Literal["preferred", "qualifier", "latest", "earliest"]
    property: str = Field(default="P585", pattern=r"^P[1-9]\d*$")
    value: InputValue | None = None

    @model_validator(mode="after")
    def _needs_value(self) -> Rule:
        if self.kind == "qualifier" and self.value is None:
            raise ValueError("a 'qualifier' rule needs a 'value' to compare the qualifier with")
        return self


def _rules(v: Any) -> Any:
    if v is None:
        return ()
    return (v,) if isinstance(v, (dict, Rule)) else v


class Rounding(BaseModel):
    """Round the exact result once, at the end, to ``places`` decimal places."""

    model_config = _FROZEN
    places: int = Field(default=0, ge=0, le=40)
    mode: Literal["half_even", "half_up", "half_down", "down", "up", "floor", "ceiling"] = "half_even"


class Component(BaseModel):
    """One chain's answer: its target and its value (or statement set)."""

    model_config = _FROZEN
    id: str = Field(min_length=1)
    entity: str | None = Field(default=None, pattern=r"^[QPL][1-9]\d*$")
    label: str | None = None
    property: str | None = Field(default=None, pattern=r"^P[1-9]\d*$")
    value: InputValue | None = None
    statements: tuple[StatementItem, ...] | None = None
    rule: tuple[Rule, ...] = ()

    _rule = field_validator("rule", mode="before")(_rules)

    @model_validator(mode="after")
    def _one_source(self) -> Component:
        if self.value is not None and self.statements is not None:
            raise ValueError("give either 'value' or 'statements', not both")
        return self


class FusionSpec(BaseModel):
    """The JSON a pipeline writes for one fused answer (schema ``fusion-spec``)."""

    model_config = _FROZEN
    version: Literal["chaingraph.fusion-spec/1"] = "chaingraph.fusion-spec/1"
    id: str | None = Field(default=None, description="the pipeline's id for this fused answer")
    operation: Operation = Field(description="the one operation to apply")
    components: tuple[Component, ...] = Field(description="one entry per chain: its target and value(s)")
    minuend: str | None = Field(default=None, description=(
        "component id to subtract from (required by subtract; makes year_difference and "
        "day_difference signed, otherwise they are absolute)"))
    dividend: str | None = Field(default=None, description="component id that divide divides")
    factor: str | None = Field(default=None, description="exact decimal or ratio p/q for multiply")
    rule: tuple[Rule, ...] = Field(default=(), description=(
        "rules that pick one statement of a statement set, in order (a component's own rule wins)"))
    rounding: Rounding | None = Field(default=None, description="round the exact result once, at the end")
    unit: str | None = Field(default=None, description="unit item (Q-id) to express a numeric result in")
    calendar_conversion: bool = Field(default=True, description=(
        "convert Julian/Gregorian day-precision dates through the Julian Day Number; when false, "
        "mixing calendars at day precision is refused"))
    as_of: str | None = Field(default=None, description=(
        "only statements that hold on this date (ISO date, YYYY-MM or a year) are candidates, as for "
        "the evidence graph (DESIGN §11); 'latest' then picks the latest value on or before it"))

    _rule = field_validator("rule", mode="before")(_rules)

    @field_validator("as_of", mode="before")
    @classmethod
    def _date(cls, v: Any) -> Any:
        from chaingraph.timeline import parse_as_of

        if v is None:
            return v
        try:
            return parse_as_of(v).text
        except InvalidInput as exc:
            raise ValueError(str(exc).removeprefix("as_of: ")) from None

    @field_validator("factor", mode="before")
    @classmethod
    def _factor_text(cls, v: Any) -> Any:
        if isinstance(v, float):
            raise ValueError("factor must be an exact decimal string or integer, not a float")
        return str(v) if isinstance(v, (int, Fraction)) else v

    @model_validator(mode="after")
    def _consistent(self) -> FusionSpec:
        ids = [c.id for c in self.components]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"component ids must be unique; repeated: {', '.join(dup)}")
        op, n = self.operation, len(self.components)
        for name, ref in (("minuend", self.minuend), ("dividend", self.dividend)):
            if ref is not None and ref not in ids:
                raise ValueError(f"{name} {ref!r} is not a component id ({', '.join(ids)})")
        if op == "divide" and self.dividend is None:
            raise ValueError("'divide' needs 'dividend': the id of the component to divide")
        if op == "subtract" and self.minuend is None:
            raise ValueError("'subtract' needs 'minuend': the id of the component to subtract from")
        if op in ("subtract", "divide", "year_difference", "day_difference") and n != 2:
            raise ValueError(f"'{op}' takes exactly 2 components, got {n}")
        if op == "multiply":
            if n != 1:
                raise ValueError(f"'multiply' takes exactly 1 component (times 'factor'), got {n}")
            if self.factor is None:
                raise ValueError("'multiply' needs 'factor', an exact decimal string such as \"2.5\"")
        if self.factor is not None:
            try:
                Fraction(self.factor)
            except (ValueError, ZeroDivisionError):
                raise ValueError(f"factor {self.factor!r} is not an exact decimal or ratio p/q") from None
        return self


_TAG_NAMES = frozenset({"time", "quantity", "entity", "string", "datavalue", "rdf-time", "rdf-quantity",
                        "statement", "input", "wikidata", "ref"})


def spec_error(exc: ValidationError, file: str = "") -> InvalidSpec:
    """A one-line :class:`InvalidSpec` naming the JSON path of the first schema violation.

    >>> try:
    ...     FusionSpec.model_validate({"operation": "add", "components": [{"id": "a", "value": 3}]})
    ... except ValidationError as exc:
    ...     err = spec_error(exc, "spec.json")
    >>> err.path, str(err).startswith("spec.json: components[0].value: not a value")
    ('components[0].value', True)
    """
    err = exc.errors()[0]
    path, prev = "", None
    for part in err["loc"]:
        if isinstance(part, int):
            path += f"[{part}]"
        elif str(part).startswith(("function-", "tagged-union")) or (
                part in _TAG_NAMES and (prev == "value" or isinstance(prev, int))):
            continue  # union-branch names are not part of the JSON path
        else:
            path += f".{part}" if path else str(part)
        prev = part
    msg = str(err["msg"]).removeprefix("Value error, ")
    return InvalidSpec(f"{msg} (see `chaingraph schema fusion-spec`)", path=path, file=file)


def read_spec(path: str | Path) -> FusionSpec:
    """Read and validate a spec file (``-`` is stdin); :class:`InvalidSpec` with the JSON path."""
    name = str(path)
    try:
        data = parse_json(read_text(path, what="spec"), where=name, what="spec")
    except BadFile as exc:
        raise InvalidSpec(exc.problem, file=name) from None
    try:
        return FusionSpec.model_validate(data)
    except ValidationError as exc:
        raise spec_error(exc, name) from None
