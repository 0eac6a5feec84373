"""The audit report: a frozen record and its renderings (terminal table, markdown, CSV, JSON).

Percentages are computed exactly and each one is rounded on its own to two decimals,
half up (``1/3`` → ``33.33``, ``1/8`` → ``12.5``), so a column need not sum to exactly 100.

>>> percent(1, 3), percent(1, 8), percent(2, 3), percent(0, 0)
(33.33, 12.5, 66.67, 0.0)
>>> level_of(4), level_of(5), level_of(9), level_of(10)
('L1', 'L2', 'L2', 'L3')
"""

from __future__ import annotations

import csv
import io
from decimal import ROUND_HALF_UP, Decimal

from pydantic import BaseModel, ConfigDict, Field

from chaingraph.records import difficulty_level
from chaingraph.terminal import safe_text

__all__ = [
    "AUDIT_SCHEMA_VERSION",
    "LEVELS",
    "AuditReport",
    "ClassRow",
    "LengthRow",
    "LevelRow",
    "ProblemRow",
    "PropertyRow",
    "RouteRow",
    "ShapeRow",
    "TimeRow",
    "TypeRow",
    "UnclassifiedRow",
    "level_of",
    "percent",
    "to_csv",
    "to_json",
    "to_markdown",
]

AUDIT_SCHEMA_VERSION = "chaingraph.audit/1"
_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: difficulty levels by evidence steps H summed over a task's component chains (DESIGN §8)
LEVELS: tuple[tuple[str, str], ...] = (("L1", "H < 5"), ("L2", "5 ≤ H < 10"), ("L3", "H ≥ 10"))


def percent(count: int, total: int) -> float:
    """``100 · count / total`` rounded half up to two decimals (0 when ``total`` is 0)."""
    if total <= 0:
        return 0.0
    exact = Decimal(count * 100) / Decimal(total)
    return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


#: The difficulty level of a task with H evidence steps: the one rule in :mod:`chaingraph.records`.
level_of = difficulty_level


class ClassRow(BaseModel):
    """Edge occurrences of one relation class (or ``not-a-relation`` / ``unclassified``)."""

    model_config = _FROZEN
    relation_class: str
    edges: int
    percent: float


class RouteRow(BaseModel):
    """How many edge occurrences a classification route decided."""

    model_config = _FROZEN
    route: str
    edges: int
    percent: float


class LevelRow(BaseModel):
    model_config = _FROZEN
    level: str
    rule: str
    tasks: int
    percent: float


class LengthRow(BaseModel):
    model_config = _FROZEN
    hops: int
    chains: int
    percent: float


class TypeRow(BaseModel):
    """Entity type coverage: anchors (first node of each chain) and all node occurrences."""

    model_config = _FROZEN
    type: str
    anchors: int
    nodes: int


class PropertyRow(BaseModel):
    model_config = _FROZEN
    property: str
    edges: int
    percent: float
    relation_class: str


class UnclassifiedRow(BaseModel):
    model_config = _FROZEN
    subject: str
    edges: int
    reason: str


class TimeRow(BaseModel):
    """Tasks and chain steps by time-sensitivity reason (DESIGN §11; ``unrecorded``: a record
    written without time information)."""

    model_config = _FROZEN
    reason: str
    tasks: int
    task_percent: float
    steps: int
    step_percent: float


class ShapeRow(BaseModel):
    model_config = _FROZEN
    shape: str
    records: int


class ProblemRow(BaseModel):
    """Input that was not audited. ``record``/``line`` are 1-based, 0 = whole file / unknown."""

    model_config = _FROZEN
    file: str
    record: int
    line: int
    kind: str
    message: str

    @property
    def where(self) -> str:
        """``file:line (record n)``."""
        where = self.file + (f":{self.line}" if self.line else "")
        return where + (f" (record {self.record})" if self.record else "")


