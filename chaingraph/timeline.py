"""Time: validity windows of statements, validity on a date, time sensitivity (DESIGN §11).

Every statement holds during a **window** derived from its time qualifiers, at their
precision (a start ``1995`` at year precision begins on 1 January 1995, an end ``1995``
ends on 31 December 1995; decades and centuries as Wikibase displays them):

* ``P580`` start time / ``P582`` end time bound the window (kind ``interval``);
* ``P585`` point in time alone marks an **event**: the fact holds from then on (kind
  ``event``: an award once received stays received), except for properties whose values
  **supersede** each other (``data/time_properties.tsv``, plus any property a store marks
  with the single-best-value constraint): there the value holds from its ``P585`` until the
  next later ``P585`` value of the same subject (kind ``superseding``), so on a date the
  value with the latest ``P585`` on or before it holds;
* with both ``P585`` and ``P580``/``P582``, start and end decide;
* several values of one qualifier give the widest window, flagged ``ambiguous_window``;
  ``somevalue`` gives an open bound flagged ``uncertain_start`` / ``uncertain_end``;
* no time qualifier: always (kind ``always``).

On a date (:class:`AsOf`: a day, or a month or year meaning "at some time in it") a
statement is **valid** when its window meets the date, and a valid preferred-rank statement
hides the normal-rank statements of the same subject and property (Wikidata's truthy
semantics). :meth:`Timeline.valid` computes that for arrays of statement ids at once; the
evidence graph applies it where it selects its edges (``TraversalPolicy.as_of``), so chains,
the shortcut proof and answer sets all see one filtered graph.

**Time sensitivity** of a statement, one reason code (the first that applies):
``ended`` (it has an end time), ``superseded`` (its subject has other values of the
property with other windows — events aside, which never end), ``changing_property`` (the
property changes by nature, ``data/time_properties.tsv``), else ``stable``.

Days are Julian Day Numbers (so Julian-calendar qualifiers and BCE years sit on one axis).

>>> from chaingraph.store import Batch, Store, qualifier_row, statement_row
>>> from chaingraph.values import EntityValue, TimeValue
>>> s = Store()
>>> s.write(Batch(statements=[statement_row("Q1$a", "Q1", "P54", EntityValue(id="Q2")),
...                           statement_row("Q1$b", "Q1", "P54", EntityValue(id="Q3"))],
...               qualifiers=[qualifier_row("Q1$a", "P580", TimeValue.make(1990, precision=9)),
...                           qualifier_row("Q1$a", "P582", TimeValue.make(1995, precision=9)),
...                           qualifier_row("Q1$b", "P580", TimeValue.make(1996, precision=9))]))
>>> t = Timeline.from_store(s)
>>> t.window("Q1$a").describe(), t.sensitivity("Q1$a"), t.sensitivity("Q1$b")
('1990-01-01..1995-12-31', 'ended', 'superseded')
>>> t.valid(["Q1$a", "Q1$b", "Q9$x"], parse_as_of("1995-12-31")).tolist()
[True, False, True]
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from chaingraph.errors import InvalidInput
from chaingraph.resources import data_file
from chaingraph.values import JULIAN, TimeValue, Value, date_from_julian_day_number, julian_day_number

if TYPE_CHECKING:
    from chaingraph.store import Store

__all__ = [
    "SENSITIVITY",
    "AsOf",
    "DatedStatements",
    "Sensitivity",
    "TimeProperties",
    "TimeWindow",
    "Timeline",
    "day_text",
    "overall",
    "parse_as_of",
    "period_bounds",
    "time_properties",
    "valid_statements",
]

Sensitivity = Literal["stable", "ended", "superseded", "changing_property"]
#: reason codes, most telling first (a statement gets the first that applies)
SENSITIVITY: tuple[Sensitivity, ...] = ("ended", "superseded", "changing_property", "stable")
WindowKind = Literal["always", "interval", "event", "superseding"]

TIME_QUALIFIERS = ("P580", "P582", "P585")
_OPEN_LO = np.int64(-(2**62))
_OPEN_HI = np.int64(2**62)
# flag bits of a window
_AMBIGUOUS, _UNCERTAIN_START, _UNCERTAIN_END = 1, 2, 4
_FLAG_NAMES = ((_AMBIGUOUS, "ambiguous_window"), (_UNCERTAIN_START, "uncertain_start"),
               (_UNCERTAIN_END, "uncertain_end"))
_KINDS: tuple[WindowKind, ...] = ("always", "interval", "event", "superseding")


# -- days ------------------------------------------------------------------------------
def _jdn(year: Any, month: Any, day: Any, julian: Any) -> Any:
    """Julian Day Number of astronomical-year dates, scalars or numpy arrays alike."""
    a = (14 - month) // 12
    y = year + 4800 - a
    m = month + 12 * a - 3
    base = day + (153 * m + 2) // 5 + 365 * y + y // 4
    return np.where(julian, base - 32083, base - y // 100 + y // 400 - 32045)


def day_text(jdn: int) -> str:
    """A Julian Day Number as a proleptic Gregorian ISO date (astronomical year).

    >>> day_text(2451545), day_text(1721060)
    ('2000-01-01', '0000-01-01')
    """
    year, month, day = date_from_julian_day_number(jdn, julian=False)
    sign = "-" if year < 0 else ""
    return f"{sign}{abs(year):04d}-{month:02d}-{day:02d}"


def period_bounds(year: Any, month: Any, day: Any, precision: Any, julian: Any) -> tuple[Any, Any]:
    """First and last day (JDN) of time values given as arrays of JSON-numbered year (no
    year 0), month, day, precision and a Julian-calendar flag: the period the value names at
    its precision (month/day ``00`` lower it). Coarser than a year follows Wikibase's display
    rules: decade ``floor(Y/10)*10 … +9``, century and millennium ``ceil``-based (``2000`` at
    century precision is 1901–2000), coarser a magnitude ± one unit.

    >>> lo, hi = period_bounds(np.array([1995, 1995, 2000]), np.array([0, 2, 0]), np.array([0, 0, 0]),
    ...                        np.array([9, 10, 7]), np.array([False, False, False]))
    >>> [day_text(int(x)) for x in lo], [day_text(int(x)) for x in hi]
    (['1995-01-01', '1995-02-01', '1901-01-01'], ['1995-12-31', '1995-02-28', '2000-12-31'])
    """
    year = np.asarray(year, dtype=np.int64)
    month = np.asarray(month, dtype=np.int64)
    day = np.asarray(day, dtype=np.int64)
    p = np.minimum(np.asarray(precision, dtype=np.int64), 11)
    p = np.where((p >= 10) & (month == 0), 9, p)
    p = np.where((p == 11) & (day == 0), 10, p)
    julian = np.asarray(julian, dtype=bool)
    astro = np.where(year < 0, year + 1, year)
    mon = np.clip(month, 1, 12)
    # years covered by coarse precisions (historical numbering, as Wikibase displays them)
    mag, neg = np.abs(year), year < 0
    span = 10 ** np.clip(9 - p, 0, 18)
    dec = mag // 10 * 10
    cent = -(-mag // span)
    fy = np.where(p == 8, np.maximum(dec, 1),
                  np.where(p >= 6, (cent - 1) * span + 1, np.maximum(mag - span, 1)))
    ly = np.where(p == 8, dec + 9, np.where(p >= 6, cent * span, mag + span))
    fy, ly = np.where(neg, -ly, fy), np.where(neg, -fy, ly)
    fy = np.where(p >= 9, year, fy)
    ly = np.where(p >= 9, year, ly)
    fa = np.where(fy < 0, fy + 1, fy)
    la = np.where(ly < 0, ly + 1, ly)
    lo = np.where(p == 11, _jdn(astro, mon, np.maximum(day, 1), julian),
                  np.where(p == 10, _jdn(astro, mon, 1, julian), _jdn(fa, 1, 1, julian)))
    hi = np.where(p == 11, lo,
                  np.where(p == 10, _jdn(astro + mon // 12, mon % 12 + 1, 1, julian) - 1,
                           _jdn(la + 1, 1, 1, julian) - 1))
    return lo.astype(np.int64), hi.astype(np.int64)


# -- the as-of date ----------------------------------------------------------------------
_AS_OF = re.compile(r"(-?\d{1,16})(?:-(\d{2})(?:-(\d{2}))?)?")


@dataclass(frozen=True)
class AsOf:
    """A date to evaluate validity on: a day, or a month or year (``first``..``last`` JDN,
    proleptic Gregorian, astronomical years as in ISO 8601). A statement is valid as of a
    month or year when its window meets it at some time."""

    text: str
    first: int
    last: int


def parse_as_of(text: str | int | AsOf, *, field: str = "as_of") -> AsOf:
    """Read an ISO date (``2010-05-31``), month (``2010-05``) or year (``2010``; ``-0043`` is
    44 BCE, as in ISO 8601). Anything else is one :class:`~chaingraph.errors.InvalidInput`
    line naming the parameter ``field`` (the CLI shows its flag, ``--as-of``).

    >>> a = parse_as_of("1990"); (a.text, day_text(a.first), day_text(a.last))
    ('1990', '1990-01-01', '1990-12-31')
    >>> try:
    ...     parse_as_of("1990-13-01")
    ... except InvalidInput as err:
    ...     print(str(err)[:34])
    as_of: '1990-13-01' is not a date;
    """
    if isinstance(text, AsOf):
        return text
    raw = str(text).strip()
    m = _AS_OF.fullmatch(raw)
    bad = InvalidInput(f"{field}: {str(text)!r} is not a date; give an ISO date (2010-05-31), a month "
                       "(2010-05) or a year (2010)").about(field)
    if m is None or isinstance(text, bool):
        raise bad
    year = int(m.group(1))
    month = int(m.group(2)) if m.group(2) else None
    day = int(m.group(3)) if m.group(3) else None
    if month is not None and not 1 <= month <= 12:
        raise bad
    if month is None:
        first = julian_day_number(year, 1, 1, False)
        last = julian_day_number(year + 1, 1, 1, False) - 1
    elif day is None:
        first = julian_day_number(year, month, 1, False)
        last = julian_day_number(year + month // 12, month % 12 + 1, 1, False) - 1
    else:
        first = last = julian_day_number(year, month, day, False)
        if day < 1 or day_text(first)[-5:] != f"{month:02d}-{day:02d}":
            raise bad
    return AsOf(raw, first, last)


# -- which properties change --------------------------------------------------------------
@dataclass(frozen=True)
class TimeProperties:
    """``data/time_properties.tsv``: properties whose values supersede each other and
    properties whose values change by nature."""

    superseding: frozenset[str]
    changing: frozenset[str]
    source: str

    def with_superseding(self, extra: Collection[str]) -> TimeProperties:
        return TimeProperties(self.superseding | frozenset(extra), self.changing, self.source)


def _read_time_properties(path: Path) -> TimeProperties:
    superseding, changing = set(), set()
    header = True
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if header:
            header = False
            continue
        if len(cols) < 4 or cols[2] not in ("yes", "no") or cols[3] not in ("yes", "no"):
            raise InvalidInput(f"{path}:{n}: expected property, label, superseding (yes/no), changing "
                               "(yes/no), source; fix the line")
        if cols[2] == "yes":
            superseding.add(cols[0])
        if cols[3] == "yes":
            changing.add(cols[0])
    return TimeProperties(frozenset(superseding), frozenset(changing), str(path))


@lru_cache(maxsize=8)
def time_properties(path: str | None = None) -> TimeProperties:
    """The time-property table (default: the shipped ``data/time_properties.tsv``).

    >>> t = time_properties(); "P1082" in t.superseding, "P54" in t.changing, "P54" in t.superseding
    (True, True, False)
    """
    return _read_time_properties(Path(path) if path else data_file("time_properties.tsv"))


# -- windows as records -------------------------------------------------------------------
class TimeWindow(BaseModel):
    """A statement's validity window: first and last day (ISO, proleptic Gregorian; ``None``
    = open), how it was derived, and its flags."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    start: str | None = None
    end: str | None = None
    kind: WindowKind = "always"
    flags: tuple[str, ...] = ()

    def describe(self) -> str:
        """``1990-01-01..1995-12-31`` (``…`` for an open bound), ``always`` without qualifiers."""
        if self.kind == "always":
            return "always"
        text = f"{self.start or '…'}..{self.end or '…'}"
        return f"{text} ({', '.join(self.flags)})" if self.flags else text


