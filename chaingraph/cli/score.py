"""``chaingraph score TASKS TRAJECTORIES...``: the CLI twin of
:func:`chaingraph.scoring.score_files`."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

import click

from chaingraph.errors import InvalidTrajectory
from chaingraph.terminal import safe_markup, safe_text

if TYPE_CHECKING:  # the scoring engine (igraph, DuckDB) is imported when the command runs
    from rich.console import Console

    from chaingraph.scoring import ScoreReport

#: columns of the per-item table, csv and markdown
COLUMNS = ("nc", "rc", "va_p", "va_r", "nvrc", "ea", "aeba", "gea", "dri", "dri_ratio", "revisits",
           "first_revisit_round", "same_anchor_returns", "other_anchor_returns")


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _rows(report: ScoreReport) -> list[list[str]]:
    rows = []
    for it in report.items:
        m = it.metrics.model_dump()
        rows.append([it.task, it.trajectory or f"item {it.item}", *(_fmt(m[c]) for c in COLUMNS)])
    rows.append(["macro", f"{len(report.items)} item(s)", *(_fmt(report.macro.get(c)) for c in COLUMNS)])
    return rows


def _markdown(report: ScoreReport) -> str:
    head = ["task", "trajectory", *COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(safe_text(c) for c in r) + " |" for r in _rows(report)]
    if report.sensitivity:
        names = list(report.sensitivity[0].metrics)
        lines += ["", "| threshold | value | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 2)]
        lines += [f"| {r.parameter} | {r.value:g} | " + " | ".join(_fmt(r.metrics[n]) for n in names) + " |"
                  for r in report.sensitivity]
    return "\n".join(lines)


def _explain(report: ScoreReport, console: Console) -> None:
    for it in report.items:
        lines = [f"  node {m.what} [{m.component}]: {m.reason}" for m in it.unmatched_nodes]
        lines += [f"  edge {m.what} [{m.component}]: {m.reason}" for m in it.unmatched_edges]
        for r in it.routes:
            verdict = "CREDITED" if r.credited else "REFUSED"
            why = "; ".join(r.reasons) or "sufficient, non-circular and target-preserving"
            lines.append(f"  route {' → '.join(r.nodes)} [{r.component}]: {verdict}: {why}")
        lines += [f"  alias {a}" for a in it.aliases]
        lines += [f"  event {u.event}: unresolved {u.reason}" for u in it.unresolved]
        lines += [f"  note: {n}" for n in it.notes]
        if lines:
            who = safe_markup(it.trajectory or f"item {it.item}")
            console.print(f"[bold]{safe_markup(it.task)}[/bold] {who}")
            for line in lines:
                console.print(safe_text(line), markup=False)


@click.command()
@click.argument("tasks", metavar="TASKS")
@click.argument("trajectories", nargs=-1, required=True, metavar="TRAJECTORIES...")
@click.option("--store", type=click.Path(dir_okay=False), default=None,
              help="DuckDB evidence store to read instead of each task's own evidence/store.")
@click.option("--format", "fmt", type=click.Choice(["table", "md", "csv", "json"]), default="table",
              show_default=True, help="table for people; md, csv or json (the score-report record).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Also draw macro metrics and threshold sensitivity to this file (.png, .svg, .pdf).")
@click.option("--iou", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="IoU a predicted anchor box needs to match a reference anchor.")
@click.option("--coverage", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Share of an anchor's area a crop must hold to cover it.")
@click.option("--max-share", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Largest share of the image a crop may cover and still be a local interaction.")
def score(tasks: str, trajectories: tuple[str, ...], store: str | None, fmt: str, plot: str | None,
          iou: float, coverage: float, max_share: float) -> None:
    """Score agent trajectories against their tasks' evidence graphs (DESIGN §12).

    TASKS is a task file, a JSON list or JSON Lines of tasks, or a directory of task files;
    each TRAJECTORIES file holds JSON Lines, a JSON list or one trajectory. Prints per-item and
    macro-averaged NC, RC, VA-P, VA-R, NVRC, EA, AEBA, GEA, DRI and revisits, why each reference
    node or statement was missed and why each alternative route was credited or refused, and
    the visual metrics at other thresholds. Exit 0 when every item was scored; 2 when an item
    is bad (each is named on stderr, the others are still scored).
    """
    from rich.console import Console
    from rich.table import Table

    from chaingraph.scoring import Thresholds, score_files

    report = score_files(tasks, trajectories, store=store,
                         thresholds=Thresholds(iou=iou, coverage=coverage, max_share=max_share))
    if fmt == "json":
        click.echo(json.dumps(report.model_dump(mode="json"), indent=2))
    elif fmt == "md":
        click.echo(_markdown(report))
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["task", "trajectory", *COLUMNS])
        writer.writerows(_rows(report))
        click.echo(buf.getvalue(), nl=False)
    else:
        console = Console(width=max(Console().width, 160), highlight=False, soft_wrap=False)
        table = Table(header_style="bold")
        for col in ("task", "trajectory", *COLUMNS):
            table.add_column(col, overflow="fold")
        for row in _rows(report):
            table.add_row(*(safe_markup(c) for c in row))
        console.print(table)
        _explain(report, console)
        if report.sensitivity:
            sens = Table(title="sensitivity (macro, one threshold changed)", header_style="bold")
            names = list(report.sensitivity[0].metrics)
            for col in ("threshold", "value", *names):
                sens.add_column(col)
            for r in report.sensitivity:
                sens.add_row(r.parameter, f"{r.value:g}", *(_fmt(r.metrics[n]) for n in names))
            console.print(sens)
    if plot is not None:
        from chaingraph.scoring.plot import plot_report

        plot_report(report, plot)
    for failure in report.failures:
        click.echo(f"error: {safe_text(failure.error)}", err=True)
    if report.failures:
        raise InvalidTrajectory(f"{len(report.failures)} item(s) could not be scored (see the errors above)")
