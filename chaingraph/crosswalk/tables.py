"""The crosswalk's reference tables: documented TSV files, loaded and validated.

Every file is UTF-8 TSV. Lines starting with ``#`` are documentation; ``# key: value``
lines among them are metadata (``version``, ``family``). The first other line is the
header; the columns each file must have are listed in :data:`COLUMNS`. The shipped files
live in ``data/crosswalk/`` (see its README); :func:`load_tables` takes explicit paths.

>>> tables = load_tables()
>>> tables.table["P361"].verdict, tables.families["composition"]
('part-whole', 'part-whole')
>>> normalise_label("PartWhole"), normalise_label(" located_in "), normalise_label("Part-Whole")
('part whole', 'located in', 'part whole')
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from chaingraph.errors import BadDumpLine, InvalidInput
from chaingraph.files import regular_file
from chaingraph.ids import is_entity_id, is_item_id
from chaingraph.resources import data_file

__all__ = [
    "COLUMNS",
    "LABEL_SCHEMES",
    "NOT_A_RELATION",
    "RELATION_CLASSES",
    "VERDICTS",
    "CrosswalkTables",
    "Entry",
    "LabelEntry",
    "LexicalRule",
    "default_paths",
    "load_tables",
    "normalise_label",
]

RELATION_CLASSES = (
    "part-whole",
    "member-collection",
    "causal",
    "temporal",
    "spatial",
    "comparative",
    "attributive",
)
NOT_A_RELATION = "not-a-relation"
#: what a row of a table may decide: a relation class, or that the property is not a relation
VERDICTS = (*RELATION_CLASSES, NOT_A_RELATION)

#: values of the ``scheme`` column of labels.tsv; each is the rule a match records
LABEL_SCHEMES = ("class-name", "scheme12", "label")

#: file key -> (shipped file name, required columns)
COLUMNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "table": ("table.tsv", ("pid", "class", "reason")),
    "datatypes": ("datatypes.tsv", ("datatype", "class", "reason")),
    "time_properties": ("time_properties.tsv", ("pid", "class", "reason")),
    "property_classes": ("property_classes.tsv", ("qid", "class", "reason")),
    "inverses": ("inverses.tsv", ("pid", "inverse", "note")),
    "lexical": ("lexical.tsv", ("class", "fields", "pattern", "note")),
    "labels": ("labels.tsv", ("label", "class", "scheme", "note")),
}

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\s_\-/:.,;()'\"]+")
_FAMILY = re.compile(r"([a-z][a-z-]*) -> ([a-z-]+)\b")


def normalise_label(text: str) -> str:
    """Lower-case words separated by single spaces: CamelCase, ``_``, ``-`` and blanks split words."""
    return _SEPARATORS.sub(" ", _CAMEL.sub(" ", text)).strip().lower()


@dataclass(frozen=True, slots=True)
class Entry:
    """One decided row: a verdict (relation class or ``not-a-relation``) and why."""

    verdict: str
    reason: str
    line: int = 0

    @property
    def family(self) -> str | None:
        """The ``family:`` prefix of the reason, if any (``"location"`` for ``"location: ..."``)."""
        head, sep, _ = self.reason.partition(":")
        return head if sep and re.fullmatch(r"[a-z][a-z-]*", head) else None


@dataclass(frozen=True, slots=True)
class LexicalRule:
    """An ordered keyword rule: the first rule whose pattern matches decides."""

    order: int
    verdict: str
    pattern: re.Pattern[str]
    note: str
    description: bool = True  # False: the rule reads labels and aliases only


@dataclass(frozen=True, slots=True)
class LabelEntry:
    """A free-text relation label of another tool, or of the twelve-class scheme."""

    verdict: str
    scheme: str
    note: str


@dataclass(frozen=True)
class CrosswalkTables:
    """All reference tables of one crosswalk version."""

    version: str
    table: Mapping[str, Entry]
    families: Mapping[str, str]
    datatypes: Mapping[str, Entry]
    time_properties: Mapping[str, Entry]
    property_classes: Mapping[str, Entry]  # in priority order: the first listed class wins
    inverses: Mapping[str, str]  # both directions
    lexical: tuple[LexicalRule, ...]
    labels: Mapping[str, LabelEntry]
    paths: Mapping[str, Path]


def default_paths() -> dict[str, Path]:
    """The shipped file of every table (``data/crosswalk/...``)."""
    return {key: data_file(f"crosswalk/{name}") for key, (name, _) in COLUMNS.items()}


def _read(path: Path, key: str) -> tuple[dict[str, str], list[tuple[int, dict[str, str]]]]:
    """Metadata lines and ``(line number, row)`` pairs of one documented TSV file."""
    columns = COLUMNS[key][1]
    regular_file(path, what=f"crosswalk {key} file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read crosswalk {key} file ({exc})") from exc
    meta: dict[str, str] = {}
    header: list[str] | None = None
    rows: list[tuple[int, dict[str, str]]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if raw.startswith("#"):
            name, sep, value = raw[1:].strip().partition(":")
            if sep and re.fullmatch(r"[a-z_]+", name):
                meta[name] = f"{meta[name]}\n{value.strip()}" if name in meta else value.strip()
            continue
        cells = raw.split("\t")
        if header is None:
            header = cells
            missing = [c for c in columns if c not in header]
            if missing:
                raise BadDumpLine(
                    str(path),
                    number,
                    f"header lacks column(s) {', '.join(missing)}",
                    f"the {key} file needs columns {', '.join(columns)}",
                )
            continue
        if len(cells) != len(header):
            raise BadDumpLine(
                str(path),
                number,
                f"{len(cells)} tab-separated fields, the header has {len(header)}",
                "fix the row (a reason may not contain a tab)",
            )
        rows.append((number, dict(zip(header, cells))))
    if header is None:
        raise InvalidInput(f"{path}: crosswalk {key} file has no header line")
    return meta, rows


def _verdict(value: str, path: Path, line: int, allowed: tuple[str, ...] = VERDICTS) -> str:
    if value not in allowed:
        raise BadDumpLine(
            str(path),
            line,
            f"class {value!r} is not one of {', '.join(allowed)}",
            "use a relation class or not-a-relation",
        )
    return value


def _keyed(path: Path, key: str, id_column: str, check: object) -> dict[str, Entry]:
    _, rows = _read(path, key)
    out: dict[str, Entry] = {}
    for line, row in rows:
        ident = row[id_column].strip()
        if callable(check) and not check(ident):
            raise BadDumpLine(str(path), line, f"{id_column} {ident!r} is malformed", "fix the id")
        if ident in out:
            raise BadDumpLine(
                str(path),
                line,
                f"{ident} is listed twice (first at line {out[ident].line})",
                "keep one row per id",
            )
        reason = row["reason"].strip()
        if not reason:
            raise BadDumpLine(str(path), line, f"{ident} has no reason", "every row says why, in one line")
        out[ident] = Entry(_verdict(row["class"].strip(), path, line), reason, line)
    return out


def _is_pid(value: str) -> bool:
    return is_entity_id(value) and value.startswith("P")


def _families(meta: dict[str, str], path: Path) -> dict[str, str]:
    families: dict[str, str] = {}
    for text in meta.get("family", "").splitlines():
        m = _FAMILY.match(text)
        if not m or m.group(2) not in VERDICTS:
            raise InvalidInput(
                f"{path}: bad '# family:' line {text!r}; write '# family: NAME -> CLASS: meaning'"
            )
        families[m.group(1)] = m.group(2)
    return families


def _table(path: Path) -> tuple[str, dict[str, Entry], dict[str, str]]:
    meta, _ = _read(path, "table")
    families = _families(meta, path)
    table = _keyed(path, "table", "pid", _is_pid)
    for ident, entry in table.items():
        family = entry.family
        if family is None or family not in families:
            raise BadDumpLine(
                str(path),
                entry.line,
                f"{ident}: reason must start with a declared family ('{family or ''}' is not one)",
                "add a '# family:' line or fix the prefix",
            )
        if families[family] != entry.verdict:
            raise BadDumpLine(
                str(path),
                entry.line,
                f"{ident} is {entry.verdict} but family {family} is {families[family]}",
                "families are handled one way; move the row or the family",
            )
    return meta.get("version", ""), table, families


def _inverses(path: Path) -> dict[str, str]:
    _, rows = _read(path, "inverses")
    pairs: dict[str, str] = {}
    for line, row in rows:
        a, b = row["pid"].strip(), row["inverse"].strip()
        if not (_is_pid(a) and _is_pid(b)) or a == b:
            raise BadDumpLine(str(path), line, f"{a!r}/{b!r} is not a pair of distinct P-ids", "fix the pair")
        for x, y in ((a, b), (b, a)):
            if pairs.get(x, y) != y:
                raise BadDumpLine(
                    str(path), line, f"{x} already has inverse {pairs[x]}", "one inverse per property"
                )
            pairs[x] = y
    return pairs


def _lexical(path: Path) -> tuple[LexicalRule, ...]:
    _, rows = _read(path, "lexical")
    rules = []
    for order, (line, row) in enumerate(rows, start=1):
        try:
            pattern = re.compile(rf"\b(?:{row['pattern'].strip()})\b")
        except re.error as exc:
            raise BadDumpLine(
                str(path),
                line,
                f"pattern {row['pattern']!r} is not a regular expression ({exc})",
                "fix the pattern",
            ) from exc
        fields = row["fields"].strip()
        if fields not in ("label", "any"):
            raise BadDumpLine(str(path), line, f"fields {fields!r} is not 'label' or 'any'", "fix the row")
        verdict = _verdict(row["class"].strip(), path, line)
        rules.append(LexicalRule(order, verdict, pattern, row["note"].strip(), fields == "any"))
    return tuple(rules)


def _labels(path: Path) -> dict[str, LabelEntry]:
    _, rows = _read(path, "labels")
    labels: dict[str, LabelEntry] = {}
    for line, row in rows:
        key = normalise_label(row["label"])
        if not key or key in labels:
            raise BadDumpLine(
                str(path), line, f"label {row['label']!r} is empty or repeated", "one row per label"
            )
        scheme = row["scheme"].strip()
        if scheme not in LABEL_SCHEMES:
            raise BadDumpLine(
                str(path),
                line,
                f"scheme {scheme!r} is not one of {', '.join(LABEL_SCHEMES)}",
                "the scheme is the rule a match records",
            )
        labels[key] = LabelEntry(_verdict(row["class"].strip(), path, line), scheme, row["note"].strip())
    return labels


def load_tables(paths: Mapping[str, Path | str] | None = None) -> CrosswalkTables:
    """Load and validate every table; ``paths`` overrides shipped files by key (see :data:`COLUMNS`)."""
    chosen = default_paths()
    for key, value in (paths or {}).items():
        if key not in COLUMNS:
            raise InvalidInput(f"unknown crosswalk file key {key!r}; choose from {', '.join(COLUMNS)}")
        chosen[key] = Path(value)
    version, table, families = _table(chosen["table"])
    if chosen != default_paths() or not version:
        digest = hashlib.sha256(b"".join(chosen[key].read_bytes() for key in sorted(chosen))).hexdigest()[:12]
        version = f"{version or 'custom'}+{digest}"
    return CrosswalkTables(
        version=version,
        table=table,
        families=families,
        datatypes=_keyed(chosen["datatypes"], "datatypes", "datatype", None),
        time_properties=_keyed(chosen["time_properties"], "time_properties", "pid", _is_pid),
        property_classes=_keyed(chosen["property_classes"], "property_classes", "qid", is_item_id),
        inverses=_inverses(chosen["inverses"]),
        lexical=_lexical(chosen["lexical"]),
        labels=_labels(chosen["labels"]),
        paths=chosen,
    )
