"""chaingraph: a knowledge-graph evidence-chain engine for Wikidata.

Imports flow one way (a module imports only modules above it in this list)::

    errors, ids          error tree; id validation and IRIs
    values               Wikidata values in one canonical (JSON) form
    resources            packaged queries/ and data/
    store                DuckDB evidence store and the edges() read primitive
    loaders/             JSON-dump and RDF loaders            (write the store)
    sparql, collect      batched, cached SPARQL collection    (write the store)
    crosswalk            property -> relation class, with the deciding rule
    records, graph       chain records; igraph view + traversal policy
    chains, ranking      enumeration, shortcut proof, explain, s_div, alias merge
    lookups, patterns,   statement values; clue patterns, task model, clue ablation
    tasks,
    necessity
    units, fusion        exact fusion calculator
    audit                corpus relation-class audits
    cli/                 thin click twins of the library functions
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
