"""Rows a writer hands to the store: one builder per table, snak content hashes, and the
:class:`Batch` of rows that :meth:`chaingraph.store.Store.write` writes in one transaction.

A loader builds tuples in the tables' column order (:data:`chaingraph.store_schema.TABLE_COLUMNS`):

>>> from chaingraph.values import EntityValue
>>> statement_row("Q42$1", "Q42", "P69", EntityValue(id="Q691283"))[:5]
('Q42$1', 'Q42', 'P69', 'normal', 'value')
>>> len(Batch(statements=[statement_row("Q42$1", "Q42", "P69", None, snaktype="novalue")]))
1
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from chaingraph.store_schema import TABLE_COLUMNS
from chaingraph.values import Value, value_columns

__all__ = ["Batch", "entity_row", "property_row", "qualifier_row", "reference_row", "snak_hash",
           "snak_hash_columns", "statement_row"]


def snak_hash(property_id: str, snaktype: str, value: Value | None) -> str:
    """Content hash of a snak, identical whichever export the snak came from."""
    return snak_hash_columns(property_id, snaktype, value_columns(value))


def snak_hash_columns(property_id: str, snaktype: str, columns: Sequence[Any]) -> str:
    """:func:`snak_hash` from the value's store columns (loaders that build rows directly).

    >>> from chaingraph.values import EntityValue, value_columns
    >>> v = EntityValue(id="Q5")
    >>> snak_hash_columns("P31", "value", value_columns(v)) == snak_hash("P31", "value", v)
    True
    """
    payload = json.dumps([property_id, snaktype, list(columns)], default=str)
    return hashlib.sha1(payload.encode()).hexdigest()


def statement_row(statement_id: str, subject: str, property_id: str, value: Value | None, *,
                  rank: str = "normal", snaktype: str = "value") -> tuple[Any, ...]:
    """A ``statements`` row (add a ``statement_sources`` row for its provenance)."""
    return (statement_id, subject, property_id, rank, snaktype, *value_columns(value))


def qualifier_row(statement_id: str, property_id: str, value: Value | None,
                  snaktype: str = "value") -> tuple[Any, ...]:
    return (statement_id, property_id, snak_hash(property_id, snaktype, value), snaktype,
            *value_columns(value))


def reference_row(statement_id: str, reference_hash: str, property_id: str, value: Value | None,
                  snaktype: str = "value") -> tuple[Any, ...]:
    return (statement_id, reference_hash, property_id, snak_hash(property_id, snaktype, value),
            snaktype, *value_columns(value))


def entity_row(entity_id: str, label: str | None = None, description: str | None = None,
               aliases: list[str] | None = None, *, label_lang: str | None = None,
               sitelinks: int | None = None, revision: int | None = None,
               modified: str | None = None) -> tuple[Any, ...]:
    return (entity_id, label, label_lang if label is not None else None, description, aliases,
            sitelinks, revision, modified)


def property_row(property_id: str, label: str | None = None, description: str | None = None,
                 aliases: list[str] | None = None, *, datatype: str | None = None,
                 label_lang: str | None = None) -> tuple[Any, ...]:
    return (property_id, label, label_lang if label is not None else None, description, aliases, datatype)


@dataclass
class Batch:
    """Rows for one transactional write. ``statements`` rows come from :func:`statement_row`.

    ``tables`` holds more rows column-wise (Arrow tables named as store tables, see
    :meth:`Store.write_arrow`), for sources that read in bulk; they are written in the
    same transaction."""

    entities: list[tuple[Any, ...]] = field(default_factory=list)
    properties: list[tuple[Any, ...]] = field(default_factory=list)
    statements: list[tuple[Any, ...]] = field(default_factory=list)
    qualifiers: list[tuple[Any, ...]] = field(default_factory=list)
    reference_snaks: list[tuple[Any, ...]] = field(default_factory=list)
    statement_sources: list[tuple[Any, ...]] = field(default_factory=list)
    tables: dict[str, pa.Table] = field(default_factory=dict)
    #: the source promises each key occurs at most once per table in ``tables`` (rows may
    #: still exist in the store already): they are then inserted without deduplication
    tables_unique: bool = False

    def __len__(self) -> int:
        return (sum(len(getattr(self, t)) for t in TABLE_COLUMNS)
                + sum(int(t.num_rows) for t in self.tables.values()))

    def statement_ids(self) -> list[str]:
        """Ids of every statement row, list rows first."""
        extra = self.tables.get("statements")
        return [r[0] for r in self.statements] + ([] if extra is None else extra["statement_id"].to_pylist())
