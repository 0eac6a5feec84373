"""Alias merge (DESIGN §4): contract two adjacent chain nodes that are the same thing.

Wikidata sometimes holds one thing twice (a work and its edition, a person and a
duplicate item joined by ``P460`` *said to be the same as*). A chain that walks from one
to the other spends a hop on nothing. :func:`merge_adjacent` contracts such a pair when
a *judge* says they are the same, then re-verifies the remaining steps, recomputes
``k`` and ``s_div``, and re-applies rules 1–3 in the evidence graph with the two
vertices identified. The record notes what was merged (:class:`~chaingraph.records.MergeNote`).

>>> normalise_label("  Douglas  ADAMS ")
'douglas adams'
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from chaingraph.chains import AcceptAll, EdgeVerifier
from chaingraph.errors import ChainRuleError
from chaingraph.explain import Violation
from chaingraph.graph import EvidenceGraph
from chaingraph.ranking import s_div
from chaingraph.records import ChainNode, ChainRecord, ChainStep, MergeNote

__all__ = ["SAME_AS", "AliasJudge", "DefaultJudge", "MergeOutcome", "merge_adjacent", "normalise_label"]

#: ``P460`` said to be the same as.
SAME_AS = "P460"
_SPACE = re.compile(r"\s+")


def normalise_label(label: str) -> str:
    """Unicode NFKC, case-folded, whitespace collapsed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", label).casefold()).strip()


@runtime_checkable
class AliasJudge(Protocol):
    """Are nodes ``a`` and ``b`` the same thing? Return the reason, or ``None`` if not."""

    def __call__(self, graph: EvidenceGraph, a: str, b: str) -> str | None: ...


class DefaultJudge:
    """Same when a ``P460`` statement links them (either way), or their labels are equal
    after :func:`normalise_label`."""

    def __call__(self, graph: EvidenceGraph, a: str, b: str) -> str | None:
        if a in graph and b in graph:
            for e, _fwd in graph.arcs_between(graph.vertex(a), graph.vertex(b)):
                if graph.edge_property(e) == SAME_AS:
                    return f"{SAME_AS} said to be the same as ({graph.edge_statement(e)})"
        la, lb = graph.labels.get(a), graph.labels.get(b)
        if la and lb and normalise_label(la) == normalise_label(lb):
            return f"equal normalised labels {normalise_label(la)!r}"
        return None


@dataclass(frozen=True)
class MergeOutcome:
    """The contracted record and whether it is still a valid chain (rules 1–4)."""

    record: ChainRecord
    valid: bool
    violations: tuple[Violation, ...]


def merge_adjacent(graph: EvidenceGraph, chain: ChainRecord, i: int, *, judge: AliasJudge | None = None,
                   verifier: EdgeVerifier | None = None) -> MergeOutcome:
    """Contract nodes ``i`` and ``i + 1`` of ``chain`` (the one nearer the seed is kept).

    Raises :class:`~chaingraph.errors.ChainRuleError` when ``i`` is not a position of two
    adjacent nodes or the judge does not find them the same. The outcome's record has
    one hop fewer, its step ``i`` removed, the next step re-attached to the kept node,
    ``s_div`` recomputed and a :class:`MergeNote`; ``valid`` says whether rules 1–4
    (bounds from the record's parameters, shortcut check with the pair identified) hold.
    """
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < chain.k:
        raise ChainRuleError(f"merge position {i!r} must be 0..{chain.k - 1} (node i and i+1 are merged)")
    judge = judge or DefaultJudge()
    verifier = verifier or AcceptAll()
    kept, dropped = chain.nodes[i], chain.nodes[i + 1]
    reason = judge(graph, kept.id, dropped.id)
    if reason is None:
        raise ChainRuleError(f"{kept.id} and {dropped.id} are not judged the same thing; nothing merged")
    nodes: list[ChainNode] = [*chain.nodes[: i + 1], *chain.nodes[i + 2:]]
    steps: list[ChainStep] = list(chain.steps[:i])
    if i + 1 < chain.k:
        steps.append(chain.steps[i + 1].model_copy(update={"source": kept.id}))
    steps += chain.steps[i + 2:]
    violations = _reverify(graph, steps, verifier)
    k = len(steps)
    params = chain.parameters
    ids = [n.id for n in nodes]
    if len(set(ids)) < len(ids):
        violations.append(Violation("repeat", "a node repeats after the merge"))
    bounds = params.bounds
    if k < bounds.min_hops:
        violations.append(Violation("too_short", f"{k} hops < min_hops {bounds.min_hops} after the merge"))
    if k > bounds.max_hops:
        violations.append(Violation("too_long", f"{k} hops > max_hops {bounds.max_hops} after the merge"))
    violations += _shortcuts(graph, ids, kept.id, dropped.id)
    types = tuple(sorted({n.type for n in nodes if n.type is not None}))
    relations = tuple(sorted({s.relation_class for s in steps if s.relation_class is not None}))
    confidence = min((s.confidence for s in steps), default=1.0)
    record = chain.model_copy(update={
        "nodes": tuple(nodes), "steps": tuple(steps), "k": k,
        "s_div": s_div(len(types), len(relations), k, len(chain.parameters.type_inventory)) if k else 0.0,
        "types": types, "relation_classes": relations, "verification_confidence": confidence,
        "merged": (*chain.merged, MergeNote(kept=kept.id, dropped=dropped.id, reason=reason))})
    return MergeOutcome(record, not violations, tuple(violations))


