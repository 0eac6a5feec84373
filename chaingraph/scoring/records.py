"""Claim records: every distinct item claim of a task resolved and mapped once, and a
trajectory read through them (the fast path of :func:`~chaingraph.scoring.scorer.coverage`).

Many trajectories of one task repeat the same claims. A :class:`ClaimRecord` is what a
claim's mentions ``(subject, relation, object, direction, anchor)`` resolve to *for one
task*: the ids (:func:`~chaingraph.scoring.claims.resolve_claim`), the task's reference
nodes the named entities are (identity or an accepted alias), and the statement with both
ends mapped onto them. A :class:`~chaingraph.scoring.scorer.TaskScorer` keeps its own
records (another task has other reference nodes, so other mappings), made on first sight.

:func:`read` then costs a dictionary look-up per claim. The :class:`ResolvedClaim` of each
claim is made only when asked for (:class:`ItemClaims`), and :meth:`ItemClaims.route` searches the
claimed route over the records' mapped ends, making only the claims on the route.

A claim of a *value* is read by the general path (its node may match a value target
through the value's precision, which is not a property of its mentions alone).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple, overload

from chaingraph.scoring.claims import ResolvedClaim, resolve_claim
from chaingraph.scoring.routes import ClaimedRoute, shortest_path

if TYPE_CHECKING:
    from chaingraph.scoring.scorer import TaskScorer
    from chaingraph.trajectory import ClaimEvent, Trajectory

__all__ = ["ClaimRecord", "Detail", "ItemClaims", "Key", "Read", "key", "make_record", "named", "read"]

#: the mentions of an item claim: subject, relation, object, direction, anchor
Key = tuple[str, str, "str | None", str, "str | None"]
#: entities named -> (their reference nodes or themselves, (name, reference node) of those that
#: match one, one note per alias)
Named = tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...]]
#: the named nodes as reference nodes, named node -> reference node, alias notes, claimed
#: statements (ends mapped onto reference nodes)
Detail = tuple[set[str], dict[str, str], Sequence[str], set[tuple[str, str, str]]]
#: what :func:`read` returns: claims, assertions, claimed statements, named nodes
Read = tuple["ItemClaims", dict[int, "str | None"], set[tuple[str, str, str]], set[str]]


class ClaimRecord(NamedTuple):
    """An item claim's mentions resolved once for one task: the fields of its
    :class:`ResolvedClaim`; the entities it names as the reference nodes they are
    (``hits``), the aliases among them (``node``, ``notes``); its statement with both ends
    mapped onto reference nodes (``mapped``) and its premise and conclusion so mapped
    (``ends``, ``None`` when it states no statement)."""

    premise: str | None
    conclusion: str | None
    property: str | None
    statement: tuple[str, str, str] | None
    anchor: str | None
    problems: tuple[str, ...]
    hits: tuple[str, ...]
    node: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    mapped: tuple[str, str, str] | None
    ends: tuple[str, str] | None
    id: int  # its position in the task's record list


def key(ev: ClaimEvent) -> Key:
    """The mentions a claim record stands for (what :func:`read` looks records up by)."""
    return ev.subject, ev.relation, ev.object, ev.direction, ev.anchor


def make_record(sc: TaskScorer, ev: ClaimEvent) -> ClaimRecord:
    """The record of item claim ``ev`` for ``sc``'s task (kept in ``sc._records``)."""
    resolver, rel = sc.resolver, sc.relations
    assert resolver is not None and rel is not None and ev.value is None and ev.object is not None
    subj, obj = resolver.entity(ev.subject)[0], resolver.entity(ev.object)[0]
    prop = resolver.relation(ev.relation)[0]
    anchor = None if ev.anchor is None else resolver.entity(ev.anchor)[0]
    if subj is None or prop is None or obj is None or (ev.anchor is not None and not anchor):
        cl = resolve_claim(0, ev, resolver, rel)  # some mention stays unresolved: say why
        subj, obj, prop, anchor = cl.premise, cl.conclusion, cl.property, cl.anchor
        statement, problems = cl.statement, cl.problems
    else:
        statement = rel.key(subj, prop, obj) if ev.direction == "forward" else rel.key(obj, prop, subj)
        problems = ()
    hits, node, notes = named(sc, (subj, obj, anchor))
    mapped = ends = None
    if statement is not None:
        assert subj is not None and obj is not None
        match = sc._match
        ms, mo = match(subj), match(obj)
        ends = (subj if ms is None else ms[0], obj if mo is None else mo[0])
        p = statement[1]  # the statement is subject-first, or object-first (backward, or an inverse)
        mapped = (ends[0], p, ends[1]) if statement[0] == subj else (ends[1], p, ends[0])
    got = sc._records[key(ev)] = ClaimRecord(subj, obj, prop, statement, anchor, problems, hits, node, notes,
                                             mapped, ends, len(sc._record_list))
    sc._record_list.append(got)
    return got


def named(sc: TaskScorer, names: Iterable[str | None]) -> Named:
    """For entities the agent named (``None``: a mention that named none): the reference
    node each is (or itself), the ``(name, reference node)`` of those that match one, and a
    note per alias."""
    hits, node, notes = [], [], []
    match = sc._match
    for x in dict.fromkeys(names):
        if x is None:
            continue
        m = match(x)
        if m is None:
            hits.append(x)
            continue
        hits.append(m[0])
        node.append((x, m[0]))
        if m[0] != x:
            notes.append(f"{x} matched {m[0]}: {m[1]}")
    return tuple(hits), tuple(node), tuple(notes)


