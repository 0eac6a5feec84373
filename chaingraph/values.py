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

One validator for every entry point (dump loaders, SPARQL answers, fusion specs, task
files, store rows): a value that cannot exist is refused with
:class:`~chaingraph.errors.InvalidInput`, never rolled over or computed with. Refused:
NaN and infinite amounts, an amount outside its own bounds, a month above 12, a day its
month does not have (30 February), a precision outside 0..14, and — so that a few bytes
of input cannot demand gigabytes of exact arithmetic — amounts with more than
:data:`MAX_AMOUNT_DIGITS` digits or a decimal exponent beyond ±:data:`MAX_AMOUNT_EXPONENT`,
and years with more than :data:`MAX_YEAR_DIGITS` digits. These limits are far beyond any
Wikidata value (the largest quantities have about 30 digits, the oldest years 11).

>>> QuantityValue.from_rdf("+1e-999999999")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
chaingraph.errors.InvalidInput: quantity amount '+1e-999999999': its decimal exponent is beyond ±1000 ...
>>> TimeValue.make(2023, 2, 30, precision=11)
Traceback (most recent call last):
...
chaingraph.errors.InvalidInput: time value +2023-02-30T00:00:00Z: February 2023 has 28 days

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

import math
import re
from decimal import Decimal
from functools import lru_cache
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from chaingraph.errors import InvalidInput
from chaingraph.ids import from_iri

__all__ = [
    "GREGORIAN",
    "JULIAN",
    "MAX_AMOUNT_DIGITS",
    "MAX_AMOUNT_EXPONENT",
    "MAX_YEAR_DIGITS",
    "VALUE_COLUMNS",
    "CoordinateValue",
    "EntityValue",
    "MonolingualValue",
    "QuantityValue",
    "StringValue",
    "TimeValue",
    "Value",
    "check_decimal",
    "check_time",
    "date_from_julian_day_number",
    "gregorian_to_julian",
    "julian_day_number",
    "julian_to_gregorian",
    "value_columns",
    "value_from_columns",
    "value_from_json",
]

GREGORIAN = "Q1985727"
JULIAN = "Q1985786"

#: most digits an amount or bound may have (written out, exponent excluded)
MAX_AMOUNT_DIGITS = 1000
#: largest decimal exponent (in scientific notation) of an amount or bound, either sign
MAX_AMOUNT_EXPONENT = 1000
#: most digits of a year (the age of the universe has 11)
MAX_YEAR_DIGITS = 16
#: time zone offsets in minutes, and before/after tolerances, must fit these
_MAX_TIMEZONE = 1440
_MAX_TOLERANCE = 2**31 - 1

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_TIME = re.compile(r"([+-]?)(\d+)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z?")
_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")


