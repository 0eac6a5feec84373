"""The library twin of ``chaingraph crosswalk``: classify ids, labels or a whole property list.

>>> r = crosswalk(["P131"], labels=["part_of"])
>>> [(c.property, c.relation_class, c.rule) for c in r.classifications]
[('P131', 'spatial', 'table'), ('part_of', 'part-whole', 'label')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from chaingraph.crosswalk.classifier import Classification, Crosswalk, default_crosswalk
from chaingraph.crosswalk.facts import PACKAGED_FACTS, PropertyFacts, read_property_facts
from chaingraph.crosswalk.summary import CrosswalkSummary, ReferenceComparison, compare_reference, summarise
from chaingraph.errors import InvalidInput, UnknownEntity
from chaingraph.ids import pid

__all__ = ["CrosswalkReport", "crosswalk"]


class CrosswalkReport(BaseModel):
    """What ``chaingraph crosswalk`` prints: classifications, and on request the distribution
    of a whole property list and the agreement with the reference's second opinion."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    version: str
    classifications: tuple[Classification, ...] = ()
    summary: CrosswalkSummary | None = None
    comparison: ReferenceComparison | None = None


def crosswalk(
    ids: Sequence[str] = (),
    *,
    labels: Sequence[str] = (),
    properties: Path | str | None = None,
    all: bool = False,
    compare_reference_table: bool = False,
    table: Path | str | None = None,
) -> CrosswalkReport:
    """Classify property ``ids`` and free-text ``labels``; with ``all``, every property of the
    ``properties`` list (summarised over classes and rules); with ``compare_reference_table``,
    the agreement of the explicit table with §4.3 of the reference notes.

    ``properties`` is a property list (merged TSV, ``.tsv`` or ``.tsv.gz``); without one, the
    property facts shipped with chaingraph are used (``data/crosswalk/properties.tsv.gz``).
    Ids are validated before anything is read (:class:`~chaingraph.errors.InvalidId`); an id
    that is neither in the table nor in the property list is :class:`~chaingraph.errors.UnknownEntity`.

    >>> [(c.property, c.relation_class) for c in crosswalk(["P571", "P2046"]).classifications]
    [('P571', 'temporal'), ('P2046', 'attributive')]
    """
    valid = [pid(i, field="property id") for i in ids]
    if not (valid or labels or all or compare_reference_table):
        raise InvalidInput(
            "nothing to classify: give property `ids`, `labels`, `all` or `compare_reference_table`"
        )
    walk: Crosswalk = Crosswalk.from_files(table) if table is not None else default_crosswalk()
    facts: Mapping[str, PropertyFacts] = (
        read_property_facts(properties) if properties is not None else PACKAGED_FACTS
    )
    where = f"{properties}" if properties is not None else "the crosswalk table or its property facts"
    for ident in valid:
        if ident not in walk.tables.table and ident not in facts:
            raise UnknownEntity(
                ident, where, "check the id, or pass a property list that has it with `properties`"
            )
    results = [walk.classify(ident, facts) for ident in valid]
    results += [walk.classify_label(label) for label in labels]
    summary = summarise(walk.classify_all(facts)) if all else None
    comparison = compare_reference(walk) if compare_reference_table else None
    return CrosswalkReport(
        version=walk.version, classifications=tuple(results), summary=summary, comparison=comparison
    )
