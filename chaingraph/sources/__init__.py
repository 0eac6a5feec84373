"""Where neighbours come from: a SPARQL endpoint, an existing store, or a dump file.

* :mod:`~chaingraph.sources.neighbours` — the :class:`Neighbour` record, the
  :class:`NeighbourSource` and :class:`Selector` protocols and the deterministic cap;
* :mod:`~chaingraph.sources.sparql` — the SPARQL client (retries, response cache, offline
  replay);
* :mod:`~chaingraph.sources.sparql_source` — batched neighbourhoods from an endpoint;
* :mod:`~chaingraph.sources.store_source` — neighbourhoods from an existing store;
* :mod:`~chaingraph.sources.endpoint_graph` — single items' step edges and hub flags from an
  endpoint, cached per item (the whole-endpoint no-shortcut search of ``build``);
* :mod:`~chaingraph.sources.endpoint_names` — items named by a label or alias on an endpoint;
* :mod:`~chaingraph.sources.loaders` — JSON-dump and RDF dump loaders (write the store).

The crawl over any of these is :func:`chaingraph.collect.collect`.
"""

__all__: list[str] = []
