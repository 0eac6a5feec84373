"""Distributions of crosswalk answers, and agreement with a second opinion.

:func:`summarise` counts a list of classifications over classes and over rules.
:func:`compare_reference` measures agreement of the explicit table with the proposed
classes of the reference notes (§4.3 of ``wikidata.md``, shipped as
``data/crosswalk/reference_4_3.tsv``); every disagreement's table reason must say why.

>>> from chaingraph.crosswalk.classifier import default_crosswalk
>>> cw = default_crosswalk()
>>> s = summarise([cw.classify("P361"), cw.classify("P527"), cw.classify("P9999999")])
>>> s.by_class["part-whole"], s.by_class["unclassified"], s.by_rule["table"]
(2, 1, 2)
>>> cmp = compare_reference(cw)
>>> cmp.total, cmp.agree + len(cmp.differences) == cmp.total
(252, True)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from chaingraph.crosswalk.classifier import RULES, Classification, Crosswalk
from chaingraph.crosswalk.tables import NOT_A_RELATION, VERDICTS
from chaingraph.errors import BadDumpLine, InvalidInput
from chaingraph.ids import pid
from chaingraph.resources import data_file

__all__ = ["CrosswalkSummary", "ReferenceComparison", "ReferenceDifference", "compare_reference", "summarise"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class CrosswalkSummary(BaseModel):
    """Counts of a classified property list: ``by_class`` has the seven classes plus
    ``not-a-relation`` and ``unclassified``; ``by_rule`` every rule name."""

    model_config = _FROZEN
    version: str
    total: int
    by_class: dict[str, int]
    by_rule: dict[str, int]


def summarise(results: Iterable[Classification]) -> CrosswalkSummary:
    """Distribution of ``results`` over classes/statuses and over deciding rules (zeros included)."""
    items = list(results)
    versions = {r.version for r in items}
    if len(versions) > 1:
        raise InvalidInput(f"classifications of several crosswalk versions mixed: {sorted(versions)}")
    by_class: Counter[str] = Counter(r.relation_class or r.status for r in items)
    by_rule: Counter[str] = Counter(r.rule for r in items)
    return CrosswalkSummary(
        version=versions.pop() if versions else "",
        total=len(items),
        by_class={name: by_class.get(name, 0) for name in (*VERDICTS, "unclassified")},
        by_rule={name: by_rule.get(name, 0) for name in RULES},
    )


class ReferenceDifference(BaseModel):
    model_config = _FROZEN
    property: str
    label: str
    reference_class: str
    relation_class: str | None
    status: str
    rule: str
    reason: str


class ReferenceComparison(BaseModel):
    """Agreement of a crosswalk with the reference's proposed classes."""

    model_config = _FROZEN
    version: str
    reference: str
    total: int
    agree: int
    differences: tuple[ReferenceDifference, ...]

    @property
    def agreement(self) -> float:
        return self.agree / self.total if self.total else 1.0


def _reference_rows(path: Path) -> list[tuple[str, str, str]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read reference classes ({exc})") from exc
    rows: list[tuple[str, str, str]] = []
    header: list[str] | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            if not {"pid", "label", "class"} <= set(header):
                raise BadDumpLine(
                    str(path), number, "header needs columns pid, label, class", "fix the header"
                )
            continue
        row = dict(zip(header, cells))
        if len(cells) != len(header) or row["class"] not in VERDICTS:
            raise BadDumpLine(
                str(path), number, "expected pid, label and one of the seven classes", "fix the row"
            )
        rows.append((pid(row["pid"], field=f"{path}:{number}"), row["label"], row["class"]))
    return rows


def compare_reference(crosswalk: Crosswalk, reference: Path | str | None = None) -> ReferenceComparison:
    """Compare ``crosswalk`` with a ``pid, label, class`` second opinion (default: the shipped §4.3 copy)."""
    path = Path(reference) if reference is not None else data_file("crosswalk/reference_4_3.tsv")
    rows = _reference_rows(path)
    differences = []
    for ident, label, proposed in rows:
        got = crosswalk.classify(ident)
        if (got.relation_class or NOT_A_RELATION if got.status != "unclassified" else None) != proposed:
            differences.append(
                ReferenceDifference(
                    property=ident,
                    label=label,
                    reference_class=proposed,
                    relation_class=got.relation_class,
                    status=got.status,
                    rule=got.rule,
                    reason=got.reason,
                )
            )
    return ReferenceComparison(
        version=crosswalk.version,
        reference=str(path),
        total=len(rows),
        agree=len(rows) - len(differences),
        differences=tuple(differences),
    )
