"""Seed lists: reading them, and resolving names to items (DESIGN §10).

:func:`read_seeds` reads a seed file — plain text (one seed per line, ``#`` comments),
CSV (the first column, or the column named ``seed``, ``id``, ``qid``, ``name`` or
``label``) or JSON Lines (an object with one of those keys, or a bare string) — into
:class:`SeedLine` values that keep their line number. A line that is neither a Q-id nor a
plausible name (control characters, an empty JSON key, an unparsable JSON line) is one
:class:`~chaingraph.errors.InvalidInput` naming the file and the line; so are an empty
file and a binary one.

:func:`resolve_names` turns each seed into a Q-id. A Q-id stands for itself. A name is
looked up, case-insensitively, among the **labels and aliases** of the store's items
(:meth:`~chaingraph.store.Store.entities_named`), or of an endpoint's items
(:class:`~chaingraph.sources.endpoint_names.EndpointNames`: a SPARQL label and alias
lookup on the name's case forms, with sitelink counts). The **resolution rule**, the
same for both:

* no item carries the name → ``unknown`` (skipped);
* exactly one does → that item;
* several do → the best known (most sitelinks) wins **only when clearly better known**:
  at least :data:`CLEAR_RATIO` times the runner-up's sitelinks *and* at least
  :data:`CLEAR_MARGIN` more; otherwise ``ambiguous`` (skipped), listing every candidate.
  Unknown sitelinks count as 0, so two items without sitelinks are always ambiguous.

Nothing is guessed silently: every refused name is reported with its candidates.

>>> import tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "seeds.txt"
>>> _ = f.write_text("# seeds\\nQ42\\nDouglas Adams\\n\\n")
>>> [(s.line, s.text, s.qid) for s in read_seeds(f)]
[(2, 'Q42', 'Q42'), (3, 'Douglas Adams', None)]
>>> pick([("Q1", "Paris", 200, "label"), ("Q2", "Paris", 12, "label")])
'Q1'
>>> pick([("Q1", "Paris", 20, "label"), ("Q2", "Paris", 12, "label")]) is None
True
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from chaingraph.errors import InvalidInput
from chaingraph.ids import is_item_id

__all__ = ["CLEAR_MARGIN", "CLEAR_RATIO", "NameLookup", "Resolution", "SeedLine", "pick", "read_seeds",
           "resolve_names"]

#: a name resolves to its best-known item only when it has ≥ CLEAR_RATIO × and
#: ≥ CLEAR_MARGIN more sitelinks than the runner-up
CLEAR_RATIO = 2
CLEAR_MARGIN = 10
_KEYS = ("seed", "id", "qid", "item", "name", "label")
_MAX_NAME = 200

Candidate = tuple[str, str | None, int | None, str]  # id, label, sitelinks, matched by


class NameLookup(Protocol):
    """Where names are looked up: a :class:`~chaingraph.store.Store` or an
    :class:`~chaingraph.sources.endpoint_names.EndpointNames`."""

    def entities_named(self, names: Collection[str]) -> dict[str, list[Candidate]]: ...


@dataclass(frozen=True)
class SeedLine:
    """One seed as the file gives it: its 1-based ``line``, the ``text``, and its Q-id
    when the text is one (names resolve later)."""

    line: int
    text: str

    @property
    def qid(self) -> str | None:
        text = self.text.strip()
        return text.upper() if is_item_id(text.upper()) else None


@dataclass(frozen=True)
class Resolution:
    """What a seed resolved to: ``qid`` (``None`` when refused), the ``status``
    (``id``, ``name``, ``unknown``, ``ambiguous``) and the candidates considered."""

    seed: SeedLine
    qid: str | None
    status: Literal["id", "name", "unknown", "ambiguous", "duplicate"]
    candidates: tuple[Candidate, ...] = ()

    @property
    def message(self) -> str:
        """One line saying how the seed resolved, or why it did not."""
        where = f"line {self.seed.line} {self.seed.text!r}"
        if self.status == "id":
            return f"{where}: Q-id {self.qid}"
        shown = ", ".join(
            f"{i} ({label or '?'}, {links or 0} sitelinks, by {how})"
            for i, label, links, how in self.candidates
        )
        if self.status == "name":
            return f"{where}: resolved to {self.qid} among {shown}"
        if self.status == "duplicate":
            return (
                f"{where}: {self.candidates[0][0]} is already the seed of {self.candidates[0][3]}; built once"
            )
        if self.status == "unknown":
            return f"{where}: no item has this label or alias; give its Q-id"
        return f"{where}: ambiguous name, candidates {shown}; none is clearly better known, so give the Q-id"


def _decode(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"seeds: {path}: cannot read the file ({exc.strerror or exc})").about(
            "seeds"
        ) from None
    if b"\x00" in raw[:8192]:
        raise InvalidInput(
            f"seeds: {path}: line 1: binary data, not a seed list; give a text, CSV or JSON "
            "Lines file of Q-ids or names"
        ).about("seeds")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInput(
            f"seeds: {path}: line {line}: not UTF-8 text; give a text, CSV or JSON Lines file "
            "of Q-ids or names"
        ).about("seeds") from None


def _check(path: Path, line: int, text: str) -> str:
    text = text.strip()
    if not text:
        raise InvalidInput(f"seeds: {path}: line {line}: empty seed; give a Q-id or a name").about("seeds")
    if any(ord(c) < 32 or c in "\x7f\ufffd" for c in text) or len(text) > _MAX_NAME:
        raise InvalidInput(
            f"seeds: {path}: line {line}: {text[:40]!r} is neither a Q-id nor a name "
            "(control characters or too long); fix or remove the line"
        ).about("seeds")
    return text


def _column(header: Sequence[str]) -> int:
    names = [h.strip().lower() for h in header]
    return next((names.index(k) for k in _KEYS if k in names), 0)


def read_seeds(path: str | Path) -> tuple[SeedLine, ...]:
    """The seeds of a text, CSV (``.csv``) or JSON Lines (``.jsonl``/``.json``) file, in
    file order, duplicates kept once (first line wins)."""
    path = Path(path)
    text = _decode(path)
    out: list[SeedLine] = []
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = list(csv.reader(io.StringIO(text)))
        col, start = 0, 0
        if rows and not any(is_item_id(c.strip().upper()) for c in rows[0]):
            col, start = _column(rows[0]), 1
        for n, row in enumerate(rows[start:], start=start + 1):
            if row and any(c.strip() for c in row):
                if col >= len(row):
                    raise InvalidInput(
                        f"seeds: {path}: line {n}: no column {col + 1}; every row needs its "
                        "seed in the same column"
                    ).about("seeds")
                out.append(SeedLine(n, _check(path, n, row[col])))
    elif suffix in (".jsonl", ".json", ".ndjson"):
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(
                    f"seeds: {path}: line {n}: not JSON ({exc.msg}); one JSON object or string per line"
                ).about("seeds") from None
            value = (
                obj
                if isinstance(obj, str)
                else next(
                    (obj[k] for k in _KEYS if isinstance(obj, dict) and isinstance(obj.get(k), str)), None
                )
            )
            if value is None:
                raise InvalidInput(
                    f"seeds: {path}: line {n}: no seed; give a string or an object with one "
                    f"of the keys {', '.join(_KEYS)}"
                ).about("seeds")
            out.append(SeedLine(n, _check(path, n, value)))
    else:
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip() and not line.lstrip().startswith("#"):
                out.append(SeedLine(n, _check(path, n, line)))
    if not out:
        raise InvalidInput(f"seeds: {path}: no seeds in the file; give one Q-id or name per line").about(
            "seeds"
        )
    seen: set[str] = set()
    unique = []
    for s in out:
        key = s.qid or s.text.lower()
        if key not in seen:
            seen.add(key)
            unique.append(s)
    return tuple(unique)


def pick(candidates: Sequence[Candidate]) -> str | None:
    """The item a name resolves to under the resolution rule, or ``None`` (unknown or
    ambiguous). Deterministic: candidates are ordered by sitelinks, then id."""
    if not candidates:
        return None
    ranked = sorted(candidates, key=lambda c: (-(c[2] or 0), int(c[0][1:])))
    if len(ranked) == 1:
        return ranked[0][0]
    best, second = ranked[0][2] or 0, ranked[1][2] or 0
    return ranked[0][0] if best >= CLEAR_RATIO * second and best - second >= CLEAR_MARGIN else None


def resolve_names(seeds: Sequence[SeedLine], store: NameLookup) -> tuple[Resolution, ...]:
    """Each seed's :class:`Resolution` through the labels and aliases of ``store`` (a store
    or an endpoint's :class:`~chaingraph.sources.endpoint_names.EndpointNames`); a seed
    that resolves to an item an earlier line already gave is a ``duplicate`` (no Q-id)."""
    names = [s.text for s in seeds if s.qid is None]
    found = store.entities_named(names) if names else {}
    out = []
    first: dict[str, int] = {}
    for s in seeds:
        got: Resolution
        if s.qid is not None:
            got = Resolution(s, s.qid, "id")
        else:
            cands = tuple(
                sorted(found.get(s.text.strip().lower(), []), key=lambda c: (-(c[2] or 0), int(c[0][1:])))
            )
            chosen = pick(cands)
            status: Literal["name", "unknown", "ambiguous"] = (
                "name" if chosen else "unknown" if not cands else "ambiguous"
            )
            got = Resolution(s, chosen, status, cands)
        if got.qid is not None and got.qid in first:
            got = Resolution(s, None, "duplicate", ((got.qid, None, None, f"line {first[got.qid]}"),))
        elif got.qid is not None:
            first[got.qid] = s.line
        out.append(got)
    return tuple(out)