def _reverify(graph: EvidenceGraph, steps: list[ChainStep], verifier: EdgeVerifier) -> list[Violation]:
    edges = {graph.edge_statement(e): e for e in range(graph.ecount())} if steps else {}
    out = []
    for n, step in enumerate(steps):
        e = edges.get(step.statement_id)
        if e is None:
            out.append(Violation("unsupported", f"statement {step.statement_id} is not in the evidence graph",
                                 n + 1))
            continue
        s, o = graph.edge_endpoints(e)
        verdict = verifier(graph, e, s if step.direction == "forward" else o)
        if not verdict.accepted:
            why = verdict.reason or "rejected by the edge verifier"
            out.append(Violation("unsupported", f"{step.statement_id}: {why}", n + 1))
    return out


def _shortcuts(graph: EvidenceGraph, ids: list[str], kept: str, dropped: str) -> list[Violation]:
    """Rule 3 (and the hub rule) in the graph with ``kept`` and ``dropped`` identified.

    Contracting one edge shortens any distance by at most one hop and every node after
    the pair moves one hop closer, so a valid chain stays shortcut-free unless the merged
    node, now carrying both degrees, becomes a hub that the chain passes through."""
    if any(n not in graph for n in ids) or dropped not in graph:
        return []
    a, b = graph.vertex(kept), graph.vertex(dropped)

    def rep(v: int) -> int:
        return a if v == b else v

    def neighbours(v: int) -> list[int]:
        if v == a:
            return [rep(u) for u, _e, _f in (*graph.neighbours(a), *graph.neighbours(b))]
        return [rep(u) for u, _e, _f in graph.neighbours(v)]

    limit = graph.policy.hub_limit
    merged_passable = not graph.is_literal(a) and (
        limit is None or graph.degree(a) + graph.degree(b) <= limit)
    seed = rep(graph.vertex(ids[0]))
    dist = {seed: 0}
    queue = deque([seed])
    while queue:
        u = queue.popleft()
        if u != seed and not (merged_passable if u == a else graph.passable(u)):
            continue
        for w in neighbours(u):
            if w not in dist:
                dist[w] = dist[u] + 1
                queue.append(w)
    out: list[Violation] = []
    if not merged_passable and a in [graph.vertex(n) for n in ids[1:-1]]:
        out.append(Violation("policy", f"{kept} merged with {dropped} has degree "
                             f"{graph.degree(a) + graph.degree(b)} > hub limit {limit}: a hub cannot be "
                             "passed through", ids.index(kept)))
    for pos, name in enumerate(ids[1:], start=1):
        d = dist.get(rep(graph.vertex(name)))
        if d is not None and d < pos:
            out.append(Violation("shortcut", f"{name} is {d} hops from {ids[0]} with {kept} and {dropped} "
                                 f"merged, but at hop {pos}", pos))
            break
    return out
