"""Property -> relation class, with the rule that decided it (DESIGN §5).

Rules, in order; the first that decides wins:

1. ``table``          the explicit table ``data/crosswalk/table.tsv`` (id -> class, reason);
2. ``datatype``       value datatypes are attributive, time is temporal (event and history
                      dates) unless ``time_properties.tsv`` says otherwise, external ids,
                      property/lexeme/form/sense/schema links are not relations;
3. ``property-class`` the property's own P31 classes (``property_classes.tsv``, first listed wins),
   ``superproperty``  else the class of a P1647 super-property (decided by rules 1-3),
   ``inverse``        else the class of its P1696 inverse (facts, or ``inverses.tsv``);
4. ``lexical``        ordered keyword rules over label, then aliases, then description.

Nothing decided -> ``unclassified`` (rule ``none``); never a silent default.

What is known about a bare property id comes from the crosswalk's facts: the default
crosswalk falls back on the facts shipped in ``data/crosswalk/properties.tsv.gz`` (datatype,
label and P31 classes of 13,271 properties, read only when an id outside the table is asked);
:meth:`Crosswalk.with_facts` replaces them.

>>> cw = default_crosswalk()
>>> c = cw.classify("P131")
>>> c.relation_class, c.status, c.rule
('spatial', 'relation', 'table')
>>> cw.classify(PropertyFacts("P9999999", datatype="quantity")).relation_class
'attributive'
>>> cw.classify(PropertyFacts("P9999998", datatype="external-id")).status
'not-a-relation'
>>> cw.classify("P9999997").status
'unclassified'
>>> cw.classify_label("PartWhole").relation_class, cw.classify_label("purpose").rule
('part-whole', 'scheme12')
>>> cw.relation_class("P361"), cw.relation_class("P9999997")
('part-whole', None)
>>> [(c.relation_class, c.rule) for c in map(cw.classify, ["P571", "P1082"])]
[('temporal', 'datatype'), ('attributive', 'datatype')]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from chaingraph.crosswalk.facts import PACKAGED_FACTS, PropertyFacts
from chaingraph.crosswalk.tables import (
    NOT_A_RELATION,
    CrosswalkTables,
    Entry,
    load_tables,
    normalise_label,
)
from chaingraph.errors import InvalidInput
from chaingraph.ids import pid

__all__ = ["CROSSWALK_VERSION", "RULES", "Classification", "Crosswalk", "default_crosswalk"]

#: version of the shipped tables; equals the ``# version:`` line of ``data/crosswalk/table.tsv``
CROSSWALK_VERSION = "2026.12-1"

Status = Literal["relation", "not-a-relation", "unclassified"]
RelationClass = Literal[
    "part-whole", "member-collection", "causal", "temporal", "spatial", "comparative", "attributive"
]
Rule = Literal[
    "table",
    "datatype",
    "property-class",
    "superproperty",
    "inverse",
    "lexical",
    "class-name",
    "scheme12",
    "label",
    "none",
]
#: every value of :attr:`Classification.rule`, in the order the rules are tried
RULES: tuple[str, ...] = get_args(Rule)
_PROPERTY_REF = re.compile(r"(?:.*[/:])?(P[1-9][0-9]*)")


class Classification(BaseModel):
    """One crosswalk answer: the class (or none), the status, the deciding rule and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    property: str
    relation_class: RelationClass | None
    status: Status
    rule: Rule
    reason: str
    version: str


def _verdict(prop: str, verdict: str, rule: str, reason: str, version: str) -> Classification:
    relation = verdict != NOT_A_RELATION
    return Classification.model_validate(
        {
            "property": prop,
            "relation_class": verdict if relation else None,
            "status": "relation" if relation else "not-a-relation",
            "rule": rule,
            "reason": reason,
            "version": version,
        }
    )


def _pid_number(ident: str) -> int:
    return int(ident[1:])


