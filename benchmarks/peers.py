"""Cases for ``bench_chains.py`` at scale: more peers for all-chains enumeration, graph
building beside igraph / networkx / DuckDB, a synthetic 10 M-edge graph, and ``expand``
timed as a whole process.

Every ``prepare_*`` returns a ``run()`` for :func:`harness.measure` (fresh process each).
Enumeration peers work on exactly the chaingraph graph's step edges (no hub limit), and
``verify_peers`` checks their counts equal chaingraph's before anything is timed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

Run = Any
LO, HI = 5, 6


def _graph(world: str) -> Any:
    from bench_chains import graph

    return graph(world)


def _arcs(g: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both directions of every step edge (parallel statements kept), as the chains see them."""
    ar = g.arrays
    src = np.concatenate([ar.src, ar.dst]).astype(np.int64)
    return src, np.concatenate([ar.dst, ar.src]).astype(np.int64)


# -- all chains: chaingraph's prefix tree, DuckDB, rustworkx, plain Python ------------------------
def prepare_tree(world: str, seed: str) -> Run:
    from chaingraph.chain_tree import chain_tree
    from chaingraph.chains import distances

    g = _graph(world)
    v = g.vertex(seed)
    distances(g, v)

    def run() -> tuple[int, dict[str, Any]]:
        t = chain_tree(g, v, LO, HI)
        return t.count(), {"tree MB": round(t.nbytes / 2**20, 2)}

    return run


def _duckdb_arcs(g: Any) -> Any:
    import duckdb
    import pyarrow as pa

    src, dst = _arcs(g)
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.register("_a", pa.table({"src": src, "dst": dst}))
    con.execute("CREATE TABLE arcs AS SELECT * FROM _a")
    con.unregister("_a")
    return con


PATHS = """
WITH RECURSIVE paths(v, k) AS (
    SELECT ?::BIGINT, 0
    UNION ALL
    SELECT a.dst, p.k + 1 FROM paths p JOIN arcs a ON a.src = p.v
    JOIN useful u ON u.v = a.dst AND u.d = p.k + 1 WHERE p.k < ?)
SELECT count(*) FROM paths WHERE k BETWEEN ? AND ?
"""


def duckdb_chains(con: Any, seed: int, lo: int = LO, hi: int = HI) -> int:
    """BFS layers in SQL (one statement per layer, each vertex once), the vertices that
    reach a layer >= lo (backwards, a statement per layer: the same pruning as
    chaingraph's DAG), then every layer-to-layer path from the seed by a recursive CTE
    (one row ``(last vertex, hops)`` per prefix, as chaingraph's tree has one per prefix)."""
    con.execute("CREATE OR REPLACE TEMP TABLE dist AS SELECT ?::BIGINT AS v, 0 AS d", [seed])
    for d in range(1, hi + 1):
        con.execute("INSERT INTO dist SELECT DISTINCT a.dst, ? FROM dist f JOIN arcs a ON a.src = f.v "
                    "WHERE f.d = ? AND a.dst NOT IN (SELECT v FROM dist)", [d, d - 1])
    con.execute("CREATE OR REPLACE TEMP TABLE useful AS SELECT v, d FROM dist WHERE d >= ?", [lo])
    for d in range(lo - 1, -1, -1):
        con.execute("INSERT INTO useful SELECT DISTINCT f.v, f.d FROM dist f JOIN arcs a ON a.src = f.v "
                    "JOIN useful u ON u.v = a.dst AND u.d = f.d + 1 WHERE f.d = ?", [d])
    return int(con.execute(PATHS, [seed, hi, lo, hi]).fetchall()[0][0])


def prepare_duckdb_cte(world: str, seed: str) -> Run:
    """DuckDB: BFS layers, then every layer-to-layer path by a recursive CTE."""
    g = _graph(world)
    v = g.vertex(seed)
    con = _duckdb_arcs(g)

    def run() -> tuple[int, dict[str, Any]]:
        return duckdb_chains(con, v), {}

    return run


def read_tree(t: Any) -> int:
    """Read every chain of a tree out as node/edge blocks (what a consumer of all chains pays)."""
    return sum(b.nodes.shape[0] for b in t.blocks(1 << 18))


def prepare_tree_read(world: str, seed: str) -> Run:
    """chaingraph's tree built, then every chain read out of it as blocks."""
    from chaingraph.chain_tree import chain_tree
    from chaingraph.chains import distances

    g = _graph(world)
    v = g.vertex(seed)
    distances(g, v)

    def run() -> tuple[int, dict[str, Any]]:
        return read_tree(chain_tree(g, v, LO, HI)), {}

    return run


