"""Claim records: every distinct item claim of a task resolved and mapped once, and a
trajectory read through them (the fast path of :func:`~chaingraph.scoring.scorer.coverage`).

Many trajectories of one task repeat the same claims. A :class:`ClaimRecord` is what a
claim's mentions ``(subject, relation, object, direction, anchor)`` resolve to *for one
task*: the ids (:func:`~chaingraph.scoring.claims.resolve_claim`), the task's reference
nodes the named entities are (identity or an accepted alias), and the statement with both
ends mapped onto them. A :class:`~chaingraph.scoring.scorer.TaskScorer` keeps its own
records (another task has other reference nodes, so other mappings), made on first sight.

What NC, RC and the route filter need of a claim is smaller than its record: the task's
*claim index* (:func:`index`) holds per claim its **bits** — which reference nodes it names,
which reference statement it claims, which reference route ends it touches — and its two
ends mapped onto reference nodes. :func:`read` then costs one dictionary look-up and one
``or`` per claim and keeps nothing per item; the records, the :class:`ResolvedClaim` of
each claim (:class:`ItemClaims`) and the claimed route (:mod:`chaingraph.scoring.claimed`,
over the entries' ends) are made only when asked for. An item's one-off claim (say, a wrong claim
about some unrelated node) thus costs an index entry, never a record, unless its claims or
its route are asked for; the index also counts each node's entries, which is what lets the
route search leave such a claim out.

A claim of a *value* is read by the general path (its node may match a value target
through the value's precision, which is not a property of its mentions alone).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, overload

from chaingraph.scoring.claims import ResolvedClaim, resolve_claim
from chaingraph.trajectory import AssertEvent, ClaimEvent, RetrieveEvent, SearchEvent, ViewEvent

if TYPE_CHECKING:
    from chaingraph.scoring.scorer import TaskScorer
    from chaingraph.trajectory import Trajectory

__all__ = ["ClaimRecord", "Detail", "Entry", "ItemClaims", "Key", "asserted", "entry", "index", "item_claims",
           "key", "linked", "make_record", "mention", "named", "node_id", "read", "read_bits"]

#: the mentions of an item claim: subject, relation, object, direction, anchor
Key = tuple[str, str, "str | None", str, "str | None"]
#: entities named -> (their reference nodes or themselves, (name, reference node) of those that
#: match one, one note per alias)
Named = tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...]]
#: the named nodes as reference nodes, named node -> reference node, alias notes, claimed
#: statements (ends mapped onto reference nodes)
Detail = tuple[set[str], dict[str, str], Sequence[str], set[tuple[str, str, str]]]
#: a claim's entry in its task's claim index, one int: its bits (see :func:`read`) and, from
#: bit ``sc._hshift``, the numbers (:func:`node_id`) of its ends (:attr:`ClaimRecord.ends`;
#: 0 and 0 when it states no statement), 32 bits each, then the claim's own number in the
#: index. An int, not a tuple: the index of a scorer that has seen many one-off claims
#: holds no container per claim
Entry = int
_NODE = (1 << 32) - 1
#: the event types the readers pass over. The readers tell events apart by their exact type
#: and read a claim's fields from its ``__dict__`` (where a pydantic model keeps them): every
#: attribute read of a pydantic model goes through its ``__getattr__`` hook, several times the
#: cost of a dictionary look-up, and the readers read ~30 fields per item. An event of any
#: other type (a subclass) sends the item to the general path, which reads it by attribute.
_PASSED = frozenset({ViewEvent, SearchEvent, RetrieveEvent})


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


def node_id(sc: TaskScorer, node: str) -> int:
    """The number of ``node`` in ``sc``'s claim index (given on first sight, from 1)."""
    got = sc._node_ids.get(node)
    if got is None:
        got = sc._node_ids[node] = len(sc._node_names)
        sc._node_names.append(node)
        sc._end_count.append(0)
    return got


def _encode(sc: TaskScorer, bits: int, ends: tuple[str, str] | None) -> Entry:
    if ends is None:
        return bits
    return bits | (node_id(sc, ends[0]) | node_id(sc, ends[1]) << 32) << sc._hshift


