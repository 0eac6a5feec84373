"""Atomic claims resolved to ids, and the pluggable judge of whether the evidence supports one.

A :class:`ResolvedClaim` is a claim event with its mentions resolved
(:class:`~chaingraph.scoring.reference.Resolver`) and its statement in canonical form
(:meth:`~chaingraph.scoring.reference.Relations.key`). A :class:`SupportJudge` decides
whether a claim is *supported*; the default :class:`GraphJudge` asks the evidence: the
store (or, without one, the evidence graph and its value lookup) must hold a matching
non-deprecated statement — the same property, a declared equivalent or the inverse read
the other way — and, when the claim cites a URL, one such statement's references must
include it as ``P854`` reference URL. Without a store there are no references to check,
so a claim that cites a URL is then not supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from chaingraph.lookups import value_matches
from chaingraph.scoring.reference import Relations, Resolver, value_node
from chaingraph.trajectory import ClaimEvent
from chaingraph.values import EntityValue, StringValue, Value

if TYPE_CHECKING:
    from chaingraph.graph import EvidenceGraph
    from chaingraph.lookups import ValueLookup
    from chaingraph.store import Store

__all__ = ["REFERENCE_URL", "Evidence", "GraphJudge", "ResolvedClaim", "SupportJudge", "resolve_claim"]

#: ``P854`` reference URL.
REFERENCE_URL = "P854"


class ResolvedClaim(NamedTuple):
    """A claim event with ids: ``premise`` is the node the agent reasoned from (the claim's
    subject), ``conclusion`` the node it reached (object entity, or ``value:…``);
    ``statement`` the canonical ``(subject, property, object)`` in Wikidata's direction
    (``None`` when a mention stayed unresolved, see ``problems``)."""

    event: int
    premise: str | None
    conclusion: str | None
    property: str | None
    value: Value | None
    statement: tuple[str, str, str] | None
    source: str | None
    anchor: str | None
    component: str | None
    problems: tuple[str, ...] = ()


#: resolved mentions of an item claim (``False``: some mention stays unresolved)
Resolved = tuple[str, str, str, tuple[str, str, str], str | None] | bool


def resolve_claim(index: int, ev: ClaimEvent, resolver: Resolver, rel: Relations,
                  cache: dict[tuple[str | None, ...], Resolved] | None = None) -> ResolvedClaim:
    """Resolve a claim's mentions; every mention that stays unresolved is a problem.
    ``cache`` (one per resolver and relations) remembers item claims already resolved."""
    if ev.value is None:  # the common case: an item object, every mention resolved (cached)
        mentions = (ev.subject, ev.relation, ev.object, ev.direction, ev.anchor)
        got = None if cache is None else cache.get(mentions)
        if got is None:
            subj, prop = resolver.entity(ev.subject)[0], resolver.relation(ev.relation)[0]
            obj: str | None = None if ev.object is None else resolver.entity(ev.object)[0]
            anchor = None if ev.anchor is None else resolver.entity(ev.anchor)[0]
            got = False
            if subj is not None and prop is not None and obj is not None and (ev.anchor is None or anchor):
                key = rel.key(subj, prop, obj) if ev.direction == "forward" else rel.key(obj, prop, subj)
                got = (subj, obj, prop, key, anchor)
            if cache is not None:
                cache[mentions] = got
        if not isinstance(got, bool):
            subj, obj, prop, key, anchor = got
            return ResolvedClaim(index, subj, obj, prop, None, key, ev.source, anchor, ev.component, ())
    problems = []
    subj, why = resolver.entity(ev.subject)
    if subj is None:
        problems.append(f"subject: {why}")
    prop, why = resolver.relation(ev.relation)
    if prop is None:
        problems.append(f"relation: {why}")
    if ev.value is not None and not isinstance(ev.value, EntityValue):
        obj = value_node(ev.value)
    else:
        mention = ev.object if ev.value is None else ev.value.id
        assert mention is not None
        obj, why = resolver.entity(mention)
        if obj is None:
            problems.append(f"object: {why}")
    anchor = None
    if ev.anchor is not None:
        anchor, why = resolver.entity(ev.anchor)
        if anchor is None:
            problems.append(f"anchor: {why}")
    statement = None
    if subj is not None and prop is not None and obj is not None:
        a, b = (subj, obj) if ev.direction == "forward" else (obj, subj)
        statement = rel.key(a, prop, b)
    value = ev.value if ev.value is not None and not isinstance(ev.value, EntityValue) else None
    return ResolvedClaim(index, subj, obj, prop, value, statement, ev.source, anchor, ev.component,
                         tuple(problems))


@dataclass
class Evidence:
    """What a judge may read: the graph, its value lookup, the store (when there is one)."""

    graph: EvidenceGraph
    relations: Relations
    values: ValueLookup | None = None
    store: Store | None = None
    _index: dict[tuple[str, str, str], list[str]] | None = field(default=None, repr=False)
    _variants: dict[str, list[tuple[str, bool]]] = field(default_factory=dict, repr=False)

    def variants(self, prop: str) -> list[tuple[str, bool]]:
        """:meth:`Relations.variants` of ``prop`` (cached)."""
        got = self._variants.get(prop)
        if got is None:
            got = self._variants[prop] = self.relations.variants(prop)
        return got

    def statements(self, key: tuple[str, str, str]) -> list[str]:
        """Statement ids of the item statement with canonical ``key`` (any equivalent form)."""
        if self.store is not None:
            return self._store_statements(key)
        g, (s, p, o) = self.graph, key
        variants = self.variants(p)
        out: list[str] = []
        if s in g and o in g:  # step edges between the two
            a, b = g.vertex(s), g.vertex(o)
            wanted = {(prop, swapped) for prop, swapped in variants}
            out += [g.edge_statement(e) for e, fwd in g.arcs_between(a, b)
                    if (g.edge_property(e), not fwd) in wanted]
        for prop, swapped in variants:  # class edges type the nodes; they are statements too
            a_, b_ = (o, s) if swapped else (s, o)
            if b_ in g.class_statements.get(prop, {}).get(a_, ()):
                out.append(f"{a_}${prop}${b_}")
        if self._index is None:  # statements the traversal policy keeps out of the graph
            self._index = {}
            for sid, es, ep, eo in g.excluded_edges:
                self._index.setdefault(self.relations.key(es, ep, eo), []).append(sid)
        return out + self._index.get(key, [])

    def _store_statements(self, key: tuple[str, str, str]) -> list[str]:
        assert self.store is not None
        s, p, o = key
        out: list[str] = []
        for prop, swapped in self.variants(p):
            a, b = (o, s) if swapped else (s, o)
            out += [e.statement_id for e in self.store.edges(subject=a, property=prop, object=b)]
        return out

    def value_statements(self, subject: str, prop: str, value: Value) -> list[str]:
        """Statement ids of ``subject prop v`` with ``v`` matching ``value``."""
        props = [p for p, swapped in self.variants(prop) if not swapped]
        if self.store is not None:
            sids = [e.statement_id for e in self.store.edges(subject=subject, property=props, item_only=False)
                    if e.value_type != "item"]
            found = [(sid, info.value) for sid in sids if (info := self.store.statement(sid)) is not None]
            return [sid for sid, v in found if v is not None and value_matches(value, v)]
        g = self.graph
        if subject not in g or self.values is None:
            return []
        sids = [g.edge_statement(e) for u, e, fwd in g.neighbours(g.vertex(subject))
                if fwd and g.is_literal(u) and g.edge_property(e) in props]
        got = self.values.literal_values(sids)
        return [sid for sid in sids if sid in got and value_matches(value, got[sid])]

    def cites(self, statement_ids: Sequence[str], url: str) -> bool:
        """Does one of the statements carry ``url`` as a ``P854`` reference URL?"""
        if self.store is None:
            return False
        want = url.strip().rstrip("/")
        for sid in statement_ids:
            info = self.store.statement(sid)
            for _hash, prop, _snaktype, value in info.references if info is not None else ():
                text = value.text.strip().rstrip("/") if isinstance(value, StringValue) else None
                if prop == REFERENCE_URL and text == want:
                    return True
        return False


class SupportJudge(Protocol):
    """Is ``claim`` supported? Returns ``(supported, reason)``."""

    def __call__(self, claim: ResolvedClaim, evidence: Evidence) -> tuple[bool, str]: ...


class GraphJudge:
    """The default judge: a matching statement in the evidence (and the cited URL among its
    ``P854`` references when the claim cites one)."""

    def __call__(self, claim: ResolvedClaim, evidence: Evidence) -> tuple[bool, str]:
        if claim.statement is None:
            return False, "unresolved: " + "; ".join(claim.problems)
        s, p, o = claim.statement
        if claim.value is not None:
            assert claim.premise is not None and claim.property is not None
            sids = evidence.value_statements(claim.premise, claim.property, claim.value)
        else:
            sids = evidence.statements((s, p, o))
        shown = f"{s} {p} {o}"
        if not sids:
            return False, f"the evidence holds no statement {shown}"
        if claim.source is None:
            return True, f"statement {sids[0]}"
        if evidence.store is None:
            return False, f"{shown} holds, but without a store its references cannot confirm {claim.source}"
        if evidence.cites(sids, claim.source):
            return True, f"statement {sids[0]}, reference URL {claim.source}"
        return False, f"{shown} holds, but none of its references has P854 {claim.source}"
