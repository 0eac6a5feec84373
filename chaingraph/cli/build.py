"""``chaingraph build SEEDS --store PATH|--endpoint URL --out DIR``: the twin of
:func:`chaingraph.build.build` (a certified task corpus from a seed list, DESIGN §10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from chaingraph.ids import pid
from chaingraph.settings import ChainBounds, CrawlLimits, TraversalPolicy, settings

if TYPE_CHECKING:
    from chaingraph.build.runner import FunnelRow

__all__ = ["build"]

_BOUNDS, _LIMITS, _POLICY = ChainBounds(), CrawlLimits(), TraversalPolicy()
_MAX_FAMILIARITY = 150  # chaingraph.build.corpus.DEFAULT_MAX_FAMILIARITY (checked by tests/test_build.py)


def _funnel_table(rows: tuple[FunnelRow, ...]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="build funnel")
    table.add_column("stage")
    table.add_column("count", justify="right")
    table.add_column("dropped", justify="right")
    table.add_column("by rule")
    for r in rows:
        table.add_row(r.stage, f"{r.count:,}", f"{r.dropped:,}" if r.dropped else "", r.rule)
    Console(stderr=True).print(table)


@click.command()
@click.argument("seeds", type=click.Path(dir_okay=False))
@click.option("--store", metavar="PATH", type=click.Path(dir_okay=False),
              help="Build from this store (read only); chains are certified shortcut-free in all of it.")
@click.option("--endpoint", metavar="URL",
              help="Build from a SPARQL endpoint: chains are certified shortcut-free in the whole endpoint "
                   "by a bidirectional bounded search; responses are cached in OUT/cache.duckdb.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Output folder (resumable).")
@click.option("--min-hops", default=_BOUNDS.min_hops, show_default=True, type=int)
@click.option("--max-hops", default=_BOUNDS.max_hops, show_default=True, type=int)
@click.option("--top", default=_BOUNDS.top, show_default=True, type=int, help="Chains tried per seed.")
@click.option("--max-neighbours", default=_LIMITS.max_neighbours, show_default=True, type=int)
@click.option("--select", default=_LIMITS.select, show_default=True, type=int)
@click.option("--layer-budget", type=int, default=_LIMITS.layer_budget, show_default=True,
              help="Entities expanded per BFS layer (0: no budget).")
@click.option("--in-limit", default=_LIMITS.in_limit, show_default=True, type=int)
@click.option("--hub-limit", default=_POLICY.hub_limit, show_default=True, type=int,
              help="Chains do not pass through entities with more step edges (0: no limit).")
@click.option("--exclude-property", "excluded", multiple=True, metavar="PID",
              help="Never use this property as a step (repeatable).")
@click.option("--collect/--no-collect", default=True, show_default=True,
              help="--no-collect: the whole store is every seed's neighbourhood (no caps).")
@click.option("--as-of", "as_of", metavar="DATE", default=None,
              help="Only statements valid on this date (ISO date, YYYY-MM or a year) are edges: chains, "
                   "the whole-store certificate and the answer sets all use the dated graph.")
@click.option("--stable-only", is_flag=True, default=False,
              help="Keep only chains whose every step is time-stable (no end, no successor, "
                   "no changing property).")
@click.option("--max-familiarity", type=click.IntRange(min=0), default=_MAX_FAMILIARITY, show_default=True,
              help="Drop chains with a node (other than the seed) with more sitelinks.")
@click.option("--task-hub-limit", type=click.IntRange(min=0), default=None,
              help="Necessity policy: answer sets under this hub rule. Default: every statement counts.")
@click.option("--max-values", type=click.IntRange(min=0), default=8, show_default=True,
              help="Candidate value clues per node.")
@click.option("--budget", type=click.IntRange(min=1), default=30, show_default=True,
              help="Pattern evaluations the search for a necessary anchor may spend per chain.")
@click.option("--fuse", is_flag=True, help="Also pair tasks whose targets have comparable values.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Local worker processes.")
@click.option("--ray", "ray_address", is_flag=False, flag_value="local", default=None, metavar="[ADDRESS]",
              help="Run seeds as Ray tasks (ray.init(ADDRESS); no address: a local Ray instance).")
@click.option("--progress/--no-progress", default=None, help="Progress on stderr (default: on a terminal).")
def build(seeds: str, store: str | None, endpoint: str | None, out: str, min_hops: int, max_hops: int,
          top: int, max_neighbours: int, select: int, layer_budget: int, in_limit: int, hub_limit: int,
          excluded: tuple[str, ...], collect: bool, as_of: str | None, stable_only: bool,
          max_familiarity: int,
          task_hub_limit: int | None,
          max_values: int, budget: int, fuse: bool, workers: int, ray_address: str | None,
          progress: bool | None) -> None:
    """Build a certified task corpus from SEEDS (a text, CSV or JSON Lines file of Q-ids or
    names): collect, rank, filter by familiarity, certify no shortcut in the whole store or
    endpoint, propose minimal clues, screen the anchor, record H and the level (DESIGN §10).

    Writes tasks.jsonl, rejected.jsonl, manifest.json, funnel.md, audit.md and audit.png
    to --out; re-running the same command resumes where it stopped.

    \b
    chaingraph build seeds.txt --store world.duckdb --out corpus/
    chaingraph build seeds.csv --store world.duckdb --out corpus/ --no-collect --top 5 --workers 2
    chaingraph build seeds.txt --endpoint http://127.0.0.1:7878/query --out corpus/
    """
    from chaingraph.build import build as run_build

    policy = settings(TraversalPolicy, hub_limit=hub_limit or None, as_of=as_of,
                      excluded_properties=frozenset(pid(p, field="--exclude-property") for p in excluded))
    limits = settings(CrawlLimits, max_neighbours=max_neighbours, select=select,
                      layer_budget=layer_budget or None, in_limit=in_limit) if collect else None
    bounds = settings(ChainBounds, min_hops=min_hops, max_hops=max_hops, top=top)
    from chaingraph.cli.progress import progress_bars

    with progress_bars(progress) as tell:
        result = run_build(seeds, out=out, store=store, endpoint=endpoint, bounds=bounds, limits=limits,
                           policy=policy, collect=collect, max_familiarity=max_familiarity,
                           stable_only=stable_only, task_hub_limit=task_hub_limit, max_values=max_values,
                           budget=budget, fuse=fuse,
                           workers=workers, ray=ray_address is not None,
                           ray_address=None if ray_address in (None, "local") else ray_address, progress=tell)
    _funnel_table(result.funnel)
    for text in result.unresolved:
        click.echo(f"unresolved seed {text!r} (see rejected.jsonl for its candidates)", err=True)
    for seed, error in result.failed:
        click.echo(f"seed {seed} failed: {error}", err=True)
    click.echo(f"{result.tasks} task(s) and {result.fused} fused task(s) in {result.out}/tasks.jsonl; "
               f"{result.rejected} rejected; {result.resumed} seed(s) resumed; {result.seconds:.1f} s")
