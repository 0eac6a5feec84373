"""Relation crosswalk: every Wikidata property in one of seven classes, explainably (DESIGN §5).

Layering inside the package (imports flow down only)::

    tables      the documented TSV files of data/crosswalk/, loaded and validated
    facts       PropertyFacts, the property-list reader and the shipped property facts
    classifier  Crosswalk: the ordered rules; Classification records
    summary     distributions over classes and rules; agreement with a second opinion
    report      crosswalk(): the library twin of `chaingraph crosswalk`
    relations   RelationClassifier: the classes of one graph's properties, decided once

>>> from chaingraph.crosswalk import default_crosswalk
>>> default_crosswalk().classify("P361").relation_class
'part-whole'
"""

from __future__ import annotations

from chaingraph.crosswalk.classifier import (
    CROSSWALK_VERSION,
    RULES,
    Classification,
    Crosswalk,
    default_crosswalk,
)
from chaingraph.crosswalk.facts import (
    PACKAGED_FACTS,
    PackagedFacts,
    PropertyFacts,
    facts_from_store,
    read_property_facts,
)
from chaingraph.crosswalk.relations import RelationClassifier, relation_classifier
from chaingraph.crosswalk.report import CrosswalkReport, crosswalk
from chaingraph.crosswalk.summary import (
    CrosswalkSummary,
    ReferenceComparison,
    ReferenceDifference,
    compare_reference,
    summarise,
)
from chaingraph.crosswalk.tables import NOT_A_RELATION, RELATION_CLASSES, normalise_label

__all__ = [
    "CROSSWALK_VERSION",
    "NOT_A_RELATION",
    "PACKAGED_FACTS",
    "RELATION_CLASSES",
    "RULES",
    "Classification",
    "Crosswalk",
    "CrosswalkReport",
    "CrosswalkSummary",
    "PackagedFacts",
    "PropertyFacts",
    "ReferenceComparison",
    "ReferenceDifference",
    "RelationClassifier",
    "compare_reference",
    "crosswalk",
    "default_crosswalk",
    "facts_from_store",
    "normalise_label",
    "read_property_facts",
    "relation_classifier",
    "summarise",
]
