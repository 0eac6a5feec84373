"""``chaingraph audit PATH…``: relation-class audit of a corpus (twin of :func:`~chaingraph.audit.audit`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from chaingraph.errors import UnsupportedFormat
from chaingraph.terminal import safe_text

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
    from chaingraph.audit.report import render_table, to_csv, to_json, to_markdown

    if plot is not None and plot.suffix.lower() not in _PLOT_SUFFIXES:
        raise UnsupportedFormat(
            f"--plot {plot}: write plots as {', '.join(_PLOT_SUFFIXES)}; change the suffix"
        )
    if progress is None:
        progress = sys.stderr.isatty()
    if progress:
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("auditing", total=None)

            def tell(done: int, total: int, path: Path | None) -> None:
                bar.update(
                    task, completed=done, total=total, description=f"auditing {path.name if path else ''}"
                )

            report = run_audit(paths, strict=strict, properties=properties, progress=tell)
    else:
        report = run_audit(paths, strict=strict, properties=properties)
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
