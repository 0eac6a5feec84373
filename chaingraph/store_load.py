"""A dump load's writes, batch after batch, at a cost that does not grow with the store.

:meth:`Store.write_arrow` keeps the statement tables' keys (they have no primary-key index,
:data:`~chaingraph.store_schema.INDEXLESS`) with an anti-join of each batch against the
table, and finds the batch's entities the store already holds with a scan of the entity
tables: each batch reads the whole of what came before, so a dump's load is quadratic in
its size and DuckDB's working memory grows with it. A :class:`BulkLoad`
(:meth:`Store.bulk_load`) writes the same rows without either, when it can show that no
key of a batch can be in the store already:

* every key the statement tables held when the load began is its entity's: each statement
  has an id of its subject's form (below) and an entity (or property) row for its subject,
  and each qualifier, reference and provenance row its statement (one pass over the tables
  per load, held to :data:`~chaingraph.settings.DEFAULT_KEY_CHECK_MEMORY_MB` in a store file;
  an empty store passes at once; a pass that needs more than that shows nothing), and
* every statement id of every batch so far starts with its subject's id and ``$``, as
  Wikidata's do (``Q42$…``, any case): two entities then never share a statement id, so
  a statement's key can only be in the store if its entity is, and
* the entities the store already holds are found by the entity tables' own primary-key
  index, not by a scan: a batch's entity rows are plainly inserted, which looks each id up
  in the index, and only a batch whose insert DuckDB refuses is rolled back and written
  again, finding them with ``INSERT … ON CONFLICT DO NOTHING RETURNING`` (a join with the
  whole entity table in DuckDB 2). Those (an entity repeated in a dump, or loaded before)
  lose what the store holds of them first, as ``replace`` does (which does read the
  statement tables, for those entities only).

A load that cannot show it — into a store with other keys, or a batch with a statement id
of another entity's form — writes each batch with :meth:`Store.write_arrow` from then on.
The store is the same either way.

>>> import pyarrow as pa
>>> from chaingraph.store import Store
>>> s = Store()
>>> def batch(label, objects):
...     return {"entities": pa.table({"id": ["Q1"], "label": [label]}),
...             "statements": pa.table({"statement_id": [f"Q1${o}" for o in objects],
...                 "subject": ["Q1"] * len(objects), "property": ["P31"] * len(objects),
...                 "rank": ["normal"] * len(objects), "snaktype": ["value"] * len(objects),
...                 "value_type": ["item"] * len(objects), "object": objects})}
>>> load = s.bulk_load()
>>> load.write(batch("first", ["Q5", "Q6"]), replace={"Q1"}, prefixed=True)
>>> load.write(batch("second", ["Q7"]), replace={"Q1"}, prefixed=True)  # Q1 again: the last copy wins
>>> s.entity_labels(["Q1"]), [e.object for e in s.edges(subject="Q1")], load.checked
({'Q1': 'second'}, ['Q7'], 0)
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, MutableMapping, Sequence
from contextlib import AbstractContextManager, ExitStack, suppress
from typing import TYPE_CHECKING, Any, cast

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from chaingraph.errors import StoreError
from chaingraph.settings import DEFAULT_BULK_LOAD_MEMORY_MB, DEFAULT_KEY_CHECK_MEMORY_MB
from chaingraph.store_memory import Budget, duckdb_problem, held_settings, out_of_memory, used_mb
from chaingraph.store_schema import INDEXLESS, TABLE_COLUMNS

if TYPE_CHECKING:
    from chaingraph.store import Store

__all__ = ["CHECKPOINT_THRESHOLD", "INDEX_SHARE", "RECONNECT_BATCHES", "REOPEN_BATCHES", "VACUUM_TASKS",
           "BulkLoad", "checkpointed_commits", "whole"]

_ENTITY_TABLES = ("entities", "properties")
#: DuckDB's checkpoint threshold while a :class:`BulkLoad` writes a store file: below one
#: batch, so every batch is checkpointed as it commits (memory and time lower than with
#: DuckDB's 16 MiB, which lets rows of two batches wait)
CHECKPOINT_THRESHOLD = "4MiB"
#: DuckDB's ``max_vacuum_tasks`` while a :class:`BulkLoad` writes: none. DuckDB
#: 2.0 gives each commit to a checkpointed table a row group of its own, and its checkpoints
#: "vacuum" runs of small row groups by rewriting them, up to three whole row groups at a
#: time, in memory. The entity table (a few thousand rows a batch) so had a larger rewrite at
#: each row-group boundary it crossed: DuckDB's in-memory table data peaked at 42 MB in the
#: 10x synthetic dump's load and 53 MB in the 20x one (32 and 34 MB without), and the load's
#: peak grew with the dump. Without it each batch's rows keep row groups of their own (the rows
#: and every read are the same) until a checkpoint outside a load, after a later write to the
#: table, merges them (10x: the 23 entity row groups into 2, 0.13 s, 36 MB), as many as its
#: vacuum tasks reach, unbudgeted (json_dump.BULK_ROWS: what DuckDB's default of 100 cost). A
#: store file chaingraph writes has one task (store_memory.STORE_VACUUM_TASKS), and a load
#: ends with a checkpoint of its own (:meth:`BulkLoad.__exit__`), so that its session's close
#: finds nothing to write. In memory, where DuckDB compresses a table's rows only when a
#: vacuum rewrites them, merging took a quarter of codex-m's JSON load (0.7-0.8 s against
#: 1.0-1.07, three processes of three loads each) and left its rows compressed (24 MB against
#: 74): now they are as an in-memory N-Triples load leaves them (66 MB), and the load's peak
#: is the same (136-141 MB).
VACUUM_TASKS = 0
#: the most of a :class:`BulkLoad`'s budget the entities' key index may hold before a batch
#: commits: DuckDB cannot spill it, and the commit merges the batch's keys into it. Entities in
#: no id order load all of it (codex-m's 10x dump shuffled, at a budget of 16 MiB: 8-10 MiB of
#: index before a commit ran out), in id order a few parts (at most 6.2 MiB of 36 for the 40x dump)
INDEX_SHARE = 0.5
#: batches a :class:`BulkLoad` writes into a store file between two reconnects
#: (:meth:`Store.reconnect`). For as long as a database is open, DuckDB keeps in memory,
#: outside its buffer manager, what it knows of each row group written: a JSON dump's batch
#: (100k statements in five tables) left 0.17 MB that no memory limit bounds, so a 40x
#: synthetic dump's load (91 batches) ended 13 MB above where it started, and a whole Wikidata
#: dump's 15,000 batches would keep 2.5 GB. Attached again, DuckDB reads that from the file
#: when it needs it. Every 16 batches, what waits for the next attach was up to 2.7 MB, and
#: the C library's heap crept with it: in a 40x load its memory in use was 41 MB after the
#: attach at batch 16 and 44 after the one at batch 160. Every 4 the peak is 2-4 MB lower
#: (codex-m's 10x dump 144-145 MB against 147-148, 40x 150-152 against 152-156, the parse
#: workers' added; the same time): a reattach takes 3 ms (the 10x load's 11 took 33 ms of its
#: 8.6 s). Batches written by DuckDB alone (the heap in use at every 24th of 120):
#: 30 -> 42 MB never attached again, 27 -> 28 every 4
RECONNECT_BATCHES = 4
#: batches a :class:`BulkLoad` writes into a store file between two reopenings of the
#: store's database (:meth:`Store.reopen`, in place of that batch's reconnect). Attached again,
#: the file's row groups go, but DuckDB's instance keeps about 2 KB a batch for as long as it
#: is open: plain DuckDB writing 2,000 batches of 30,000 rows into a file attached again every
#: 4 kept 14.0 MB of the C heap in use after the 100th and 18.6 after the 2,000th, linearly (a
#: dump of Wikidata's size, ~36,000 batches, would keep ~80 MB more by its end); opened again
#: every 64 it kept 12.6-13.7 throughout, in the same time. A reopening takes 31 ms (the 10x
#: synthetic dump's load), against 3 for an attach: every 64 batches, 0.5 ms a batch. The 40x
#: load's heap in use after each batch: 29.1-30.6 MB from batch 18 on, against 30.1-32.0.
REOPEN_BATCHES = 64


#: whether the store holds a row whose key a batch could repeat without its entity being
#: found first: a statement whose id is not of its subject's form or whose subject has no
#: entity (or property) row, or a qualifier, reference or provenance row without its statement
_LOOSE_KEYS = """
SELECT EXISTS (FROM statements s
               WHERE upper(left(s.statement_id, length(s.subject) + 1)) <> s.subject || '$'
                  OR (NOT EXISTS (FROM entities e WHERE e.id = s.subject)
                      AND NOT EXISTS (FROM properties p WHERE p.id = s.subject)))
    OR EXISTS (FROM qualifiers q WHERE NOT EXISTS (FROM statements s WHERE s.statement_id = q.statement_id))
    OR EXISTS (FROM reference_snaks r
               WHERE NOT EXISTS (FROM statements s WHERE s.statement_id = r.statement_id))
    OR EXISTS (FROM statement_sources ss
               WHERE NOT EXISTS (FROM statements s WHERE s.statement_id = ss.statement_id))