def entry(sc: TaskScorer, rec: ClaimRecord) -> Entry:
    """The index entry of a claim record, but for its claim's number and its linked bits
    (what :func:`index` must say of the same claim, see :func:`linked`)."""
    bits = 0
    for h in rec.hits:
        bits |= sc._vbit.get(h, 0)
    if rec.mapped is not None:
        bits |= sc._ebit.get(rec.mapped, 0)
    return _encode(sc, bits, rec.ends)


def linked(sc: TaskScorer, got: Entry) -> int:
    """The bits an entry has while it is *linked* — it states a statement between two
    nodes each of which another entry names too, or a route's start or target — and the
    route search may use it: from bit ``sc._tshift`` the reference route ends its ends are
    (bit ``2c``: the start of component ``c``'s route, ``2c + 1``: its target), from bit
    ``sc._oshift`` the components whose reference route does not state its statement, and
    ``sc._linked_bit``."""
    ends = got >> sc._hshift
    names, route_ends = sc._node_names, sc._route_ends
    touches = route_ends.get(names[ends & _NODE], 0) | route_ends.get(names[ends >> 32 & _NODE], 0)
    other = 0
    for c, own in enumerate(sc._route_emask):
        if not got & own:
            other |= 1 << c
    return touches << sc._tshift | other << sc._oshift | sc._linked_bit


def mention(sc: TaskScorer, text: str) -> int:
    """The number (:func:`node_id`) of the reference node an entity mention of a claim is,
    or of the entity itself, for ``sc``'s task (cached); 0 when it names no entity. An int:
    an item's one-off mention leaves no container behind."""
    got = sc._mentions.get(text)
    return _new_mention(sc, text) if got is None else got


def _new_mention(sc: TaskScorer, text: str) -> int:
    """:func:`mention` of a mention not yet cached."""
    assert sc.resolver is not None
    ent = sc.resolver.entity(text)[0]
    if ent is None:
        got = 0
    else:
        if sc._known is not None and ent not in sc._ref_set and ent not in sc._by_partner \
                and ent not in sc.graph.labels:
            node = ent  # what TaskScorer._match says of it: no reference node, no partner, no label
        else:
            m = sc._matches[ent] if ent in sc._matches else sc._match(ent)
            node = ent if m is None else m[0]
        ids = sc._node_ids
        number = ids.get(node)
        if number is None:  # node_id, inlined: most mentions seen first are one-off entities
            names = sc._node_names
            number = ids[node] = len(names)
            names.append(node)
            sc._end_count.append(0)
        got = number
    sc._mentions[text] = got
    return got


def index(sc: TaskScorer, ev: ClaimEvent, mentions: Key, record: ClaimRecord | None = None) -> Entry:
    """The entry of item claim ``ev`` (whose :func:`key` is ``mentions``) in ``sc``'s claim
    index, made on first sight (kept in ``sc._index``): :func:`entry` of its
    :func:`make_record` (``record``, when the caller has it) and the claim's number, worked
    out without building the record when every mention resolves. Each new entry counts its
    ends (``sc._end_count``, see :func:`~chaingraph.scoring.claimed.route_path`)."""
    if record is not None:
        return _add(sc, mentions, *_record_entry(sc, record))
    subject, relation, obj_mention, direction, anchor_mention = mentions
    known = sc._mentions
    first = known.get(subject)
    if first is None:
        first = _new_mention(sc, subject)
    second = known.get(obj_mention)  # type: ignore[arg-type]
    if second is None:
        second = _new_mention(sc, obj_mention)  # type: ignore[arg-type]
    prop = sc._relation_ids.get(relation)
    if prop is None:
        assert sc.resolver is not None and sc.relations is not None
        pid = sc.resolver.relation(relation)[0]
        prop = sc._relation_ids[relation] = () if pid is None else sc.relations.orient(pid)
    anchor = -1 if anchor_mention is None else known.get(anchor_mention)
    if anchor is None:
        anchor = _new_mention(sc, anchor_mention)  # type: ignore[arg-type]
    if not first or not prop or not second or not anchor:
        # some mention stays unresolved: the record says what follows
        return _add(sc, mentions, *_record_entry(sc, make_record(sc, ev)))
    names, vbit = sc._node_names, sc._vbit
    a, b = names[first], names[second]
    bits = vbit.get(a, 0) | vbit.get(b, 0) | (vbit.get(names[anchor], 0) if anchor > 0 else 0)
    if a in vbit and b in vbit:  # a reference statement has both ends among the reference nodes
        p, swapped = prop  # Relations.orient of the property
        # the statement is subject-first unless backward xor an inverse (Relations.key); its
        # mapped form keeps that order (when a is b, either way round)
        mapped = (a, p, b) if (direction == "forward") != swapped else (b, p, a)
        bits |= sc._ebit.get(mapped, 0)
    return _add(sc, mentions, bits, first, second)


