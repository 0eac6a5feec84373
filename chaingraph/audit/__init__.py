"""Corpus audits (DESIGN §8): what a corpus of chain and task records is made of.

``audit(paths)`` streams every record of the given JSON / JSON Lines files and folders,
takes one authoritative edge sequence per component chain, classifies each directed
edge occurrence (explicit labels first, raw properties through the crosswalk, edge roles
last) and returns an :class:`AuditReport`: relation classes with independently rounded
percentages and a total, the route that decided each edge, difficulty levels by evidence
steps H, chain lengths, entity-type coverage, properties by frequency, the crosswalk
version, and every problem with its file and record.

Layering inside the package (imports flow down only)::

    readers    files and folders -> raw JSON records or problems (streaming)
    shapes     a record -> its component chains (shape detectors behind a Protocol)
    report     AuditReport record and its renderings
    classify   an edge -> relation class, by route (label, property, role)
    counting   Tally: counters only, per-record de-duplication
    plots      matplotlib bar charts of a report
    corpus     write a chain corpus with chaingraph itself (notebook, benchmark)

>>> import json, tempfile, pathlib
>>> class Labels:  # any object with classify_label / classify works as a crosswalk
...     version = "demo"
...     def classify_label(self, text):
...         return type("C", (), {"relation_class": text, "status": "relation"})()
...     def classify(self, pid):
...         raise LookupError(pid)
>>> corpus = pathlib.Path(tempfile.mkdtemp()) / "c.jsonl"
>>> _ = corpus.write_text(json.dumps({"steps": [["Q1", "spatial", "Q2"], ["Q2", "causal", "Q3"],
...                                             ["Q3", "spatial", "Q4"]]}) + "\\n")
>>> report = audit([corpus], crosswalk=Labels())
>>> [(r.relation_class, r.edges, r.percent) for r in report.relation_classes if r.edges]
[('causal', 1, 33.33), ('spatial', 2, 66.67)]
>>> report.difficulty[0].tasks, report.crosswalk_version
(1, 'demo')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from chaingraph.audit.classify import Crosswalk, EdgeClassifier, RoleTable, crosswalk_version
from chaingraph.audit.counting import Tally
from chaingraph.audit.readers import corpus_files, read_file
from chaingraph.audit.report import AuditReport
from chaingraph.audit.shapes import DEFAULT_SHAPES, Shape
from chaingraph.errors import CorpusProblem, InvalidInput
from chaingraph.progress import Progress, ProgressEvent

__all__ = ["DEFAULT_SHAPES", "AuditReport", "CorpusProblem", "Crosswalk", "audit"]


def _crosswalk(crosswalk: Crosswalk | None, properties: str | Path | None) -> Any:
    if crosswalk is not None and properties is None:
        return crosswalk
    from chaingraph.crosswalk import default_crosswalk, read_property_facts

    base: Any = crosswalk if crosswalk is not None else default_crosswalk()
    if properties is None:
        return base
    if not hasattr(base, "with_facts"):
        raise InvalidInput(
            "properties= needs a chaingraph Crosswalk (one with with_facts); pass facts to yours"
        )
    return base.with_facts(read_property_facts(properties))


def audit(
    paths: Iterable[str | Path],
    *,
    strict: bool = False,
    crosswalk: Crosswalk | None = None,
    properties: str | Path | None = None,
    shapes: Sequence[Shape] = DEFAULT_SHAPES,
    roles: RoleTable | None = None,
    max_problems: int = 1000,
    progress: Progress | None = None,
) -> AuditReport:
    """Audit every record of ``paths`` (files or folders, JSON or JSON Lines, optionally gzip'd).

    ``strict`` raises :class:`CorpusProblem` at the first file or record that cannot be
    audited; otherwise problems are counted and the first ``max_problems`` listed.
    ``crosswalk`` defaults to :func:`chaingraph.crosswalk.default_crosswalk`;
    ``properties`` is a property list (e.g. ``wikidata_properties_merged.tsv.gz``) whose
    datatypes, labels and classes let the crosswalk decide properties outside its table;
    ``shapes`` is the tuple of record-shape detectors (first match wins); ``roles`` the
    role table; ``progress`` is told (stage ``audit``, in files) which file is next and when
    all are read.
    """
    files = corpus_files(paths)
    cw = _crosswalk(crosswalk, properties)
    tally = Tally(EdgeClassifier(cw, roles), shapes, max_problems=max_problems)
    for done, path in enumerate(files):
        if progress is not None:
            progress(ProgressEvent("audit", done, len(files), unit="files", current=str(path)))
        for item in read_file(path):
            problem = tally.add(item)
            if strict and problem is not None:
                raise CorpusProblem(f"{problem.describe()} (strict audit: fix it, or audit without `strict` "
                                    "to count and list such problems)", problem)
    if progress is not None:
        progress(ProgressEvent("audit", len(files), len(files), unit="files"))
    return tally.report(crosswalk_version=crosswalk_version(cw), files=len(files))