class AuditReport(BaseModel):
    """What a corpus is made of (DESIGN §8).

    Counting unit: each directed edge occurrence of each distinct component chain of a
    record (a relation used twice counts twice; a chain repeated inside one record counts
    once). ``tasks`` are the records that contributed at least one chain; a bare chain
    record is a one-component task.
    """

    model_config = _FROZEN
    schema_version: str = AUDIT_SCHEMA_VERSION
    crosswalk_version: str
    files: int
    records: int = Field(description="records read, good or bad")
    tasks: int = Field(description="records that contributed at least one chain")
    chains: int = Field(description="distinct component chains counted")
    duplicate_chains: int = Field(description="repeated copies of a chain inside a record, not counted")
    edges: int = Field(description="directed edge occurrences counted")
    relation_classes: tuple[ClassRow, ...]
    routes: tuple[RouteRow, ...]
    difficulty: tuple[LevelRow, ...]
    chain_lengths: tuple[LengthRow, ...]
    entity_types: tuple[TypeRow, ...]
    anchors_typed: int
    nodes_typed: int
    anchors: int
    nodes: int
    properties: tuple[PropertyRow, ...]
    unclassified: tuple[UnclassifiedRow, ...]
    shapes: tuple[ShapeRow, ...]
    problem_count: int
    problems: tuple[ProblemRow, ...] = Field(description="the first problems found (problem_count has all)")
    time_sensitivity: tuple[TimeRow, ...] = Field(default=(), description=(
        "tasks (share of all tasks) and steps (share of steps with a recorded reason) by "
        "time-sensitivity reason"))
    time_sensitive_tasks: int = Field(default=0, description=(
        "tasks whose reason is not stable (nor unrecorded)"))

    def class_counts(self) -> dict[str, int]:
        """``{relation class: edge occurrences}``."""
        return {row.relation_class: row.edges for row in self.relation_classes}


def to_json(report: AuditReport) -> str:
    return report.model_dump_json(indent=2)