def _record_entry(sc: TaskScorer, rec: ClaimRecord) -> tuple[int, int, int]:
    """:func:`entry` of a record as its bits and its ends' numbers (what :func:`_add` takes)."""
    got = entry(sc, rec)
    ends = got >> sc._hshift
    return got & sc._low, ends & _NODE, ends >> 32 & _NODE


def _add(sc: TaskScorer, mentions: Key, bits: int, first: int, second: int) -> Entry:
    """Keep a new entry (its ``bits`` and its ends' numbers) with the claim's number; count
    its ends, and give the linked bits to it and to an entry it links (:func:`linked`)."""
    index = sc._index
    got = bits | (first | second << 32 | len(index) << 64) << sc._hshift
    if first != second:  # not a loop (nor no statement: both 0)
        count, sole = sc._end_count, sc._sole
        n = count[first] = count[first] + 1
        if n == 1:
            sole[first] = mentions
        elif n == 2 and first in sole:
            _relink(sc, sole.pop(first))
        m = count[second] = count[second] + 1
        if m == 1:
            sole[second] = mentions
        elif m == 2 and second in sole:
            _relink(sc, sole.pop(second))
        if n > 1 and m > 1:
            got |= linked(sc, got)
    index[mentions] = got
    return got


def _relink(sc: TaskScorer, other: Key) -> None:
    """An end the entry of ``other`` had alone is another entry's too now: give it its
    linked bits when both its ends are shared (:func:`linked`)."""
    index, count = sc._index, sc._end_count
    was = index[other]
    ends = was >> sc._hshift
    if count[ends & _NODE] > 1 and count[ends >> 32 & _NODE] > 1:
        index[other] = was | linked(sc, was)
        sc._flips += 1


def read(sc: TaskScorer, traj: Trajectory, records: list[int] | None = None,
         asserted: dict[int, str | None] | None = None, entries: list[Entry] | None = None) -> int | None:
    """What ``traj`` claims and asserts, as bits of ``sc``'s reference (``None`` when a claim
    states a value: the general path reads those): bit ``i`` for ``sc._v_req[i]`` named,
    bit ``len(v_req) + j`` for ``sc._e_req[j]`` claimed (ends mapped onto reference nodes),
    and from bit ``sc._tshift`` the or-ed :func:`linked` bits of the claims. One
    dictionary look-up per claim, no container kept per item. With ``records``, the claims'
    record ids are appended to it (what
    :class:`ItemClaims` reads), with ``asserted``, the entity of every assertion by
    event, and with ``entries``, the event and the entry of every *linked* claim
    (:func:`linked`), flat and in event order: what
    :func:`~chaingraph.scoring.claimed.route_path` reads instead of
    looking each claim up again (the other claims no route search uses)."""
    if records is None and asserted is None:
        return read_bits(sc, traj, entries)
    get = sc._index.get
    bits = 0
    full = records is not None
    flips, flag = sc._flips, sc._linked_bit
    for i, ev in enumerate(traj.events):
        cls = type(ev)  # the exact type, not isinstance: pydantic's instance check is slow
        if cls is ClaimEvent:
            f = ev.__dict__  # the fields, past pydantic's __getattr__ hook (_PASSED)
            mentions = (f["subject"], f["relation"], f["object"], f["direction"], f["anchor"])
            got = get(mentions)  # a claim of a value has no object: never in the index
            if got is None or full:
                if got is None and f["value"] is not None:
                    return None
                rec = None
                if full:
                    rec = sc._records.get(mentions) or make_record(sc, ev)  # type: ignore[arg-type]
                    records.append(rec.id)  # type: ignore[union-attr]
                if got is None:
                    got = index(sc, ev, mentions, rec)  # type: ignore[arg-type]
            bits |= got
            if entries is not None and got & flag:
                entries += (i, got)
        elif cls is AssertEvent:
            mention = ev.__dict__["entity"]
            if asserted is not None:
                asserted[i] = sc._assertion(mention)[0]
            got = sc._assert_bits.get(mention)
            if got is None:
                got = _assertion_bits(sc, mention)
            bits |= got
        elif cls not in _PASSED:  # an event of a subclass: the general path reads it
            return None
    if sc._flips != flips:  # a claim linked one read before it: read again (no new entry now)
        if records is not None:
            records.clear()
        if asserted is not None:
            asserted.clear()
        if entries is not None:
            entries.clear()
        return read(sc, traj, records, asserted, entries)
    return bits & sc._low  # the or-ed ends above are nothing


