"""What is known about a property, and the reader for property-list files.

:class:`PropertyFacts` is the input of the crosswalk: a property id and whatever is known
about it (label, aliases, description, datatype, its own ``P31`` classes, ``P1647``
super-properties, ``P1696`` inverse). :func:`read_property_facts` reads the merged TSV
format of ``properties/wikidata_properties_merged.tsv.gz`` (gzip'd or plain), whose
columns are ``pid, label_en, description_en, aliases_en_json, datatype, ...,
usage_count_2022, sqid_p31_classes, ...``. Two optional columns, ``superproperties`` and
``inverse`` (``;``-separated P-ids), carry ``P1647``/``P1696`` when a list has them.
Leading ``#`` lines document a list and are skipped.

:data:`PACKAGED_FACTS` are the facts shipped with chaingraph
(``data/crosswalk/properties.tsv.gz``: datatype, label and P31 classes of all 13,271
properties of the shared property list): a :class:`PackagedFacts` mapping that reads the
file when first looked into and parses a row when it is looked up.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "props.tsv"
>>> _ = path.write_text("pid\\tlabel_en\\tdatatype\\taliases_en_json\\tsqid_p31_classes\\n"
...                     "P361\\tpart of\\twikibase-item\\t[\\"part of\\"]\\tQ18647515\\n")
>>> facts = read_property_facts(path)
>>> facts["P361"].label, facts["P361"].classes
('part of', ('Q18647515',))
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chaingraph.errors import BadDumpLine, InvalidId, InvalidInput
from chaingraph.files import regular_file
from chaingraph.ids import is_entity_id, pid
from chaingraph.resources import data_file

if TYPE_CHECKING:  # DuckDB is imported by whoever opens a store, not by the crosswalk
    from chaingraph.store import Store

__all__ = [
    "PACKAGED_FACTS",
    "PackagedFacts",
    "PropertyFacts",
    "facts_from_store",
    "read_property_facts",
]

_FIX = "fix the line or regenerate the property list"


@dataclass(frozen=True, slots=True)
class PropertyFacts:
    """Everything the crosswalk may use about one property; only ``id`` is required.

    ``classes`` are the property's own ``P31`` classes (Q-ids), ``superproperties`` its
    ``P1647`` parents, ``inverse`` its ``P1696`` partner, ``usage`` a main-statement count.

    >>> PropertyFacts("P131", label="located in the administrative territorial entity").datatype is None
    True
    """

    id: str
    label: str | None = None
    aliases: tuple[str, ...] = ()
    description: str | None = None
    datatype: str | None = None
    classes: tuple[str, ...] = ()
    superproperties: tuple[str, ...] = ()
    inverse: str | None = None
    usage: int | None = None


def _open_text(path: Path) -> io.TextIOBase:
    regular_file(path, what="property list")
    try:
        if path.suffix == ".gz":
            import gzip  # not imported with the crosswalk: only a gzip'd list needs it

            return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
        return open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot open property list ({exc.strerror or exc})") from exc


def _ids(text: str, path: str, line: int, column: str, prefix: str) -> tuple[str, ...]:
    out = []
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        if not (is_entity_id(part) and part[0] == prefix):
            raise BadDumpLine(path, line, f"column {column}: {part!r} is not a {prefix}-id", _FIX)
        out.append(part)
    return tuple(out)


#: longest line of a property list (the real merged list's longest is under 4 KiB)
MAX_LINE_CHARS = 1024 * 1024


def _bounded_lines(handle: io.TextIOBase, path: str) -> Iterator[str]:
    """The lines of ``handle``; a line longer than :data:`MAX_LINE_CHARS` is a bad line."""
    number = 0
    while line := handle.readline(MAX_LINE_CHARS + 1):
        number += 1
        if len(line) > MAX_LINE_CHARS:
            raise BadDumpLine(path, number, f"a line longer than {MAX_LINE_CHARS:,} characters; "
                              "is this a property list?", _FIX)
        yield line


def _uncommented(handle: Iterable[str], skipped: list[int]) -> Iterator[str]:
    """The lines of ``handle`` after its leading ``#`` documentation lines (counted in ``skipped``)."""
    lines = iter(handle)
    for line in lines:
        if not line.startswith("#"):
            yield line
            break
        skipped[0] += 1
    yield from lines