def _claim(i: int, rec: ClaimRecord, ev: ClaimEvent) -> ResolvedClaim:
    return ResolvedClaim(i, rec.premise, rec.conclusion, rec.property, None, rec.statement, ev.source,
                         rec.anchor, ev.component, rec.problems)


def read(sc: TaskScorer, traj: Trajectory) -> Read | None:
    """The claims, assertions, claimed statements (ends mapped onto reference nodes) and
    named nodes (as reference nodes) of ``traj``, through the task's claim records; ``None``
    when a claim states a value (the general path reads those). The claims keep what else
    :class:`~chaingraph.scoring.scorer.Coverage` may ask for (:meth:`ItemClaims.detail`)."""
    records = sc._records
    recs: list[int] = []  # record ids: a tuple of ints is one the collector can stop tracking
    comps: list[str | None] = []
    asserted: dict[int, str | None] = {}
    hit: set[str] = set()
    claimed: set[tuple[str, str, str]] = set()
    for i, ev in enumerate(traj.events):
        if ev.kind == "claim":  # the kind tag, not isinstance: pydantic's instance check is slow
            if ev.value is not None:
                return None
            rec = (records.get((ev.subject, ev.relation, ev.object, ev.direction, ev.anchor))
                   or make_record(sc, ev))
            recs.append(rec.id)
            comps.append(ev.component)
            hit.update(rec.hits)
            if rec.mapped is not None:
                claimed.add(rec.mapped)
        elif ev.kind == "assert":
            ent, hits = sc._assertion(ev.entity)
            asserted[i] = ent
            hit.update(hits)
    # tuples, not lists: the collector stops tracking a tuple of untracked objects (ints,
    # strings), and a scorer may hold many items
    return ItemClaims(sc, traj, tuple(recs), tuple(comps)), asserted, claimed, hit


class ItemClaims(Sequence[ResolvedClaim]):
    """The :class:`ResolvedClaim` of every claim of a trajectory read by :func:`read`, in
    event order, made from their records on first use."""

    __slots__ = ("_claims", "_components", "_ids", "_sc", "_traj")

    def __init__(self, sc: TaskScorer, traj: Trajectory, ids: tuple[int, ...],
                 components: tuple[str | None, ...]) -> None:
        self._sc, self._traj, self._ids, self._components = sc, traj, ids, components
        self._claims: tuple[ResolvedClaim, ...] | None = None

    def _records(self) -> list[ClaimRecord]:
        every = self._sc._record_list
        return [every[i] for i in self._ids]

    def _list(self) -> tuple[ResolvedClaim, ...]:
        if self._claims is None:
            recs = iter(self._records())
            self._claims = tuple(_claim(i, next(recs), ev) for i, ev in enumerate(self._traj.events)
                                 if ev.kind == "claim")
        return self._claims

    def detail(self, asserted: Mapping[int, str | None]) -> Detail:
        """The named nodes, alias map, alias notes and claimed statements of the item (with
        its ``asserted`` entities)."""
        hit: set[str] = set()
        node: dict[str, str] = {}
        notes: set[str] = set()
        claimed: set[tuple[str, str, str]] = set()
        for rec in self._records():
            hit.update(rec.hits)
            node.update(rec.node)
            notes.update(rec.notes)
            if rec.mapped is not None:
                claimed.add(rec.mapped)
        for ent in asserted.values():
            if ent is not None:
                hits, pairs, why = self._sc._entity_named(ent)
                hit.update(hits)
                node.update(pairs)
                notes.update(why)
        return hit, node, sorted(notes), claimed

    @overload
    def __getitem__(self, index: int) -> ResolvedClaim: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ResolvedClaim]: ...

    def __getitem__(self, index: int | slice) -> ResolvedClaim | Sequence[ResolvedClaim]:
        return self._list()[index]

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[ResolvedClaim]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._list())

    def route(self, component: str, start: str, target: str) -> ClaimedRoute | None:
        """:func:`~chaingraph.scoring.routes.claimed_route` over the claims that serve
        ``component`` (or none), read off the records."""
        every, ids = self._sc._record_list, self._ids
        at = [k for k, c in enumerate(self._components) if c is None or c == component]
        path = shortest_path([every[ids[k]].ends for k in at], start, target)
        if path is None:
            return None
        nodes, used = path
        recs = self._records()
        steps: list[tuple[str, Literal["forward", "backward"]]] = []
        for n, j in enumerate(used):
            mapped = recs[at[j]].mapped
            assert mapped is not None
            # the walk nodes[n] -> nodes[n+1] is forward when nodes[n] is the statement's subject
            steps.append((mapped[1], "forward" if mapped[0] == nodes[n] else "backward"))
        premises = tuple(recs[at[j]].ends[0] for j in used)  # type: ignore[index]
        events = [i for i, ev in enumerate(self._traj.events) if ev.kind == "claim"]
        made = tuple(_claim(events[at[j]], recs[at[j]], self._traj.events[events[at[j]]])  # type: ignore[arg-type]
                     for j in used)
        return ClaimedRoute(nodes, tuple(steps), made, premises)