def prepare_rustworkx(world: str, seed: str) -> Run:
    """rustworkx ``all_shortest_paths`` per target (distance 5–6) on the simple graph."""
    import rustworkx as rx

    g = _graph(world)
    v = g.vertex(seed)
    src, dst = g.arrays.src.astype(np.int64), g.arrays.dst.astype(np.int64)
    G = rx.PyGraph(multigraph=False)
    G.add_nodes_from(range(g.vcount()))
    G.add_edges_from_no_data(list(zip(src.tolist(), dst.tolist())))
    lengths = rx.graph_dijkstra_shortest_path_lengths(G, v, lambda _e: 1.0)
    targets = sorted(t for t, d in lengths.items() if LO <= d <= HI)

    def run() -> tuple[int, dict[str, Any]]:
        n = 0
        for t in targets:
            n += len(rx.all_shortest_paths(G, v, t))
        return n, {"targets": len(targets)}

    return run


def _python_chains(adj: dict[int, list[int]], seed: int, lo: int, hi: int) -> Iterator[tuple[int, ...]]:
    """A plain-Python pruned-DAG walker: BFS layers, keep arcs d -> d+1, drop vertices that
    cannot reach depth ``lo``, walk depth-first yielding vertex tuples."""
    dist = {seed: 0}
    frontier = [seed]
    for d in range(1, hi + 1):
        nxt = []
        for u in frontier:
            for w in adj.get(u, ()):
                if w not in dist:
                    dist[w] = d
                    nxt.append(w)
        frontier = nxt
    succ = {u: [w for w in adj.get(u, ()) if dist.get(w) == du + 1] for u, du in dist.items() if du < hi}
    useful = {u for u, du in dist.items() if lo <= du <= hi}
    for d in range(lo - 1, -1, -1):
        useful |= {u for u, du in dist.items() if du == d and any(w in useful for w in succ.get(u, ()))}
    succ = {u: [w for w in ws if w in useful] for u, ws in succ.items() if u in useful}
    path = [seed]

    def walk(u: int) -> Iterator[tuple[int, ...]]:
        for w in succ.get(u, ()):
            path.append(w)
            if len(path) - 1 >= lo:
                yield tuple(path)
            if len(path) - 1 < hi:
                yield from walk(w)
            path.pop()

    yield from walk(seed)


def prepare_python_walker(world: str, seed: str) -> Run:
    """The plain-Python walker over the multigraph's arcs (parallel statements counted)."""
    g = _graph(world)
    v = g.vertex(seed)
    src, dst = _arcs(g)
    adj: dict[int, list[int]] = {}
    for s, d in zip(src.tolist(), dst.tolist()):
        adj.setdefault(s, []).append(d)

    def run() -> tuple[int, dict[str, Any]]:
        n = 0
        for _p in _python_chains(adj, v, LO, HI):
            n += 1
        return n, {}

    return run


def _counts_agree(g: Any, v: int, lo: int, hi: int) -> int:
    """The number of chains of ``v`` (``lo``-``hi`` hops), after checking that the prefix
    tree, its blocks, the per-chain walk and the DuckDB CTE all count it."""
    from chaingraph.chain_tree import chain_tree
    from chaingraph.chains import enumerate_chains

    tree = chain_tree(g, v, lo, hi)
    multi = tree.count()
    assert read_tree(tree) == multi, "tree blocks differ from the tree's count"
    assert multi == sum(1 for _ in enumerate_chains(g, v, lo, hi)), "tree and walk differ"
    assert duckdb_chains(_duckdb_arcs(g), v, lo, hi) == multi, "DuckDB CTE differs"
    return multi


def verify_peers(world: str, seed: str, rustworkx: bool = True) -> str:
    """Counts of the new peers equal chaingraph's (multiset, or distinct vertex paths);
    ``rustworkx=False`` leaves out rustworkx (minutes per ILPC seed, when it is not timed)."""
    from chaingraph.chains import enumerate_chains

    g = _graph(world)
    v = g.vertex(seed)
    multi = _counts_agree(g, v, LO, HI)
    assert prepare_python_walker(world, seed)()[0] == multi, "python walker differs"
    if rustworkx and multi < 3_000_000:
        distinct = len({c.nodes for c in enumerate_chains(g, v, LO, HI)})
        assert prepare_rustworkx(world, seed)()[0] == distinct, "rustworkx differs"
        return f"{world} {seed}: {multi:,} chains = DuckDB CTE = Python walker; distinct paths = rustworkx"
    return f"{world} {seed}: {multi:,} chains = tree blocks = walk = DuckDB CTE = Python walker"