"""


def whole(tables: Mapping[str, pa.Table | Sequence[pa.Table]]) -> dict[str, pa.Table]:
    """Tables given in pieces with columns of their own, each as one table (a column a
    piece lacks is NULL there).

    >>> t = whole({"statements": [pa.table({"a": ["x"]}), pa.table({"a": ["y"], "b": [1]})]})
    >>> t["statements"].to_pydict()
    {'a': ['x', 'y'], 'b': [None, 1]}
    """
    out = {}
    for name, data in tables.items():
        if isinstance(data, pa.Table):
            out[name] = data
        elif len(data) == 1:
            out[name] = data[0]
        elif data:
            out[name] = pa.concat_tables(data, promote_options="default")
    return out


def _checkpointing(store: Store) -> dict[str, object]:
    """The setting that checkpoints a store file's every commit of a load (none in memory,
    where an index stays whole anyway and checkpoints only cost)."""
    return {"checkpoint_threshold": CHECKPOINT_THRESHOLD} if store.path is not None else {}


def checkpointed_commits(store: Store) -> AbstractContextManager[None]:
    """Inside ``with``, each commit to ``store``'s file of a part of a load (more than
    :data:`CHECKPOINT_THRESHOLD` of log) is checkpointed, so that what the part added to a
    primary-key index is written out and let go of: DuckDB keeps it in memory until then.
    Nothing changes for an in-memory store.

    >>> from chaingraph.store import Store
    >>> with Store() as s, checkpointed_commits(s):
    ...     s.con.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0]
    '16.0 MiB'
    """
    return held_settings(store.live_con, _checkpointing(store))


def _pieces(tables: Mapping[str, pa.Table | Sequence[pa.Table]], name: str) -> list[pa.Table]:
    data = tables.get(name)
    pieces = [] if data is None else [data] if isinstance(data, pa.Table) else list(data)
    return [p for p in pieces if p.num_rows]


class BulkLoad:
    """The writes of one load (:meth:`Store.bulk_load`): :meth:`write` each batch in file order.

    ``threads`` holds DuckDB to that many threads inside ``with``: a load that parses on
    other processes keeps the cores busy, and DuckDB's parallel insert of a batch then costs
    more CPU and memory than it saves time. ``row_groups`` writes the store file's new rows
    in row groups of that many rows inside ``with`` (:meth:`Store.row_groups`; a JSON load's
    batch fills one of :data:`~chaingraph.store_file.BATCH_ROW_GROUP_SIZE`). DuckDB does not
    merge the batches' row groups meanwhile (:data:`VACUUM_TASKS`). Into a store file, DuckDB
    also checkpoints after every batch (:data:`CHECKPOINT_THRESHOLD`) instead of letting two
    batches' rows wait in its write-ahead log and memory, and holds DuckDB to
    :data:`~chaingraph.settings.DEFAULT_BULK_LOAD_MEMORY_MB` (unless a limit was set by
    hand). The settings are set back on leaving. Every
    :data:`RECONNECT_BATCHES` batches the store file is attached again (what DuckDB keeps of
    the row groups written goes with it, :meth:`Store.reconnect`), every
    :data:`REOPEN_BATCHES` its database is opened again (what DuckDB keeps for as long as it
    is open goes too, :meth:`Store.reopen`: the store gets a new connection, and temporary
    tables and cursors of the old one go, as in a chunked N-Triples load), and after every
    other batch the blocks DuckDB caches are evicted (:meth:`Budget.evict`), so that every
    batch starts from as little as the one before, not from the budget filled. A load into a
    store file ends with a checkpoint of its own, so that closing the store finds nothing to
    write.

    DuckDB cannot spill the entity tables' key index: what a transaction changes of it stays
    in memory, and the lookups of an insert pin the parts of it they pass through. Entities
    that come in id order, as in Wikidata's dumps, touch a few parts a batch; in no order, a
    batch touches all of it, so past some size a batch no longer fits the budget (codex-m's
    40x dump with its entities shuffled, 733 k of them, did not fit 36 MiB). Such a batch is
    rolled back and written again under twice the budget, as often as it takes, up to the limit
    the store opened with (:meth:`Budget.raise_limit`), and before a batch commits the budget
    is doubled while the index holds more than :data:`INDEX_SHARE` of it, since a batch whose
    commit runs out cannot be written again (its rows are let go by then, ``consume``: it ends
    the load with DuckDB's error, the batches before it kept). :attr:`raised_mb` says how far
    the budget went; the load keeps it from then on.
    """

    def __init__(self, store: Store, *, threads: int | None = None, row_groups: int | None = None) -> None:
        self.store = store
        self.threads = threads
        self.row_groups = row_groups
        self._held = ExitStack()  # the settings and budget held from __enter__ to __exit__
        self._budget: Budget | None = None  # the store file's budget, inside ``with``
        #: whether no key of a batch can be in the store yet (see the module's docstring)
        self.unchecked = not self._loose_keys()
        #: batches written with the anti-join of :meth:`Store.write_arrow`
        self.checked = 0
        #: batches written
        self.written = 0
        #: the budget a batch needed when the load's own was too small (MiB), else None
        self.raised_mb: int | None = None

    def _loose_keys(self) -> bool:
        """Whether the store holds a key a batch could repeat unseen (:data:`_LOOSE_KEYS`): its
        anti-joins build hash tables of the statement tables, so in a store file they are held
        to a budget (they spill beyond it), and the blocks they read are let go afterwards."""
        store = self.store
        try:
            with store.memory_budget() as budget:
                budget.hold(DEFAULT_KEY_CHECK_MEMORY_MB)
                loose = bool(store.con.execute(_LOOSE_KEYS).fetchall()[0][0])
        except duckdb.OutOfMemoryException:
            # DuckDB's spilling anti-join needs more than the budget over a large store (the
            # provenance pass over codex-m's 40x JSON store, 9.1 M statements, failed at 64 MiB
            # and ran at 96): not shown, so every batch is checked against the table instead
            loose = True
        except duckdb.Error as exc:
            raise StoreError(f"cannot read store {store.path or ':memory:'}: "
                             f"{duckdb_problem(exc)}") from exc
        store.release_cache()
        return loose

    def __enter__(self) -> BulkLoad:
        held: dict[str, object] = {}
        if self.threads is not None:
            held["threads"] = int(self.threads)
        held["max_vacuum_tasks"] = VACUUM_TASKS
        held.update(_checkpointing(self.store))
        with ExitStack() as stack:  # what is entered is left again if the rest fails
            stack.enter_context(held_settings(self.store.live_con, held))
            if self.row_groups is not None:
                stack.enter_context(self.store.row_groups(self.row_groups))
            # a store file's budget, unless a limit was set by hand
            self._budget = stack.enter_context(self.store.memory_budget())
            self._budget.hold(DEFAULT_BULK_LOAD_MEMORY_MB)
            self._held = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        held, self._held, self._budget = self._held, ExitStack(), None
        try:
            # a batch is checkpointed as it commits only once DuckDB's log passes the
            # threshold, so the last ones could wait for the store's close, whose checkpoint
            # would merge the load's row groups unbudgeted (VACUUM_TASKS): checkpoint them
            # now, under the load's settings; after a failed load, as far as it can
            if self.store.path is not None and not self.store._in_tx:
                self.store.con.execute("CHECKPOINT")
        except duckdb.Error as error:
            if exc[0] is None:  # else the load's own error is the one to raise
                raise StoreError(f"cannot write to store {self.store.path}: "
                                 f"{duckdb_problem(error)}") from error
        finally:
            held.close()

    def write(self, tables: Mapping[str, pa.Table | Sequence[pa.Table]], *, replace: Collection[str],
              unique: Collection[str] = (), prefixed: bool, consume: bool = False) -> None:
        """Write one batch as :meth:`Store.write_arrow` does: ``replace`` names every entity
        the batch brings (whole: it holds each once), ``unique`` the tables whose keys do not
        repeat within it, and ``prefixed`` says every statement id of the batch starts with
        its subject's id and ``$`` (case aside). A table may come in pieces with columns of
        their own (missing columns are NULL).

        ``consume``: ``tables`` is a dict this method empties once DuckDB has the rows, before
        it commits them, so that the memory they hold is free while DuckDB compresses and
        writes the batch, where a load's memory peaks (a batch written without the keys
        checked; a checked one keeps its tables to the end)."""
        if consume and not isinstance(tables, MutableMapping):
            raise TypeError("write(consume=True) empties its tables: give them as a dict")
        while True:
            try:
                self._write_once(tables, replace=replace, unique=unique, prefixed=prefixed, consume=consume)
                break
            except StoreError as error:
                # rolled back with its rows still here (``consume`` empties them only once
                # DuckDB has them all): written again under a larger budget, if there is one
                if not (out_of_memory(error) and tables and not self.store._in_tx and self._more_memory()):
                    raise
        self.written += 1
        if self.written % REOPEN_BATCHES == 0:
            self.store.reopen()  # a new database: nothing of the last one's is kept
            return
        if self.written % RECONNECT_BATCHES == 0:
            self.store.reconnect()
        if self._budget is not None and not self.store._in_tx:
            # the batch's blocks, and after an attach what the file's went back to DuckDB's
            # allocator (which keeps it resident until flushed): the next batch starts from
            # as little (the 10x load's process after an attach: 78-89 MB of anonymous memory
            # without this, 69-72 with it, as after the other batches)
            self._budget.evict()

    def _write_once(self, tables: Mapping[str, pa.Table | Sequence[pa.Table]], *, replace: Collection[str],
                    unique: Collection[str], prefixed: bool, consume: bool) -> None:
        """One attempt at :meth:`write`'s batch, in one transaction."""
        if self.unchecked and prefixed:
            try:
                self._write_unchecked(tables, unique, consume=consume)
            except duckdb.Error as exc:
                raise StoreError(f"cannot write to store {self.store.path or ':memory:'}: "
                                 f"{duckdb_problem(exc)}") from exc
        else:
            self.unchecked = False
            self.checked += 1
            self.store.write_arrow(whole(tables), replace=replace, unique=unique)

    def _more_memory(self) -> bool:
        """Raise the load's budget for a batch that did not fit, or whose commit would not
        (:meth:`Budget.raise_limit`); whether it was raised."""
        if self._budget is None:
            return False
        raised = self._budget.raise_limit()
        if raised is None:
            return False
        self.raised_mb = raised
        return True

    def _write_unchecked(self, tables: Mapping[str, pa.Table | Sequence[pa.Table]],
                         unique: Collection[str], *, consume: bool = False) -> None:
        """Write a batch whose keys cannot be in the store yet, but whose entities may be (an
        entity given again is replaced). First as if none were: its entity and property rows
        are plainly inserted, and the tables' primary keys look each one up in their index.
        Only when DuckDB finds one there is the batch rolled back and written again, upserting
        them (:meth:`_insert_new`). An upsert is a join of the batch with the whole table in
        DuckDB 2 (not an index lookup), whose hash tables left DuckDB's records of their
        blocks behind: an ``INSERT ... ON CONFLICT`` a batch made the load's heap grow with
        the dump."""
        if not self.store._in_tx:  # else a refused insert would end the caller's transaction
            try:
                self._write_batch(tables, unique, new=True, consume=consume)
                return
            except duckdb.ConstraintException:
                pass  # an entity of the batch is in the store: rolled back, written again below
        self._write_batch(tables, unique, new=False, consume=consume)

    def _write_batch(self, tables: Mapping[str, pa.Table | Sequence[pa.Table]], unique: Collection[str],
                     *, new: bool, consume: bool = False) -> None:
        """:meth:`_write_unchecked` in one transaction: entities (``new``: each entity and
        property row plainly inserted, as none can be there), then the indexless tables;
        ``consume``: ``tables`` emptied before the commit (a refused insert raises before)."""
        with self.store.transaction():
            self._insert_batch(tables, unique, new=new)
            self._keep_index_headroom()
            if consume:
                cast(MutableMapping[str, Any], tables).clear()

    def _keep_index_headroom(self) -> None:
        """Before a batch commits: while the entities' key index (which DuckDB cannot spill)
        holds more than :data:`INDEX_SHARE` of the budget, raise it (:meth:`_more_memory`), so
        that the commit, which merges the batch's keys into the index, finds room beside the
        batch's rows. A commit that runs out cannot be written again once its rows are let go."""
        budget = self._budget
        if budget is None or budget.held_mb is None:
            return
        index_mb = used_mb(self.store.con, "ART_INDEX")
        while index_mb > INDEX_SHARE * budget.held_mb:
            if not self._more_memory():
                return

    def _insert_batch(self, tables: Mapping[str, pa.Table | Sequence[pa.Table]], unique: Collection[str],
                      *, new: bool) -> None:
        """The inserts of :meth:`_write_batch` (their tables let go when it returns)."""
        store = self.store
        held: list[str] = []  # entities of the batch the store holds already
        for table in _ENTITY_TABLES:
            for data in _pieces(tables, table):
                if new:  # a plain insert: the primary key refuses an id that is there
                    store._insert_arrow(table, data, unique=True, check=False)
                else:
                    held += self._insert_new(table, data)
        if held:
            store._forget_entities(held)
            for table in _ENTITY_TABLES:
                for data in _pieces(tables, table):
                    data = data.filter(pc.is_in(data["id"], pa.array(held, pa.string())))
                    store._insert_arrow(table, data, unique=True)
        for table in INDEXLESS:
            pieces = _pieces(tables, table)
            if len(pieces) > 1 and table not in unique:  # deduplicated as a whole
                pieces = [whole({table: pieces})[table]]
            for data in pieces:
                store._insert_arrow(table, data, unique=table in unique, check=False)

    def _insert_new(self, table: str, data: pa.Table) -> list[str]:
        """Insert the rows of ``data`` whose id is not in ``table``; return the other ids."""
        con = self.store.con
        cols = ", ".join(f'"{c}"' for c in TABLE_COLUMNS[table] if c in data.column_names)
        con.register("_cg_incoming", data)
        try:
            # sql() runs a statement at once and keeps its result (execute()'s Arrow is a copy)
            added = con.sql(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _cg_incoming "
                            "ON CONFLICT DO NOTHING RETURNING id").to_arrow_table()["id"]
        finally:
            with suppress(duckdb.Error):
                con.unregister("_cg_incoming")
        if len(added) == data.num_rows:
            return []
        return [str(i) for i in data["id"].filter(pc.invert(pc.is_in(data["id"], added))).to_pylist()]