def _md_table(header: list[str], rows: list[list[object]], right: int = 1) -> list[str]:
    align = ["---"] * (len(header) - right) + ["---:"] * right
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(safe_text(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return [*lines, ""]


def _pct(value: float) -> str:
    return f"{value:.2f}"


def to_markdown(report: AuditReport) -> str:
    """The whole report as markdown sections."""
    out = [
        f"## Corpus audit (crosswalk {report.crosswalk_version})",
        "",
        f"{report.files:,} files, {report.records:,} records, {report.tasks:,} tasks, "
        f"{report.chains:,} distinct chains ({report.duplicate_chains:,} repeated copies not counted), "
        f"{report.edges:,} edge occurrences, {report.problem_count:,} problems.",
        "",
        "### Relation classes",
        "",
    ]
    rows: list[list[object]] = [
        [r.relation_class, f"{r.edges:,}", _pct(r.percent)] for r in report.relation_classes
    ]
    rows.append(["**total**", f"**{report.edges:,}**", "**100.00**" if report.edges else "0.00"])
    out += _md_table(["relation class", "edges", "%"], rows, right=2)
    out += ["### Classification routes", ""]
    out += _md_table(
        ["route", "edges", "%"], [[r.route, f"{r.edges:,}", _pct(r.percent)] for r in report.routes], right=2
    )
    out += ["### Difficulty levels (evidence steps H per task)", ""]
    out += _md_table(
        ["level", "H", "tasks", "%"],
        [[r.level, r.rule, f"{r.tasks:,}", _pct(r.percent)] for r in report.difficulty],
        right=2,
    )
    out += ["### Chain lengths", ""]
    out += _md_table(
        ["hops", "chains", "%"],
        [[r.hops, f"{r.chains:,}", _pct(r.percent)] for r in report.chain_lengths],
        right=2,
    )
    out += [
        "### Entity types",
        "",
        f"typed anchors {report.anchors_typed:,} of {report.anchors:,} "
        f"({_pct(percent(report.anchors_typed, report.anchors))} %), typed nodes {report.nodes_typed:,} "
        f"of {report.nodes:,} ({_pct(percent(report.nodes_typed, report.nodes))} %)",
        "",
    ]
    out += _md_table(
        ["type", "anchors", "nodes"],
        [[r.type, f"{r.anchors:,}", f"{r.nodes:,}"] for r in report.entity_types],
        right=2,
    )
    out += ["### Properties by frequency", ""]
    out += _md_table(
        ["property", "relation class", "edges", "%"],
        [[r.property, r.relation_class, f"{r.edges:,}", _pct(r.percent)] for r in report.properties],
        right=2,
    )
    if report.time_sensitivity:
        out += ["### Time sensitivity", "",
                f"{report.time_sensitive_tasks:,} of {report.tasks:,} tasks "
                f"({_pct(percent(report.time_sensitive_tasks, report.tasks))} %) are time-sensitive.", ""]
        out += _md_table(
            ["reason", "tasks", "%", "steps", "% of steps"],
            [[r.reason, f"{r.tasks:,}", _pct(r.task_percent), f"{r.steps:,}", _pct(r.step_percent)]
             for r in report.time_sensitivity],
            right=4,
        )
    out += ["### Record shapes", ""]
    out += _md_table(["shape", "records"], [[r.shape, f"{r.records:,}"] for r in report.shapes])
    if report.unclassified:
        out += ["### Unclassified edges", ""]
        out += _md_table(
            ["annotation", "edges", "why"],
            [[r.subject, f"{r.edges:,}", r.reason] for r in report.unclassified],
            right=0,
        )
    if report.problem_count:
        out += [f"### Problems ({report.problem_count:,})", ""]
        out += _md_table(
            ["file", "record", "line", "kind", "message"],
            [[p.file, p.record, p.line, p.kind, p.message] for p in report.problems],
            right=0,
        )
    return "\n".join(out).rstrip() + "\n"


def to_csv(report: AuditReport) -> str:
    """One long table: ``section,key,count,percent,detail`` (a row per cell of every section)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["section", "key", "count", "percent", "detail"])
    w.writerow(["meta", "crosswalk_version", "", "", report.crosswalk_version])
    for name in ("files", "records", "tasks", "chains", "duplicate_chains", "edges", "problem_count"):
        w.writerow(["meta", name, getattr(report, name), "", ""])
    for c in report.relation_classes:
        w.writerow(["relation_class", c.relation_class, c.edges, _pct(c.percent), ""])
    w.writerow(["relation_class", "total", report.edges, "100.00" if report.edges else "0.00", ""])
    for r in report.routes:
        w.writerow(["route", r.route, r.edges, _pct(r.percent), ""])
    for lv in report.difficulty:
        w.writerow(["difficulty", lv.level, lv.tasks, _pct(lv.percent), lv.rule])
    for ln in report.chain_lengths:
        w.writerow(["chain_length", ln.hops, ln.chains, _pct(ln.percent), ""])
    for t in report.entity_types:
        w.writerow(["anchor_type", t.type, t.anchors, _pct(percent(t.anchors, report.anchors)), ""])
        w.writerow(["node_type", t.type, t.nodes, _pct(percent(t.nodes, report.nodes)), ""])
    for p in report.properties:
        w.writerow(["property", p.property, p.edges, _pct(p.percent), p.relation_class])
    for tr in report.time_sensitivity:
        w.writerow(["time_tasks", tr.reason, tr.tasks, _pct(tr.task_percent), ""])
        w.writerow(["time_steps", tr.reason, tr.steps, _pct(tr.step_percent), ""])
    for s in report.shapes:
        w.writerow(["shape", s.shape, s.records, "", ""])
    for u in report.unclassified:
        w.writerow(["unclassified", u.subject, u.edges, "", u.reason])
    for pr in report.problems:
        w.writerow(
            ["problem", pr.where, "", "", f"{pr.kind}: {pr.message}"]
        )
    return buf.getvalue()
