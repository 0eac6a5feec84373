"""``chaingraph load`` and ``chaingraph summary``: thin twins of :func:`chaingraph.sources.loaders.load`
and :func:`chaingraph.sources.loaders.summarize`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from chaingraph.cli.progress import progress_bars
from chaingraph.errors import StoreError
from chaingraph.terminal import safe_markup, safe_text

if TYPE_CHECKING:  # the loaders and the store (DuckDB, pyarrow) are imported when a command runs
    from rich.table import Table

    from chaingraph.sources.loaders import LoadReport, StoreSummary

_FORMAT = click.option("--format", "output_format", type=click.Choice(["table", "json"]),
                       default="table", show_default=True, help="Output format.")


def _summary_table(summary: StoreSummary, report: LoadReport | None = None) -> Table:
    from rich.table import Table

    table = Table(title=f"store {safe_markup(summary.store)}", show_header=True)
    table.add_column("what")
    table.add_column("count", justify="right")
    rows = [("entities", summary.entities), ("properties", summary.properties),
            ("statements", summary.statements), ("qualifiers", summary.qualifiers),
            ("references", summary.references), ("reference snaks", summary.reference_snaks),
            ("sources", summary.sources)]
    rows += [(f"statements: {vt}", n) for vt, n in summary.statements_by_value_type.items()]
    rows += [(f"rank: {rank}", n) for rank, n in summary.ranks.items()]
    for what, n in rows:
        table.add_row(safe_markup(what), f"{n:,}")
    if report is not None:
        bad = sum(f.bad_lines for f in report.files)
        if bad:
            table.add_row("bad lines skipped", f"{bad:,}")
        table.add_row("seconds", f"{report.seconds:.2f}")
    return table


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--store", "store_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="DuckDB store file (created if missing).")
@click.option("--skip-bad-lines", is_flag=True, help="Skip and count malformed lines instead of stopping.")
@click.option("--progress/--no-progress", default=None,
              help="Show a progress bar on stderr (default: when stderr is a terminal).")
@_FORMAT
def load(files: tuple[Path, ...], store_path: Path, skip_bad_lines: bool, progress: bool | None,
         output_format: str) -> None:
    """Load Wikidata dumps (JSON dump, N-Triples, Turtle; .gz/.bz2) into a store.

    A directory written by chaingraph export --parquet is read back as it was.

    Example: chaingraph load data/sample/douglas-adams.json --store sample.duckdb
    """
    from rich.console import Console

    from chaingraph import store_memory
    from chaingraph.sources.loaders import load as load_files
    from chaingraph.store import Store

    store_memory.tune_malloc_for_load()  # before the store's threads take arenas of their own
    with Store(store_path) as store, progress_bars(progress, transient=True) as callback:
        report = load_files(files, store, skip_bad_lines=skip_bad_lines, progress=callback)
    if output_format == "json":
        click.echo(report.model_dump_json(indent=2))
        return
    console = Console()
    console.print(_summary_table(report.summary, report))
    for f in report.files:
        for example in f.bad_line_examples:
            click.echo(f"skipped {safe_text(example)}", err=True)
        if f.raised_memory_mb is not None:
            click.echo(f"note: {safe_text(f.path)}: the entities' key index outgrew the load's DuckDB "
                       f"budget (entities out of id order keep all of it in memory); the load held "
                       f"{f.raised_memory_mb} MiB instead", err=True)


@click.command()
@click.option("--store", "store_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="DuckDB store file.")
@_FORMAT
def summary(store_path: Path, output_format: str) -> None:
    """Print what a store holds: entities, statements, qualifiers, references, literals by type.

    Example: chaingraph summary --store sample.duckdb --format json
    """
    from rich.console import Console

    from chaingraph.sources.loaders import summarize
    from chaingraph.store import Store

    if not store_path.is_file():
        raise StoreError(f"cannot open store {store_path}: no such file; create it with chaingraph load")
    with Store(store_path, read_only=True) as store:
        result = summarize(store)
    if output_format == "json":
        click.echo(result.model_dump_json(indent=2))
    else:
        Console().print(_summary_table(result))
