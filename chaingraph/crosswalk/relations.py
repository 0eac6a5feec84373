"""The relation classes of the properties in one evidence graph, decided once.

A :class:`RelationClassifier` travels with its :class:`~chaingraph.graph.EvidenceGraph`:
ranking (``s_div``), chain records and audits all read a step's relation class from it,
so a record's ``relation_classes`` and its steps' classes cannot disagree.

>>> rc = relation_classifier(["P361", "P131", "P9999999"])
>>> rc.relation("P361"), rc.rule("P131"), rc.relation("P9999999")
('part-whole', 'table', None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chaingraph.crosswalk.classifier import Crosswalk
    from chaingraph.store import Store

__all__ = ["RelationClassifier", "relation_classifier"]


@dataclass(frozen=True)
class RelationClassifier:
    """Relation class and deciding rule per property, from the crosswalk (DESIGN §5).

    ``classes`` maps a property to ``(relation class, rule)``; a property it does not
    know (or one the crosswalk leaves unclassified) has class ``None``.
    """

    version: str
    classes: dict[str, tuple[str | None, str | None]]

    @classmethod
    def of(cls, classes: Mapping[str, str | None], version: str = "inline") -> RelationClassifier:
        """A classifier from a plain ``property -> class`` mapping (rule ``"inline"``), for a
        pipeline with its own relation table.

        >>> RelationClassifier.of({"P1": "causal"}).relation("P1")
        'causal'
        """
        return cls(version, {p: (c, "inline") for p, c in classes.items()})

    def relation(self, prop: str) -> str | None:
        """The relation class of ``prop``, or ``None``."""
        return self.classes.get(prop, (None, None))[0]

    def rule(self, prop: str) -> str | None:
        """The crosswalk rule that decided ``prop``'s class, or ``None``."""
        return self.classes.get(prop, (None, None))[1]


def relation_classifier(properties: Sequence[str], store: Store | None = None, *,
                        crosswalk: Crosswalk | None = None) -> RelationClassifier:
    """Classify ``properties`` once (class and deciding rule) with ``crosswalk`` (default: the
    shipped one), telling it what ``store`` knows of each property (label, aliases,
    description, datatype)."""
    from chaingraph.crosswalk.classifier import default_crosswalk
    from chaingraph.crosswalk.facts import facts_from_store

    cw = crosswalk if crosswalk is not None else default_crosswalk()
    known = facts_from_store(store) if store is not None else {}
    out: dict[str, tuple[str | None, str | None]] = {}
    for p in sorted(set(properties)):
        c = cw.classify(known[p]) if p in known else cw.classify(p)
        out[p] = (c.relation_class, c.rule)
    return RelationClassifier(cw.version, out)
