"""Wikidata unit items → pint units, with exact conversion factors.

The mapping is a documented data file, ``data/units.tsv`` (its header explains the
columns), plus ``data/units_pint.txt`` for the few units pint lacks or gets wrong for
Wikidata (international acre, calendar years, information and plane angle as their own
dimensions). pint decides *dimensions*; magnitudes never go through pint at fusion time.
On load, every row is checked against pint in a registry with ``Fraction`` magnitudes:
the row's exact factor must be exactly pint's factor to base units, so the table cannot
drift from pint silently. Conversion is then plain ``Fraction`` arithmetic
(``base = amount × factor + offset``): no float anywhere.

Pitfalls handled (``reference/wikidata.md`` §3.3): tonne is ``tonne`` (pint's ``ton`` is
the short ton, ``kt`` the knot); Wikidata symbols are never fed to pint; the acre is the
international acre; years are calendar years and never become seconds; degree Celsius
and Fahrenheit are offset units; every currency is its own dimension.

>>> table = unit_table()
>>> km2, m2 = table["Q712226"], table["Q25343"]
>>> convert(Fraction("173.46"), km2, m2)
Fraction(173460000, 1)
>>> table["Q191118"].pint, table.unit("1").qid
('tonne', 'Q199')
>>> convert(Fraction(20), table["Q25267"], table["Q42289"])
Fraction(68, 1)
>>> table["Q4917"].compatible(table["Q4916"])
False
>>> table["Q712226"].base, table["Q13147228"].base, table["Q4917"].base
('m^2', 'kg m^-3', 'USD')
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal, Inexact, Rounded
from fractions import Fraction
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from chaingraph.errors import IncompatibleUnits, InvalidInput, UnknownUnit
from chaingraph.ids import from_iri
from chaingraph.resources import data_file

__all__ = ["KINDS", "Unit", "UnitTable", "convert", "finite_or_fraction", "unit_id", "unit_table"]

#: the ``kind`` column: plain multiplicative unit, offset unit (temperatures), currency
KINDS = ("unit", "offset", "currency")
_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[Inexact, Rounded])
_BASE_SYMBOLS = {"[length]": "m", "[mass]": "kg", "[time]": "s", "[temperature]": "K", "[current]": "A",
                 "[substance]": "mol", "[luminosity]": "cd", "[calendar_time]": "year",
                 "[information]": "bit", "[angle]": "degree"}
_COLUMNS = ("qid", "label", "pint", "factor", "offset", "kind", "wikibase_factor", "note")


def unit_id(unit: str | None) -> str:
    """The unit item id of a quantity's unit: ``"1"``, ``Q199`` and their IRIs are ``Q199``.

    >>> unit_id("http://www.wikidata.org/entity/Q712226"), unit_id("1")
    ('Q712226', 'Q199')
    """
    if unit in (None, "", "1"):
        return "Q199"
    return from_iri(unit) or unit


@dataclass(frozen=True)
class Unit:
    """One row of the unit table, with the dimension pint gives its expression."""

    qid: str
    label: str
    pint: str
    factor: Fraction
    offset: Fraction
    kind: str
    dimension: str
    wikibase_factor: str = ""
    note: str = ""

    @cached_property
    def base(self) -> str:
        """The base unit its amounts convert to, in SI symbols (``m^2``, ``kg m^-3``, ``K``)."""
        if self.dimension == "dimensionless":
            return "1"
        parts = []
        for term in self.dimension.split():
            name, _, power = term.partition("^")
            symbol = _BASE_SYMBOLS.get(name, name.strip("[]").removeprefix("currency_"))
            parts.append((power.startswith("-"), symbol + (f"^{power}" if power else "")))
        return " ".join(text for _, text in sorted(parts))

    @cached_property
    def exact(self) -> tuple[Decimal | Fraction, Decimal | Fraction]:
        """Factor and offset as ``Decimal`` when finite decimals (fast exact arithmetic)."""
        return finite_or_fraction(self.factor), finite_or_fraction(self.offset)

    @cached_property
    def is_offset(self) -> bool:
        return self.offset != 0

    @cached_property
    def is_base(self) -> bool:
        """Factor 1 and no offset: amounts are already in base units."""
        return self.factor == 1 and self.offset == 0

    def compatible(self, other: Unit) -> bool:
        """Same dimension (currencies: the same currency)."""
        return self.dimension == other.dimension

    def to_base(self, amount: Fraction) -> Fraction:
        """Exact amount in pint's base units of the dimension."""
        if self.offset:
            return amount * self.factor + self.offset
        return amount if self.factor == 1 else amount * self.factor

    def from_base(self, amount: Fraction) -> Fraction:
        if self.offset:
            return (amount - self.offset) / self.factor
        return amount if self.factor == 1 else amount / self.factor


