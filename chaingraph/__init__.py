"""chaingraph: a knowledge-graph evidence-chain engine for Wikidata.

Imports flow one way (a module imports only modules above it in this list)::

    errors, ids          error tree; id validation and IRIs
    terminal             control characters neutralised for human-readable output
    values               Wikidata values in one canonical (JSON) form
    resources            packaged queries/ and data/
    store                DuckDB evidence store; the only module that names its tables
    sources/             where neighbours come from: neighbour records and protocols,
                         the SPARQL client, the SPARQL and store neighbour sources, the
                         JSON-dump and RDF loaders                    (write the store)
    collect              the breadth-first crawl over any source      (writes the store)
    crosswalk/           property -> relation class, with the deciding rule
    records, graph       chain records; igraph view + traversal policy
    lookups              statement values beside the graph (value clues, value targets)
    chains, explain,     enumeration and shortcut proof; "why not?"; s_div and top-N;
      ranking, merge     alias merge
    expand               collect, then enumerate, rank and record
    tasks, patterns,     task model; clue patterns (SPARQL semantics); clue ablation
      necessity
    units, fusion/       unit table; the exact fusion calculator
    audit/               corpus relation-class audits
    sample_corpus        chain and task corpora from world dumps (notebook, benchmarks)
    cli/                 thin click twins of the library functions
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