def _rows(handle: io.TextIOBase, path: str) -> Iterator[tuple[int, dict[str, str]]]:
    skipped = [0]
    lines = _uncommented(_bounded_lines(handle, path), skipped)
    reader = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    try:
        header = next(reader)
    except StopIteration:
        raise InvalidInput(
            f"{path}:{1 + skipped[0]}: empty property list; expected a header with a 'pid' column"
        ) from None
    except (csv.Error, UnicodeDecodeError) as exc:
        raise BadDumpLine(path, 1 + skipped[0], f"unreadable header ({exc})", _FIX) from exc
    if "pid" not in header:
        raise InvalidInput(
            f"{path}:{1 + skipped[0]}: header has no 'pid' column (got {header[:4]}); "
            "is this a property list?"
        )
    width = len(header)
    try:
        for number, cells in enumerate(reader, start=2 + skipped[0]):
            if not cells:
                continue
            if len(cells) != width:
                raise BadDumpLine(
                    path, number, f"{len(cells)} tab-separated fields, the header has {width}", _FIX
                )
            yield number, dict(zip(header, cells))
    except (csv.Error, UnicodeDecodeError, EOFError, OSError) as exc:
        raise BadDumpLine(path, reader.line_num + skipped[0] + 1, f"unreadable line ({exc})", _FIX) from exc


def _facts(row: dict[str, str], path: str, line: int) -> PropertyFacts:
    raw_id = row["pid"]
    try:
        prop = pid(raw_id, field="pid")
    except InvalidId as exc:
        raise BadDumpLine(path, line, str(exc), _FIX) from exc
    aliases: tuple[str, ...] = ()
    raw_aliases = row.get("aliases_en_json", "").strip()
    if raw_aliases:
        import json  # only rows with aliases need it (it is not imported with the crosswalk)

        try:
            parsed = json.loads(raw_aliases)
        except json.JSONDecodeError as exc:
            raise BadDumpLine(path, line, f"column aliases_en_json is not JSON ({exc.msg})", _FIX) from exc
        if not isinstance(parsed, list) or not all(isinstance(a, str) for a in parsed):
            raise BadDumpLine(path, line, "column aliases_en_json must be a JSON list of strings", _FIX)
        aliases = tuple(parsed)
    usage_text = row.get("usage_count_2022", "").strip()
    if usage_text and not usage_text.isdigit():
        raise BadDumpLine(path, line, f"column usage_count_2022: {usage_text!r} is not a count", _FIX)
    inverse = _ids(row.get("inverse", ""), path, line, "inverse", "P")
    return PropertyFacts(
        id=prop,
        label=row.get("label_en") or None,
        aliases=aliases,
        description=row.get("description_en") or None,
        datatype=row.get("datatype") or None,
        classes=_ids(row.get("sqid_p31_classes", ""), path, line, "sqid_p31_classes", "Q"),
        superproperties=_ids(row.get("superproperties", ""), path, line, "superproperties", "P"),
        inverse=inverse[0] if inverse else None,
        usage=int(usage_text) if usage_text else None,
    )


def read_property_facts(path: str | Path) -> dict[str, PropertyFacts]:
    """Read a property list (merged TSV, ``.tsv`` or ``.tsv.gz``) into ``{pid: PropertyFacts}``.

    Raises :class:`~chaingraph.errors.BadDumpLine` naming file and line for a malformed
    row or a repeated id, and :class:`~chaingraph.errors.InvalidInput` for a missing file
    or header.
    """
    path = Path(path)
    name = str(path)
    facts: dict[str, PropertyFacts] = {}
    with _open_text(path) as handle:
        for line, row in _rows(handle, name):
            item = _facts(row, name, line)
            if item.id in facts:
                raise BadDumpLine(name, line, f"{item.id} appears twice", _FIX)
            facts[item.id] = item
    return facts


