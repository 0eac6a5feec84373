"""The evidence graph: compact arrays over the store under one traversal policy.

:class:`~chaingraph.settings.TraversalPolicy` decides which statements are chain steps
(DESIGN §2). The chain engine, the shortcut check and clue ablation all read the same
:class:`EvidenceGraph`, so a path the engine may walk is exactly a path the checks see.
The graph is integer arrays built without a Python object per edge
(:mod:`chaingraph.compact`, DESIGN §13); an igraph or networkx view is made on request.

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

import functools
import weakref
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pyarrow as pa

from chaingraph.compact import GraphArrays, build_arrays
from chaingraph.crosswalk.relations import RelationClassifier, relation_classifier
from chaingraph.errors import InvalidInput, UnknownEntity
from chaingraph.settings import TraversalPolicy

if TYPE_CHECKING:
    import igraph as ig
    import networkx as nx

    from chaingraph.store import Store
    from chaingraph.timeline import Timeline

__all__ = ["EvidenceGraph", "per_graph"]

#: property datatypes (JSON spelling) whose statements may become literal nodes
LITERAL_DATATYPES = frozenset({"time", "quantity", "string", "monolingualtext", "globe-coordinate"})


class EvidenceGraph:
    """The evidence graph as compact arrays (:mod:`chaingraph.compact`) with id maps.

    Vertices are numbered in id order; edges (Wikidata direction) in (subject, property,
    object, statement id) order, literal statements after them. Per edge: endpoints,
    property code (:attr:`prop_codes` into :attr:`property_ids`) and relation class code
    (:attr:`relation_codes` into :attr:`relation_names`, ``-1`` when unclassified).
    :attr:`graph` is an igraph view (vertex attribute ``name``; edge attributes
    ``property``, ``statement_id``, ``relation``), made on first use.
    Build with :meth:`from_store`, :meth:`from_arrays` or :meth:`from_edges`.

    :attr:`classifier` is the one source of relation classes for everything built on the
    graph (ranking, chain records, audits of what it produced).
    """

    def __init__(self, arrays: GraphArrays, policy: TraversalPolicy, *,
                 classifier: RelationClassifier | None = None,
                 labels: dict[str, str] | None = None, sitelinks: dict[str, int] | None = None) -> None:
        self.arrays = arrays
        self.policy = policy
        self.labels = labels or {}
        self.sitelinks = sitelinks or {}
        self.property_ids = arrays.properties
        self.prop_codes = arrays.prop
        #: statement windows (set by :meth:`from_store`; ``None`` for graphs built from bare edges)
        self.timeline: Timeline | None = None
        #: statements not valid on ``policy.as_of`` (``timeline.why_invalid`` says why), and the
        #: item edges left out for it, ``(sid, s, p, o)``
        self.time_excluded: frozenset[str] = frozenset()
        self.time_excluded_edges: tuple[tuple[str, str, str, str], ...] = ()
        #: relation class and rule per property: the one source of relation classes
        self.classifier = classifier if classifier is not None else relation_classifier(arrays.properties)
        per_property = [self.classifier.relation(p) for p in arrays.properties]
        #: relation classes present, sorted; :attr:`relation_codes` index into it
        self.relation_names: tuple[str, ...] = tuple(sorted({r for r in per_property if r is not None}))
        index = {r: i for i, r in enumerate(self.relation_names)}
        #: relation class code per property code (``-1``: unclassified)
        self.property_relation = np.asarray([index.get(r, -1) if r is not None else -1 for r in per_property],
                                            dtype=np.int16)
        self.relation_codes = (self.property_relation[arrays.prop] if len(arrays.prop)
                               else np.zeros(0, dtype=np.int16))
        self._per_property = tuple(per_property)
        self._indptr = arrays.indptr
        degree = np.diff(arrays.indptr)
        limit = policy.hub_limit
        self.passable_mask = ~arrays.literal & ((degree <= limit) if limit is not None else True)

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_arrays(cls, statement_id: pa.Array, subject: pa.Array, property: pa.Array, object: pa.Array, *,
                    policy: TraversalPolicy | None = None, literal_statement_id: pa.Array | None = None,
                    literal_subject: pa.Array | None = None, literal_property: pa.Array | None = None,
                    labels: dict[str, str] | None = None, sitelinks: dict[str, int] | None = None,
                    classifier: RelationClassifier | None = None, store: Store | None = None
                    ) -> EvidenceGraph:
        """Build from column arrays (Arrow or anything ``pyarrow.array`` takes) of item
        edges and, optionally, literal statements; no Python object is made per edge.
        Relation classes come from ``classifier`` (default: the shipped crosswalk on the
        graph's properties, told what ``store`` knows of them)."""
        policy = policy or TraversalPolicy()
        lits = ((literal_statement_id, literal_subject, literal_property) if policy.include_literals
                else (None, None, None))
        arrays = build_arrays(*(_arrow(a) for a in (statement_id, subject, property, object)),
                              class_properties=frozenset(policy.class_properties), allows=policy.allows,
                              literal_statement_id=_arrow(lits[0]), literal_subject=_arrow(lits[1]),
                              literal_property=_arrow(lits[2]))
        if classifier is None:
            classifier = relation_classifier(arrays.properties, store)
        return cls(arrays, policy, classifier=classifier, labels=labels, sitelinks=sitelinks)

    @classmethod
    def from_edges(cls, edges: Iterable[Sequence[str]], *, policy: TraversalPolicy | None = None,
                   literals: Iterable[tuple[str, str, str]] = (),
                   labels: dict[str, str] | None = None, sitelinks: dict[str, int] | None = None,
                   classifier: RelationClassifier | None = None) -> EvidenceGraph:
        """Build from ``(statement_id, subject, property, object)`` item edges and optional
        ``(statement_id, subject, property)`` literal statements. Relation classes come
        from ``classifier`` (default: the shipped crosswalk on the graph's properties)."""
        cols = list(zip(*edges)) or [(), (), (), ()]
        lcols = list(zip(*literals)) or [(), (), ()]
        return cls.from_arrays(*(pa.array(c, type=pa.string()) for c in cols[:4]), policy=policy,
                               literal_statement_id=pa.array(lcols[0], type=pa.string()),
                               literal_subject=pa.array(lcols[1], type=pa.string()),
                               literal_property=pa.array(lcols[2], type=pa.string()),
                               labels=labels, sitelinks=sitelinks, classifier=classifier)

    @classmethod
    def from_store(cls, store: Store, *, policy: TraversalPolicy | None = None,
                   classifier: RelationClassifier | None = None) -> EvidenceGraph:
        """Build from every traversable statement in ``store`` (read as Arrow columns).
        Relation classes come from ``classifier`` (default: the shipped crosswalk, told
        what ``store`` knows of each property).

        External ids, URLs, media ... are never edges (DESIGN §2): literal nodes are only
        made for literal datatypes (or properties whose datatype is unknown)."""
        import pyarrow.compute as pc

        policy = policy or TraversalPolicy()
        if policy.include_literals:
            t = store.edge_table(item_only=False, literal_types=LITERAL_DATATYPES)
            item = pc.equal(t["value_type"], "item")
            items, lits = t.filter(item), t.filter(pc.invert(item))
            del t
        else:
            items, lits = store.edge_table(), None
        dated = None
        if policy.as_of is not None:  # one rule for every check: only statements valid on the date
            from chaingraph.timeline import DatedStatements

            dated = DatedStatements(store, policy.as_of)
            items = dated.keep_table(items)
            lits = None if lits is None else dated.keep_table(lits, record=False)
        graph = cls.from_arrays(items["statement_id"], items["subject"], items["property"], items["object"],
                               policy=policy,
                               literal_statement_id=None if lits is None else lits["statement_id"],
                               literal_subject=None if lits is None else lits["subject"],
                               literal_property=None if lits is None else lits["property"],
                               labels=store.entity_labels(), sitelinks=store.sitelinks(),
                               classifier=classifier, store=store)
        if dated is not None:
            graph.timeline = dated.timeline
            graph.time_excluded = dated.invalid
            graph.time_excluded_edges = dated.excluded_edges()
        del items, lits  # the edge table: read whole, then encoded into the graph's arrays
        store.release_memory()
        return graph

    # -- lookups ----------------------------------------------------------------------
    @cached_property
    def _names(self) -> list[str]:
        return self.arrays.names.to_pylist()  # type: ignore[no-any-return]

    @cached_property
    def _index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self._names)}

    def vcount(self) -> int:
        return len(self.arrays.names)

    def ecount(self) -> int:
        return len(self.arrays.src)

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
        return bool(self.arrays.literal[v])

    def passable(self, v: int) -> bool:
        """May a path pass *through* vertex ``v`` (not a literal, not a hub)?"""
        return bool(self.passable_mask[v])

    def blocked(self, v: int) -> str | None:
        """Why a path may not pass through ``v`` (``None`` when it may), naming the rule.

        >>> g = EvidenceGraph.from_edges([("s1", "Q1", "P1", "Q2"), ("s2", "Q3", "P1", "Q2")],
        ...                              policy=TraversalPolicy(hub_limit=1))
        >>> g.blocked(g.vertex("Q2")), g.blocked(g.vertex("Q1"))
        ('Q2 has 2 step edges > hub limit 1', None)
        """
        if self.passable_mask[v]:
            return None
        if self.arrays.literal[v]:
            return f"{self._names[v]} is a literal value (it may only end a path)"
        return f"{self._names[v]} has {self.degree(v):,} step edges > hub limit {self.policy.hub_limit}"

    def with_policy(self, policy: TraversalPolicy) -> EvidenceGraph:
        """The same edges under another hub limit (the arrays are shared, not copied).
        Only ``hub_limit`` may differ: which statements are steps was decided when the
        graph was built."""
        if policy.model_copy(update={"hub_limit": self.policy.hub_limit}) != self.policy:
            raise InvalidInput("policy: with_policy changes only hub_limit; build a new graph for "
                               "other step rules")
        other = EvidenceGraph(self.arrays, policy, classifier=self.classifier, labels=self.labels,
                              sitelinks=self.sitelinks)
        other.timeline, other.time_excluded = self.timeline, self.time_excluded
        other.time_excluded_edges = self.time_excluded_edges
        return other

    def neighbours(self, v: int) -> list[tuple[int, int, bool]]:
        """``(neighbour, edge index, forward)`` for every step edge at ``v``, deterministic order
        (neighbour id, property, statement id, direction). ``forward`` is True when the
        edge runs ``v → neighbour`` in Wikidata's direction."""
        a, b = self._indptr.item(v), self._indptr.item(v + 1)
        ar = self.arrays
        return list(zip(ar.nbr[a:b].tolist(), ar.arc_edge[a:b].tolist(), ar.fwd[a:b].tolist()))

    def arcs_between(self, a: int, b: int) -> list[tuple[int, bool]]:
        """``(edge index, forward)`` of every step edge between vertices ``a`` and ``b``
        (``forward``: the edge runs ``a → b``), in :meth:`neighbours` order of ``a``. Each
        adjacency row is sorted by neighbour, so the arcs are found by binary search in the
        shorter of the two rows, not by listing either.

        >>> g = EvidenceGraph.from_edges([("s1", "Q1", "P1", "Q2"), ("s2", "Q2", "P2", "Q1"),
        ...                               ("s3", "Q1", "P1", "Q3")], policy=TraversalPolicy(hub_limit=None))
        >>> [(g.edge_statement(e), fwd) for e, fwd in g.arcs_between(g.vertex("Q1"), g.vertex("Q2"))]
        [('s1', True), ('s2', False)]
        >>> g.arcs_between(g.vertex("Q2"), g.vertex("Q3"))
        []
        """
        ptr, ar = self._indptr, self.arrays
        # .item(): a Python int straight away (indexing makes a numpy scalar first, ~15x dearer)
        a0, a1, b0, b1 = ptr.item(a), ptr.item(a + 1), ptr.item(b), ptr.item(b + 1)
        flip = a1 - a0 > b1 - b0
        far, start, end = (a, b0, b1) if flip else (b, a0, a1)  # search the shorter row
        row = ar.nbr[start:end]
        # the needle in the row's own dtype: searchsorted with a Python int casts the whole row
        # to int64 first (a copy as long as the row: 60 us on a row of 100,000)
        needle = row.dtype.type(far)
        lo, hi = start + int(row.searchsorted(needle, "left")), start + int(row.searchsorted(needle, "right"))
        if lo == hi:
            return []
        return [(e, fwd != flip) for e, fwd in zip(ar.arc_edge[lo:hi].tolist(), ar.fwd[lo:hi].tolist())]

    def degree(self, v: int) -> int:
        start: int = self._indptr.item(v)
        end: int = self._indptr.item(v + 1)
        return end - start

    def edge_property(self, e: int) -> str:
        code: int = self.prop_codes.item(e)
        return self.property_ids[code]

    def edge_statement(self, e: int) -> str:
        return self.arrays.statement_ids[e].as_py()  # type: ignore[no-any-return]

    def edge_relation(self, e: int) -> str | None:
        code: int = self.prop_codes.item(e)
        return self._per_property[code]

    @cached_property
    def relations(self) -> tuple[str | None, ...]:
        """Relation class of every edge, by edge index (``None`` where unclassified).
        (A tuple of strings: prefer :attr:`relation_codes` on large graphs.)"""
        return tuple(self._per_property[c] for c in self.prop_codes.tolist())

    def edge_endpoints(self, e: int) -> tuple[int, int]:
        return self.arrays.src.item(e), self.arrays.dst.item(e)

    # -- classes (from the class edges, built on first use) ------------------------------
    @cached_property
    def class_statements(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """Class-edge values kept apart per property (``{"P31": {...}, "P279": {...}}``), so
        a type check can read instance-of and subclass-of separately; :attr:`classes`
        merges them."""
        t = self.arrays.classes
        out: dict[str, dict[str, set[str]]] = {}
        for s, p, o in zip(t["subject"].to_pylist(), t["property"].to_pylist(), t["object"].to_pylist()):
            out.setdefault(p, {}).setdefault(s, set()).add(o)
        return {p: {s: tuple(sorted(v)) for s, v in m.items()} for p, m in sorted(out.items())}

    @cached_property
    def classes(self) -> dict[str, tuple[str, ...]]:
        """Classes of each entity (values of all class properties, merged and sorted)."""
        merged: dict[str, set[str]] = {}
        for m in self.class_statements.values():
            for s, v in m.items():
                merged.setdefault(s, set()).update(v)
        return {s: tuple(sorted(v)) for s, v in merged.items()}

    @cached_property
    def excluded_edges(self) -> tuple[tuple[str, str, str, str], ...]:
        """Item statements the policy keeps out (not class edges), ``(sid, s, p, o)``, so
        that a check can say "excluded by policy" rather than "no such statement"."""
        t = self.arrays.excluded
        rows = zip(*(t[c].to_pylist() for c in ("statement_id", "subject", "property", "object")))
        return tuple(sorted(rows, key=lambda r: (r[1], r[2], r[3], r[0])))

    # -- views ------------------------------------------------------------------------
    @cached_property
    def graph(self) -> ig.Graph:
        """An igraph view (built on first use: it holds Python strings per edge)."""
        import igraph as ig

        ar = self.arrays
        g = ig.Graph(n=self.vcount(), edges=np.column_stack([ar.src, ar.dst]).tolist(), directed=True)
        g.vs["name"] = self._names
        g.es["property"] = [self.property_ids[c] for c in ar.prop.tolist()]
        g.es["statement_id"] = ar.statement_ids.to_pylist()
        g.es["relation"] = list(self.relations)
        return g

    def to_networkx(self) -> nx.MultiDiGraph:
        """Export as a networkx ``MultiDiGraph`` keyed by statement id (for interoperability)."""
        import networkx as nx

        out = nx.MultiDiGraph()
        for v, name in enumerate(self._names):
            out.add_node(name, literal=self.is_literal(v), classes=self.classes.get(name, ()),
                         label=self.labels.get(name))
        sids = self.arrays.statement_ids.to_pylist()
        for e, (s, o) in enumerate(zip(self.arrays.src.tolist(), self.arrays.dst.tolist())):
            out.add_edge(self._names[s], self._names[o], key=sids[e],
                         property=self.edge_property(e), relation=self.edge_relation(e))
        return out


def _arrow(values: Any) -> pa.Array | None:
    if values is None or isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    return pa.array(values, type=pa.string())


_T = TypeVar("_T")


def per_graph(build: Callable[[EvidenceGraph], _T]) -> Callable[[EvidenceGraph], _T]:
    """``build`` run once per graph: what it made for a graph is kept while the graph lives
    (the graph is a weak key), so an index derived from a graph is built on first use and
    never outlives it.

    >>> @per_graph
    ... def edges(graph):
    ...     print("built")
    ...     return graph.ecount()
    >>> g = EvidenceGraph.from_edges([("s1", "Q1", "P361", "Q2")])
    >>> edges(g), edges(g)
    built
    (1, 1)
    """
    made: weakref.WeakKeyDictionary[EvidenceGraph, _T] = weakref.WeakKeyDictionary()

    @functools.wraps(build)
    def get(graph: EvidenceGraph) -> _T:
        got = made.get(graph)
        if got is None:
            got = made[graph] = build(graph)
        return got

    return get