_ALWAYS = TimeWindow()


# -- the timeline ---------------------------------------------------------------------------
def _col(rows: Mapping[str, Any], name: str, fill: Any) -> np.ndarray:
    col = rows[name]
    return np.ma.filled(col, fill) if np.ma.isMaskedArray(col) else np.asarray(col)


def _group_codes(*keys: np.ndarray) -> np.ndarray:
    """Integer code per row of the combined keys."""
    joined = keys[0].astype(str)
    for k in keys[1:]:
        joined = np.char.add(np.char.add(joined, "\x1f"), k.astype(str))
    return np.unique(joined, return_inverse=True)[1].reshape(-1)


@dataclass(frozen=True)
class Timeline:
    """Windows and sensitivity of the statements whose (subject, property) has a time
    qualifier or a preferred-rank statement; every other statement is ``always`` valid.
    Arrays are per statement, sorted by statement id. Build with :meth:`from_store` or
    :meth:`from_rows`."""

    statement_id: np.ndarray
    group: np.ndarray
    property: np.ndarray
    preferred: np.ndarray
    start: np.ndarray
    end: np.ndarray
    kind: np.ndarray
    flags: np.ndarray
    reason: np.ndarray
    properties: TimeProperties

    @classmethod
    def from_store(cls, store: Store, properties: TimeProperties | None = None) -> Timeline:
        props = properties or time_properties()
        return cls.from_rows(store.time_rows(TIME_QUALIFIERS),
                             props.with_superseding(store.superseding_properties()))

    @classmethod
    def from_rows(cls, rows: Mapping[str, Any], properties: TimeProperties | None = None) -> Timeline:
        """From :meth:`chaingraph.store.Store.time_rows` columns (one row per statement and
        time-qualifier snak; qualifier ``None`` for a statement without one)."""
        props = properties or time_properties()
        sid_all = np.asarray(rows["statement_id"]).astype(str)
        sids, first_row, inv = np.unique(sid_all, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        n = len(sids)
        subj = np.asarray(rows["subject"]).astype(str)[first_row]
        prop = np.asarray(rows["property"]).astype(str)[first_row]
        rank = np.asarray(rows["rank"]).astype(str)[first_row]
        qual = _col(rows, "qualifier", "").astype(str)
        snak = _col(rows, "qsnaktype", "").astype(str)
        year = _col(rows, "year", 1).astype(np.int64)
        prec = _col(rows, "precision", 9).astype(np.int64)
        lo, hi = period_bounds(year, _col(rows, "month", 0), _col(rows, "day", 0), prec,
                               _col(rows, "calendar", "").astype(str) == JULIAN)
        value = snak == "value"
        # a value that could not be parsed counts as unknown (somevalue)
        unknown = (snak == "somevalue") | (value & (np.ma.getmaskarray(rows["year"])
                                                     if np.ma.isMaskedArray(rows["year"]) else False))
        value &= ~unknown

        def count(mask: np.ndarray) -> np.ndarray:
            return np.bincount(inv[mask], minlength=n)

        def reduce(mask: np.ndarray, vals: np.ndarray, fill: np.int64, op: Any) -> np.ndarray:
            out = np.full(n, fill, dtype=np.int64)
            op.at(out, inv[mask], vals[mask])
            return out

        is_start, is_end, is_point = qual == "P580", qual == "P582", qual == "P585"
        n_start, n_end, n_point = count(is_start & value), count(is_end & value), count(is_point & value)
        any_interval = count(is_start | is_end) > 0
        u_start = count(is_start & unknown) > 0
        u_end = count(is_end & unknown) > 0
        u_point = count(is_point & unknown) > 0
        start = reduce(is_start & value, lo, _OPEN_HI, np.minimum)
        end = reduce(is_end & value, hi, _OPEN_LO, np.maximum)
        point = reduce(is_point & value, lo, _OPEN_HI, np.minimum)
        start = np.where((n_start == 0) | u_start, _OPEN_LO, start)
        end = np.where((n_end == 0) | u_end, _OPEN_HI, end)
        has_point = (n_point > 0) | u_point
        event = ~any_interval & has_point
        superseding = event & np.isin(prop, list(props.superseding))
        start = np.where(event, np.where(u_point, _OPEN_LO, point), start)
        end = np.where(event, _OPEN_HI, end)
        flags = ((n_start > 1) | (n_end > 1) | (event & (n_point > 1))) * _AMBIGUOUS
        flags |= np.where(any_interval, u_start, event & u_point) * _UNCERTAIN_START
        flags |= (any_interval & u_end) * _UNCERTAIN_END
        kind = np.where(any_interval, 1, np.where(superseding, 3, np.where(event, 2, 0)))
        group = _group_codes(subj, prop)
        # superseding values: each holds until the next later P585 value of its subject
        if superseding.any():
            idx = np.flatnonzero(superseding)
            order = idx[np.lexsort((start[idx], group[idx]))]
            g, s = group[order], start[order]
            nxt = np.full(len(order), _OPEN_HI, dtype=np.int64)
            # next strictly later start in the same group: scan unique (group, start) pairs
            pair = np.flatnonzero(np.r_[True, (g[1:] != g[:-1]) | (s[1:] != s[:-1])])
            pg, ps = g[pair], s[pair]
            pnext = np.where(np.r_[pg[1:] == pg[:-1], False], np.r_[ps[1:], _OPEN_HI], _OPEN_HI)
            which = np.searchsorted(pair, np.arange(len(order)), side="right") - 1
            nxt = pnext[which]
            end[order] = np.where(nxt == _OPEN_HI, _OPEN_HI, nxt - 1)
        # sensitivity
        ended = any_interval & ((n_end > 0) | u_end)
        lasting = ~event  # events never end, so they supersede nothing
        win = _group_codes(group, start, end)
        distinct_win = np.zeros(group.max() + 1 if n else 0, dtype=np.int64)
        uniq = (np.unique(np.stack([group[lasting], win[lasting]]), axis=1) if lasting.any()
                else np.empty((2, 0)))
        np.add.at(distinct_win, uniq[0].astype(np.int64), 1)
        sup_groups = np.zeros_like(distinct_win)
        if superseding.any():
            sg = np.unique(np.stack([group[superseding], start[superseding]]), axis=1)
            np.add.at(sup_groups, sg[0].astype(np.int64), 1)
        superseded = (lasting & (distinct_win[group] > 1)) | (superseding & (sup_groups[group] > 1))
        changing = np.isin(prop, list(props.changing))
        reason = np.where(ended, 0, np.where(superseded, 1, np.where(changing, 2, 3)))
        return cls(sids, group, prop, rank == "preferred", start, end, kind.astype(np.int8),
                   flags.astype(np.int8), reason.astype(np.int8), props)

    # -- per statement ----------------------------------------------------------------
    def _find(self, statement_ids: Sequence[str] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = np.asarray(statement_ids).astype(str)
        if not len(self.statement_id):
            return np.zeros(len(q), dtype=np.int64), np.zeros(len(q), dtype=bool)
        pos = np.searchsorted(self.statement_id, q)
        pos = np.minimum(pos, len(self.statement_id) - 1)
        return pos, self.statement_id[pos] == q

    def window(self, statement_id: str) -> TimeWindow:
        """The :class:`TimeWindow` of one statement (``always`` when it has no time qualifier)."""
        pos, found = self._find([statement_id])
        if not found[0]:
            return _ALWAYS
        i = int(pos[0])
        kind = _KINDS[int(self.kind[i])]
        if kind == "always":
            return _ALWAYS
        lo, hi = int(self.start[i]), int(self.end[i])
        return TimeWindow(start=None if lo == _OPEN_LO else day_text(lo),
                          end=None if hi == _OPEN_HI else day_text(hi), kind=kind,
                          flags=tuple(name for bit, name in _FLAG_NAMES if int(self.flags[i]) & bit))

    def sensitivity(self, statement_id: str, property_id: str | None = None) -> Sensitivity:
        """The reason code of one statement; ``property_id`` decides ``changing_property``
        for a statement outside the timeline (no time qualifier, no dated sibling)."""
        pos, found = self._find([statement_id])
        if found[0]:
            return SENSITIVITY[int(self.reason[int(pos[0])])]
        return "changing_property" if property_id in self.properties.changing else "stable"

    # -- on a date ----------------------------------------------------------------------
    def holds(self, as_of: AsOf) -> np.ndarray:
        """Per timeline statement: valid as of the date (window meets it, and no valid
        preferred statement of the same subject and property hides it)."""
        ok = (self.start <= as_of.last) & (self.end >= as_of.first)
        if self.preferred.any():
            pref = np.zeros(int(self.group.max()) + 1, dtype=bool)
            pref[self.group[ok & self.preferred]] = True
            ok &= self.preferred | ~pref[self.group]
        return ok

    def valid(self, statement_ids: Sequence[str] | np.ndarray, as_of: AsOf) -> np.ndarray:
        """Boolean mask: which of ``statement_ids`` are valid as of the date (statements outside
        the timeline always are)."""
        pos, found = self._find(statement_ids)
        out = np.ones(len(found), dtype=bool)
        if found.any():
            out[found] = self.holds(as_of)[pos[found]]
        return out

    def invalid_ids(self, as_of: AsOf) -> frozenset[str]:
        """Statement ids not valid as of the date (for lookups that read statements directly)."""
        return frozenset(self.statement_id[~self.holds(as_of)].tolist())

    def reasons(self, statement_ids: Iterable[str], properties: Iterable[str]) -> list[Sensitivity]:
        return [self.sensitivity(s, p) for s, p in zip(statement_ids, properties)]

    def why_invalid(self, statement_id: str, as_of: AsOf) -> str:
        """Why a statement is not valid as of the date, naming its window."""
        window = self.window(statement_id)
        pos, found = self._find([statement_id])
        if found[0] and self.start[pos[0]] <= as_of.last and self.end[pos[0]] >= as_of.first:
            return (f"holds {window.describe()}, but a preferred-rank value of {self.property[pos[0]]} "
                    f"holds on {as_of.text} and hides it")
        return f"holds {window.describe()}, not on {as_of.text}"


class DatedStatements:
    """A store's statements as of one date: the filter the evidence graph applies where it
    selects its edges (:meth:`keep`), remembering what it left out and why."""

    def __init__(self, store: Store, as_of: str | AsOf, properties: TimeProperties | None = None) -> None:
        self.as_of = parse_as_of(as_of)
        self.timeline = Timeline.from_store(store, properties)
        self.invalid = self.timeline.invalid_ids(self.as_of)
        self._dropped: list[tuple[str, str, str, str]] = []

    def holds(self, statement_id: str) -> bool:
        return statement_id not in self.invalid

    def keep(self, cols: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Edge columns (``statement_id``, ``subject``, ``property``, ``object``, …) without the
        rows not valid on the date."""
        mask = self.timeline.valid(cols["statement_id"], self.as_of)
        if mask.all():
            return dict(cols)
        drop = ~mask
        self._dropped += zip(*(np.asarray(cols[k])[drop].tolist()
                               for k in ("statement_id", "subject", "property", "object")))
        return {k: np.asarray(v)[mask] for k, v in cols.items()}

    def keep_table(self, table: Any, *, record: bool = True) -> Any:
        """:meth:`keep` for an Arrow table of edges (``record=False``: do not remember the rows
        left out, e.g. literal statements)."""
        import pyarrow as pa

        sids = np.asarray(table["statement_id"].to_numpy(zero_copy_only=False))
        mask = self.timeline.valid(sids, self.as_of)
        if mask.all():
            return table
        if record:
            dropped = table.filter(pa.array(~mask))
            self._dropped += zip(*(dropped[k].to_pylist() for k in ("statement_id", "subject", "property",
                                                                     "object")))
        return table.filter(pa.array(mask))

    def excluded_edges(self) -> tuple[tuple[str, str, str, str], ...]:
        """``(statement id, subject, property, object)`` of the edges :meth:`keep` left out."""
        return tuple(self._dropped)


def overall(reasons: Iterable[str]) -> Sensitivity:
    """The sensitivity of several steps or values: ``stable`` only when all are, else the
    first reason of :data:`SENSITIVITY` among them.

    >>> overall(["stable", "changing_property", "ended"]), overall(["stable"]), overall([])
    ('ended', 'stable', 'stable')
    """
    have = set(reasons)
    return next((r for r in SENSITIVITY if r in have), "stable")


def valid_statements(qualifiers: Sequence[Sequence[tuple[str, Value | None]]], ranks: Sequence[str],
                     property_id: str | None, as_of: AsOf | str,
                     properties: TimeProperties | None = None) -> list[bool]:
    """Which of several statements of one subject and property hold on a date, by the same
    rules as :class:`Timeline` (for statement sets that are not in a store, e.g. fusion
    inputs). ``qualifiers`` per statement are ``(property, value)`` pairs; a ``None`` value
    is an unknown bound.

    >>> y = lambda n: TimeValue.make(n, precision=9)
    >>> valid_statements([[("P585", y(2000))], [("P585", y(2010))], []], ["normal"] * 3, "P1082", "2005")
    [True, False, True]
    """
    a = parse_as_of(as_of)
    rows: dict[str, list[Any]] = {k: [] for k in (
        "statement_id", "subject", "property", "rank", "qualifier", "qsnaktype", "year", "month", "day",
        "precision", "calendar")}
    missing: list[bool] = []
    for i, (quals, rank) in enumerate(zip(qualifiers, ranks)):
        timed: list[tuple[str | None, Value | None]] = [(p, v) for p, v in quals if p in TIME_QUALIFIERS]
        for p, v in timed or [(None, None)]:
            y, m, d = v.ymd if isinstance(v, TimeValue) else (1, 0, 0)
            rows["statement_id"].append(f"{i:09d}")
            rows["subject"].append("subject")
            rows["property"].append(property_id or "?")
            rows["rank"].append(rank)
            rows["qualifier"].append(p or "")
            snak = "value" if isinstance(v, TimeValue) else "somevalue"
            rows["qsnaktype"].append("" if p is None else snak)
            rows["year"].append(y)
            rows["month"].append(m)
            rows["day"].append(d)
            rows["precision"].append(v.precision if isinstance(v, TimeValue) else 9)
            rows["calendar"].append(v.calendar if isinstance(v, TimeValue) else "")
            missing.append(not isinstance(v, TimeValue))
    if not missing:
        return []
    cols: dict[str, Any] = {k: np.asarray(v) for k, v in rows.items()}
    cols["year"] = np.ma.masked_array(cols["year"], mask=np.asarray(missing))
    timeline = Timeline.from_rows(cols, properties)
    return [bool(x) for x in timeline.valid([f"{i:09d}" for i in range(len(ranks))], a)]

