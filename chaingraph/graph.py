"""The evidence graph: an igraph view of the store under one traversal policy.

:class:`~chaingraph.settings.TraversalPolicy` decides which statements are chain steps (DESIGN §2). The chain
engine, the shortcut check and clue ablation all read the same :class:`EvidenceGraph`, so
a path the engine may walk is exactly a path the checks see.

* entity vertices are items; class edges (``P31``/``P279`` by default) are not steps but
  are kept as node types in :attr:`EvidenceGraph.classes`;
* only item-valued, non-deprecated statements are edges (external ids never are);
* an entity whose degree exceeds ``hub_limit`` may start or end a path but is never
  walked *through* (:meth:`EvidenceGraph.passable`);
* with ``include_literals`` every literal statement gets its own terminal vertex
  ``"<statement id>#value"``: two statements sharing a value never share a vertex.

>>> g = EvidenceGraph.from_edges([("s1", "Q1", "P361", "Q2"), ("s2", "Q3", "P361", "Q2"),
...                               ("s3", "Q1", "P31", "Q5")])
>>> g.vcount(), g.ecount(), g.classes["Q1"]
(3, 2, ('Q5',))
>>> [(g.name(u), g.edge_property(e), fwd) for u, e, fwd in g.neighbours(g.vertex("Q2"))]
[('Q1', 'P361', False), ('Q3', 'P361', False)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import igraph as ig

from chaingraph.crosswalk.relations import RelationClassifier, relation_classifier
from chaingraph.errors import UnknownEntity
from chaingraph.ids import is_item_id
from chaingraph.settings import TraversalPolicy

if TYPE_CHECKING:
    import networkx as nx

    from chaingraph.store import Store
    from chaingraph.timeline import Timeline

__all__ = ["EvidenceGraph"]

#: property datatypes (JSON spelling) whose statements may become literal nodes
LITERAL_DATATYPES = frozenset({"time", "quantity", "string", "monolingualtext", "globe-coordinate"})


class EvidenceGraph:
    """A directed igraph graph (Wikidata direction) with id maps and adjacency lists.

    Vertex attribute ``name`` (Q-id or literal id), ``literal`` (bool); edge attributes
    ``property``, ``statement_id``, ``relation`` (class from :attr:`classifier`, or ``None``).
    Build with :meth:`from_store` or :meth:`from_edges`.

    :attr:`classifier` is the one source of relation classes for everything built on the
    graph (ranking, chain records, audits of what it produced).
    """

    def __init__(self, graph: ig.Graph, classes: dict[str, tuple[str, ...]],
                 policy: TraversalPolicy, labels: dict[str, str] | None = None,
                 sitelinks: dict[str, int] | None = None,
                 class_statements: dict[str, dict[str, tuple[str, ...]]] | None = None, *,
                 excluded_edges: Sequence[tuple[str, str, str, str]] = (),
                 classifier: RelationClassifier | None = None) -> None:
        self.graph = graph
        self.policy = policy
        self.classes = classes
        #: class-edge values kept apart per property (``{"P31": {...}, "P279": {...}}``), so a
        #: type check can read instance-of and subclass-of separately; :attr:`classes` merges them.
        self.class_statements = class_statements or {}
        self.labels = labels or {}
        self.sitelinks = sitelinks or {}
        #: item statements the policy keeps out (not class edges), ``(sid, s, p, o)``, so that
        #: a check can say "excluded by policy" rather than "no such statement".
        self.excluded_edges = tuple(excluded_edges)
        #: statement windows (set by :meth:`from_store`; ``None`` for graphs built from bare edges)
        self.timeline: Timeline | None = None
        #: statements left out because they are not valid on ``policy.as_of`` (they are in
        #: :attr:`excluded_edges` too; ``timeline.why_invalid`` says why)
        self.time_excluded: frozenset[str] = frozenset()
        self._names: list[str] = list(graph.vs["name"]) if graph.vcount() else []
        self._index = {n: i for i, n in enumerate(self._names)}
        self._props: list[str] = list(graph.es["property"]) if graph.ecount() else []
        self._sids: list[str] = list(graph.es["statement_id"]) if graph.ecount() else []
        #: relation class and rule per property: the one source of relation classes
        self.classifier = (classifier if classifier is not None
                           else relation_classifier(sorted(set(self._props))))
        self._relations: tuple[str | None, ...] = tuple(self.classifier.relation(p) for p in self._props)
        graph.es["relation"] = list(self._relations)
        self._literal = [not is_item_id(n) for n in self._names]
        # Adjacency sorted by (neighbour name, property, statement id): deterministic order.
        adj: list[list[tuple[int, int, bool]]] = [[] for _ in self._names]
        for e, (s, o) in enumerate(graph.get_edgelist()):
            adj[s].append((o, e, True))
            adj[o].append((s, e, False))
        for lst in adj:
            lst.sort(key=lambda t: (self._names[t[0]], self._props[t[1]], self._sids[t[1]], t[2]))
        self._adj = adj
        limit = policy.hub_limit
        self._passable = [not lit and (limit is None or len(a) <= limit)
                          for lit, a in zip(self._literal, adj)]

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_edges(cls, edges: Iterable[Sequence[str]], *, policy: TraversalPolicy | None = None,
                   literals: Iterable[tuple[str, str, str]] = (),
                   labels: dict[str, str] | None = None, sitelinks: dict[str, int] | None = None,
                   classifier: RelationClassifier | None = None) -> EvidenceGraph:
        """Build from ``(statement_id, subject, property, object)`` item edges and optional
        ``(statement_id, subject, property)`` literal statements. Relation classes come
        from ``classifier`` (default: the shipped crosswalk on the graph's properties)."""
        policy = policy or TraversalPolicy()
        classes: dict[str, list[str]] = {}
        by_property: dict[str, dict[str, list[str]]] = {}
        excluded: list[tuple[str, str, str, str]] = []
        names: dict[str, int] = {}
        pairs: list[tuple[int, int]] = []
        props: list[str] = []
        sids: list[str] = []

        def vid(name: str) -> int:
            i = names.get(name)
            if i is None:
                i = names[name] = len(names)
            return i

        for sid, s, p, o in sorted(edges, key=lambda t: (t[1], t[2], t[3], t[0])):
            if p in policy.class_properties:
                classes.setdefault(s, []).append(o)
                by_property.setdefault(p, {}).setdefault(s, []).append(o)
                vid(s)
                continue
            if not policy.allows(p):
                excluded.append((sid, s, p, o))
                continue
            pairs.append((vid(s), vid(o)))
            props.append(p)
            sids.append(sid)
        if policy.include_literals:
            for sid, s, p in sorted(literals, key=lambda t: (t[1], t[2], t[0])):
                if policy.allows(p):
                    pairs.append((vid(s), vid(f"{sid}#value")))
                    props.append(p)
                    sids.append(sid)
        g = ig.Graph(n=len(names), edges=pairs, directed=True)
        g.vs["name"] = list(names)
        g.es["property"] = props
        g.es["statement_id"] = sids
        return cls(g, {k: tuple(sorted(set(v))) for k, v in classes.items()}, policy,
                   labels=labels, sitelinks=sitelinks,
                   class_statements={p: {k: tuple(sorted(set(v))) for k, v in m.items()}
                                     for p, m in by_property.items()},
                   excluded_edges=excluded, classifier=classifier)

    @classmethod
    def from_store(cls, store: Store, *, policy: TraversalPolicy | None = None,
                   classifier: RelationClassifier | None = None) -> EvidenceGraph:
        """Build from every traversable statement in ``store``. Relation classes come from
        ``classifier`` (default: the shipped crosswalk, told what ``store`` knows of each
        property)."""
        policy = policy or TraversalPolicy()
        cols = store.edge_arrays()
        dated = None
        if policy.as_of is not None:  # one rule for every check: only statements valid on the date
            from chaingraph.timeline import DatedStatements

            dated = DatedStatements(store, policy.as_of)
            cols = dated.keep(cols)
        edges = zip(cols["statement_id"].tolist(), cols["subject"].tolist(),
                    cols["property"].tolist(), cols["object"].tolist())
        literals: list[tuple[str, str, str]] = []
        if policy.include_literals:
            lit = store.edge_arrays(item_only=False)
            # External ids, URLs, media ... are never edges (DESIGN §2): literal nodes are
            # only made for literal datatypes (or properties whose datatype is unknown).
            datatypes = store.datatypes()
            literals = [(sid, s, p) for sid, s, p, vt in zip(
                lit["statement_id"].tolist(), lit["subject"].tolist(), lit["property"].tolist(),
                lit["value_type"].tolist())
                if vt != "item" and datatypes.get(p, "time") in LITERAL_DATATYPES
                and (dated is None or dated.holds(sid))]
        if classifier is None:
            classifier = relation_classifier(
                sorted(set(cols["property"].tolist()) | {p for _, _, p in literals}), store)
        graph = cls.from_edges(edges, policy=policy, literals=literals, labels=store.entity_labels(),
                               sitelinks=store.sitelinks(), classifier=classifier)
        if dated is not None:
            graph.timeline = dated.timeline
            graph.time_excluded = dated.invalid
            graph.excluded_edges += dated.excluded_edges()
        return graph

    # -- lookups ----------------------------------------------------------------------
    def vcount(self) -> int:
        return len(self._names)

    def ecount(self) -> int:
        return len(self._props)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def vertex(self, name: str) -> int:
        """Vertex index of an entity or literal id; :class:`UnknownEntity` if absent."""
        try:
            return self._index[name]
        except KeyError:
            raise UnknownEntity(name, "the evidence graph",
                                "collect its neighbourhood first or check the id") from None

    def name(self, v: int) -> str:
        return self._names[v]

    def is_literal(self, v: int) -> bool:
        return self._literal[v]

    def passable(self, v: int) -> bool:
        """May a path pass *through* vertex ``v`` (not a literal, not a hub)?"""
        return self._passable[v]

    def neighbours(self, v: int) -> list[tuple[int, int, bool]]:
        """``(neighbour, edge index, forward)`` for every step edge at ``v``, deterministic order.
        ``forward`` is True when the edge runs ``v → neighbour`` in Wikidata's direction."""
        return self._adj[v]

    def degree(self, v: int) -> int:
        return len(self._adj[v])

    def edge_property(self, e: int) -> str:
        return self._props[e]

    def edge_statement(self, e: int) -> str:
        return self._sids[e]

    def edge_relation(self, e: int) -> str | None:
        return self._relations[e]

    @property
    def relations(self) -> tuple[str | None, ...]:
        """Relation class of every edge, by edge index (``None`` where unclassified)."""
        return self._relations

    def edge_endpoints(self, e: int) -> tuple[int, int]:
        return self.graph.es[e].tuple  # type: ignore[no-any-return]

    def to_networkx(self) -> nx.MultiDiGraph:
        """Export as a networkx ``MultiDiGraph`` keyed by statement id (for interoperability)."""
        import networkx as nx

        out = nx.MultiDiGraph()
        for v, name in enumerate(self._names):
            out.add_node(name, literal=self._literal[v], classes=self.classes.get(name, ()),
                         label=self.labels.get(name))
        for e, (s, o) in enumerate(self.graph.get_edgelist()):
            out.add_edge(self._names[s], self._names[o], key=self._sids[e],
                         property=self._props[e], relation=self.edge_relation(e))
        return out
