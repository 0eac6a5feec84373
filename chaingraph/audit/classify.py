"""Classify one edge occurrence into a relation class, by route, and say which route decided.

Routes are tried in this order (DESIGN §8: explicit labels first, raw predicates through
the crosswalk of §5):

1. ``label`` — an explicit relation label, canonicalised by the crosswalk's
   ``classify_label`` (any spelling: ``part_of``, ``PartWhole``, the twelve-class scheme);
2. ``property`` — a raw Wikidata property id, through the crosswalk's ``classify``; a
   property the crosswalk calls *not a relation* is counted as ``not-a-relation``;
3. ``role`` — an edge role: a ``subject/object`` role pair or a single role name, looked up
   in the documented role table ``data/audit_roles.tsv``; a single role name is first
   offered to the crosswalk's label rules (``located_in`` is a role and a label);
4. otherwise the edge is ``unclassified`` and listed with what it carried.

A route that cannot decide passes the edge on to the next one, so an unknown label with a
known property is decided by the property. Decisions are cached per distinct annotation
(memory grows with the number of distinct labels and properties, not with the corpus).

>>> from chaingraph.audit.shapes import Edge
>>> roles = RoleTable.load()
>>> roles.lookup("subject-part/whole"), roles.lookup("whole/part"), roles.lookup("Location")
(None, 'part-whole', 'spatial')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

from chaingraph.audit.shapes import Edge
from chaingraph.crosswalk.tables import NOT_A_RELATION, RELATION_CLASSES
from chaingraph.errors import InvalidInput
from chaingraph.resources import data_file

__all__ = [
    "NOT_A_RELATION",
    "RELATION_CLASSES",
    "ROUTES",
    "UNCLASSIFIED",
    "Crosswalk",
    "Decision",
    "EdgeClassifier",
    "RoleTable",
    "Route",
    "canonical_class",
    "crosswalk_version",
]

UNCLASSIFIED = "unclassified"

Route = Literal["label", "property", "role", "unclassified"]
#: every route, in the order they are tried
ROUTES: tuple[Route, ...] = ("label", "property", "role", "unclassified")


class Crosswalk(Protocol):
    """What the audit needs of the relation crosswalk (``chaingraph.crosswalk``)."""

    def classify_label(self, text: str) -> Any: ...

    def classify(self, pid: str) -> Any: ...


class Decision(NamedTuple):
    """How one edge was classified: the route, the class (or ``not-a-relation`` /
    ``unclassified``), what was looked at (``P131``, ``label 'part_of'`` …) and why."""

    route: Route
    relation_class: str
    subject: str
    reason: str


def canonical_class(name: str | None) -> str | None:
    """The audit's spelling of a crosswalk class (``part_whole`` → ``part-whole``).

    >>> canonical_class("member_collection"), canonical_class("Spatial"), canonical_class("causal-ish")
    ('member-collection', 'spatial', None)
    """
    if not name:
        return None
    text = re.sub(r"[^a-z]+", "-", name.strip().lower()).strip("-")
    return text if text in RELATION_CLASSES else None


def _role_word(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.strip().lower()).strip("_")


@dataclass(frozen=True)
class RoleTable:
    """Role pairs and single role names → relation class (``data/audit_roles.tsv``)."""

    pairs: dict[tuple[str, str], str]
    singles: dict[str, str]

    @classmethod
    def load(cls, path: str | Path | None = None) -> RoleTable:
        """Read a role table (the packaged one by default); a malformed row is an error."""
        path = Path(path) if path is not None else data_file("audit_roles.tsv")
        pairs: dict[tuple[str, str], str] = {}
        singles: dict[str, str] = {}
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = [(n, ln) for n, ln in enumerate(lines, 1) if ln.strip() and not ln.startswith("#")]
        for number, line in rows[1:]:
            cells = line.split("\t")
            relation = canonical_class(cells[2]) if len(cells) >= 3 else None
            if relation is None:
                raise InvalidInput(
                    f"{path}:{number}: expected subject_role, object_role, relation_class "
                    f"(one of {', '.join(RELATION_CLASSES)}), reason; fix the row"
                )
            subject, obj = _role_word(cells[0]), cells[1].strip()
            if obj == "*":
                singles[subject] = relation
            else:
                pairs[(subject, _role_word(obj))] = relation
                pairs.setdefault((_role_word(obj), subject), relation)
        return cls(pairs, singles)

    def lookup(self, role: str) -> str | None:
        """The class of a role pair ``"subject/object"`` (either order) or a single role name."""
        if "/" in role:
            subject, _, obj = role.partition("/")
            return self.pairs.get((_role_word(subject), _role_word(obj)))
        return self.singles.get(_role_word(role))


def _decided(result: Any) -> tuple[str | None, str, str]:
    """``(class or not-a-relation or None, rule, reason)`` of a crosswalk Classification."""
    status = getattr(result, "status", None)
    rule = str(getattr(result, "rule", "") or "")
    reason = str(getattr(result, "reason", "") or "")
    if status == "not-a-relation":
        return NOT_A_RELATION, rule, reason
    if status not in (None, "relation"):
        return None, rule, reason
    return canonical_class(getattr(result, "relation_class", None)), rule, reason


def crosswalk_version(crosswalk: Any) -> str:
    """The version string of a crosswalk object (its ``version``, else its module's
    ``CROSSWALK_VERSION``), or ``"unknown"``."""
    version = getattr(crosswalk, "version", None)
    if isinstance(version, str):
        return version
    module = __import__(type(crosswalk).__module__, fromlist=["CROSSWALK_VERSION"])
    return str(getattr(module, "CROSSWALK_VERSION", "unknown"))


class EdgeClassifier:
    """Classify edges by route, caching one decision per distinct annotation."""

    def __init__(self, crosswalk: Crosswalk, roles: RoleTable | None = None) -> None:
        self.crosswalk = crosswalk
        self.roles = roles if roles is not None else RoleTable.load()
        self._cache: dict[tuple[str | None, str | None, str | None], Decision] = {}
        self._labels: dict[str, tuple[str | None, str, str]] = {}
        self._properties: dict[str, tuple[str | None, str, str]] = {}

    def __call__(self, edge: Edge) -> Decision:
        key = (edge.label, edge.property, edge.role)
        decision = self._cache.get(key)
        if decision is None:
            decision = self._cache[key] = self._decide(edge)
        return decision

    def _ask(
        self, memo: dict[str, tuple[str | None, str, str]], text: str, ask: Callable[[str], Any]
    ) -> tuple[str | None, str, str]:
        if text not in memo:
            try:
                memo[text] = _decided(ask(text))
            except (LookupError, ValueError) as exc:  # an id the crosswalk does not know
                memo[text] = (None, "error", str(exc))
        return memo[text]

    def _decide(self, edge: Edge) -> Decision:
        reasons: list[str] = []
        if edge.label:
            found, rule, reason = self._ask(self._labels, edge.label, self.crosswalk.classify_label)
            if found:
                return Decision("label", found, f"label {edge.label!r}", f"{rule}: {reason}".strip(": "))
            reasons.append(f"label {edge.label!r} not recognised")
        if edge.property:
            found, rule, reason = self._ask(self._properties, edge.property, self.crosswalk.classify)
            if found:
                return Decision("property", found, edge.property, f"{rule}: {reason}".strip(": "))
            reasons.append(f"property {edge.property} unclassified ({reason or rule or 'no rule decided'})")
        if edge.role:
            found = self.roles.lookup(edge.role)
            rule = "role table"
            if found is None and "/" not in edge.role:
                found, rule, _ = self._ask(self._labels, edge.role, self.crosswalk.classify_label)
                found = found if found != NOT_A_RELATION else None
            if found:
                return Decision("role", found, f"role {edge.role!r}", rule)
            reasons.append(f"role {edge.role!r} not in the role table")
        subject = (
            f"label {edge.label!r}"
            if edge.label
            else edge.property
            if edge.property
            else f"role {edge.role!r}"
            if edge.role
            else "(no label, property or role)"
        )
        return Decision(
            "unclassified",
            UNCLASSIFIED,
            subject,
            "; ".join(reasons)
            or "the edge carries nothing to classify: give it a relation label, a property id or a role",
        )
