"""What a trajectory is scored against: names resolved to ids, equivalent relations, and
the task's reference graph (DESIGN §12).

* :class:`Resolver` turns entity mentions (Q-ids or labels) and relation mentions
  (P-ids, ``wdt:P…``, or labels) into ids through the store's labels and aliases (or the
  graph's labels). A label that names no entity, or several, stays unresolved with the
  reason — it is never guessed.
* :class:`Relations` says when two statements are the same fact: the same property, a
  declared equivalent, or the crosswalk's inverse read the other way round
  (``a P361 b`` is ``b P527 a``). :meth:`Relations.key` is the one canonical form.
* :func:`reference_for` builds the per-component reference routes: the nodes and
  statements of each component chain — its annotated nodes where the steps name them,
  else the witness match of the chain's fully specified pattern.

>>> rel = Relations({"P361": "P527", "P527": "P361"})
>>> rel.key("Q1", "P361", "Q2") == rel.key("Q2", "P527", "Q1")
True
>>> Resolver({"Q42": "Douglas Adams"}, {"Q42": ("DNA",)}).entity("dna")
('Q42', '')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from chaingraph.crosswalk.tables import normalise_label as relation_label_key
from chaingraph.merge import normalise_label
from chaingraph.patterns import PathPattern, Step, evaluate
from chaingraph.values import Value

if TYPE_CHECKING:
    from chaingraph.graph import EvidenceGraph
    from chaingraph.lookups import ValueLookup
    from chaingraph.store import Store
    from chaingraph.tasks import Task

__all__ = ["Reference", "Relations", "Resolver", "Route", "default_relations", "make_route", "reference_for",
           "value_node"]

Direction = Literal["forward", "backward"]
_PID = re.compile(r"(?:wdt:|p:|ps:)?(P[1-9][0-9]*)")
_QID = re.compile(r"(?:wd:)?(Q[1-9][0-9]*)")


def value_node(value: Value) -> str:
    """The node name of a literal value (``value:1963``)."""
    from chaingraph.lookups import value_key

    return f"value:{value_key(value)}"


class Resolver:
    """Entity and relation mentions → ids. ``entity_labels``/``entity_aliases`` and the
    property ones come from a store (:meth:`from_store`) or a graph's labels."""

    def __init__(self, entity_labels: Mapping[str, str], entity_aliases: Mapping[str, Iterable[str]] = {},
                 property_labels: Mapping[str, str] = {},
                 property_aliases: Mapping[str, Iterable[str]] = {}) -> None:
        self._seen_entities: dict[str, tuple[str | None, str]] = {}  # mention -> answer
        self._seen_relations: dict[str, tuple[str | None, str]] = {}
        self._entities: dict[str, set[str]] = {}
        for ident, label in entity_labels.items():
            self._entities.setdefault(normalise_label(label), set()).add(ident)
        for ident, names in entity_aliases.items():
            for name in names:
                self._entities.setdefault(normalise_label(name), set()).add(ident)
        self._properties: dict[str, set[str]] = {}
        for ident, label in property_labels.items():
            self._properties.setdefault(relation_label_key(label), set()).add(ident)
        for ident, names in property_aliases.items():
            for name in names:
                self._properties.setdefault(relation_label_key(name), set()).add(ident)

    @classmethod
    def from_store(cls, store: Store) -> Resolver:
        ents, props = store.names("entities"), store.names("properties")
        return cls({i: lab for i, lab, _a in ents if lab}, {i: a for i, _l, a in ents if a},
                   {i: lab for i, lab, _a in props if lab}, {i: a for i, _l, a in props if a})

    @classmethod
    def for_source(cls, store: Store | None, graph: EvidenceGraph) -> Resolver:
        """The resolver of a task's evidence: the store's labels and aliases when there is a
        store, else the graph's labels."""
        return cls.from_store(store) if store is not None else cls.from_graph(graph)

    @classmethod
    def from_graph(cls, graph: EvidenceGraph) -> Resolver:
        labels = graph.labels
        return cls({k: v for k, v in labels.items() if not k.startswith("P")},
                   property_labels={k: v for k, v in labels.items() if k.startswith("P")})

    def entity(self, mention: str) -> tuple[str | None, str]:
        """``(id, "")``, or ``(None, why)`` when the mention names no entity or several."""
        if mention[:1] == "Q" and mention[1:2] != "0" and mention.isascii() and mention[1:].isdecimal():
            return mention, ""  # a plain Q-id (what the pattern below would say, without it)
        got = self._seen_entities.get(mention)
        if got is None:
            m = _QID.fullmatch(mention.strip())
            got = self._seen_entities[mention] = (
                (m.group(1), "") if m
                else self._one(self._entities.get(normalise_label(mention), set()), mention, "entity"))
        return got

    def relation(self, mention: str) -> tuple[str | None, str]:
        """``(property id, "")`` or ``(None, why)``; labels are matched after the crosswalk's
        label normalisation (``place_of_birth`` = ``PlaceOfBirth`` = ``place of birth``)."""
        if mention[:1] == "P" and mention[1:2] != "0" and mention.isascii() and mention[1:].isdecimal():
            return mention, ""  # a plain P-id
        got = self._seen_relations.get(mention)
        if got is None:
            m = _PID.fullmatch(mention.strip())
            got = self._seen_relations[mention] = (
                (m.group(1), "") if m
                else self._one(self._properties.get(relation_label_key(mention), set()), mention, "property"))
        return got

    @staticmethod
    def _one(found: set[str], mention: str, what: str) -> tuple[str | None, str]:
        if len(found) == 1:
            return next(iter(found)), ""
        if not found:
            return None, f"no {what} has the label or alias {mention!r}"
        ids = sorted(found, key=lambda i: (len(i), i))
        return None, f"{mention!r} is ambiguous: {', '.join(ids[:5])}{' …' if len(ids) > 5 else ''}"


