"""``chaingraph audit PATH…``: relation-class audit of a corpus (twin of :func:`~chaingraph.audit.audit`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from chaingraph.cli.progress import progress_bars
from chaingraph.errors import InvalidInput, UnsupportedFormat
from chaingraph.terminal import safe_markup, safe_text

if TYPE_CHECKING:
    from rich.console import Console

    from chaingraph.audit.report import AuditReport

_PLOT_SUFFIXES = (".png", ".svg", ".pdf")


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "md", "csv", "json"]),
    default="table",
    show_default=True,
    help="table: readable rich tables; md, csv, json: for files and programs.",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write bar charts to this .png, .svg or .pdf file.",
)
@click.option("--strict", is_flag=True, help="Stop at the first unreadable file or bad record (exit 2).")
@click.option(
    "--properties",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A property list (TSV, e.g. wikidata_properties_merged.tsv.gz) so the crosswalk can "
    "decide properties outside its table by datatype, classes and label.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show progress on stderr (default: only when stderr is a terminal).",
)
def audit(
    paths: tuple[Path, ...],
    fmt: str,
    plot: Path | None,
    strict: bool,
    properties: Path | None,
    progress: bool | None,
) -> None:
    """Audit the relation classes, difficulty levels and chain lengths of a corpus.

    PATHS are JSON or JSON Lines files (optionally .gz) or folders (read recursively, in
    sorted order). Records may be chaingraph chain or task records, or other tools'
    tasks and chains whose edges carry explicit relation labels (part_of, PartWhole,
    the twelve-class scheme …), raw Wikidata property ids, or only edge roles
    (role: located_in, or subject_role/object_role such as part/whole). A chain repeated
    inside one record (top level and nested in a fused task) counts once; every directed
    edge occurrence counts. Bad files and records are counted and listed, or with
    --strict stop the audit.
    """
    from chaingraph.audit import audit as run_audit
    from chaingraph.audit.report import to_csv, to_json, to_markdown

    if plot is not None and plot.suffix.lower() not in _PLOT_SUFFIXES:
        raise UnsupportedFormat(
            f"--plot {plot}: write plots as {', '.join(_PLOT_SUFFIXES)}; change the suffix"
        )
    if plot is not None and not plot.parent.is_dir():  # before the audit, not after it
        raise InvalidInput(f"--plot {plot}: the folder {plot.parent} does not exist; create it first")
    with progress_bars(progress, transient=True) as tell:
        report = run_audit(paths, strict=strict, properties=properties, progress=tell)
    if fmt == "table":
        from rich.console import Console

        render_table(report, Console(file=sys.stdout, width=None if sys.stdout.isatty() else 160))
    elif fmt == "md":
        click.echo(to_markdown(report), nl=False)  # cells pass through safe_text
    elif fmt == "csv":
        click.echo(to_csv(report), nl=False)
    else:
        click.echo(to_json(report))
    if plot is not None:
        from chaingraph.audit.plots import plot_report

        written = plot_report(report, plot)
        click.echo(f"plot written to {safe_text(written)}", err=True)


def render_table(report: AuditReport, console: Console, *, top: int = 15) -> None:
    """Print the report as rich tables (the terminal view; ``top`` rows of long lists)."""
    from rich.table import Table

    from chaingraph.audit.report import percent

    def pct(value: float) -> str:
        return f"{value:.2f}"

    def table(title: str, *columns: str) -> Table:
        t = Table(title=title, title_justify="left", title_style="bold")
        for i, name in enumerate(columns):
            t.add_column(name, justify="left" if i == 0 else "right")
        return t

    console.print(
        f"[bold]Corpus audit[/bold] — crosswalk {safe_markup(report.crosswalk_version)}: "
        f"{report.files:,} files, "
        f"{report.records:,} records, {report.tasks:,} tasks, {report.chains:,} distinct chains "
        f"({report.duplicate_chains:,} repeated copies not counted), {report.edges:,} edge occurrences"
    )
    t = table("Relation classes", "relation class", "edges", "%")
    for c in report.relation_classes:
        t.add_row(safe_markup(c.relation_class), f"{c.edges:,}", pct(c.percent))
    t.add_section()
    t.add_row("total", f"{report.edges:,}", "100.00" if report.edges else "0.00", style="bold")
    routes = table("Decided by", "route", "edges", "%")
    for r in report.routes:
        routes.add_row(safe_markup(r.route), f"{r.edges:,}", pct(r.percent))
    levels = table("Difficulty (H per task)", "level", "H", "tasks", "%")
    for lv in report.difficulty:
        levels.add_row(lv.level, lv.rule, f"{lv.tasks:,}", pct(lv.percent))
    lengths = table("Chain lengths", "hops", "chains", "%")
    for ln in report.chain_lengths:
        lengths.add_row(str(ln.hops), f"{ln.chains:,}", pct(ln.percent))
    share = pct(percent(report.time_sensitive_tasks, report.tasks))
    timing = table(f"Time sensitivity ({share} % of tasks)", "reason", "tasks", "%", "steps", "%")
    for tr in report.time_sensitivity:
        timing.add_row(tr.reason, f"{tr.tasks:,}", pct(tr.task_percent), f"{tr.steps:,}",
                       pct(tr.step_percent))
    from rich.columns import Columns

    console.print(Columns([t, routes, levels, lengths, *([timing] if report.time_sensitivity else [])]))
    types = table(
        f"Entity types (typed anchors {pct(percent(report.anchors_typed, report.anchors))} %, "
        f"nodes {pct(percent(report.nodes_typed, report.nodes))} %)",
        "type",
        "anchors",
        "nodes",
    )
    for ty in report.entity_types[:top]:
        types.add_row(safe_markup(ty.type), f"{ty.anchors:,}", f"{ty.nodes:,}")
    if len(report.entity_types) > top:
        types.add_row(f"… {len(report.entity_types) - top} more", "", "")
    props = table("Properties by frequency", "property", "class", "edges", "%")
    for p in report.properties[:top]:
        props.add_row(safe_markup(p.property), safe_markup(p.relation_class), f"{p.edges:,}", pct(p.percent))
    if len(report.properties) > top:
        props.add_row(f"… {len(report.properties) - top} more", "", "", "")
    shapes = table("Record shapes", "shape", "records")
    for s in report.shapes:
        shapes.add_row(safe_markup(s.shape), f"{s.records:,}")
    console.print(Columns([types, props, shapes]))
    if report.unclassified:
        u = table(
            f"Unclassified edges ({sum(r.edges for r in report.unclassified):,})",
            "annotation",
            "edges",
            "why",
        )
        for row in report.unclassified[:top]:
            u.add_row(safe_markup(row.subject), f"{row.edges:,}", safe_markup(row.reason))
        console.print(u)
    if report.problem_count:
        pr = table(f"Problems ({report.problem_count:,})", "where", "kind", "message")
        for prob in report.problems[:top]:
            pr.add_row(safe_markup(prob.where), safe_markup(prob.kind), safe_markup(prob.message))
        if report.problem_count > top:
            pr.add_row(
                f"… {report.problem_count - top} more (--format json lists up to the first "
                f"{len(report.problems)})",
                "",
                "",
            )
        console.print(pr)
