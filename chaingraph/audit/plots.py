"""Bar charts of an audit report (matplotlib, Agg backend: no display needed).

One figure, six panels a person can read at a glance: relation classes (share of edge
occurrences), difficulty levels, chain lengths, the most frequent properties (coloured by
relation class), entity types of anchors and nodes, and which route decided the edges.
Every bar carries its number.

>>> import tempfile, pathlib
>>> from chaingraph.audit.report import AuditReport
>>> out = pathlib.Path(tempfile.mkdtemp()) / "audit.svg"
>>> empty = AuditReport(crosswalk_version="x", files=0, records=0, tasks=0, chains=0, duplicate_chains=0,
...     edges=0, relation_classes=(), routes=(), difficulty=(), chain_lengths=(), entity_types=(),
...     anchors_typed=0, nodes_typed=0, anchors=0, nodes=0, properties=(), unclassified=(), shapes=(),
...     problem_count=0, problems=())
>>> plot_report(empty, out) == out and out.stat().st_size > 0
True
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from chaingraph.audit.classify import NOT_A_RELATION, RELATION_CLASSES, UNCLASSIFIED
from chaingraph.audit.report import AuditReport, percent
from chaingraph.errors import UnsupportedFormat

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CLASS_COLOURS", "figure", "plot_report"]

#: one colour per relation class (colour-blind-safe Okabe-Ito palette), grey for the rest
CLASS_COLOURS: dict[str, str] = {
    "part-whole": "#E69F00",
    "member-collection": "#56B4E9",
    "causal": "#D55E00",
    "temporal": "#009E73",
    "spatial": "#0072B2",
    "comparative": "#CC79A7",
    "attributive": "#F0E442",
    NOT_A_RELATION: "#999999",
    UNCLASSIFIED: "#555555",
}
_SUFFIXES = (".png", ".svg", ".pdf")


def _barh(
    ax: Any,
    labels: list[str],
    values: list[float],
    notes: list[str],
    colours: list[str] | str,
    title: str,
    xlabel: str,
) -> None:
    ypos = list(range(len(labels)))[::-1]
    ax.barh(ypos, values, color=colours, edgecolor="#333333", linewidth=0.5)
    ax.set_yticks(ypos, labels)
    ax.set_title(title, loc="left", fontweight="bold")
    ax.set_xlabel(xlabel)
    top = max(values, default=0) or 1
    ax.set_xlim(0, top * 1.3)
    for y, value, note in zip(ypos, values, notes):
        ax.text(value + top * 0.01, y, note, va="center", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    if not labels:
        ax.text(
            0.5, 0.5, "nothing to show", ha="center", va="center", transform=ax.transAxes, color="#777777"
        )


def _bars(
    ax: Any,
    labels: list[str],
    values: list[int],
    notes: list[str],
    title: str,
    xlabel: str,
    ylabel: str,
    colour: str,
) -> None:
    xpos = list(range(len(labels)))
    ax.bar(xpos, values, color=colour, edgecolor="#333333", linewidth=0.5)
    ax.set_xticks(xpos, labels)
    ax.set_title(title, loc="left", fontweight="bold")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    top = max(values, default=0) or 1
    ax.set_ylim(0, top * 1.18)
    for x, value, note in zip(xpos, values, notes):
        ax.text(x, value + top * 0.01, note, ha="center", va="bottom", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    if not labels:
        ax.text(
            0.5, 0.5, "nothing to show", ha="center", va="center", transform=ax.transAxes, color="#777777"
        )


def figure(report: AuditReport, *, top: int = 12) -> Figure:
    """The six-panel figure of ``report`` (``top`` properties and entity types shown)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(16, 10), layout="constrained")
    axes = fig.subplots(2, 3)
    fig.suptitle(
        f"Corpus audit: {report.tasks:,} tasks, {report.chains:,} chains, {report.edges:,} edge "
        f"occurrences (crosswalk {report.crosswalk_version})",
        fontsize=13,
    )
    classes = [c for c in report.relation_classes if c.edges or c.relation_class in RELATION_CLASSES]
    _barh(
        axes[0][0],
        [c.relation_class for c in classes],
        [c.percent for c in classes],
        [f"{c.percent:.2f} % ({c.edges:,})" for c in classes],
        [CLASS_COLOURS.get(c.relation_class, "#999999") for c in classes],
        "Relation classes",
        "% of edge occurrences",
    )
    _bars(
        axes[0][1],
        [f"{lv.level}\n{lv.rule}" for lv in report.difficulty],
        [lv.tasks for lv in report.difficulty],
        [f"{lv.tasks:,}\n{lv.percent:.2f} %" for lv in report.difficulty],
        "Difficulty levels",
        "evidence steps H per task",
        "tasks",
        "#0072B2",
    )
    _bars(
        axes[0][2],
        [str(ln.hops) for ln in report.chain_lengths],
        [ln.chains for ln in report.chain_lengths],
        [f"{ln.chains:,}" for ln in report.chain_lengths],
        "Chain lengths",
        "hops",
        "chains",
        "#009E73",
    )
    props = report.properties[:top]
    _barh(
        axes[1][0],
        [p.property for p in props],
        [p.edges for p in props],
        [f"{p.edges:,} · {p.relation_class}" for p in props],
        [CLASS_COLOURS.get(p.relation_class, "#999999") for p in props],
        f"Top {len(props)} of {len(report.properties)} properties",
        "edge occurrences",
    )
    types = report.entity_types[:top]
    ax = axes[1][1]
    ypos = list(range(len(types)))[::-1]
    anchors = [percent(t.anchors, report.anchors) for t in types]
    nodes = [percent(t.nodes, report.nodes) for t in types]
    ax.barh([y + 0.2 for y in ypos], anchors, height=0.4, color="#E69F00", label="anchors")
    ax.barh([y - 0.2 for y in ypos], nodes, height=0.4, color="#56B4E9", label="all nodes")
    ax.set_yticks(ypos, [t.type for t in types])
    ax.set_xlabel("% of anchors / of node occurrences")
    ax.set_title("Entity types", loc="left", fontweight="bold")
    ax.spines[["top", "right"]].set_visible(False)
    if types:
        ax.legend(loc="best", frameon=False)  # wherever it covers the fewest bars
    else:
        ax.text(
            0.5, 0.5, "nothing to show", ha="center", va="center", transform=ax.transAxes, color="#777777"
        )
    routes = list(report.routes)
    _barh(
        axes[1][2],
        [r.route for r in routes],
        [r.edges for r in routes],
        [f"{r.edges:,} ({r.percent:.2f} %)" for r in routes],
        "#999999",
        "Decided by route",
        "edge occurrences",
    )
    return fig


def plot_report(report: AuditReport, path: str | Path, *, top: int = 12) -> Path:
    """Write the figure to ``path`` (``.png``, ``.svg`` or ``.pdf``) and return the path."""
    path = Path(path)
    if path.suffix.lower() not in _SUFFIXES:
        raise UnsupportedFormat(
            f"{path}: plots are written as {', '.join(_SUFFIXES)}; choose one of those suffixes"
        )
    fig = figure(report, top=top)
    fig.savefig(path, dpi=110)
    return path