# -- building the graph ----------------------------------------------------------------------
def prepare_build(world: str, who: str) -> Run:
    """Build the evidence graph of a whole store: chaingraph from the store, the peers from
    the same step edges read out of the same store."""
    from harness import world_store

    from chaingraph.graph import EvidenceGraph
    from chaingraph.settings import TraversalPolicy
    from chaingraph.store import Store

    store = Store(world_store(world), read_only=True)
    t = store.edge_table()  # warm the store (its pages are then in memory for everyone)
    policy = TraversalPolicy(hub_limit=None)
    if who != "chaingraph":
        import pyarrow.compute as pc

        t = t.filter(pc.invert(pc.is_in(t["property"], value_set=pc.cast(
            __import__("pyarrow").array(sorted(policy.class_properties)), "string"))))
        cols = [t[c].to_pylist() for c in ("statement_id", "subject", "property", "object")]
    del t

    def run() -> tuple[int, dict[str, Any]]:
        if who == "chaingraph":
            g = EvidenceGraph.from_store(store, policy=policy)
            return g.ecount(), {}
        if who == "igraph":
            import igraph as ig

            g2 = ig.Graph.TupleList(zip(cols[1], cols[3], cols[2], cols[0]), directed=True,
                                    edge_attrs=["property", "statement_id"])
            return g2.ecount(), {}
        if who == "networkx":
            import networkx as nx

            g3 = nx.MultiDiGraph()
            g3.add_edges_from((s, o, sid, {"property": p}) for sid, s, p, o in zip(*cols))
            return g3.number_of_edges(), {}
        import duckdb
        import pyarrow as pa

        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")
        con.register("_e", pa.table({"sid": cols[0], "s": cols[1], "p": cols[2], "o": cols[3]}))
        con.execute("CREATE TABLE v AS SELECT name, row_number() OVER (ORDER BY name) - 1 AS id "
                    "FROM (SELECT s AS name FROM _e UNION SELECT o FROM _e)")
        con.execute("CREATE TABLE arcs AS SELECT vs.id AS src, vo.id AS dst, p, sid FROM _e "
                    "JOIN v vs ON vs.name = s JOIN v vo ON vo.name = o "
                    "UNION ALL SELECT vo.id, vs.id, p, sid FROM _e JOIN v vs ON vs.name = s "
                    "JOIN v vo ON vo.name = o ORDER BY 1, 2")
        n = con.execute("SELECT count(*) FROM arcs").fetchall()[0][0] // 2
        con.close()
        return int(n), {}

    return run


# -- synthetic graph -------------------------------------------------------------------------------
def synthetic(edges: int, seed: int = 7) -> tuple[Any, Any, Any, Any]:
    """A random graph with ``edges`` statements over ``edges // 10`` items (skewed degrees,
    50 properties) as Arrow string columns, as a store would hand them over."""
    import pyarrow as pa
    import pyarrow.compute as pc

    s, p, o = synthetic_numbers(edges, seed)

    def ids(prefix: str, values: np.ndarray) -> Any:
        return pc.binary_join_element_wise(prefix, pc.cast(pa.array(values), pa.string()), "")

    sid = pc.binary_join_element_wise(ids("Q", s), ids("$", np.arange(edges)), "")
    return sid, ids("Q", s), ids("P", p), ids("Q", o)


