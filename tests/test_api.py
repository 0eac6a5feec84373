"""The front door: ``import chaingraph as cg`` gives the public API at the top level, and
importing it stays light (issue 11)."""

from __future__ import annotations

import subprocess
import sys

import chaingraph as cg

#: every public name a pipeline may rely on; removing one must be a deliberate change here
PUBLIC = {
    "__version__",
    # building a corpus
    "build", "build_seed", "BuildParameters", "BuildResult", "CorpusTask", "SeedResult", "read_seeds",
    # settings
    "ChainBounds", "CrawlLimits", "EndpointSettings", "RetryPolicy", "TraversalPolicy",
    # progress reports
    "Progress", "ProgressEvent",
    # store, loading, collecting
    "Store", "load", "summarize", "collect", "collect_subset",
    "CollectReport",
    # graph and chains
    "EvidenceGraph", "evidence_graph", "expand", "ExpandResult", "explain_path", "chain_record",
    "chain_records", "enumerate_chains", "chain_blocks", "Chain", "explain_chain", "Explanation",
    "top_chains",
    "rank_chains", "score_chain", "TypeTable", "merge_adjacent", "chain_tree", "ChainTree", "export",
    # relation classes
    "Crosswalk", "default_crosswalk", "crosswalk", "RelationClassifier", "relation_classifier",
    # records, tasks, necessity, fusion, audits
    "ChainRecord", "ChainParameters", "Task", "load_task", "parse_task", "check_necessity",
    "check_necessity_files", "NecessityReport", "fuse", "fuse_spec", "FusionResult", "FusionRefusal",
    "FusionSpec", "audit", "AuditReport", "propose_clues", "propose_tasks", "ChainPath", "Proposal",
    # errors
    "ChaingraphError", "InvalidId", "UnknownEntity", "InvalidInput", "BadDumpLine", "UnsupportedFormat",
    "InvalidTask", "InvalidSpec", "CorpusProblem", "UnknownUnit", "IncompatibleUnits", "StoreError",
    "EndpointError", "EndpointUnavailable", "EndpointResponseError", "OfflineCacheMiss", "ChainRuleError",
}


def test_every_public_name_is_at_the_top_level() -> None:
    assert set(cg.__all__) >= PUBLIC, sorted(PUBLIC - set(cg.__all__))
    assert set(cg.__all__) == {"__version__", *cg._API}
    for name in cg.__all__:
        assert getattr(cg, name) is not None


def test_top_level_names_are_the_defining_objects() -> None:
    from chaingraph.expand import expand
    from chaingraph.settings import CrawlLimits

    assert cg.expand is expand and cg.CrawlLimits is CrawlLimits
    assert issubclass(cg.InvalidInput, cg.ChaingraphError)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        cg.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:  # pragma: no cover - the assertion is the test
        raise AssertionError("cg.no_such_thing did not raise")


def test_import_chaingraph_imports_no_heavy_library() -> None:
    code = ("import sys, chaingraph; "
            "print(sorted(m for m in ('igraph', 'duckdb', 'matplotlib', 'pint', 'numpy') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
