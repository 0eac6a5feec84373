"""Wikidata values in one canonical form, whichever export they came from.

The JSON dump and the RDF export write the same value differently (see
``reference/wikidata.md`` §2–§3). chaingraph keeps the **JSON form** everywhere and
converts RDF at the source:

* time: historical year numbering with no year 0 (``-0044`` is 44 BCE); digits below the
  precision are insignificant and stored as ``00`` (RDF writes ``01``); RDF years at
  precision ≥ 9 use astronomical numbering and are shifted back; RDF Julian dates at day
  precision were converted to Gregorian and are converted back;
* quantity: amount and bounds as exact decimal strings with a sign, unit ``"1"`` or a Q-id
  (RDF's ``wd:Q199`` is unit ``"1"``);
* entity values: the bare id.

>>> t = TimeValue.from_rdf("0000-01-01T00:00:00Z", precision=9)
>>> t.time, t.year, t.astronomical_year
('-0001-00-00T00:00:00Z', -1, 0)
>>> TimeValue.from_json({"time": "+1952-03-11T00:00:00Z", "precision": 9,
...     "calendarmodel": "http://www.wikidata.org/entity/Q1985727"}).time
'+1952-00-00T00:00:00Z'
>>> j = TimeValue.from_rdf("1521-08-23T00:00:00Z", precision=11, calendar=JULIAN)
>>> j.time, j.calendar
('+1521-08-13T00:00:00Z', 'Q1985786')
>>> QuantityValue.from_rdf("19460", unit="http://www.wikidata.org/entity/Q199").amount
'+19460'
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict

from chaingraph.errors import InvalidInput
from chaingraph.ids import from_iri

__all__ = [
    "GREGORIAN",
    "JULIAN",
    "VALUE_COLUMNS",
    "CoordinateValue",
    "EntityValue",
    "MonolingualValue",
    "QuantityValue",
    "StringValue",
    "TimeValue",
    "Value",
    "gregorian_to_julian",
    "julian_day_number",
    "julian_to_gregorian",
    "value_columns",
    "value_from_columns",
    "value_from_json",
]

GREGORIAN = "Q1985727"
JULIAN = "Q1985786"

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_TIME = re.compile(r"([+-]?)(\d+)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z?")


def _calendar_id(value: str | None) -> str:
    if not value:
        return GREGORIAN
    return from_iri(value) or value


def julian_day_number(year: int, month: int, day: int, julian: bool) -> int:
    """Julian Day Number of an astronomical-year date (Richards' algorithm).

    >>> julian_day_number(2000, 1, 1, julian=False), julian_day_number(-4712, 1, 1, julian=True)
    (2451545, 0)
    """
    a = (14 - month) // 12
    y = year + 4800 - a
    m = month + 12 * a - 3
    if julian:
        return day + (153 * m + 2) // 5 + 365 * y + y // 4 - 32083
    return day + (153 * m + 2) // 5 + 365 * y + y // 4 - y // 100 + y // 400 - 32045


def _fromjulian_day_number(jdn: int, julian: bool) -> tuple[int, int, int]:
    if julian:
        b, c = 0, jdn + 32082
    else:
        a = jdn + 32044
        b = (4 * a + 3) // 146097
        c = a - 146097 * b // 4
    d = (4 * c + 3) // 1461
    e = c - 1461 * d // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = 100 * b + d - 4800 + m // 10
    return year, month, day


def julian_to_gregorian(year: int, month: int, day: int) -> tuple[int, int, int]:
    """Convert an astronomical-year Julian date to proleptic Gregorian.

    >>> julian_to_gregorian(1521, 8, 13)
    (1521, 8, 23)
    """
    return _fromjulian_day_number(julian_day_number(year, month, day, julian=True), julian=False)


def gregorian_to_julian(year: int, month: int, day: int) -> tuple[int, int, int]:
    """Convert an astronomical-year proleptic Gregorian date to Julian.

    >>> gregorian_to_julian(1582, 10, 15)
    (1582, 10, 5)
    """
    return _fromjulian_day_number(julian_day_number(year, month, day, julian=False), julian=True)


@lru_cache(maxsize=65536)
def _time_parts(time: str) -> tuple[int, int, int]:
    """(historical year, month, day) of a canonical time string, parsed once per distinct string."""
    m = _TIME.fullmatch(time)
    if m is None:
        raise InvalidInput(f"time value {time!r} is not of the form +YYYY-MM-DDT00:00:00Z")
    return int(m.group(2)) * (-1 if m.group(1) == "-" else 1), int(m.group(3)), int(m.group(4))


def _format_time(year: int, month: int, day: int) -> str:
    sign = "-" if year < 0 else "+"
    return f"{sign}{abs(year):04d}-{month:02d}-{day:02d}T00:00:00Z"


class TimeValue(BaseModel):
    """A Wikidata time value in JSON form (historical years, no year 0)."""

    model_config = _FROZEN
    kind: Literal["time"] = "time"
    time: str
    precision: int
    calendar: str = GREGORIAN
    timezone: int = 0
    before: int = 0
    after: int = 0

    @classmethod
    def make(cls, year: int, month: int = 0, day: int = 0, *, precision: int,
             calendar: str = GREGORIAN, timezone: int = 0, before: int = 0,
             after: int = 0) -> TimeValue:
        """Build from a historical year (``-44`` = 44 BCE); digits below precision are zeroed."""
        if year == 0:
            raise InvalidInput("time value: year 0 does not exist in Wikidata's JSON numbering")
        if not 0 <= precision <= 14:
            raise InvalidInput(f"time value: precision {precision} is outside 0..14")
        if precision <= 9:
            month = day = 0
        elif precision == 10:
            day = 0
        return cls(time=_format_time(year, month, day), precision=precision,
                   calendar=_calendar_id(calendar), timezone=timezone, before=before, after=after)

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> TimeValue:
        """From the ``datavalue.value`` object of the JSON dump."""
        try:
            m = _TIME.fullmatch(str(value["time"]))
            precision = int(value["precision"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInput(f"time value {value!r}: missing or bad 'time'/'precision'") from exc
        if not m:
            raise InvalidInput(f"time value {value['time']!r} is not of the form +YYYY-MM-DDT00:00:00Z")
        year = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
        return cls.make(year, int(m.group(3)), int(m.group(4)), precision=precision,
                        calendar=_calendar_id(value.get("calendarmodel")),
                        timezone=int(value.get("timezone", 0) or 0),
                        before=int(value.get("before", 0) or 0), after=int(value.get("after", 0) or 0))

    @classmethod
    def from_rdf(cls, lexical: str, precision: int, calendar: str | None = None,
                 timezone: int = 0) -> TimeValue:
        """From an RDF ``wikibase:timeValue`` (XSD 1.1 numbering at precision ≥ 9)."""
        m = _TIME.fullmatch(lexical.strip())
        if not m:
            raise InvalidInput(f"RDF time value {lexical!r} is not an xsd:dateTime")
        year = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
        month, day = int(m.group(3)), int(m.group(4))
        cal = _calendar_id(calendar)
        if cal == JULIAN and precision >= 11:
            year, month, day = gregorian_to_julian(year, month, day)
        if precision >= 9:  # astronomical -> historical: 0 is 1 BCE
            if year <= 0:
                year -= 1
        elif year == 0:
            raise InvalidInput(f"RDF time value {lexical!r}: year 0 at precision {precision}")
        return cls.make(year, month, day, precision=precision, calendar=cal, timezone=timezone)

    @property
    def ymd(self) -> tuple[int, int, int]:
        """(historical year, month, day); month and day are 0 below their precision."""
        return _time_parts(self.time)

    @property
    def year(self) -> int:
        """Historical year: ``-44`` is 44 BCE, there is no year 0."""
        return self.ymd[0]

    @property
    def astronomical_year(self) -> int:
        """ISO 8601 / XSD 1.1 year: 1 BCE is 0, 44 BCE is -43."""
        y = self.year
        return y + 1 if y < 0 else y

    @property
    def month(self) -> int:
        return self.ymd[1]

    @property
    def day(self) -> int:
        return self.ymd[2]


def _decimal_string(text: str, what: str) -> str:
    text = text.strip()
    try:
        Decimal(text)
    except InvalidOperation as exc:
        raise InvalidInput(f"quantity {what} {text!r} is not a decimal number") from exc
    if not text.startswith(("+", "-")):
        text = "+" + text
    return text


def _unit_id(unit: str | None) -> str:
    if unit in (None, "", "1"):
        return "1"
    uid = from_iri(unit) or unit
    return "1" if uid == "Q199" else uid


class QuantityValue(BaseModel):
    """A quantity: exact decimal strings, unit ``"1"`` or a unit item id."""

    model_config = _FROZEN
    kind: Literal["quantity"] = "quantity"
    amount: str
    unit: str = "1"
    upper: str | None = None
    lower: str | None = None

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> QuantityValue:
        try:
            amount = str(value["amount"])
        except (KeyError, TypeError) as exc:
            raise InvalidInput(f"quantity value {value!r}: missing 'amount'") from exc
        up, lo = value.get("upperBound"), value.get("lowerBound")
        return cls.from_rdf(amount, unit=value.get("unit"), upper=up, lower=lo)

    @classmethod
    def from_rdf(cls, amount: str, unit: str | None = None, upper: str | None = None,
                 lower: str | None = None) -> QuantityValue:
        return cls(amount=_decimal_string(amount, "amount"), unit=_unit_id(unit),
                   upper=None if upper is None else _decimal_string(str(upper), "upper bound"),
                   lower=None if lower is None else _decimal_string(str(lower), "lower bound"))

    @property
    def decimal(self) -> Decimal:
        return Decimal(self.amount)


class EntityValue(BaseModel):
    """An entity-valued snak: an item, property or lexeme id."""

    model_config = _FROZEN
    kind: Literal["entity"] = "entity"
    id: str


class StringValue(BaseModel):
    """Strings, external ids, URLs, media names, math: text plus the property datatype."""

    model_config = _FROZEN
    kind: Literal["string"] = "string"
    text: str


class MonolingualValue(BaseModel):
    model_config = _FROZEN
    kind: Literal["monolingualtext"] = "monolingualtext"
    text: str
    language: str


class CoordinateValue(BaseModel):
    model_config = _FROZEN
    kind: Literal["globecoordinate"] = "globecoordinate"
    latitude: float
    longitude: float
    precision: float | None = None
    globe: str = "Q2"


Value = Union[TimeValue, QuantityValue, EntityValue, StringValue, MonolingualValue, CoordinateValue]

#: Columns that hold one snak value in the store (statements, qualifiers, references).
VALUE_COLUMNS: tuple[str, ...] = (
    "value_type", "object", "text", "lang", "time", "precision", "calendar", "timezone",
    "before", "after", "amount", "unit", "upper", "lower", "lat", "lon", "coord_precision",
    "globe",
)


def value_from_json(datavalue: dict[str, Any]) -> Value:
    """Parse a JSON ``datavalue`` (``{"value": ..., "type": ...}``)."""
    kind, value = datavalue.get("type"), datavalue.get("value")
    if kind == "wikibase-entityid":
        if not isinstance(value, dict):
            raise InvalidInput(f"entity value {value!r} is not an object")
        ident = value.get("id") or (
            {"item": "Q", "property": "P", "lexeme": "L"}.get(str(value.get("entity-type")), "Q")
            + str(value.get("numeric-id")))
        return EntityValue(id=str(ident))
    if kind == "time" and isinstance(value, dict):
        return TimeValue.from_json(value)
    if kind == "quantity" and isinstance(value, dict):
        return QuantityValue.from_json(value)
    if kind == "string":
        return StringValue(text=str(value))
    if kind == "monolingualtext" and isinstance(value, dict):
        return MonolingualValue(text=str(value.get("text", "")), language=str(value.get("language", "")))
    if kind == "globecoordinate" and isinstance(value, dict):
        return CoordinateValue(latitude=float(value["latitude"]), longitude=float(value["longitude"]),
                               precision=(None if value.get("precision") is None
                                          else float(value["precision"])),
                               globe=from_iri(str(value.get("globe") or "")) or "Q2")
    raise InvalidInput(f"unknown datavalue type {kind!r}")


def value_columns(value: Value | None) -> tuple[Any, ...]:
    """The store's value columns (in :data:`VALUE_COLUMNS` order) for one value or ``None``."""
    row: list[Any] = [None] * len(VALUE_COLUMNS)
    if value is None:
        return tuple(row)
    if isinstance(value, EntityValue):
        vt = {"Q": "item", "P": "property", "L": "lexeme"}.get(value.id[:1], "entity")
        row[0], row[1] = vt, value.id
    elif isinstance(value, TimeValue):
        row[0] = "time"
        row[4:10] = [value.time, value.precision, value.calendar, value.timezone, value.before, value.after]
    elif isinstance(value, QuantityValue):
        row[0] = "quantity"
        row[10:14] = [value.amount, value.unit, value.upper, value.lower]
    elif isinstance(value, StringValue):
        row[0], row[2] = "string", value.text
    elif isinstance(value, MonolingualValue):
        row[0], row[2], row[3] = "monolingualtext", value.text, value.language
    elif isinstance(value, CoordinateValue):
        row[0] = "globecoordinate"
        row[14:18] = [value.latitude, value.longitude, value.precision, value.globe]
    return tuple(row)


def value_from_columns(row: dict[str, Any]) -> Value | None:
    """Rebuild a value from a store row (a mapping with the :data:`VALUE_COLUMNS` keys)."""
    vt = row.get("value_type")
    if vt is None:
        return None
    if vt in ("item", "property", "lexeme", "entity"):
        return EntityValue(id=row["object"])
    if vt == "time":
        return TimeValue(time=row["time"], precision=row["precision"], calendar=row["calendar"],
                         timezone=row["timezone"] or 0, before=row["before"] or 0, after=row["after"] or 0)
    if vt == "quantity":
        return QuantityValue(amount=row["amount"], unit=row["unit"], upper=row["upper"], lower=row["lower"])
    if vt == "string":
        return StringValue(text=row["text"])
    if vt == "monolingualtext":
        return MonolingualValue(text=row["text"], language=row["lang"])
    if vt == "globecoordinate":
        return CoordinateValue(latitude=row["lat"], longitude=row["lon"],
                               precision=row["coord_precision"], globe=row["globe"])
    raise InvalidInput(f"unknown value_type {vt!r} in store row")