class Crosswalk:
    """A versioned set of crosswalk tables and the rules that apply them."""

    def __init__(self, tables: CrosswalkTables, facts: Mapping[str, PropertyFacts] | None = None) -> None:
        self.tables = tables
        self.facts: Mapping[str, PropertyFacts] = facts if facts is not None else {}
        self._cache: dict[str, Classification] = {}
        self._class_priority = {
            qid: (rank, qid, entry) for rank, (qid, entry) in enumerate(tables.property_classes.items())
        }

    @property
    def version(self) -> str:
        return self.tables.version

    @classmethod
    def default(cls) -> Crosswalk:
        """The shipped tables of ``data/crosswalk/``, falling back on the shipped property facts
        (:data:`~chaingraph.crosswalk.facts.PACKAGED_FACTS`, read when first needed) for a bare
        property id outside the table (a fresh instance; see :func:`default_crosswalk`)."""
        return cls(load_tables(), PACKAGED_FACTS)

    @classmethod
    def from_files(cls, table: Path | str, **others: Path | str) -> Crosswalk:
        """Tables from explicit paths; ``others`` names any of ``datatypes, time_properties,
        property_classes, inverses, lexical, labels`` (shipped files fill the rest)."""
        return cls(load_tables({"table": table, **others}))

    def with_facts(self, facts: Mapping[str, PropertyFacts]) -> Crosswalk:
        """The same tables, using ``facts`` whenever a call passes a bare property id."""
        return Crosswalk(self.tables, facts)

    # -- properties ---------------------------------------------------------------------------

    def classify(
        self, prop: str | PropertyFacts, facts: Mapping[str, PropertyFacts] | None = None
    ) -> Classification:
        """Classify a property id (looked up in ``facts``) or a :class:`PropertyFacts`.

        ``facts`` also supplies super-properties and inverses. Raises
        :class:`~chaingraph.errors.InvalidId` for a malformed id.
        """
        if isinstance(prop, PropertyFacts):
            ident = pid(prop.id, field="property")
            return self._decide(ident, prop, facts if facts is not None else self.facts, frozenset(), True)
        ident = pid(prop, field="property")
        known = facts if facts is not None else self.facts
        # a tabled id needs no facts: the table decides before anything else is read
        own = None if ident in self.tables.table else known.get(ident)
        if facts is None:
            cached = self._cache.get(ident)
            if cached is None:
                cached = self._cache[ident] = self._decide(ident, own, known, frozenset(), True)
            return cached
        return self._decide(ident, own, known, frozenset(), True)

    def relation_class(self, pid: str) -> str | None:
        """The relation class of a property id, or ``None`` unless its status is ``relation``."""
        cached = self._cache.get(pid)
        if cached is None:
            cached = self.classify(pid)
        return cached.relation_class

    def classify_all(self, facts: Mapping[str, PropertyFacts]) -> list[Classification]:
        """Classify every property of ``facts`` (in id order), resolving links within ``facts``."""
        ordered = sorted((pid(ident, field="property list key") for ident in facts), key=_pid_number)
        return [self._decide(ident, facts[ident], facts, frozenset(), True) for ident in ordered]

    def _decide(
        self,
        ident: str,
        own: PropertyFacts | None,
        facts: Mapping[str, PropertyFacts],
        seen: frozenset[str],
        lexical: bool,
    ) -> Classification:
        version = self.tables.version
        entry = self.tables.table.get(ident)
        if entry is not None:
            return _verdict(ident, entry.verdict, "table", entry.reason, version)
        if own is not None and own.datatype:
            decided = self._by_datatype(ident, own.datatype)
            if decided is not None:
                return decided
        if own is not None and own.classes:
            ranked = [self._class_priority[q] for q in own.classes if q in self._class_priority]
            if ranked:
                _, qid, entry = min(ranked, key=lambda r: r[0])
                return _verdict(ident, entry.verdict, "property-class", f"P31 {qid}: {entry.reason}", version)
        seen = seen | {ident}
        links = [
            (parent, "superproperty", "subproperty (P1647)")
            for parent in sorted(set(own.superproperties) if own else (), key=_pid_number)
        ]
        inverse = (own.inverse if own is not None and own.inverse else None) or self.tables.inverses.get(
            ident
        )
        if inverse is not None:
            links.append((inverse, "inverse", "inverse (P1696)"))
        for other, rule, link in links:
            if other in seen:
                continue
            found = self._decide(other, facts.get(other), facts, seen, False)
            if found.status != "unclassified":
                return _verdict(
                    ident,
                    found.relation_class or NOT_A_RELATION,
                    rule,
                    f"{link} of {other}, decided by {found.rule}: {found.reason}",
                    version,
                )
        if lexical and own is not None:
            decided = self._lexical(ident, own)
            if decided is not None:
                return decided
        why = (
            "no table row, datatype, property class, super-property, inverse or keyword rule decides it"
            if own is not None
            else "not in the crosswalk table and nothing else is known about it "
            "(pass its facts, e.g. from a property list)"
        )
        return Classification(
            property=ident,
            relation_class=None,
            status="unclassified",
            rule="none",
            reason=why,
            version=version,
        )

    def _by_datatype(self, ident: str, datatype: str) -> Classification | None:
        entry: Entry | None = None
        if datatype == "time":
            entry = self.tables.time_properties.get(ident)
        if entry is None:
            entry = self.tables.datatypes.get(datatype)
        if entry is None:
            return None
        return _verdict(
            ident, entry.verdict, "datatype", f"datatype {datatype}: {entry.reason}", self.tables.version
        )

    def _match(self, text: str, description: bool = False) -> tuple[str, str] | None:
        """``(verdict, explanation)`` of the first lexical rule matching normalised ``text``;
        ``description`` skips the rules that read labels only."""
        for rule in self.tables.lexical:
            if description and not rule.description:
                continue
            m = rule.pattern.search(text)
            if m:
                return rule.verdict, f"'{m.group(0)}' (keyword rule {rule.order}: {rule.note})"
        return None

    def _lexical(self, ident: str, own: PropertyFacts) -> Classification | None:
        fields = [
            ("label", own.label),
            *(("alias", a) for a in own.aliases),
            ("description", own.description),
        ]
        for name, text in fields:
            if not text:
                continue
            hit = self._match(normalise_label(text), description=name == "description")
            if hit is not None:
                return _verdict(ident, hit[0], "lexical", f"{name} matches {hit[1]}", self.tables.version)
        return None

    # -- free-text labels ---------------------------------------------------------------------

    def classify_label(self, label: str) -> Classification:
        """Classify a relation label of another tool (``part_of``, ``PartWhole``, ``located in``,
        a twelve-class name, or a property id such as ``P361`` / ``wdt:P361``)."""
        if not isinstance(label, str) or not normalise_label(label):
            raise InvalidInput(f"relation label {label!r} is empty; give a label such as 'part_of' or an id")
        version = self.tables.version
        ref = _PROPERTY_REF.fullmatch(label.strip())
        if ref:
            found = self.classify(ref.group(1))
            return found.model_copy(
                update={"property": label, "reason": f"property {ref.group(1)}: {found.reason}"}
            )
        key = normalise_label(label)
        entry = self.tables.labels.get(key)
        if entry is not None:
            return _verdict(label, entry.verdict, entry.scheme, f"label '{key}': {entry.note}", version)
        hit = self._match(key)
        if hit is not None:
            return _verdict(label, hit[0], "lexical", f"label matches {hit[1]}", version)
        return Classification(
            property=label,
            relation_class=None,
            status="unclassified",
            rule="none",
            reason=f"no label synonym or keyword rule matches '{key}'",
            version=version,
        )

    def classify_labels(self, labels: Iterable[str]) -> list[Classification]:
        return [self.classify_label(label) for label in labels]


@functools.lru_cache(maxsize=1)
def default_crosswalk() -> Crosswalk:
    """The shipped crosswalk, loaded once per process."""
    return Crosswalk.default()
