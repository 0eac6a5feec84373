"""What one seed of a build over a SPARQL endpoint is built from (DESIGN §3, §10).

A build with ``endpoint`` keeps one **per-run store** (``out/cache.duckdb``) holding the
endpoint's responses (the crawl's queries by hash, the certificate's neighbour lists by
item), so a resumed or repeated run asks nothing twice. Per seed:

1. the seed's neighbourhood is collected through the endpoint under the crawl caps into
   a fresh in-memory store (:func:`~chaingraph.collect.collect` with a
   :class:`~chaingraph.sources.sparql_source.SparqlSource`; a seed's result depends on
   nothing another seed fetched), and the top chains are enumerated and ranked there as
   the store path does;
2. each chain's no-shortcut certificate covers the **whole endpoint**
   (:class:`~chaingraph.build.endpoint_certify.EndpointCertifier`, scope ``endpoint``);
3. clue proposal and the necessity certificate read the seed's collected neighbourhood
   (the task records say ``"answer_sets": "neighbourhood"``): answer sets over the whole
   endpoint would need every pattern evaluated there, which this build does not do.

One process holds the per-run store: an endpoint build runs its seeds in the calling
process (the Wikidata Query Service asks for one request in flight anyway).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chaingraph.build.endpoint_certify import EndpointCertifier
from chaingraph.errors import InvalidInput
from chaingraph.settings import EndpointSettings
from chaingraph.sources.endpoint_graph import EndpointGraph, check_endpoint_policy
from chaingraph.store import Store

if TYPE_CHECKING:
    from chaingraph.build.corpus import BuildParameters

__all__ = ["CACHE_FILE", "EndpointContext", "close_endpoint_contexts", "open_endpoint_context"]

#: the per-run store of an endpoint build, inside its output folder
CACHE_FILE = "cache.duckdb"


@dataclass
class EndpointContext:
    """What every seed of an endpoint build shares, opened once per process: the
    endpoint's settings, the per-run store (response and neighbour-list cache) and the
    whole-endpoint certifier."""

    parameters: BuildParameters
    settings: EndpointSettings
    cache: Store
    certifier: EndpointCertifier

    def close(self) -> None:
        self.cache.close()


_CONTEXTS: dict[tuple[str, str], EndpointContext] = {}


def open_endpoint_context(parameters: BuildParameters, cache: str | Path) -> EndpointContext:
    """The :class:`EndpointContext` of ``parameters`` with its per-run store at ``cache``
    (opened once per process and reused)."""
    key = (parameters.model_dump_json(), str(cache))
    ctx = _CONTEXTS.get(key)
    if ctx is not None:
        return ctx
    if parameters.endpoint is None:
        raise InvalidInput("endpoint: these build parameters name no endpoint").about("endpoint")
    check_endpoint_policy(parameters.policy)
    settings = EndpointSettings(url=parameters.endpoint)
    store = Store(cache)
    graph = EndpointGraph(settings, parameters.policy, cache=store)
    ctx = EndpointContext(parameters, settings, store, EndpointCertifier(graph))
    _CONTEXTS[key] = ctx
    return ctx


def close_endpoint_contexts() -> None:
    """Close every per-run store this process opened (a build calls it when done)."""
    while _CONTEXTS:
        _CONTEXTS.popitem()[1].close()