def finite_or_fraction(q: Fraction) -> Decimal | Fraction:
    """``q`` as an exact ``Decimal`` when it has a finite decimal form, else ``q``.

    >>> finite_or_fraction(Fraction(1, 8)), finite_or_fraction(Fraction(5, 18))
    (Decimal('0.125'), Fraction(5, 18))
    """
    den = q.denominator
    if den == 1:
        return Decimal(q.numerator)
    twos = (den & -den).bit_length() - 1
    rest = den >> twos
    fives = 0
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest != 1:
        return q
    places = max(twos, fives)
    return Decimal(q.numerator * (10**places // den)).scaleb(-places, _EXACT)


def convert(amount: Fraction, source: Unit, target: Unit) -> Fraction:
    """Exact conversion; :class:`IncompatibleUnits` across dimensions or currencies."""
    if source.qid == target.qid:
        return amount
    if not source.compatible(target):
        detail = ("currencies are never converted" if "currency" in (source.kind, target.kind)
                  else f"{source.dimension} vs {target.dimension}")
        raise IncompatibleUnits(f"{source.qid} ({source.label})", f"{target.qid} ({target.label})", detail)
    return target.from_base(source.to_base(amount))


def _fraction(text: str, where: str) -> Fraction:
    try:
        return Fraction(text.strip() or "0")
    except (ValueError, ZeroDivisionError) as exc:
        raise InvalidInput(f"{where}: {text!r} is not an exact decimal or ratio p/q") from exc


def _dimension_string(dimensionality: Any) -> str:
    parts = sorted((str(k), Fraction(v)) for k, v in dict(dimensionality).items())
    if not parts:
        return "dimensionless"
    return " ".join(k if e == 1 else f"{k}^{e}" for k, e in parts)


def _registry(extra: Path) -> Any:
    import pint  # deferred: pint takes a tenth of a second to import and build

    ureg: Any = pint.UnitRegistry(non_int_type=Fraction)
    ureg.load_definitions(str(extra))
    return ureg


class UnitTable:
    """The unit table: Q-id → :class:`Unit`, loaded from a TSV and checked against pint."""

    def __init__(self, units: dict[str, Unit], source: str = "") -> None:
        self._units = units
        self.source = source
        self._bases: dict[str, Unit | None] = {}

    @classmethod
    def load(cls, path: str | Path | None = None, pint_definitions: str | Path | None = None) -> UnitTable:
        """Read ``path`` (default: the packaged ``data/units.tsv``) and verify it with pint."""
        path = Path(path) if path is not None else data_file("units.tsv")
        extra = Path(pint_definitions) if pint_definitions is not None else data_file("units_pint.txt")
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"{path}: cannot read the unit table ({exc.strerror})") from exc
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
        rows = list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
        if not rows or tuple(rows[0].keys()) != _COLUMNS:
            raise InvalidInput(f"{path}: header must be {' '.join(_COLUMNS)} (tab-separated)")
        ureg = _registry(extra)
        units: dict[str, Unit] = {}
        for n, row in enumerate(rows, start=2):
            where = f"{path}: row {n} ({row['qid']})"
            if row["kind"] not in KINDS:
                raise InvalidInput(f"{where}: kind {row['kind']!r} is not one of {', '.join(KINDS)}")
            if row["qid"] in units:
                raise InvalidInput(f"{where}: duplicate unit item")
            factor, offset = _fraction(row["factor"], where), _fraction(row["offset"], where)
            if factor <= 0:
                raise InvalidInput(f"{where}: factor must be positive")
            if row["kind"] == "currency":
                if row["pint"] not in ureg:
                    ureg.define(f"{row['pint']} = [{row['pint']}]")
                dimension = f"[{row['pint']}]"
            else:
                dimension = _check_with_pint(ureg, row["pint"], factor, offset, where)
            units[row["qid"]] = Unit(row["qid"], row["label"], row["pint"], factor, offset, row["kind"],
                                     dimension, row["wikibase_factor"], row["note"])
        return cls(units, str(path))

    def base_unit(self, dimension: str) -> Unit | None:
        """The coherent unit of a dimension (factor 1, no offset; the lowest Q-id if several),
        e.g. metre for ``[length]``, year for ``[calendar_time]``; ``None`` if the table has none.

        >>> unit_table().base_unit("[length]^2").label
        'square metre'
        """
        if dimension not in self._bases:
            found = [u for u in self._units.values() if u.dimension == dimension and u.is_base]
            self._bases[dimension] = min(found, key=lambda u: int(u.qid[1:])) if found else None
        return self._bases[dimension]

    def get(self, unit: str | None) -> Unit | None:
        """The row of a unit (``"1"``, an IRI or a Q-id), or ``None``."""
        return self._units.get(unit_id(unit))

    def unit(self, unit: str | None) -> Unit:
        """Like :meth:`get`, but :class:`UnknownUnit` when the table lacks it."""
        found = self._units.get(unit_id(unit))
        if found is None:
            raise UnknownUnit(unit_id(unit))
        return found

    def __getitem__(self, qid: str) -> Unit:
        return self.unit(qid)

    def __contains__(self, unit: object) -> bool:
        return isinstance(unit, str) and unit_id(unit) in self._units

    def __iter__(self) -> Iterator[Unit]:
        return iter(self._units.values())

    def __len__(self) -> int:
        return len(self._units)


def _check_with_pint(ureg: Any, expression: str, factor: Fraction, offset: Fraction, where: str) -> str:
    import pint

    try:
        one = ureg.Quantity(Fraction(1), expression)
        if offset:
            zero = ureg.Quantity(Fraction(0), expression).to_base_units().magnitude
            got_factor = Fraction(one.to_base_units().magnitude) - Fraction(zero)
            got_offset = Fraction(zero)
        else:
            got_factor, got_offset = Fraction(one.to_base_units().magnitude), Fraction(0)
        dimension = _dimension_string(one.dimensionality)
    except (pint.errors.PintError, AttributeError, TypeError) as exc:
        raise InvalidInput(f"{where}: pint cannot use {expression!r} ({exc})") from exc
    if (got_factor, got_offset) != (factor, offset):
        raise InvalidInput(f"{where}: the table says factor {factor}, offset {offset} but pint gives "
                           f"{got_factor}, {got_offset} for {expression!r}; fix the row")
    return dimension


@cache
def unit_table() -> UnitTable:
    """The packaged unit table (loaded once per process)."""
    return UnitTable.load()
