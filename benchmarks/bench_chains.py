"""Chain enumeration: chaingraph against igraph and networkx on the same paths, in one run.

    python benchmarks/bench_chains.py [--quick]

On ``world/codex-m`` (dense: shortcuts everywhere) and ``world/ilpc-large`` (long
shortest paths), for seeds of low, median and high degree, every valid chain of 5–6 hops
(no hub limit, so that the peers' plain shortest paths are the same set):

* **chaingraph** — ``enumerate_chains(graph, seed, 5, 6)``, streamed as ``Chain`` tuples;
* **chaingraph tree** — ``chain_tree(graph, seed, 5, 6)``: every chain as a prefix tree
  (int32; the two deepest layers as CSR ranges of the DAG), beside the same tree with
  every chain then read out of it as blocks;
* **chaingraph blocks** — ``chain_blocks(graph, seed, 5, 6)``: the same chains as numpy
  arrays of at most 65,536 rows each (bulk use: counting, statistics, export);
* **igraph** — ``distances`` from the seed, then ``get_all_shortest_paths(seed, to=targets
  at distance 5..6)`` on the undirected multigraph (parallel edges give repeated paths,
  exactly as chaingraph's parallel statements give distinct chains);
* **networkx** — what ``all_shortest_paths`` does, with one BFS for all targets: one
  ``nx.predecessor(G, seed, cutoff=6)`` and networkx's own path builder per target;
  vertex paths of the simple graph;
* **networkx per target** — ``nx.all_shortest_paths(G, seed, t)`` called for every
  target as documented (one BFS per call); on CoDEx-M only, where seeds have a handful of
  targets at 5–6 hops (ILPC seeds have thousands: hours).

Before timing, the script checks the three produce the same paths: chaingraph's chains
and igraph's paths as the same multiset of vertex paths, and networkx's as the same set.
It also times the top-20 chains by ``s_div`` (branch and bound) against enumerating every
chain and sorting, and checks both lists are equal. Each case runs in a fresh process
(``benchmarks/harness.py``); tables give medians, rates, peak memory and ratios.

The synthetic builds (1/10, 1/4, 1/2 and all of ``--synthetic`` edges) print wall,
user and system CPU seconds and peak memory, and the time per edge against the smallest
(1.00× is linear), in two modes: the first build of a fresh process (what a user sees)
and the later builds of that process (where small arrays reuse freed memory); with
``--build-before CHECKOUT`` the builds (and the whole-store builds)
run with chaingraph imported from another checkout too, each size alternating, after
checking both build the same arrays. Beside them, in the same table and run, peers do
comparable work on the same edges (the numbers behind the synthetic ids): igraph builds
its graph (``igraph.Graph(n=..., edges=...)``: O(E)) and numpy sorts the (subject,
object) keys (``np.argsort(kind="stable")``: O(E log E)), with their per-edge ratios, so
that "linear" can be judged against what the machine gives them (``--no-build-peers``
leaves them out). ``--builds-only`` stops after the build tables. ``--walk-before
CHECKOUT`` times only chains (the synthetic seed's tree, CoDEx-M's seeds' trees and
walks) on graphs built by that checkout and by this one: what a build's memory pages do
to the walks after it.

Last, ``chaingraph expand`` runs as a whole process (process start included); with
``--expand-before CHECKOUT`` the same commands import chaingraph from another checkout
too (main's, say), runs alternating, after checking both print the same chains. The
expand table alone: ``--worlds --synthetic 0 --expand-before ../main``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from harness import SHARED_DATA, Case, markdown_table, measure, world_store  # noqa: E402

DATA = SHARED_DATA
CACHE = Path(os.environ.get("CHAINGRAPH_BENCH_CACHE", Path(tempfile.gettempdir()) / "chaingraph-bench"))
LO, HI = 5, 6
#: seeds picked by degree rank (10th percentile, median, 99th) among those with 5–6-hop chains
SEEDS = {
    "codex-m": {"low": "Q505957", "median": "Q476294", "high": "Q13371"},
    "ilpc-large": {"low": "Q65299", "median": "Q129988", "high": "Q262",
                   "output-heavy": "Q2964775"},  # 17 M chains: where DuckDB came closest
}
Run = Callable[[], tuple[int, dict[str, Any]]]


def graph(world: str, hub_limit: int | None = None) -> Any:
    from chaingraph.graph import EvidenceGraph
    from chaingraph.settings import TraversalPolicy
    from chaingraph.store import Store

    with Store(world_store(world), read_only=True) as store:
        return EvidenceGraph.from_store(store, policy=TraversalPolicy(hub_limit=hub_limit))


# -- the implementations (each returns a run() for the harness) -----------------------------
def prepare_chaingraph(world: str, seed: str) -> Run:
    from chaingraph.chains import distances, enumerate_chains

    g = graph(world)
    v = g.vertex(seed)
    distances(g, v)  # builds the graph's arc index once, as the peers build their graphs in setup

    def run() -> tuple[int, dict[str, Any]]:
        n = 0
        for _chain in enumerate_chains(g, v, LO, HI):
            n += 1
        return n, {}

    return run


def prepare_chaingraph_blocks(world: str, seed: str) -> Run:
    from chaingraph.chains import chain_blocks, distances

    g = graph(world)
    v = g.vertex(seed)
    distances(g, v)

    def run() -> tuple[int, dict[str, Any]]:
        return sum(b.nodes.shape[0] for b in chain_blocks(g, v, LO, HI)), {}

    return run


def _igraph_paths(und: Any, v: int) -> list[list[int]]:
    dist = und.distances(source=v)[0]
    targets = [t for t, d in enumerate(dist) if LO <= d <= HI]
    return und.get_all_shortest_paths(v, to=targets) if targets else []


def prepare_igraph(world: str, seed: str) -> Run:
    g = graph(world)
    und, v = g.graph.as_undirected(mode="each"), g.vertex(seed)

    def run() -> tuple[int, dict[str, Any]]:
        return len(_igraph_paths(und, v)), {}

    return run


def _networkx_paths(G: Any, v: int) -> Iterable[list[int]]:
    import networkx as nx
    from networkx.algorithms.shortest_paths.generic import _build_paths_from_predecessors

    pred, seen = nx.predecessor(G, v, cutoff=HI, return_seen=True)
    for t, d in seen.items():
        if LO <= d <= HI:
            yield from _build_paths_from_predecessors({v}, t, pred)


def _nx_graph(g: Any) -> Any:
    import networkx as nx

    G = nx.Graph()
    G.add_nodes_from(range(g.vcount()))
    G.add_edges_from(g.graph.get_edgelist())
    return G


def prepare_networkx(world: str, seed: str) -> Run:
    g = graph(world)
    G, v = _nx_graph(g), g.vertex(seed)

    def run() -> tuple[int, dict[str, Any]]:
        n = 0
        for _path in _networkx_paths(G, v):
            n += 1
        return n, {}

    return run


def prepare_networkx_per_target(world: str, seed: str) -> Run:
    """``nx.all_shortest_paths`` called as documented, once per target (a BFS per call)."""
    import networkx as nx

    g = graph(world)
    G, v = _nx_graph(g), g.vertex(seed)
    dist = nx.single_source_shortest_path_length(G, v, cutoff=HI)
    targets = sorted(t for t, d in dist.items() if LO <= d <= HI)

    def run() -> tuple[int, dict[str, Any]]:
        n = 0
        for t in targets:
            for _path in nx.all_shortest_paths(G, v, t):
                n += 1
        return n, {"targets": len(targets)}

    return run


def prepare_top(world: str, seed: str, mode: str, n: int = 20) -> Run:
    from chaingraph.chains import distances, enumerate_chains
    from chaingraph.ranking import edge_relations, node_types, rank_chains, top_chains

    g = graph(world)
    node_types(g)  # per-graph indexes (types, relation classes, arcs), built once
    edge_relations(g)
    distances(g, seed)

    def run() -> tuple[int, dict[str, Any]]:
        if mode == "bnb":
            best = top_chains(g, seed, n, LO, HI)
        else:
            best = rank_chains(g, enumerate_chains(g, seed, LO, HI), n)
        return len(best), {"best": round(best[0].s_div, 4) if best else None}

    return run


# -- builds, from this checkout or another ---------------------------------------------------------
def _use_checkout(tree: str | None) -> None:
    """Import chaingraph from ``tree`` (another checkout) in this fresh process."""
    if tree is None:
        return
    assert "chaingraph" not in sys.modules, "chaingraph was imported before the checkout was chosen"
    sys.path.insert(0, tree)
    import chaingraph

    assert Path(chaingraph.__file__).resolve().is_relative_to(Path(tree).resolve()), chaingraph.__file__


def _with_cpu(run: Run) -> Run:
    """``run`` that also reports the user and system CPU seconds and the minor page faults
    (pages the kernel mapped in: a huge page is one) of every run so far."""
    cpu: dict[str, list[float]] = {"user": [], "sys": [], "faults": []}

    def timed() -> tuple[int, dict[str, Any]]:
        before = resource.getrusage(resource.RUSAGE_SELF)
        n, extra = run()
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu["user"].append(after.ru_utime - before.ru_utime)
        cpu["sys"].append(after.ru_stime - before.ru_stime)
        cpu["faults"].append(after.ru_minflt - before.ru_minflt)
        return n, {**extra, **cpu}

    return timed


def prepare_synthetic_build(edges: int, tree: str | None = None) -> Run:
    """``EvidenceGraph.from_arrays`` on the synthetic graph, chaingraph from ``tree``, after
    a 1,000-edge build has loaded what a first build loads once (modules, the crosswalk), so
    that the first timed build differs from the later ones by its fresh memory alone."""
    import peers

    _use_checkout(tree)
    peers.prepare_synthetic_build(1000)()
    return _with_cpu(peers.prepare_synthetic_build(edges))


#: peers of the synthetic build, on the same edges (the numbers behind its ids): what the
#: hardware gives per edge for comparable O(E) and O(E log E) work
BUILD_PEERS = {"igraph Graph(n, edges)": "igraph", "numpy stable argsort": "argsort"}


def prepare_synthetic_peer(edges: int, who: str) -> Run:
    """A peer's build of the synthetic graph's ``edges``, after a 1,000-edge run (as
    :func:`prepare_synthetic_build`): ``igraph`` makes ``igraph.Graph(n=..., edges=...)`` of
    the subject → object pairs (a list of pairs, igraph's input, made in setup: igraph reads
    numpy arrays row by row, slower); ``argsort`` is ``np.argsort(kind="stable")`` of the
    (subject, object) keys as one int64 each (the sort an edge list's CSR needs)."""
    import numpy as np
    import peers

    def make(m: int) -> Run:
        s, _, o = peers.synthetic_numbers(m)
        n = int(max(s.max(), o.max())) + 1
        if who == "igraph":
            import igraph as ig

            pairs = list(zip(s.tolist(), o.tolist(), strict=True))
            del s, o

            def run() -> tuple[int, dict[str, Any]]:
                return ig.Graph(n=n, edges=pairs, directed=True).ecount(), {}

            return run
        keys = s * n + o
        del s, o

        def sort() -> tuple[int, dict[str, Any]]:
            return len(np.argsort(keys, kind="stable")), {}

        return sort

    make(1000)()
    return _with_cpu(make(edges))


def prepare_store_build(world: str, who: str, tree: str | None = None) -> Run:
    """A whole store's graph (``peers.prepare_build``), chaingraph from ``tree``."""
    import peers

    _use_checkout(tree)
    return _with_cpu(peers.prepare_build(world, who))


def prepare_walk(world: str, seed: str, mode: str, tree: str | None = None, edges: int = 0) -> Run:
    """Chains of ``seed`` on a graph chaingraph from ``tree`` built (``world`` ``"synthetic"``:
    the synthetic graph of ``edges``, its bounds; else the store's, 5–6 hops): ``mode``
    ``"tree"`` is ``chain_tree``, ``"walk"`` counts ``enumerate_chains``. What a build leaves
    behind (its arrays' memory pages) is what differs between checkouts."""
    import peers

    _use_checkout(tree)
    from chaingraph.chain_tree import chain_tree
    from chaingraph.chains import distances, enumerate_chains

    if world == "synthetic":
        from chaingraph.graph import EvidenceGraph
        from chaingraph.settings import TraversalPolicy

        g = EvidenceGraph.from_arrays(*peers.synthetic(edges), policy=TraversalPolicy(hub_limit=None))
        lo, hi = peers.SYNTHETIC_LO, peers.SYNTHETIC_HI
    else:
        g, lo, hi = graph(world), LO, HI
    v = g.vertex(seed)
    distances(g, v)  # the graph's arc index, built once

    def run() -> tuple[int, dict[str, Any]]:
        if mode == "tree":
            return chain_tree(g, v, lo, hi).count(), {}
        return sum(1 for _ in enumerate_chains(g, v, lo, hi)), {}

    return _with_cpu(run)


def walk_table(cases: list[tuple[str, dict[str, Any]]], checkouts: dict[str, str | None], repeat: int,
               processes: int) -> str:
    """Markdown: each walk case on graphs each checkout built, ``processes`` fresh processes
    per case and checkout (alternating), ``repeat`` timed runs each after one untimed:
    median wall and CPU seconds, and each checkout's CPU against the first's."""
    import statistics

    runs: dict[tuple[str, str], list[Any]] = {(name, label): [] for name, _ in cases for label in checkouts}
    for _ in range(processes):
        for name, params in cases:
            for label, tree in checkouts.items():
                runs[(name, label)].append(measure(Case(name, "bench_chains:prepare_walk",
                                                        {**params, "tree": tree}, repeat, 1)))
    lines = ["### chains on the graph each checkout built (its arrays' pages): "
             f"{processes} fresh process(es) per case and checkout, {repeat} runs each", "",
             "| case | checkout | chains | runs | median wall s | median CPU s | CPU vs first |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for name, _ in cases:
        first = None
        for label in checkouts:
            rs = runs[(name, label)]
            counts = {r.items for r in rs}
            assert len(counts) == 1, f"{name}: the checkouts' graphs give different chains: {counts}"
            wall = statistics.median(w for r in rs for w in r.seconds)
            cpu = statistics.median(u + s_ for r in rs for u, s_ in zip(r.extra["user"], r.extra["sys"],
                                                                         strict=True))
            first = first or cpu
            lines.append(f"| {name} | {label} | {rs[0].items:,} | {sum(len(r.seconds) for r in rs)} | "
                         f"{wall:.3f} | {cpu:.3f} | {cpu / first:.2f}× |")
    return "\n".join(lines) + "\n"


def _digest(edges: int, tree: str | None) -> str:
    import hashlib

    import numpy as np
    import peers
    import pyarrow as pa

    _use_checkout(tree)
    from chaingraph.graph import EvidenceGraph
    from chaingraph.settings import TraversalPolicy

    g = EvidenceGraph.from_arrays(*peers.synthetic(edges), policy=TraversalPolicy(hub_limit=None))
    h = hashlib.sha256()
    for name, v in sorted(vars(g.arrays).items()):
        h.update(name.encode())
        if isinstance(v, np.ndarray):
            h.update(v.dtype.str.encode() + v.tobytes())
        elif isinstance(v, pa.Array):
            h.update(repr(v.to_pylist()).encode())
        elif isinstance(v, pa.Table):  # row order follows the input's
            h.update(repr(v.to_pydict()).encode())
        else:
            h.update(repr(v).encode())
    return h.hexdigest()


def build_digest(edges: int, tree: str | None = None) -> str:
    """A digest of every array the synthetic graph's build makes, in a fresh process with
    chaingraph from ``tree``: equal digests, byte-identical builds."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(_digest, edges, tree).result()


#: the two ways a build is timed: the first build of a fresh process (what a user who builds one
#: graph sees: every large array is new memory) and the later builds of the same process (the C
#: allocator hands back memory the earlier builds freed, but only arrays under its 32 MB mmap
#: threshold: at 1 M edges nearly all of them, at 10 M none of the large ones)
MODES = ("first build in a fresh process", "later builds, same process")


def _mode_runs(results: list[Any], mode: str) -> list[tuple[float, float, float]]:
    """(wall, user, sys) of each build of ``results`` (one per process) in ``mode``."""
    picked = slice(0, 1) if mode == MODES[0] else slice(1, None)
    return [(w, u, s) for r in results
            for w, u, s in list(zip(r.seconds, r.extra["user"], r.extra["sys"], strict=True))[picked]]


def _mode_faults(results: list[Any], mode: str) -> list[float]:
    """Minor page faults of each build of ``results`` in ``mode``."""
    picked = slice(0, 1) if mode == MODES[0] else slice(1, None)
    return [f for r in results for f in r.extra["faults"][picked]]


def build_table(title: str, rows: list[tuple[str, int, list[Any]]]) -> str:
    """Markdown: per (mode, builder, size) the median wall, user and system seconds, minor
    page faults (fresh pages mapped in; a transparent huge page counts one), peak
    (largest over the processes) and the wall and CPU time per edge against the builder's
    smallest size in the same mode (1.00× is linear)."""
    import statistics

    lines = [f"### {title}", "", "| mode | edges | builder | builds | median wall s | median user s "
             "| median sys s | median page faults | peak MB | wall per edge vs smallest "
             "| CPU per edge vs smallest |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for mode in MODES:
        smallest: dict[str, tuple[float, float]] = {}
        for label, edges, results in rows:
            runs = _mode_runs(results, mode)
            if not runs:
                continue
            wall, user, sys_, cpu = (statistics.median(x) for x in (
                [w for w, _, _ in runs], [u for _, u, _ in runs], [s for _, _, s in runs],
                [u + s for _, u, s in runs]))
            base = smallest.setdefault(label, (wall / edges, cpu / edges))
            peak = max(r.peak_mb for r in results)
            faults = statistics.median(_mode_faults(results, mode))
            lines.append(f"| {mode} | {edges:,} | {label} | {len(runs)} | {wall:.3f} | {user:.3f} | "
                         f"{sys_:.3f} | {faults:,.0f} | {peak:,.0f} | {wall / edges / base[0]:.2f}× | "
                         f"{cpu / edges / base[1]:.2f}× |")
    return "\n".join(lines) + "\n"


def synthetic_builds(sizes: list[int], checkouts: dict[str, str | None], repeat: int, processes: int,
                     peers: dict[str, str] | None = None) -> list[tuple[str, int, list[Any]]]:
    """Each (checkout, size) built ``repeat`` times in each of ``processes`` fresh processes,
    and each of ``peers`` (label: ``prepare_synthetic_peer``'s ``who``) on the same edges,
    the processes alternating between builders and sizes so that all see the same machine."""
    builders = {label: ("bench_chains:prepare_synthetic_build", {"tree": tree})
                for label, tree in checkouts.items()}
    builders |= {label: ("bench_chains:prepare_synthetic_peer", {"who": who})
                 for label, who in (peers or {}).items()}
    runs: dict[tuple[str, int], list[Any]] = {(label, m): [] for label in builders for m in sizes}
    for _ in range(processes):
        for m in sizes:
            for label, (target, params) in builders.items():
                runs[(label, m)].append(measure(Case(f"{m:,} edges", target, {"edges": m, **params}, repeat)))
    return [(label, m, runs[(label, m)]) for label in builders for m in sizes]


# -- same paths? -----------------------------------------------------------------------------
_MASK = (1 << 64) - 1


def _fingerprint(paths: Iterable[Iterable[int]], unique: bool) -> tuple[int, int, int]:
    """(count, Σ hash, Σ hash²) mod 2^64 of the multiset (or set) of vertex paths."""
    count = total = squares = 0
    seen: set[int] = set()
    for p in paths:
        h = hash(tuple(p)) & _MASK
        if unique:
            if h in seen:
                continue
            seen.add(h)
        count += 1
        total = (total + h) & _MASK
        squares = (squares + h * h) & _MASK
    return count, total, squares


def verify(world: str, seed: str) -> str:
    from chaingraph.chains import chain_blocks, enumerate_chains
    from chaingraph.ranking import rank_chains, top_chains

    g = graph(world)
    v = g.vertex(seed)
    ours_multi = _fingerprint((c.nodes for c in enumerate_chains(g, v, LO, HI)), unique=False)
    rows = (tuple(r) for b in chain_blocks(g, v, LO, HI) for r in b.nodes.tolist())
    assert _fingerprint(rows, unique=False) == ours_multi, f"{world} {seed}: blocks differ from the walk"
    ours_set = _fingerprint((c.nodes for c in enumerate_chains(g, v, LO, HI)), unique=True)
    ig_multi = _fingerprint(_igraph_paths(g.graph.as_undirected(mode="each"), v), unique=False)
    nx_set = _fingerprint(_networkx_paths(_nx_graph(g), v), unique=True)
    assert ours_multi == ig_multi, f"{world} {seed}: chaingraph and igraph differ"
    assert ours_set == nx_set, f"{world} {seed}: chaingraph and networkx differ"
    top = top_chains(g, seed, 20, LO, HI)
    assert top == rank_chains(g, enumerate_chains(g, seed, LO, HI), 20), "top-20 differs from sort-all"
    return (f"{world} {seed}: {ours_multi[0]:,} chains (walk and blocks) = igraph's {ig_multi[0]:,} paths "
            f"(same multiset); {ours_set[0]:,} distinct vertex paths = networkx's (same set); "
            "top-20 = sort-all")


def main(argv: list[str] | None = None) -> None:
    import peers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat; low and high degree seeds only")
    parser.add_argument("--worlds", nargs="*", default=list(SEEDS), choices=list(SEEDS),
                        help="which worlds to run (default: all)")
    parser.add_argument("--no-expand", action="store_true", help="skip the whole-process expand timings")
    parser.add_argument("--expand-before", type=Path, metavar="CHECKOUT",
                        help="also time the expand commands importing chaingraph from this checkout "
                             "(e.g. main's), alternating with this one, answers checked equal first")
    parser.add_argument("--expand-repeat", type=int, default=None,
                        help="runs of each expand command (default: the repeat of the other cases)")
    parser.add_argument("--core", action="store_true",
                        help="chaingraph, DuckDB and the plain-Python walker only (counts still checked "
                             "equal first); skips igraph, rustworkx, networkx and enumerate-all + sort, "
                             "which take most of an hour on ILPC-large")
    parser.add_argument("--synthetic", type=int, default=10_000_000,
                        help="edges of the largest synthetic graph (default 10 M; 0 skips it)")
    parser.add_argument("--build-before", type=Path, metavar="CHECKOUT",
                        help="also build the graphs with chaingraph imported from this checkout (e.g. "
                             "main's), alternating with this one, after checking both build the same arrays")
    parser.add_argument("--build-processes", type=int, default=3,
                        help="fresh processes per synthetic size and checkout (default 3; --quick: 1)")
    parser.add_argument("--walk-before", type=Path, metavar="CHECKOUT",
                        help="only time chains on graphs built by this checkout and by this one (the "
                             "synthetic graph's seed, CoDEx-M's seeds), alternating fresh processes")
    parser.add_argument("--no-build-peers", action="store_true",
                        help="synthetic builds of chaingraph only (no igraph build, no numpy argsort)")
    parser.add_argument("--builds-only", action="store_true",
                        help="only the build tables (whole stores, synthetic sizes): no chains, no expand")
    args = parser.parse_args(argv)
    checkouts: dict[str, str | None] = {"this": None}
    if args.build_before is not None:
        checkouts = {f"before ({args.build_before})": str(args.build_before.resolve()), "after": None}
    repeat = 1 if args.quick else 3
    if args.walk_before is not None:
        seed = peers.SYNTHETIC_SEED
        synthetic = {"world": "synthetic", "seed": seed, "mode": "tree", "edges": args.synthetic}
        walks = [(f"synthetic {args.synthetic:,} edges {seed} tree", synthetic)]
        walks += [(f"codex-m {level} {seed} {mode}", {"world": "codex-m", "seed": seed, "mode": mode})
                  for level, seed in SEEDS["codex-m"].items() for mode in ("tree", "walk")]
        trees = {f"before ({args.walk_before})": str(args.walk_before.resolve()), "after": None}
        print(walk_table(walks, trees, 5 if not args.quick else 2, 1 if args.quick else args.build_processes))
        return
    print(f"# Chain enumeration ({LO}–{HI} hops, no hub limit), median of {repeat} run(s)\n")
    for world, seeds in SEEDS.items():
        if world not in args.worlds:
            continue
        world_store(world)
        builds = [measure(Case(who if tree is None else f"{who} {label}", "bench_chains:prepare_store_build",
                               {"world": world, "who": who, "tree": tree}, repeat))
                  for who in ("chaingraph",) for label, tree in checkouts.items()]
        builds += [measure(Case(who, "peers:prepare_build", {"world": world, "who": who}, repeat))
                   for who in ("igraph", "networkx", "duckdb")]
        print(markdown_table(f"{world}: building the graph of the whole store", builds,
                             baseline=builds[-4].name, unit="edges"))
        if args.builds_only:
            continue
        for level, seed in seeds.items():
            if args.quick and level == "median":
                continue
            heavy = level == "output-heavy"
            print(verify(world, seed) if not (heavy or args.core) else "", file=sys.stderr)
            print(peers.verify_peers(world, seed, rustworkx=not args.core), file=sys.stderr)
            params = {"world": world, "seed": seed}
            warm = 0 if heavy else 1  # one untimed run of every case (not of the 17 M-chain seed's)
            results = [measure(Case("chaingraph tree", "peers:prepare_tree", params, repeat, warm)),
                       measure(Case("chaingraph tree, every chain read", "peers:prepare_tree_read", params,
                                    1 if heavy else repeat, warm)),
                       measure(Case("chaingraph walk", "bench_chains:prepare_chaingraph", params,
                                    1 if heavy else repeat, warm)),
                       measure(Case("chaingraph blocks", "bench_chains:prepare_chaingraph_blocks", params,
                                    1 if heavy else repeat, warm)),
                       measure(Case("DuckDB recursive CTE", "peers:prepare_duckdb_cte", params,
                                    1 if heavy else repeat, warm)),
                       measure(Case("plain-Python DAG walker", "peers:prepare_python_walker", params,
                                    1 if heavy else repeat, warm))]
            if not (heavy or args.core):
                results += [measure(Case("igraph", "bench_chains:prepare_igraph", params, repeat, warm)),
                            measure(Case("rustworkx per target", "peers:prepare_rustworkx", params, 1)),
                            measure(Case("networkx", "bench_chains:prepare_networkx", params, 1))]
            if world == "codex-m" and not args.core:
                results.append(measure(Case("networkx per target", "bench_chains:prepare_networkx_per_target",
                                            params, 1)))
            print(markdown_table(f"{world}, {level}-degree seed {seed}: all valid chains", results,
                                 baseline="chaingraph tree", unit="paths"))
            if heavy:
                continue
            top = [measure(Case("top-20 branch and bound", "bench_chains:prepare_top",
                                {**params, "mode": "bnb"}, repeat, warm))]
            if not args.core:
                top.append(measure(Case("enumerate all + sort", "bench_chains:prepare_top",
                                        {**params, "mode": "all"}, 1)))
            print(markdown_table(f"{world}, {level}-degree seed {seed}: top-20 by s_div", top,
                                 baseline="top-20 branch and bound", unit="chains"))
    if args.synthetic:
        sizes = sorted({args.synthetic // 10, args.synthetic // 4, args.synthetic // 2, args.synthetic})
        if args.build_before is not None:
            digests = {label: build_digest(sizes[-1], tree) for label, tree in checkouts.items()}
            assert len(set(digests.values())) == 1, f"the checkouts build different arrays: {digests}"
            print(f"synthetic {sizes[-1]:,} edges: every array equal in both checkouts", file=sys.stderr)
        processes = 1 if args.quick else args.build_processes
        build_peers = {} if args.no_build_peers else BUILD_PEERS
        rows = synthetic_builds(sizes, checkouts, max(repeat, 3), processes, build_peers)
        print(build_table(f"synthetic graph: EvidenceGraph.from_arrays beside its peers on the same edges, "
                          f"{processes} fresh process(es) per size and builder, {max(repeat, 3)} builds each "
                          "(time should grow linearly)", rows))
        for label in [*checkouts, *build_peers]:
            synth = [r for lab, _, r in rows if lab == label]
            print(f"{label}: {linearity(synth, sizes)}")
        if args.builds_only:
            return
        print(peers.verify_synthetic(args.synthetic), file=sys.stderr)
        edges = {"edges": args.synthetic}
        tree = [measure(Case("chaingraph tree", "peers:prepare_synthetic_tree", edges, repeat, 1)),
                measure(Case("DuckDB recursive CTE", "peers:prepare_synthetic_duckdb", edges, repeat, 1))]
        print(markdown_table(f"synthetic graph, {args.synthetic:,} edges: all chains of "
                             f"{peers.SYNTHETIC_SEED}, {peers.SYNTHETIC_LO}-{peers.SYNTHETIC_HI} hops", tree,
                             baseline="chaingraph tree", unit="chains"))
    if args.no_expand or args.builds_only:
        return
    expand_table(peers, args.expand_repeat or repeat, args.expand_before)


def expand_table(peers: Any, repeat: int, before: Path | None) -> None:
    """``chaingraph expand`` as a whole process: median wall, CPU and peak RSS (and the
    largest peak) of each command, this checkout beside ``before`` when given (runs
    alternate, one at a time, so both see the same machine)."""
    import statistics

    print(f"### `chaingraph expand` as a whole process ({repeat} runs each: median wall and CPU, "
          "median and largest peak RSS)\n")
    print("| command | checkout | median wall s | median CPU s | median peak MB | largest peak MB |\n"
          "|---|---|---:|---:|---:|---:|")
    trees = {"this": None} if before is None else {"before": before.resolve(), "this": None}
    for label, tree in trees.items():
        package = peers.imported_from(tree)
        assert tree is None or package.is_relative_to(tree), f"{label}: imported {package}, not {tree}'s"
        print(f"{label}: chaingraph from {package}", file=sys.stderr)
    for name, argv_ in peers.expand_commands(world_store("codex-m")).items():
        if before is not None:
            answers = {label: peers.command_answer(argv_, tree) for label, tree in trees.items()}
            assert answers["before"] == answers["this"], f"{name}: the checkouts' chains differ"
            print(f"{name}: {len(answers['this'])} chains, equal in both checkouts", file=sys.stderr)
        runs: dict[str, list[tuple[float, float, list[float]]]] = {label: [] for label in trees}
        for _ in range(repeat):
            for label, tree in trees.items():
                runs[label].append(peers.time_command_runs(argv_, 1, tree))
        for label in trees:
            walls, cpus, peaks = zip(*((w, c, p[0]) for w, c, p in runs[label]))
            shown = "this" if before is None else (f"before ({before})" if label == "before" else "after")
            print(f"| `{name}` | {shown} | {statistics.median(walls):.2f} | {statistics.median(cpus):.2f} | "
                  f"{statistics.median(peaks):,.0f} | {max(peaks):,.0f} |")


def linearity(results: list[list[Any]], sizes: list[int]) -> str:
    """Seconds (first build of a fresh process, and later builds) and peak MB per edge of
    the largest build over the smallest: 1.00× is linear."""
    import statistics

    def per_edge(mode: str) -> float:
        small, big = (statistics.median(w for w, _, _ in _mode_runs(r, mode))
                      for r in (results[0], results[-1]))
        return (big / sizes[-1]) / (small / sizes[0])

    small_peak, big_peak = (max(r.peak_mb for r in rs) for rs in (results[0], results[-1]))
    mem_ratio = (big_peak / sizes[-1]) / (small_peak / sizes[0]) if small_peak else float("nan")
    return (f"Per edge, {sizes[-1]:,} edges against {sizes[0]:,}: wall {per_edge(MODES[0]):.2f}× "
            f"({MODES[0]}), {per_edge(MODES[1]):.2f}× ({MODES[1]}); peak memory {mem_ratio:.2f}× "
            "(1.00× is linear).\n")


if __name__ == "__main__":
    main()
