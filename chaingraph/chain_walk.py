"""The per-chain walk of :func:`chaingraph.chains.enumerate_chains`: depth-first over the
trimmed shortest-path DAG, one :class:`~chaingraph.chains.Chain` per valid chain.

Every chain through a DAG vertex ``u`` at depth ``d`` is a prefix ending at ``u`` followed
by one of ``u``'s *suffixes* (the DAG paths from ``u`` to depth ``≥ min_hops``), and the
suffixes do not depend on the prefix. So the walk picks one layer (:func:`suffix_level`: the one
where building every suffix of the layer's vertices once, plus walking the prefixes down
to it, is least work), lists those suffixes once, and for each prefix reaching the layer
emits its chains by concatenating the prefix with each suffix in C (``map`` over ``zip``:
no Python code runs per chain). The order is the plain depth-first order: a chain comes
before its extensions, neighbours in DAG order.

>>> from chaingraph.chains import Chain
>>> steps = {0: [((1,), (10,)), ((2,), (11,))], 1: [((3,), (12,))], 2: [((3,), (13,))]}
>>> [tuple(c) for c in walk(steps, 0, 1, 1)]
[((0, 1), (10,)), ((0, 1, 3), (10, 12)), ((0, 2), (11,)), ((0, 2, 3), (11, 13))]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import chain, repeat
from operator import add
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from chaingraph.chains import Chain

__all__ = ["suffix_level", "walk"]

#: ``steps[u]``: the DAG arcs out of ``u`` as ``((v,), (edge,))``, in neighbour order
Steps = dict[int, list[tuple[tuple[int], tuple[int]]]]
#: the suffixes of one vertex: vertex tuples and edge tuples, in depth-first order
Suffixes = tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]


def walk(steps: Steps, seed: int, min_hops: int, level: int) -> Iterator[Chain]:
    """Every chain of the DAG ``steps`` from ``seed`` with at least ``min_hops`` edges,
    depth-first, listing the suffixes of the vertices at depth ``level`` (any level gives
    the same chains; :func:`suffix_level` picks a fast one)."""
    from chaingraph.chains import Chain

    if seed not in steps:
        return iter(())
    suffixes: dict[int, Suffixes] = {}
    layer, depth = [seed], 0
    while depth < level and layer:  # the vertices at depth ``level``
        layer = list(dict.fromkeys(vt[0] for u in layer for vt, _et in steps.get(u, ())))
        depth += 1
    for u in layer:
        if u in steps:
            _suffixes(steps, u, level, min_hops, suffixes)
    make: Callable[[tuple[tuple[int, ...], tuple[int, ...]]], Chain] = partial(tuple.__new__, Chain)
    return chain.from_iterable(_prefixes(steps, seed, level, min_hops, suffixes, make))


#: most suffixes listed at once (tuples of a few ints: tens of MB), so that the walk's memory
#: stays bounded however many chains it streams
MAX_SUFFIXES = 1 << 18


def suffix_level(dist: np.ndarray, indptr: np.ndarray, targets: np.ndarray, seed: int,
                 min_hops: int, max_hops: int) -> int:
    """The layer whose suffixes :func:`walk` should list for the DAG ``indptr``/``targets``
    (CSR; ``dist``: each vertex's depth): the least of (suffix entries of it and the layers
    below, each built once) + (prefixes down to it, each walked once), counted on arrays,
    among the layers with at most :data:`MAX_SUFFIXES` suffix entries.

    >>> suffix_level(np.array([0, 1, 1, 2]), np.array([0, 2, 3, 4, 4]), np.array([1, 2, 3, 3]), 0, 1, 2)
    1
    """
    src = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    if len(src) == 0:
        return 0
    local, inverse = np.unique(np.concatenate([src, targets, [seed]]), return_inverse=True)
    a, b, s = inverse[:len(src)], inverse[len(src):2 * len(src)], inverse[-1]
    depth = dist[local]
    arc_depth = depth[a]
    paths = np.zeros(len(local))  # float: only compared, and chain counts can pass int64
    paths[s] = 1.0
    prefixes = np.zeros(max_hops + 1)
    for d in range(max_hops + 1):
        prefixes[d] = paths[depth == d].sum()
        at = arc_depth == d
        paths += np.bincount(b[at], weights=paths[a[at]], minlength=len(local))
    count = np.zeros(len(local))
    entries = np.zeros(max_hops + 1)
    for d in range(max_hops, -1, -1):
        at = arc_depth == d
        count += np.bincount(a[at], weights=(d + 1 >= min_hops) + count[b[at]], minlength=len(local))
        entries[d] = count[depth == d].sum()
    below = np.cumsum(entries[::-1])[::-1]
    cost = np.where(below <= MAX_SUFFIXES, below + np.cumsum(prefixes), np.inf)
    return int(np.argmin(cost))  # the deepest layer lists nothing, so some layer is allowed


def _suffixes(steps: Steps, u: int, d: int, min_hops: int, memo: dict[int, Suffixes]) -> Suffixes:
    """The suffixes of ``u`` (at depth ``d``), built once per vertex."""
    got = memo.get(u)
    if got is not None:
        return got
    nodes: list[tuple[int, ...]] = []
    edges: list[tuple[int, ...]] = []
    emit = d + 1 >= min_hops
    for vt, et in steps[u]:
        if emit:
            nodes.append(vt)
            edges.append(et)
        if vt[0] in steps:
            sub_nodes, sub_edges = _suffixes(steps, vt[0], d + 1, min_hops, memo)
            nodes += [vt + s for s in sub_nodes]
            edges += [et + s for s in sub_edges]
    got = memo[u] = (tuple(nodes), tuple(edges))
    return got


def _prefixes(steps: Steps, seed: int, level: int, min_hops: int, suffixes: dict[int, Suffixes],
              make: Callable[[tuple[tuple[int, ...], tuple[int, ...]]], Chain]) -> Iterator[Iterable[Chain]]:
    """Depth-first down to ``level``: each prefix's own chain (when long enough) as a
    1-tuple, then at ``level`` its chains as one C iterator over the vertex's suffixes."""
    if level == 0:
        nodes, edges = suffixes[seed]
        yield map(make, zip(map(add, repeat((seed,)), nodes), map(add, repeat(()), edges)))
        return
    none: Suffixes = ((), ())
    stack: list[tuple[Iterator[tuple[tuple[int], tuple[int]]], tuple[int, ...], tuple[int, ...]]] = [
        (iter(steps[seed]), (seed,), ())]
    get = steps.get
    while stack:
        it, pv, pe = stack[-1]
        depth = len(pe) + 1
        emit, last = depth >= min_hops, depth == level
        for vt, et in it:
            nv, ne = pv + vt, pe + et
            if emit:
                yield (make((nv, ne)),)
            if last:
                nodes, edges = suffixes.get(vt[0], none)
                if len(nodes) == 1:  # (most, on some seeds): cheaper without the iterators
                    yield (make((nv + nodes[0], ne + edges[0])),)
                elif nodes:
                    yield map(make, zip(map(add, repeat(nv), nodes), map(add, repeat(ne), edges)))
                continue
            nxt = get(vt[0])
            if nxt is not None:
                stack.append((iter(nxt), nv, ne))
                break
        else:
            stack.pop()