class PackagedFacts(Mapping[str, PropertyFacts]):
    """The property facts shipped in ``data/crosswalk/properties.tsv.gz`` (or another file of
    that layout), as a mapping that reads the file on first use and parses a row only when
    it is looked up: a crosswalk holding it costs nothing until a property outside its table
    is asked, and a few lookups cost a few rows. A malformed row is
    :class:`~chaingraph.errors.BadDumpLine` when it is looked up (the tests read every row
    of the shipped file).

    >>> facts = PackagedFacts()
    >>> facts.loaded, len(facts), facts["P571"].datatype, facts["P571"].label, facts.loaded
    (False, 13271, 'time', 'inception', True)
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else data_file("crosswalk/properties.tsv.gz")
        self._header: list[str] = []
        self._lines: dict[str, tuple[int, str]] | None = None  # pid -> (line number, line)
        self._parsed: dict[str, PropertyFacts] = {}

    @property
    def loaded(self) -> bool:
        """Whether the file has been read."""
        return self._lines is not None

    def _index(self) -> dict[str, tuple[int, str]]:
        if self._lines is None:
            name, skipped = str(self.path), [0]
            lines: dict[str, tuple[int, str]] = {}
            with _open_text(self.path) as handle:
                rest = _uncommented(_bounded_lines(handle, name), skipped)
                self._header = next(rest, "").rstrip("\r\n").split("\t")
                if self._header[0] != "pid":
                    raise InvalidInput(f"{name}:{1 + skipped[0]}: the first column must be 'pid'; "
                                       "regenerate the file")
                for number, line in enumerate(rest, start=2 + skipped[0]):
                    ident = line.partition("\t")[0]
                    if ident in lines:
                        raise BadDumpLine(name, number, f"{ident} appears twice", _FIX)
                    if line.strip():
                        lines[ident] = (number, line.rstrip("\r\n"))
            self._lines = lines
        return self._lines

    def __getitem__(self, ident: str) -> PropertyFacts:
        found = self._parsed.get(ident)
        if found is None:
            number, line = self._index()[ident]
            cells, width = line.split("\t"), len(self._header)
            if len(cells) != width:
                raise BadDumpLine(
                    str(self.path), number, f"{len(cells)} tab-separated fields, the header has {width}", _FIX
                )
            found = self._parsed[ident] = _facts(dict(zip(self._header, cells)), str(self.path), number)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._index())

    def __len__(self) -> int:
        return len(self._index())

    def __contains__(self, ident: object) -> bool:
        return ident in self._index()

    def __repr__(self) -> str:
        return f"PackagedFacts({self.path})"


#: the shipped property facts, read on first use (the default crosswalk's fallback facts)
PACKAGED_FACTS = PackagedFacts()


def facts_from_store(store: Store, ids: Collection[str] | None = None) -> dict[str, PropertyFacts]:
    """Facts (label, aliases, description, datatype) of the properties an evidence store knows,
    so that properties outside the explicit table are classified by datatype and keywords.

    >>> from chaingraph.store import Batch, Store, property_row
    >>> with Store() as s:
    ...     s.write(Batch(properties=[property_row("P2046", "area", datatype="quantity")]))
    ...     facts = facts_from_store(s)
    >>> facts["P2046"].datatype
    'quantity'
    """
    wanted = sorted(ids if ids is not None else store.datatypes(), key=lambda p: int(p[1:]))
    infos = store.property_infos([pid(ident, field="property") for ident in wanted])
    out: dict[str, PropertyFacts] = {}
    for ident in wanted:
        info = infos.get(ident)
        if info is not None:
            out[ident] = PropertyFacts(
                ident,
                label=info.label,
                aliases=info.aliases,
                description=info.description,
                datatype=info.datatype,
            )
    return out
