"""``chaingraph export``: thin twin of :func:`chaingraph.store_parquet.export`."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command()
@click.option("--store", "store_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="DuckDB store file to export (opened read only).")
@click.option("--parquet", "parquet_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory to write: one <table>.parquet per store table and manifest.json.")
def export(store_path: Path, parquet_dir: Path) -> None:
    """Write every store table as Parquet (plus a manifest) for DuckDB, Polars, Spark, ...

    Read it back with chaingraph load DIR --store NEW.

    Example: chaingraph export --store sample.duckdb --parquet sample-parquet/
    """
    from chaingraph.store_parquet import export as export_store

    manifest = export_store(store_path, parquet=parquet_dir)
    click.echo(json.dumps({name: t["rows"] for name, t in manifest["tables"].items()}, indent=2))
