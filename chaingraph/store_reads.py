"""Reads of the store's facts beyond :meth:`Store.edges`: labels, sitelinks, classes,
property facts, statement values, whole statements with their qualifiers, references and
provenance, rows to copy into another store, the time-qualifier rows of
:mod:`chaingraph.timeline`, the properties that supersede, and counts.

These are :class:`~chaingraph.store.Store` methods (:class:`StoreReads` is a mixin of
``Store``; import ``Store`` from :mod:`chaingraph.store`). All are small, deterministic
queries; ids a store does not know are simply absent from the answers.

>>> from chaingraph.store import Batch, Store, entity_row, statement_row
>>> from chaingraph.values import EntityValue, QuantityValue
>>> s = Store()
>>> src = s.add_source("fixture", "doctest")
>>> s.write(Batch(entities=[entity_row("Q1", "Alpha", sitelinks=3)],
...               statements=[statement_row("Q1$c", "Q1", "P31", EntityValue(id="Q5")),
...                           statement_row("Q1$h", "Q1", "P2048", QuantityValue(amount="1.8"))],
...               statement_sources=[("Q1$c", src), ("Q1$h", src)]))
>>> s.entity_labels(), s.sitelinks(), s.classes(["Q1"])
({'Q1': 'Alpha'}, {'Q1': 3}, {'Q1': ('Q5',)})
>>> s.properties_used()
['P2048', 'P31']
>>> [(sid, subject, v.amount) for sid, subject, v in s.statement_values(property="P2048")]
[('Q1$h', 'Q1', '1.8')]
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Literal, NamedTuple

import duckdb

from chaingraph.store_schema import SOURCE_COLUMNS, TABLE_COLUMNS
from chaingraph.values import VALUE_COLUMNS, Value, value_from_columns

__all__ = ["PropertyInfo", "SourceInfo", "StatementInfo", "StatementRows", "StoreReads"]

_VC = list(VALUE_COLUMNS)


class PropertyInfo(NamedTuple):
    id: str
    label: str | None
    description: str | None
    aliases: tuple[str, ...]
    datatype: str | None


class StatementInfo(NamedTuple):
    """A statement with everything the store knows about it."""

    statement_id: str
    subject: str
    property: str
    rank: str
    snaktype: str
    value: Value | None
    qualifiers: tuple[tuple[str, str, Value | None], ...]  # (property, snaktype, value)
    references: tuple[tuple[str, str, str, Value | None], ...]  # (ref hash, property, snaktype, value)
    sources: tuple[dict[str, Any], ...]


class SourceInfo(NamedTuple):
    """Where a statement came from: a ``sources`` row without its store-local id."""

    kind: str
    location: str
    query_file: str | None
    query_hash: str | None
    retrieved_at: datetime | None
    dump_date: str | None
    revision: str | None


class StatementRows(NamedTuple):
    """Statements as rows ready for another store's :class:`~chaingraph.store.Batch`
    (columns in :data:`~chaingraph.store_schema.TABLE_COLUMNS` order), the property rows
    they use, and their provenance as ``(statement id, source)`` pairs."""

    statements: list[tuple[Any, ...]]
    qualifiers: list[tuple[Any, ...]]
    reference_snaks: list[tuple[Any, ...]]
    properties: list[tuple[Any, ...]]
    provenance: list[tuple[str, SourceInfo]]


def _select(table: str) -> str:
    return f"SELECT {', '.join(TABLE_COLUMNS[table])} FROM {table}"


class StoreReads:
    """Fact reads of :class:`~chaingraph.store.Store` (see the module doc)."""

    con: duckdb.DuckDBPyConnection

    def _all(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        # fetchall closes the result (fetchone leaves it open in DuckDB 2)
        return self.con.execute(sql, params).fetchall()

    # -- labels, sitelinks, classes -----------------------------------------------------
    def labels(self, ids: Collection[str]) -> dict[str, str]:
        """Labels of the given entities and properties (those that have one)."""
        return dict(self._all(
            "SELECT id, label FROM entities WHERE label IS NOT NULL AND id IN (SELECT UNNEST(?)) "
            "UNION ALL SELECT id, label FROM properties WHERE label IS NOT NULL "
            "AND id IN (SELECT UNNEST(?))", [list(ids), list(ids)]))

    def entity_labels(self, ids: Collection[str] | None = None) -> dict[str, str]:
        """Labels of entities (every labelled entity when ``ids`` is ``None``)."""
        if ids is None:
            return dict(self._all("SELECT id, label FROM entities WHERE label IS NOT NULL"))
        return dict(self._all("SELECT id, label FROM entities WHERE label IS NOT NULL "
                              "AND id IN (SELECT UNNEST(?))", [list(ids)]))

    def names(self, kind: Literal["entities", "properties"] = "entities"
              ) -> list[tuple[str, str | None, tuple[str, ...]]]:
        """``(id, label, aliases)`` of every entity (or property) with a label or an alias,
        for resolving names to ids."""
        table = {"entities": "entities", "properties": "properties"}[kind]
        rows = self._all(f"SELECT id, label, aliases FROM {table} WHERE label IS NOT NULL "
                         "OR len(aliases) > 0 ORDER BY id")
        return [(i, label, tuple(aliases or ())) for i, label, aliases in rows]

    def sitelinks(self, ids: Collection[str] | None = None) -> dict[str, int]:
        """Sitelink counts of entities, where known (every such entity when ``ids`` is ``None``)."""
        if ids is None:
            return dict(self._all("SELECT id, sitelinks FROM entities WHERE sitelinks IS NOT NULL"))
        return dict(self._all("SELECT id, sitelinks FROM entities WHERE sitelinks IS NOT NULL "
                              "AND id IN (SELECT UNNEST(?))", [list(ids)]))

    def classes(self, ids: Collection[str] | None = None) -> dict[str, tuple[str, ...]]:
        """``P31`` classes per entity (all entities when ``ids`` is ``None``)."""
        if ids is None:
            rows = self._all("SELECT id, class FROM entity_classes ORDER BY id, class")
        else:
            rows = self._all("SELECT id, class FROM entity_classes WHERE id IN (SELECT UNNEST(?)) "
                             "ORDER BY id, class", [list(ids)])
        out: dict[str, list[str]] = {}
        for ident, cls in rows:
            out.setdefault(ident, []).append(cls)
        return {k: tuple(v) for k, v in out.items()}

    # -- properties ----------------------------------------------------------------------
    def property(self, property_id: str) -> PropertyInfo | None:
        rows = self._all("SELECT id, label, description, aliases, datatype FROM properties "
                         "WHERE id = ?", [property_id])
        row = rows[0] if rows else None
        return None if row is None else PropertyInfo(row[0], row[1], row[2], tuple(row[3] or ()), row[4])

    def property_infos(self, ids: Collection[str]) -> dict[str, PropertyInfo]:
        """:meth:`property` of many ids in one query (ids the store does not know are left out)."""
        rows = self._all("SELECT id, label, description, aliases, datatype FROM properties "
                         "WHERE id IN (SELECT UNNEST(?))", [list(ids)])
        return {r[0]: PropertyInfo(r[0], r[1], r[2], tuple(r[3] or ()), r[4]) for r in rows}

    def datatypes(self) -> dict[str, str]:
        """Datatype of every property the store knows."""
        return dict(self._all("SELECT id, datatype FROM properties WHERE datatype IS NOT NULL"))

    def properties_used(self) -> list[str]:
        """Every property some statement uses (any rank or value), sorted."""
        return [r[0] for r in self._all("SELECT DISTINCT property FROM statements ORDER BY 1")]

    # -- statements ----------------------------------------------------------------------
    def statement_values(self, *, property: str | None = None,
                         statement_ids: Collection[str] | None = None
                         ) -> list[tuple[str, str, Value | None]]:
        """``(statement id, subject, value)`` of non-deprecated value statements, filtered by
        ``property`` and/or ``statement_ids`` (``None`` is a wildcard); ``value`` is ``None``
        where the stored columns do not make a value."""
        where = ["rank <> 'deprecated'", "snaktype = 'value'"]
        params: list[Any] = []
        if property is not None:
            where.append("property = ?")
            params.append(property)
        if statement_ids is not None:
            where.append("statement_id IN (SELECT UNNEST(?))")
            params.append(list(statement_ids))
        rows = self._all(f"SELECT statement_id, subject, {', '.join(_VC)} FROM statements "
                         f"WHERE {' AND '.join(where)}", params)
        return [(r[0], r[1], value_from_columns(dict(zip(_VC, r[2:])))) for r in rows]

    def subject_statements(self, subjects: Collection[str]) -> list[tuple[str, str, str, Value | None]]:
        """``(statement id, subject, property, value)`` of the non-deprecated value
        statements of ``subjects`` (item and literal values alike)."""
        rows = self._all(f"SELECT statement_id, subject, property, {', '.join(_VC)} FROM statements "
                         "WHERE rank <> 'deprecated' AND snaktype = 'value' "
                         "AND subject IN (SELECT UNNEST(?))",
                         [list(subjects)])
        return [(r[0], r[1], r[2], value_from_columns(dict(zip(_VC, r[3:])))) for r in rows]

    def entities_named(self, names: Collection[str]
                       ) -> dict[str, list[tuple[str, str | None, int | None, str]]]:
        """Items whose label or an alias equals each name, case-insensitively (after
        trimming): name (lower-cased) -> ``(id, label, sitelinks, "label" | "alias")``,
        sorted by id; an item matched by both its label and an alias is listed once, as
        ``label``.

        >>> from chaingraph.store import Batch, Store, entity_row
        >>> s = Store()
        >>> s.write(Batch(entities=[entity_row("Q90", "Paris", None, ["paris", "City of Light"])]))
        >>> s.entities_named(["PARIS ", "city of light"])
        {'city of light': [('Q90', 'Paris', None, 'alias')], 'paris': [('Q90', 'Paris', None, 'label')]}
        """
        keys = sorted({n.strip().lower() for n in names})
        rows = self._all(
            "WITH wanted AS (SELECT UNNEST(?) AS name), hits AS ("
            " SELECT w.name, e.id, e.label, e.sitelinks, 'label' AS how FROM entities e "
            " JOIN wanted w ON lower(trim(e.label)) = w.name "
            " UNION ALL SELECT w.name, e.id, e.label, e.sitelinks, 'alias' FROM "
            " (SELECT id, label, sitelinks, UNNEST(aliases) AS alias FROM entities) e "
            " JOIN wanted w ON lower(trim(e.alias)) = w.name) "
            "SELECT name, id, any_value(label), any_value(sitelinks), max(how) FROM hits "
            "WHERE id LIKE 'Q%' GROUP BY name, id ORDER BY name, id", [keys])
        out: dict[str, list[tuple[str, str | None, int | None, str]]] = {k: [] for k in keys}
        for name, ident, label, sitelinks, how in rows:
            out[name].append((ident, label, sitelinks, how))
        return out

    def statement(self, statement_id: str) -> StatementInfo | None:
        """A statement with its qualifiers, references and sources, or ``None``."""
        cols = ["statement_id", "subject", "property", "rank", "snaktype", *_VC]
        rows = self._all(f"SELECT {', '.join(cols)} FROM statements WHERE statement_id = ?", [statement_id])
        if not rows:
            return None
        rec = dict(zip(cols, rows[0]))
        quals = self._snaks("qualifiers", ["property", "snaktype"], statement_id)
        refs = self._snaks("reference_snaks", ["reference_hash", "property", "snaktype"], statement_id)
        srcs = self._all(
            f"SELECT {', '.join('s.' + c for c in SOURCE_COLUMNS)} FROM statement_sources ss "
            "JOIN sources s USING (source_id) WHERE ss.statement_id = ? ORDER BY s.source_id",
            [statement_id])
        return StatementInfo(rec["statement_id"], rec["subject"], rec["property"], rec["rank"],
                             rec["snaktype"], value_from_columns(rec),
                             tuple(quals),
                             tuple(refs),
                             tuple(dict(zip(SOURCE_COLUMNS, s)) for s in srcs))

    def _snaks(self, table: str, keys: list[str], statement_id: str) -> list[tuple[Any, ...]]:
        cols = [*keys, *_VC]
        rows = self._all(f"SELECT {', '.join(cols)} FROM {table} WHERE statement_id = ? "
                         f"ORDER BY {', '.join(keys)}, snak_hash", [statement_id])
        return [(*row[: len(keys)], value_from_columns(dict(zip(cols, row)))) for row in rows]

    # -- rows to copy into another store -------------------------------------------------------
    def statement_rows(self, statement_ids: Collection[str]) -> StatementRows:
        """The rows of ``statement_ids`` (statements by id; their qualifiers and reference
        snaks), the ``properties`` rows of every property they use, and their provenance.

        >>> from chaingraph.store import Batch, Store, qualifier_row, statement_row
        >>> from chaingraph.values import EntityValue, TimeValue
        >>> s = Store()
        >>> src = s.add_source("fixture", "doctest")
        >>> start = TimeValue(time="+2001-01-01T00:00:00Z", precision=11)
        >>> s.write(Batch(statements=[statement_row("Q1$a", "Q1", "P39", EntityValue(id="Q2"))],
        ...               qualifiers=[qualifier_row("Q1$a", "P580", start)],
        ...               statement_sources=[("Q1$a", src)]))
        >>> rows = s.statement_rows(["Q1$a"])
        >>> len(rows.statements), len(rows.qualifiers), rows.provenance[0][1].kind
        (1, 1, 'fixture')
        """
        ids = sorted(set(statement_ids))
        if not ids:
            return StatementRows([], [], [], [], [])
        statements = self._all(f"{_select('statements')} WHERE statement_id IN (SELECT UNNEST(?)) "
                               "ORDER BY statement_id", [ids])
        qualifiers = self._all(f"{_select('qualifiers')} WHERE statement_id IN (SELECT UNNEST(?)) "
                               "ORDER BY statement_id, property, snak_hash", [ids])
        references = self._all(f"{_select('reference_snaks')} WHERE statement_id IN (SELECT UNNEST(?)) "
                               "ORDER BY statement_id, reference_hash, property, snak_hash", [ids])
        provenance = [(sid, SourceInfo(*src)) for sid, *src in self._all(
            f"SELECT ss.statement_id, {', '.join('s.' + c for c in SOURCE_COLUMNS[1:])} "
            "FROM statement_sources ss JOIN sources s USING (source_id) "
            "WHERE ss.statement_id IN (SELECT UNNEST(?)) ORDER BY ss.statement_id, s.source_id", [ids])]
        used = sorted({r[2] for r in statements} | {q[1] for q in qualifiers} | {r[2] for r in references})
        properties = self._all(f"{_select('properties')} WHERE id IN (SELECT UNNEST(?)) ORDER BY id", [used])
        return StatementRows([tuple(r) for r in statements], [tuple(r) for r in qualifiers],
                             [tuple(r) for r in references], [tuple(r) for r in properties], provenance)

    def entity_rows(self, ids: Collection[str]) -> list[tuple[Any, ...]]:
        """The ``entities`` rows of ``ids`` (those the store has), in
        :data:`~chaingraph.store_schema.TABLE_COLUMNS` order, by id."""
        return [tuple(r) for r in self._all(f"{_select('entities')} WHERE id IN (SELECT UNNEST(?)) "
                                            "ORDER BY id", [list(ids)])]

    # -- counts --------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Row counts per table, plus literal statements by value type."""
        out = {t: int(self._all(f"SELECT count(*) FROM {t}")[0][0])
               for t in ("sources", "entities", "properties", "statements", "qualifiers",
                         "reference_snaks")}
        for vt, n in self.statements_by_value_type().items():
            out[f"statements:{vt}"] = n
        return out

    def statement_count(self) -> int:
        """How many statements the store holds (``counts()["statements"]`` alone)."""
        return int(self._all("SELECT count(*) FROM statements")[0][0])

    # -- time qualifiers and constraints --------------------------------------------------
    def time_rows(self, qualifiers: Sequence[str] = ("P580", "P582", "P585")) -> dict[str, Any]:
        """Rows for :mod:`chaingraph.timeline`, as numpy columns: every non-deprecated statement
        of a (subject, property) that has a statement with one of ``qualifiers`` or a
        preferred-rank statement, once per such qualifier snak (once with NULL qualifier
        columns when it has none). Columns: ``statement_id, subject, property, rank,
        qualifier, qsnaktype, year, month, day, precision, calendar`` (year, month and day
        parsed from the JSON time string; year in JSON numbering, no year 0).

        >>> from chaingraph.store import Batch, Store, qualifier_row, statement_row
        >>> from chaingraph.values import EntityValue, TimeValue
        >>> s = Store()
        >>> s.write(Batch(statements=[statement_row("Q1$a", "Q1", "P54", EntityValue(id="Q2"))],
        ...     qualifiers=[qualifier_row("Q1$a", "P580", TimeValue.make(1990, precision=9))]))
        >>> r = s.time_rows()
        >>> r["statement_id"].tolist(), int(r["year"][0]), int(r["precision"][0])
        (['Q1$a'], 1990, 9)
        """
        quals = list(qualifiers)
        sql = """
            WITH qualified AS (
                SELECT DISTINCT s.subject, s.property FROM statements s
                JOIN qualifiers q ON q.statement_id = s.statement_id
                WHERE q.property IN (SELECT UNNEST(?)) AND s.rank <> 'deprecated'
                UNION SELECT DISTINCT subject, property FROM statements WHERE rank = 'preferred'),
            parsed AS (
                SELECT statement_id, property AS qualifier, snaktype AS qsnaktype, precision, calendar,
                       regexp_extract(time, '^([+-]?[0-9]+)-([0-9]+)-([0-9]+)', ['y', 'm', 'd']) AS t
                FROM qualifiers WHERE property IN (SELECT UNNEST(?)))
            SELECT s.statement_id, s.subject, s.property, s.rank, p.qualifier, p.qsnaktype,
                   TRY_CAST(NULLIF(p.t.y, '') AS BIGINT) AS year,
                   TRY_CAST(NULLIF(p.t.m, '') AS INTEGER) AS month,
                   TRY_CAST(NULLIF(p.t.d, '') AS INTEGER) AS day, p.precision, p.calendar
            FROM statements s JOIN qualified USING (subject, property)
            LEFT JOIN parsed p ON p.statement_id = s.statement_id
            WHERE s.rank <> 'deprecated'
            ORDER BY s.statement_id, p.qualifier, year, month, day"""
        return dict(self.con.execute(sql, [quals, quals]).fetchnumpy())

    def superseding_properties(self) -> set[str]:
        """Properties whose own statements carry Wikidata's single-best-value constraint
        (``P2302`` = ``Q52060874``), when the store holds property metadata."""
        rows = self.con.execute("SELECT DISTINCT subject FROM statements WHERE property = 'P2302' "
                                "AND object = 'Q52060874' AND rank <> 'deprecated'").fetchall()
        return {r[0] for r in rows}

    def statements_by_value_type(self) -> dict[str, int]:
        """Statements per value type (the snaktype for ``somevalue``/``novalue``)."""
        return {str(k): int(n) for k, n in self._all(
            "SELECT coalesce(value_type, snaktype), count(*) FROM statements GROUP BY 1 ORDER BY 1")}

    def statements_by_rank(self) -> dict[str, int]:
        """Statements per rank."""
        return {str(k): int(n) for k, n in self._all(
            "SELECT rank, count(*) FROM statements GROUP BY 1 ORDER BY 1")}

    def reference_count(self) -> int:
        """Distinct references (a reference is all snaks sharing a statement and reference hash)."""
        return int(self._all("SELECT count(*) FROM (SELECT DISTINCT statement_id, reference_hash "
                             "FROM reference_snaks)")[0][0])