def read_bits(sc: TaskScorer, traj: Trajectory, entries: list[Entry] | None = None) -> int | None:
    """:func:`read` without records or assertions asked for (what NC and RC need): the same
    bits and entries, in a leaner loop (no event positions, no per-claim test of what the
    caller asked for)."""
    get, assert_bits, flips, flag = sc._index.get, sc._assert_bits, sc._flips, sc._linked_bit
    keep = entries.append if entries is not None else None
    bits = 0
    for i, ev in enumerate(traj.events):
        cls = type(ev)  # the exact type, not isinstance: pydantic's instance check is slow
        if cls is ClaimEvent:
            f = ev.__dict__  # the fields, past pydantic's __getattr__ hook (_PASSED)
            mentions = (f["subject"], f["relation"], f["object"], f["direction"], f["anchor"])
            got = get(mentions)  # a claim of a value has no object: never in the index
            if got is None:
                if f["value"] is not None:
                    return None
                got = index(sc, ev, mentions)  # type: ignore[arg-type]
            bits |= got
            if keep is not None and got & flag:  # a linked claim: one a route search may use
                keep(i)
                keep(got)
        elif cls is AssertEvent:
            mention = ev.__dict__["entity"]
            got = assert_bits.get(mention)
            if got is None:
                got = _assertion_bits(sc, mention)
            bits |= got
        elif cls not in _PASSED:  # an event of a subclass: the general path reads it
            return None
    if sc._flips != flips:  # a claim linked one read before it: read again (no new entry now)
        if entries is not None:
            entries.clear()
        return read_bits(sc, traj, entries)
    return bits & sc._low


def _assertion_bits(sc: TaskScorer, mention: str) -> int:
    """The reference-node bits of an asserted entity mention (kept in ``sc._assert_bits``)."""
    got = 0
    for h in sc._assertion(mention)[1]:
        got |= sc._vbit.get(h, 0)
    sc._assert_bits[mention] = got
    return got


def item_claims(sc: TaskScorer, traj: Trajectory) -> ItemClaims:
    """The claims of an item :func:`read` read, through the task's claim records."""
    records = sc._records
    ids = []
    for ev in traj.events:
        if ev.kind == "claim":
            rec = (records.get((ev.subject, ev.relation, ev.object, ev.direction, ev.anchor))
                   or make_record(sc, ev))
            ids.append(rec.id)
    # a tuple of ints: one the collector can stop tracking, and a scorer may hold many items
    return ItemClaims(sc, traj, tuple(ids))


def asserted(sc: TaskScorer, traj: Trajectory) -> dict[int, str | None]:
    """Event -> the entity each assertion of an item :func:`read` read names."""
    return {i: sc._assertion(ev.entity)[0] for i, ev in enumerate(traj.events)
            if ev.kind == "assert"}


class ItemClaims(Sequence[ResolvedClaim]):
    """The :class:`ResolvedClaim` of every claim of a trajectory read by :func:`read`, in
    event order, made from their records on first use."""

    __slots__ = ("_claims", "_ids", "_sc", "_traj")

    def __init__(self, sc: TaskScorer, traj: Trajectory, ids: tuple[int, ...]) -> None:
        self._sc, self._traj, self._ids = sc, traj, ids
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
