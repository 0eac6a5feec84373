"""chaingraph: a knowledge-graph evidence-chain engine for Wikidata.

Imports flow one way (a module imports only modules above it in this list)::

    errors, ids,         error tree; id validation and IRIs; the progress event long calls
      progress           report to a callback (only cli/ draws it)
    terminal             control characters neutralised for human-readable output
    settings             crawl limits, chain bounds, traversal policy, endpoint settings
    values               Wikidata values in one canonical (JSON) form
    resources            packaged queries/ and data/
    store_schema, store_reads, store_writes,   DuckDB evidence store; only they name its
      store_state, store                         tables
    timeline             statement validity windows, validity on a date (as_of), time
                         sensitivity (DESIGN §11); settings validates as_of through it lazily
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
    tasks,               task model; the array index clue patterns are evaluated on;
      frontier_index,    clue patterns (SPARQL semantics); minimal and
      patterns, minimal, minimum clue sets; a task's graph under its policy; clue
      task_graphs,       ablation
      necessity
    embed, propose       self-contained tasks; clue proposal: from a chain to a task
                         with a minimal clue set
    units, fusion/       unit table; the exact fusion calculator
    audit/               corpus relation-class audits
    trajectory,          agent trajectory record; process metrics of trajectories
      scoring/             against the evidence graph (DESIGN §12)
    sample_corpus        chain and task corpora from world dumps (notebook, benchmarks)
    cli/                 thin click twins of the library functions

The public API is at the top level (``import chaingraph as cg``); names are imported
when first used, so ``import chaingraph`` stays fast:

>>> import chaingraph as cg
>>> best = cg.expand(["Q42"], top=1).records[0]
>>> best.seed, best.k >= 5, cg.ChainBounds().min_hops
('Q42', True, 5)
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> module that defines it (imported on first use)
_API: dict[str, str] = {
    # settings: the one home of every default
    "ChainBounds": "settings", "CrawlLimits": "settings", "EndpointSettings": "settings",
    "RetryPolicy": "settings", "TraversalPolicy": "settings",
    # what long calls report to their progress= callback
    "Progress": "progress", "ProgressEvent": "progress",
    # the store and where its statements come from
    "Store": "store", "load": "sources.loaders", "summarize": "sources.loaders",
    "collect": "collect", "collect_subset": "collect", "CollectReport": "collect",
    # the evidence graph and chains
    "EvidenceGraph": "graph", "evidence_graph": "expand", "expand": "expand", "ExpandResult": "expand",
    "explain_path": "expand", "chain_record": "expand", "chain_records": "expand",
    "enumerate_chains": "chains",
    "chain_blocks": "chains", "Chain": "chains", "explain_chain": "explain", "Explanation": "explain",
    "chain_tree": "chain_tree", "ChainTree": "chain_tree", "export": "store_parquet",
    "top_chains": "ranking", "rank_chains": "ranking", "score_chain": "ranking", "TypeTable": "ranking",
    "merge_adjacent": "merge",
    # relation classes
    "Crosswalk": "crosswalk", "default_crosswalk": "crosswalk", "crosswalk": "crosswalk",
    "RelationClassifier": "crosswalk", "relation_classifier": "crosswalk",
    # records, tasks, necessity, fusion, audits
    "TimeValue": "values", "QuantityValue": "values", "EntityValue": "values",
    "ChainRecord": "records", "ChainParameters": "records", "Task": "tasks", "load_task": "tasks",
    "parse_task": "tasks", "check_necessity": "necessity", "check_necessity_files": "necessity",
    "NecessityReport": "necessity", "propose_clues": "propose", "propose_tasks": "propose",
    "ChainPath": "propose", "Proposal": "propose",
    "fuse": "fusion", "fuse_spec": "fusion", "FusionResult": "fusion",
    "FusionRefusal": "fusion", "FusionSpec": "fusion", "audit": "audit", "AuditReport": "audit",
    # building a corpus
    "build": "build", "build_seed": "build", "BuildParameters": "build", "BuildResult": "build",
    "CorpusTask": "build", "SeedResult": "build", "read_seeds": "build",
    # process metrics of agent trajectories
    "Trajectory": "trajectory", "score_trajectory": "scoring", "score_files": "scoring",
    "ScoreReport": "scoring", "InvalidTrajectory": "errors",
    # the one error tree
    "ChaingraphError": "errors", "InvalidId": "errors", "UnknownEntity": "errors",
    "InvalidInput": "errors", "BadDumpLine": "errors", "UnsupportedFormat": "errors",
    "InvalidTask": "errors", "InvalidSpec": "errors", "CorpusProblem": "errors", "UnknownUnit": "errors",
    "IncompatibleUnits": "errors", "StoreError": "errors", "EndpointError": "errors",
    "EndpointUnavailable": "errors", "EndpointResponseError": "errors", "OfflineCacheMiss": "errors",
    "ChainRuleError": "errors",
}

#: the public API, pinned by tests/test_api.py (the same names as _API)
__all__ = [
    "AuditReport",
    "BadDumpLine",
    "BuildParameters",
    "BuildResult",
    "Chain",
    "ChainBounds",
    "ChainParameters",
    "ChainPath",
    "ChainRecord",
    "ChainRuleError",
    "ChainTree",
    "ChaingraphError",
    "CollectReport",
    "CorpusProblem",
    "CorpusTask",
    "CrawlLimits",
    "Crosswalk",
    "EndpointError",
    "EndpointResponseError",
    "EndpointSettings",
    "EndpointUnavailable",
    "EntityValue",
    "EvidenceGraph",
    "ExpandResult",
    "Explanation",
    "FusionRefusal",
    "FusionResult",
    "FusionSpec",
    "IncompatibleUnits",
    "InvalidId",
    "InvalidInput",
    "InvalidSpec",
    "InvalidTask",
    "InvalidTrajectory",
    "NecessityReport",
    "OfflineCacheMiss",
    "Progress",
    "ProgressEvent",
    "Proposal",
    "QuantityValue",
    "RelationClassifier",
    "RetryPolicy",
    "ScoreReport",
    "SeedResult",
    "Store",
    "StoreError",
    "Task",
    "TimeValue",
    "Trajectory",
    "TraversalPolicy",
    "TypeTable",
    "UnknownEntity",
    "UnknownUnit",
    "UnsupportedFormat",
    "__version__",
    "audit",
    "build",
    "build_seed",
    "chain_blocks",
    "chain_record",
    "chain_records",
    "chain_tree",
    "check_necessity",
    "check_necessity_files",
    "collect",
    "collect_subset",
    "crosswalk",
    "default_crosswalk",
    "enumerate_chains",
    "evidence_graph",
    "expand",
    "explain_chain",
    "explain_path",
    "export",
    "fuse",
    "fuse_spec",
    "load",
    "load_task",
    "merge_adjacent",
    "parse_task",
    "propose_clues",
    "propose_tasks",
    "rank_chains",
    "read_seeds",
    "relation_classifier",
    "score_chain",
    "score_files",
    "score_trajectory",
    "summarize",
    "top_chains",
]


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'chaingraph' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"chaingraph.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))


class _Package(types.ModuleType):
    """``expand``, ``collect``, ``audit`` and ``crosswalk`` name both a module and its
    function; the import system records an imported submodule as a package attribute, which
    would hide the function. The top-level name stays the function (the modules are still
    importable as ``chaingraph.expand`` etc. through ``from ... import``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _API.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


if TYPE_CHECKING:  # the same names, for type checkers and editors
    from chaingraph.audit import AuditReport, audit
    from chaingraph.build import (
        BuildParameters,
        BuildResult,
        CorpusTask,
        SeedResult,
        build,
        build_seed,
        read_seeds,
    )
    from chaingraph.chain_tree import ChainTree, chain_tree
    from chaingraph.chains import Chain, chain_blocks, enumerate_chains
    from chaingraph.collect import CollectReport, collect, collect_subset
    from chaingraph.crosswalk import (
        Crosswalk,
        RelationClassifier,
        crosswalk,
        default_crosswalk,
        relation_classifier,
    )
    from chaingraph.errors import (
        BadDumpLine,
        ChaingraphError,
        ChainRuleError,
        CorpusProblem,
        EndpointError,
        EndpointResponseError,
        EndpointUnavailable,
        IncompatibleUnits,
        InvalidId,
        InvalidInput,
        InvalidSpec,
        InvalidTask,
        OfflineCacheMiss,
        StoreError,
        UnknownEntity,
        UnknownUnit,
        UnsupportedFormat,
    )
    from chaingraph.expand import (
        ExpandResult,
        chain_record,
        chain_records,
        evidence_graph,
        expand,
        explain_path,
    )
    from chaingraph.explain import Explanation, explain_chain
    from chaingraph.fusion import FusionRefusal, FusionResult, FusionSpec, fuse, fuse_spec
    from chaingraph.graph import EvidenceGraph
    from chaingraph.merge import merge_adjacent
    from chaingraph.necessity import NecessityReport, check_necessity, check_necessity_files
    from chaingraph.progress import Progress, ProgressEvent
    from chaingraph.propose import ChainPath, Proposal, propose_clues, propose_tasks
    from chaingraph.ranking import TypeTable, rank_chains, score_chain, top_chains
    from chaingraph.records import ChainParameters, ChainRecord
    from chaingraph.settings import ChainBounds, CrawlLimits, EndpointSettings, RetryPolicy, TraversalPolicy
    from chaingraph.sources.loaders import load, summarize
    from chaingraph.store import Store
    from chaingraph.store_parquet import export
    from chaingraph.tasks import Task, load_task, parse_task
    from chaingraph.values import EntityValue, QuantityValue, TimeValue
