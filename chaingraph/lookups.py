"""Statement values next to the evidence graph: display keys, matching, lookups.

The evidence graph holds item edges and, with literal nodes on, one vertex per literal
statement — but not the values themselves. Value clues (``x_i P v``) and value targets
need them, so :mod:`chaingraph.patterns` reads them through a :class:`ValueLookup`: the
task's embedded evidence (:class:`EmbeddedValues`) or a DuckDB store
(:class:`StoreValues`). :func:`value_matches` decides when a statement value satisfies a
clue or target value; :func:`value_key` is how a value is shown in an answer set.

>>> lookup = EmbeddedValues([("s1", "Q42", "P569", TimeValue.make(1952, 3, 11, precision=11))])
>>> lookup.subjects("P569", TimeValue.make(1952, precision=9)), value_key(lookup.literal_values(["s1"])["s1"])
({'Q42'}, '1952-03-11')
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Protocol

from chaingraph.values import (
    JULIAN,
    CoordinateValue,
    EntityValue,
    MonolingualValue,
    QuantityValue,
    StringValue,
    TimeValue,
    Value,
)

if TYPE_CHECKING:
    from chaingraph.store import Store

__all__ = ["EmbeddedValues", "FactLookup", "StoreValues", "ValueLookup", "value_key", "value_matches"]


def _time_unit(precision: int) -> int:
    return 10 ** (9 - precision) if precision < 9 else 1


def value_key(value: Value, like: Value | None = None) -> str:
    """A short display key for a value; with ``like`` a finer time is shown at ``like``'s
    precision (so answers compare with a coarser target).

    >>> value_key(TimeValue.make(1952, 3, 11, precision=11)), value_key(QuantityValue(amount="+42"))
    ('1952-03-11', '+42')
    >>> value_key(TimeValue.make(1952, 3, 11, precision=11), like=TimeValue.make(1952, precision=9))
    '1952'
    """
    if isinstance(value, TimeValue):
        if isinstance(like, TimeValue) and value.precision > like.precision:
            value = TimeValue.make(value.year, value.month or 1, value.day or 1,
                                   precision=like.precision, calendar=value.calendar)
        p, y = value.precision, value.year
        text = (f"{y}" if p == 9 else f"{y}-{value.month:02d}" if p == 10
                else f"{y}-{value.month:02d}-{value.day:02d}" if p == 11
                else f"{value.time}/{p}")
        return text + (" (Julian)" if value.calendar == JULIAN else "")
    if isinstance(value, QuantityValue):
        return value.amount if value.unit == "1" else f"{value.amount} {value.unit}"
    if isinstance(value, EntityValue):
        return value.id
    if isinstance(value, MonolingualValue):
        return f"{value.text!r}@{value.language}"
    if isinstance(value, StringValue):
        return repr(value.text)
    return f"Point({value.longitude} {value.latitude})"


def value_matches(wanted: Value, have: Value) -> bool:
    """Does a statement value ``have`` satisfy a clue or target value ``wanted``?

    Equal values match. A time matches at the *wanted* precision (a statement dated
    1952-03-11 satisfies "in 1952"; a year-precision statement does not satisfy a day);
    quantities compare as exact decimals with the same unit.

    >>> value_matches(TimeValue.make(1952, precision=9), TimeValue.make(1952, 3, 11, precision=11))
    True
    >>> value_matches(TimeValue.make(1952, 3, 11, precision=11), TimeValue.make(1952, precision=9))
    False
    >>> value_matches(QuantityValue(amount="+1.50"), QuantityValue(amount="1.5"))
    True
    """
    if isinstance(wanted, TimeValue) and isinstance(have, TimeValue):
        p = wanted.precision
        if have.precision < p or have.calendar != wanted.calendar:
            return False
        if p >= 11:
            return (have.year, have.month, have.day) == (wanted.year, wanted.month, wanted.day)
        if p == 10:
            return (have.year, have.month) == (wanted.year, wanted.month)
        unit = _time_unit(p)
        return have.year // unit == wanted.year // unit
    if isinstance(wanted, QuantityValue) and isinstance(have, QuantityValue):
        return Decimal(wanted.amount) == Decimal(have.amount) and wanted.unit == have.unit
    if isinstance(wanted, CoordinateValue) and isinstance(have, CoordinateValue):
        return ((wanted.latitude, wanted.longitude, wanted.globe)
                == (have.latitude, have.longitude, have.globe))
    return type(wanted) is type(have) and wanted == have


class ValueLookup(Protocol):
    """Statement values the graph does not hold (literals, non-step item properties)."""

    def subjects(self, property_id: str, value: Value) -> set[str]:
        """Entities with a non-deprecated ``property_id`` statement whose value matches ``value``."""
        ...

    def literal_values(self, statement_ids: Sequence[str]) -> dict[str, Value]:
        """The value of each literal statement."""
        ...


class FactLookup(ValueLookup, Protocol):
    """A :class:`ValueLookup` that can also list a subject's statements (clue proposal):
    :class:`StoreValues` and :class:`EmbeddedValues`."""

    def statements_of(self, subjects: Sequence[str]) -> dict[str, tuple[tuple[str, str, Value], ...]]:
        """Every statement of each subject: ``(statement_id, property, value)``."""
        ...


@dataclass(eq=False)
class EmbeddedValues:
    """Values from a task's embedded evidence: ``(statement_id, subject, property, value)``."""

    statements: Sequence[tuple[str, str, str, Value]] = ()
    _by_sid: dict[str, Value] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._by_sid = {sid: v for sid, _s, _p, v in self.statements}

    def subjects(self, property_id: str, value: Value) -> set[str]:
        return {s for _sid, s, p, v in self.statements if p == property_id and value_matches(value, v)}

    def literal_values(self, statement_ids: Sequence[str]) -> dict[str, Value]:
        return {sid: self._by_sid[sid] for sid in statement_ids if sid in self._by_sid}

    def statements_of(self, subjects: Sequence[str]) -> dict[str, tuple[tuple[str, str, Value], ...]]:
        """Every statement of each subject: ``(statement_id, property, value)`` in
        (property, statement id) order."""
        want = set(subjects)
        found: dict[str, list[tuple[str, str, Value]]] = {s: [] for s in subjects}
        for sid, s, p, v in sorted(self.statements, key=lambda t: (t[1], t[2], t[0])):
            if s in want:
                found[s].append((sid, p, v))
        return {s: tuple(v) for s, v in found.items()}