def _built(cls: Any, **fields: Any) -> Any:
    """``cls(**fields)``, with the validator's refusal as :class:`InvalidInput` (not pydantic's)."""
    try:
        return cls(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        cause = (first.get("ctx") or {}).get("error")
        raise InvalidInput(str(cause) if isinstance(cause, InvalidInput) else
                           f"{cls.__name__}: {first.get('msg')}") from None


def check_decimal(text: str, what: str = "amount") -> Decimal:
    """The finite, bounded decimal of a quantity's amount or bound, or :class:`InvalidInput`.

    >>> check_decimal("+1.50"), check_decimal("-2E+3")
    (Decimal('1.50'), Decimal('-2E+3'))
    >>> check_decimal("NaN")
    Traceback (most recent call last):
    ...
    chaingraph.errors.InvalidInput: quantity amount 'NaN' is not a decimal number (finite: no NaN or Infinity)
    """
    m = _DECIMAL.fullmatch(text)
    if m is None or not (m.group(2) or m.group(3)):
        raise InvalidInput(f"quantity {what} {text[:60]!r} is not a decimal number (finite: no NaN "
                           "or Infinity)")
    digits = len(m.group(2)) + len(m.group(3) or "")
    if digits > MAX_AMOUNT_DIGITS:
        raise InvalidInput(f"quantity {what} {text[:20]}…: {digits} digits, more than the limit of "
                           f"{MAX_AMOUNT_DIGITS}")
    exponent = m.group(4)
    if exponent is not None and len(exponent.lstrip("+-").lstrip("0")) > 6:
        raise InvalidInput(f"quantity {what} {text[:60]!r}: its decimal exponent is beyond "
                           f"±{MAX_AMOUNT_EXPONENT} (the limit for quantities)")
    value = Decimal(text)
    if value and abs(value.adjusted()) > MAX_AMOUNT_EXPONENT:
        raise InvalidInput(f"quantity {what} {text[:60]!r}: its decimal exponent is beyond "
                           f"±{MAX_AMOUNT_EXPONENT} (the limit for quantities)")
    return value


def _days_in_month(year: int, month: int, calendar: str) -> int:
    """Days of ``month`` in historical ``year`` (no year 0) in the given calendar."""
    if month != 2:
        return 30 if month in (4, 6, 9, 11) else 31
    astro = year + 1 if year < 0 else year
    if calendar == JULIAN:
        leap = astro % 4 == 0
    else:
        leap = astro % 4 == 0 and (astro % 100 != 0 or astro % 400 == 0)
    return 29 if leap else 28


def check_time(time: str, precision: int, calendar: str = GREGORIAN, timezone: int = 0,
               before: int = 0, after: int = 0) -> None:
    """Refuse (:class:`InvalidInput`) a time value that cannot exist or is beyond the limits."""
    m = _TIME.fullmatch(time)
    if m is None:
        raise InvalidInput(f"time value {time[:60]!r} is not of the form +YYYY-MM-DDT00:00:00Z")
    if len(m.group(2).lstrip("0")) > MAX_YEAR_DIGITS:
        raise InvalidInput(f"time value {time[:24]}…: the year has more than {MAX_YEAR_DIGITS} digits")
    if isinstance(precision, bool) or not 0 <= precision <= 14:
        raise InvalidInput(f"time value {time}: precision {precision} is outside 0..14")
    year, month, day = _time_parts(time)
    if year == 0:
        raise InvalidInput(f"time value {time}: year 0 does not exist in Wikidata's JSON numbering")
    if month > 12:
        raise InvalidInput(f"time value {time}: month {month} does not exist (1..12, or 00 when unknown)")
    if day and not month:
        raise InvalidInput(f"time value {time}: a day without a month")
    if month and day > _days_in_month(year, month, calendar):
        raise InvalidInput(f"time value {time}: {_MONTHS[month - 1]} {year} has "
                           f"{_days_in_month(year, month, calendar)} days")
    if abs(timezone) > _MAX_TIMEZONE:
        raise InvalidInput(f"time value {time}: time zone offset {timezone} min is beyond ±{_MAX_TIMEZONE}")
    if not (0 <= before <= _MAX_TOLERANCE and 0 <= after <= _MAX_TOLERANCE):
        raise InvalidInput(f"time value {time}: before/after {before}/{after} must be 0..{_MAX_TOLERANCE}")


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


def date_from_julian_day_number(jdn: int, julian: bool) -> tuple[int, int, int]:
    """(astronomical year, month, day) of a Julian Day Number, in the Julian or the
    proleptic Gregorian calendar (the inverse of :func:`julian_day_number`).

    >>> date_from_julian_day_number(2451545, julian=False)
    (2000, 1, 1)
    """
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
    return date_from_julian_day_number(julian_day_number(year, month, day, julian=True), julian=False)


def gregorian_to_julian(year: int, month: int, day: int) -> tuple[int, int, int]:
    """Convert an astronomical-year proleptic Gregorian date to Julian.

    >>> gregorian_to_julian(1582, 10, 15)
    (1582, 10, 5)
    """
    return date_from_julian_day_number(julian_day_number(year, month, day, julian=False), julian=True)


@lru_cache(maxsize=65536)
def _time_parts(time: str) -> tuple[int, int, int]:
    """(historical year, month, day) of a canonical time string, parsed once per distinct string."""
    m = _TIME.fullmatch(time)
    if m is None or len(m.group(2).lstrip("0")) > MAX_YEAR_DIGITS:
        raise InvalidInput(f"time value {time[:60]!r} is not of the form +YYYY-MM-DDT00:00:00Z "
                           f"(with at most {MAX_YEAR_DIGITS} year digits)")
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

    @model_validator(mode="after")
    def _exists(self) -> TimeValue:
        check_time(self.time, self.precision, self.calendar, self.timezone, self.before, self.after)
        return self

    @classmethod
    def make(cls, year: int, month: int = 0, day: int = 0, *, precision: int,
             calendar: str = GREGORIAN, timezone: int = 0, before: int = 0,
             after: int = 0) -> TimeValue:
        """Build from a historical year (``-44`` = 44 BCE); digits below precision are zeroed."""
        if year == 0:
            raise InvalidInput("time value: year 0 does not exist in Wikidata's JSON numbering")
        if not 0 <= precision <= 14:
            raise InvalidInput(f"time value: precision {precision} is outside 0..14")
        if len(str(abs(year))) > MAX_YEAR_DIGITS:
            raise InvalidInput(f"time value: the year has more than {MAX_YEAR_DIGITS} digits")
        if precision <= 9:
            month = day = 0
        elif precision == 10:
            day = 0
        return _built(cls, time=_format_time(year, month, day), precision=precision,  # type: ignore[no-any-return]
                      calendar=_calendar_id(calendar), timezone=timezone, before=before, after=after)

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> TimeValue:
        """From the ``datavalue.value`` object of the JSON dump."""
        try:
            time = str(value["time"])
            precision = _small_int(value["precision"], "precision")
            timezone = _small_int(value.get("timezone", 0) or 0, "timezone")
            before = _small_int(value.get("before", 0) or 0, "before")
            after = _small_int(value.get("after", 0) or 0, "after")
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInput(f"time value {str(value)[:80]}: missing or bad 'time'/'precision'") from exc
        year, month, day = _time_parts(time)
        return cls.make(year, month, day, precision=precision,
                        calendar=_calendar_id(value.get("calendarmodel")),
                        timezone=timezone, before=before, after=after)

    @classmethod
    def from_rdf(cls, lexical: str, precision: int, calendar: str | None = None,
                 timezone: int = 0) -> TimeValue:
        """From an RDF ``wikibase:timeValue`` (XSD 1.1 numbering at precision ≥ 9)."""
        m = _TIME.fullmatch(lexical.strip())
        if not m or len(m.group(2).lstrip("0")) > MAX_YEAR_DIGITS:
            raise InvalidInput(f"RDF time value {lexical[:60]!r} is not an xsd:dateTime "
                               f"(with at most {MAX_YEAR_DIGITS} year digits)")
        year = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
        month, day = int(m.group(3)), int(m.group(4))
        cal = _calendar_id(calendar)
        if not 0 <= precision <= 14:
            raise InvalidInput(f"RDF time value {lexical!r}: precision {precision} is outside 0..14")
        if month > 12 or (month and day > _days_in_month(year if year > 0 else year - 1, month, GREGORIAN)):
            raise InvalidInput(f"RDF time value {lexical!r}: no such date")
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


def _small_int(value: object, what: str) -> int:
    """An ``int`` field of a JSON value; refuses floats, bools and numbers of absurd length."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{what} {value!r} is not an integer")
    if isinstance(value, str) and len(value.strip()) > 12:
        raise ValueError(f"{what} {value[:20]!r} is too long")
    if isinstance(value, int) and value.bit_length() > 40:
        raise ValueError(f"{what} is beyond any Wikidata value")
    return int(value)


def _decimal_string(text: str, what: str) -> str:
    text = text.strip()
    check_decimal(text, what)
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

    @model_validator(mode="after")
    def _exists(self) -> QuantityValue:
        amount = check_decimal(self.amount)
        lower = None if self.lower is None else check_decimal(self.lower, "lower bound")
        upper = None if self.upper is None else check_decimal(self.upper, "upper bound")
        if (lower is not None and lower > amount) or (upper is not None and upper < amount):
            raise InvalidInput(f"quantity {self.amount} lies outside its bounds "
                               f"[{self.lower}, {self.upper}]; swap or fix them")
        return self

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
        return _built(cls, amount=_decimal_string(amount, "amount"), unit=_unit_id(unit),  # type: ignore[no-any-return]
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

    @model_validator(mode="after")
    def _exists(self) -> CoordinateValue:
        if not (math.isfinite(self.latitude) and math.isfinite(self.longitude)) or abs(self.latitude) > 90 \
                or abs(self.longitude) > 360:
            raise InvalidInput(f"coordinate ({self.latitude}, {self.longitude}) is not a point on a globe")
        if self.precision is not None and not math.isfinite(self.precision):
            raise InvalidInput(f"coordinate precision {self.precision} is not a finite number")
        return self


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
        return _built(CoordinateValue, latitude=float(value["latitude"]),  # type: ignore[no-any-return]
                      longitude=float(value["longitude"]),
                      precision=(None if value.get("precision") is None else float(value["precision"])),
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
        return _built(TimeValue, time=row["time"], precision=row["precision"],  # type: ignore[no-any-return]
                      calendar=row["calendar"], timezone=row["timezone"] or 0, before=row["before"] or 0,
                      after=row["after"] or 0)
    if vt == "quantity":
        return _built(QuantityValue, amount=row["amount"], unit=row["unit"],  # type: ignore[no-any-return]
                      upper=row["upper"], lower=row["lower"])
    if vt == "string":
        return StringValue(text=row["text"])
    if vt == "monolingualtext":
        return MonolingualValue(text=row["text"], language=row["lang"])
    if vt == "globecoordinate":
        return _built(CoordinateValue, latitude=row["lat"], longitude=row["lon"],  # type: ignore[no-any-return]
                      precision=row["coord_precision"], globe=row["globe"])
    raise InvalidInput(f"unknown value_type {vt!r} in store row")