@dataclass(frozen=True)
class Relations:
    """Which statements are the same fact. ``inverses``: ``P → Q`` where ``a P b`` holds
    exactly when ``b Q a`` (both ways listed); ``equivalents``: ``P → representative``."""

    inverses: Mapping[str, str] = field(default_factory=dict)
    equivalents: Mapping[str, str] = field(default_factory=dict)
    _orients: dict[str, tuple[str, bool]] = field(default_factory=dict, init=False, repr=False, compare=False,
                                                  hash=False)

    def canonical(self, prop: str) -> str:
        return self.equivalents.get(prop, prop)

    def key(self, subject: str, prop: str, obj: str) -> tuple[str, str, str]:
        """The canonical ``(subject, property, object)`` of a statement: of a property and its
        inverse, the one with the smaller number is kept (ends swapped)."""
        p, swapped = self.orient(prop)
        return (obj, p, subject) if swapped else (subject, p, obj)

    def orient(self, prop: str) -> tuple[str, bool]:
        """The property of :meth:`key` for ``prop``, and whether it swaps the ends.

        >>> Relations({"P361": "P527", "P527": "P361"}).orient("P527")
        ('P361', True)
        """
        got = self._orients.get(prop)
        if got is None:
            p = self.canonical(prop)
            q = self.inverses.get(p)
            if q is not None and int(self.canonical(q)[1:]) < int(p[1:]):
                got = self.canonical(q), True
            else:
                got = p, False
            self._orients[prop] = got
        return got

    def variants(self, prop: str) -> list[tuple[str, bool]]:
        """Every ``(property, swapped)`` that states the same fact as ``prop``."""
        p = self.canonical(prop)
        out = [(x, False) for x in sorted({prop, p, *(k for k, v in self.equivalents.items() if v == p)})]
        q = self.inverses.get(p)
        if q is not None:
            qc = self.canonical(q)
            out += [(x, True) for x in sorted({q, qc, *(k for k, v in self.equivalents.items() if v == qc)})]
        return out


def default_relations() -> Relations:
    """The crosswalk's inverse pairs, no other equivalents."""
    from chaingraph.crosswalk import default_crosswalk

    return Relations(dict(default_crosswalk().tables.inverses))


@dataclass(frozen=True)
class Route:
    """A component's route: nodes ``x0 … xk`` and per step ``(property, direction)``;
    ``edges`` are the statements as canonical keys (:meth:`Relations.key`)."""

    component: int
    nodes: tuple[str, ...]
    steps: tuple[tuple[str, Direction], ...]
    edges: tuple[tuple[str, str, str], ...]
    source: str  # "annotation", "witness", "claimed"


@dataclass(frozen=True)
class Reference:
    """A task's reference: one route per component, the anchors, and the target nodes."""

    task: Task
    routes: tuple[Route, ...]
    targets: tuple[str, ...]
    notes: tuple[str, ...] = ()


def make_route(rel: Relations, component: int, nodes: tuple[str, ...],
               steps: tuple[tuple[str, Direction], ...], source: str) -> Route:
    """A route with its statements in canonical form."""
    key, edges = rel.key, []
    for i, (p, d) in enumerate(steps):  # each step's statement, canonical
        edges.append(key(nodes[i], p, nodes[i + 1]) if d == "forward" else key(nodes[i + 1], p, nodes[i]))
    return Route(component, nodes, steps, tuple(edges), source)


def reference_for(task: Task, graph: EvidenceGraph, rel: Relations,
                  values: ValueLookup | None = None) -> Reference:
    """The reference route of every component of ``task`` on ``graph``."""
    routes, targets, notes = [], [], []
    for c, comp in enumerate(task.components):
        t = comp.target
        target = t.entity if t.entity is not None else value_node(t.value)  # type: ignore[arg-type]
        targets.append(target)
        steps = tuple((s.property, s.direction) for s in comp.steps)
        named = [comp.anchor, *(s.target for s in comp.steps[:-1])]
        if all(n is not None for n in named):
            nodes = (*[n for n in named if n is not None], target)
            routes.append(make_route(rel, c, nodes, steps, "annotation"))
            continue
        pattern = PathPattern(tuple(Step(p, d) for p, d in steps), anchor=comp.anchor)
        aim: str | Value = t.entity if t.entity is not None else t.value  # type: ignore[assignment]
        found = evaluate(graph, pattern, target=aim, values=values) if comp.anchor in graph else None
        if found is None or found.witness is None:
            notes.append(f"{task.component_id(c)}: the chain does not reach its target in the evidence "
                         "graph; its unnamed nodes cannot be scored")
            nodes = (*[n or f"?x{i}" for i, n in enumerate(named)], target)
        else:
            nodes = (*found.witness.nodes[:-1], target)
        routes.append(make_route(rel, c, nodes, steps, "witness"))
    return Reference(task, tuple(routes), tuple(targets), tuple(notes))