class StoreValues:
    """Values read from a :class:`~chaingraph.store.Store` (preferred and normal ranks).

    The store is read only: each statement's value, each property's statements and each
    subject's statements are read once and remembered."""

    def __init__(self, store: Store, *, exclude: Collection[str] = frozenset()) -> None:
        self.store = store
        #: statement ids to leave out (e.g. those not valid on an ``as_of`` date)
        self.exclude = frozenset(exclude)
        # statement id -> its value (None: no usable value); a read-only store never changes,
        # and every ablation of a task asks again for the literals of its answer layer
        self._literals: dict[str, Value | None] = {}
        self._by_property: dict[str, list[tuple[str, Value]]] = {}
        self._items: dict[str, dict[str, set[str]]] = {}
        self._by_subject: dict[str, tuple[tuple[str, str, Value], ...]] = {}

    def _property(self, property_id: str) -> list[tuple[str, Value]]:
        got = self._by_property.get(property_id)
        if got is None:
            got = self._by_property[property_id] = [
                (subject, have) for sid, subject, have in self.store.statement_values(property=property_id)
                if have is not None and sid not in self.exclude]
        return got

    def subjects(self, property_id: str, value: Value) -> set[str]:
        if isinstance(value, EntityValue):
            index = self._items.get(property_id)
            if index is None:
                index = self._items[property_id] = {}
                for s, have in self._property(property_id):
                    if isinstance(have, EntityValue):
                        index.setdefault(have.id, set()).add(s)
            return set(index.get(value.id, ()))
        return {s for s, have in self._property(property_id) if value_matches(value, have)}

    def literal_values(self, statement_ids: Sequence[str]) -> dict[str, Value]:
        todo = [sid for sid in dict.fromkeys(statement_ids) if sid not in self._literals]
        if todo:
            self._literals.update(dict.fromkeys(todo))
            for sid, _subject, have in self.store.statement_values(statement_ids=todo):
                if sid not in self.exclude:
                    self._literals[sid] = have
        return {sid: v for sid in statement_ids if (v := self._literals[sid]) is not None}

    def statements_of(self, subjects: Sequence[str]) -> dict[str, tuple[tuple[str, str, Value], ...]]:
        """Every statement of each subject with a usable value: ``(statement_id, property,
        value)`` in (property, statement id) order."""
        todo = [s for s in dict.fromkeys(subjects) if s not in self._by_subject]
        if todo:
            found: dict[str, list[tuple[str, str, Value]]] = {s: [] for s in todo}
            for sid, subject, prop, have in self.store.subject_statements(todo):
                if have is not None and sid not in self.exclude:
                    found[subject].append((sid, prop, have))
            for s, got in found.items():
                self._by_subject[s] = tuple(sorted(got, key=lambda t: (t[1], t[0])))
        return {s: self._by_subject[s] for s in subjects}
