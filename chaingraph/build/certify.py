"""The whole-source no-shortcut certificate (DESIGN §4, §10).

``expand`` proves a chain has no shortcut in the neighbourhood it collected, under the
crawl caps; an agent holding the whole graph may still skip a hop. :class:`StoreCertifier`
re-checks every chain in the **whole store** — one evidence graph over every statement,
built once per process under the chain's traversal policy — with
:func:`~chaingraph.explain.explain_chain`: the chain must still be a valid chain there
(every node present, no hub passed through under the whole-store degrees, and the seed
to target distance equal to k, so every sub-path is shortest too).

A SPARQL endpoint as the whole source is certified by a bidirectional bounded search
over the endpoint (:class:`~chaingraph.build.endpoint_certify.EndpointCertifier`, scope
``endpoint``).

>>> from chaingraph.graph import EvidenceGraph
>>> g = EvidenceGraph.from_edges([("s1", "Q1", "P1", "Q2"), ("s2", "Q2", "P1", "Q3"),
...                               ("s3", "Q1", "P2", "Q3")])
>>> cert = StoreCertifier(g, source="store:demo").certify(["Q1", "P1", "Q2", "P1", "Q3"], min_hops=1)
>>> cert.holds, cert.distance, cert.reason
(False, 1, 'shortcut')
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from chaingraph.chains import distances
from chaingraph.explain import explain_chain
from chaingraph.graph import EvidenceGraph

__all__ = ["Certificate", "StoreCertifier"]


class Certificate(BaseModel):
    """The no-shortcut certificate of one chain: the ``scope`` it covers (``source``: the
    whole store named by ``source``; ``endpoint``: the whole SPARQL endpoint named by
    ``source``), whether it ``holds``, the seed-to-target
    ``distance`` found there and the chain's ``k``; when it fails, the rule (``reason``)
    and its one-line ``detail``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    scope: str = "source"
    source: str
    holds: bool
    k: int
    distance: int | None
    policy: dict[str, object]
    reason: str | None = None
    detail: str | None = None


class StoreCertifier:
    """Certifies chains against one whole-store graph (see the module docstring)."""

    def __init__(self, graph: EvidenceGraph, *, source: str) -> None:
        self.graph = graph
        self.source = source

    def certify(self, path: Sequence[str], *, min_hops: int, max_hops: int = 50) -> Certificate:
        """The certificate of ``path`` (node ids interleaved with the step properties)."""
        why = explain_chain(self.graph, path, min_hops=min_hops, max_hops=max_hops)
        nodes = [p for p in path if not p.startswith("P")]
        k = len(nodes) - 1
        distance: int | None = None
        if nodes[0] in self.graph and nodes[-1] in self.graph:
            d = int(distances(self.graph, nodes[0])[self.graph.vertex(nodes[-1])])
            distance = d if d >= 0 else None
        first = why.violations[0] if why.violations else None
        return Certificate(
            source=self.source,
            holds=why.valid,
            k=k,
            distance=distance,
            policy=self.graph.policy.describe(),
            reason=first.reason if first else None,
            detail=first.detail if first else None,
        )