def synthetic_numbers(edges: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The numbers behind :func:`synthetic`'s ids: subject, property and object (items
    ``1..edges // 10``, properties ``1..50``), int64."""
    rng = np.random.default_rng(seed)
    n = max(edges // 10, 10)
    s = (rng.zipf(1.6, edges) % n) + 1
    o = rng.integers(1, n + 1, edges)
    p = rng.integers(1, 51, edges)
    return s, p, o


def prepare_synthetic_build(edges: int) -> Run:
    from chaingraph.graph import EvidenceGraph
    from chaingraph.settings import TraversalPolicy

    cols = synthetic(edges)
    policy = TraversalPolicy(hub_limit=None)

    def run() -> tuple[int, dict[str, Any]]:
        g = EvidenceGraph.from_arrays(*cols, policy=policy)
        return g.ecount(), {"vertices": g.vcount()}

    return run


SYNTHETIC_SEED, SYNTHETIC_LO, SYNTHETIC_HI = "Q1000", 3, 4


def _synthetic_graph(edges: int) -> Any:
    from chaingraph.graph import EvidenceGraph
    from chaingraph.settings import TraversalPolicy

    return EvidenceGraph.from_arrays(*synthetic(edges), policy=TraversalPolicy(hub_limit=None))


def prepare_synthetic_tree(edges: int) -> Run:
    from chaingraph.chain_tree import chain_tree

    g = _synthetic_graph(edges)
    v = g.vertex(SYNTHETIC_SEED)

    def run() -> tuple[int, dict[str, Any]]:
        t = chain_tree(g, v, SYNTHETIC_LO, SYNTHETIC_HI)
        return t.count(), {"tree MB": round(t.nbytes / 2**20, 2)}

    return run


def prepare_synthetic_duckdb(edges: int) -> Run:
    """The DuckDB recursive CTE on the synthetic graph's arcs (same seed and bounds)."""
    g = _synthetic_graph(edges)
    v = g.vertex(SYNTHETIC_SEED)
    con = _duckdb_arcs(g)
    del g

    def run() -> tuple[int, dict[str, Any]]:
        return duckdb_chains(con, v, SYNTHETIC_LO, SYNTHETIC_HI), {}

    return run


def verify_synthetic(edges: int) -> str:
    """The tree, the per-chain walk and the DuckDB CTE count the same synthetic chains."""
    g = _synthetic_graph(edges)
    multi = _counts_agree(g, g.vertex(SYNTHETIC_SEED), SYNTHETIC_LO, SYNTHETIC_HI)
    return f"synthetic {edges:,} edges {SYNTHETIC_SEED}: {multi:,} chains = walk = DuckDB CTE"


# -- expand as a whole process ---------------------------------------------------------------------
#: run a module as ``python -m`` would, then print the process's own peak RSS to stderr:
#: ``ru_maxrss`` of a child counts what it inherited from a big parent before ``exec``
_PEAK_WRAPPER = """
import atexit, runpy, sys
def _peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                print("peak-kB", line.split()[1], file=sys.__stderr__)
atexit.register(_peak)
sys.argv = sys.argv[1:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def time_command(module_argv: list[str], repeat: int = 3, tree: Path | None = None
                 ) -> tuple[float, float, float]:
    """Median wall seconds, median CPU seconds (user + system: what a busy machine
    inflates least) and max peak RSS (MB, the process's own ``VmHWM``) of
    ``python -m <module_argv>`` run as a process, importing chaingraph from ``tree``
    (default: this checkout)."""
    wall, cpu, peaks = time_command_runs(module_argv, repeat, tree)
    return wall, cpu, max(peaks)


def time_command_runs(module_argv: list[str], repeat: int = 3, tree: Path | None = None
                      ) -> tuple[float, float, list[float]]:
    """:func:`time_command` with every run's peak RSS (MB), in run order."""
    walls, cpus, peaks = [], [], []
    root = tree or Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    argv = [sys.executable, "-c", _PEAK_WRAPPER, *module_argv]
    for _ in range(repeat):
        t0 = time.perf_counter()
        # run in the checkout: ``python -c`` puts the working directory before PYTHONPATH
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True,
                                cwd=root)
        assert proc.stderr is not None
        err = proc.stderr.read()  # until the process closes it, at exit
        _pid, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - t0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stderr.close()
        if proc.returncode != 0:
            raise RuntimeError(f"{module_argv} exited with {proc.returncode}: {err[-500:]}")
        cpus.append(usage.ru_utime + usage.ru_stime)
        peaks += [int(line.split()[1]) / 1024 for line in err.splitlines() if line.startswith("peak-kB ")]
    return statistics.median(walls), statistics.median(cpus), peaks


def imported_from(tree: Path | None = None) -> Path:
    """The chaingraph package a command run by :func:`time_command` imports."""
    root = tree or Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", "import chaingraph; print(chaingraph.__file__)"],
                         cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, check=True,
                         capture_output=True, text=True)
    return Path(out.stdout.strip()).resolve().parent


def command_answer(module_argv: list[str], tree: Path | None = None) -> list[tuple[Any, ...]]:
    """What an ``expand`` command printed (JSON Lines), as ``(seed, k, s_div, statement ids
    of the steps)`` per record: the answer two checkouts must agree on (provenance paths and
    retrieval times differ by checkout and run)."""
    import json

    root = tree or Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", *module_argv, "--format", "jsonl"], cwd=root, check=True,
                         env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True).stdout
    return [(r["seed"], r["k"], r["s_div"], tuple(s["statement_id"] for s in r["steps"]))
            for r in map(json.loads, out.splitlines())]


def expand_commands(store: Path) -> dict[str, list[str]]:
    """``python -m`` arguments of the expand commands timed as whole processes."""
    exe = ["chaingraph", "expand"]
    return {"expand --seed Q208003 --store codex-m": [*exe, "--seed", "Q208003", "--store", str(store)],
            "expand --seed Q42 (bundled sample)": [*exe, "--seed", "Q42"]}
