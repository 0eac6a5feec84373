"""``chaingraph collect``: the thin twin of :func:`chaingraph.collect.collect`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from chaingraph.cli.progress import progress_bars
from chaingraph.ids import qid
from chaingraph.settings import CrawlLimits, EndpointSettings, RetryPolicy, settings

if TYPE_CHECKING:
    from rich.table import Table

    from chaingraph.collect import CollectReport
from chaingraph.terminal import safe_markup

#: the settings defaults, shown in --help (their one home is chaingraph.settings)
_LIMITS, _ENDPOINT = CrawlLimits(), EndpointSettings()


def _seeds(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    return [qid(v, field="--seed") for v in values]


def _table(report: CollectReport) -> Table:
    from rich.table import Table

    table = Table(title=safe_markup(f"collected {', '.join(report.seeds)} to radius {report.radius} "
                                    f"from {report.source}"))
    for col in ("depth", "reached", "expanded", "over budget", "described", "resumed", "requests",
                "retries", "cached"):
        table.add_column(col, justify="right")
    for lay in report.layers:
        table.add_row(*(f"{v:,}" for v in (lay.depth, lay.reached, lay.expanded, lay.over_budget,
                                            lay.described, lay.resumed, lay.requests, lay.retries,
                                            lay.cache_hits)))
    table.caption = (f"{report.entities_expanded:,} expanded · {report.entities_described:,} described · "
                     f"{report.statements:,} statements · {report.requests:,} requests · "
                     f"{report.retries:,} retries · {report.cache_hits:,} cached · caps: "
                     f"max_neighbours {report.max_neighbours}, select {report.select}, "
                     f"layer_budget {report.layer_budget}, in_limit {report.in_limit}")
    return table


@click.command()
@click.option("--seed", "seeds", multiple=True, required=True, callback=_seeds,
              help="Seed item id (Q…); repeat for several seeds.")
@click.option("--radius", type=click.IntRange(min=0), required=True,
              help="BFS depth: entities closer than this are expanded.")
@click.option("--endpoint", default=_ENDPOINT.url, show_default=True, help="SPARQL endpoint URL.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False), required=True,
              help="DuckDB store to write (created if missing; also holds the response cache).")
@click.option("--max-neighbours", type=click.IntRange(min=0),
              default=_LIMITS.max_neighbours, show_default=True,
              help="Neighbours kept per expanded entity (deterministic order).")
@click.option("--select", type=click.IntRange(min=0), default=_LIMITS.select, show_default=True,
              help="Kept neighbours the selector picks to expand next.")
@click.option("--layer-budget", type=click.IntRange(min=1), default=_LIMITS.layer_budget, show_default=True,
              help="Entities expanded per depth at most.")
@click.option("--in-limit", type=click.IntRange(min=0), default=_LIMITS.in_limit, show_default=True,
              help="In-edges fetched per entity at most (capped inside the query).")
@click.option("--batch-size", type=click.IntRange(min=1), default=_ENDPOINT.batch_size, show_default=True,
              help="Entities per request (VALUES batch).")
@click.option("--user-agent", default=_ENDPOINT.user_agent, show_default=True,
              help="User-Agent header; WDQS wants a contact URL or e-mail in it.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              default=_ENDPOINT.timeout, show_default=True,
              help="Seconds per request before it is retried.")
@click.option("--deadline", type=float, default=_ENDPOINT.deadline, show_default=True,
              help="Seconds one request may take in all, however slowly the endpoint sends.")
@click.option("--max-response-bytes", type=int, default=_ENDPOINT.max_response_bytes, show_default=True,
              help="Largest response read; a bigger one is refused and not cached.")
@click.option("--retries", type=click.IntRange(min=0),
              default=_ENDPOINT.retry.attempts - 1, show_default=True,
              help="Retries per request (429, 5xx, time-outs, bad bodies) before giving up.")
@click.option("--offline", is_flag=True, help="Replay cached responses only; never touch the network.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bars on stderr (default: when stderr is a terminal).")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Output format.")
def collect(seeds: list[str], radius: int, endpoint: str, store_path: str, max_neighbours: int, select: int,
            layer_budget: int, in_limit: int, batch_size: int, user_agent: str, timeout: float,
            deadline: float, max_response_bytes: int, retries: int, offline: bool, progress: bool | None,
            output_format: str) -> None:
    """Collect the Wikidata neighbourhoods of seeds over SPARQL into a store (batched,
    capped, cached; an interrupted run resumes when repeated)."""
    from rich.console import Console

    from chaingraph.collect import collect as collect_neighbourhoods
    from chaingraph.store import Store

    endpoint_settings = settings(EndpointSettings, url=endpoint, user_agent=user_agent, timeout=timeout,
                                 batch_size=batch_size, offline=offline, deadline=deadline,
                                 max_response_bytes=max_response_bytes,
                                 retry=settings(RetryPolicy, attempts=retries + 1))
    limits = settings(CrawlLimits, max_neighbours=max_neighbours, select=select, layer_budget=layer_budget,
                      in_limit=in_limit)
    with Store(store_path) as store, progress_bars(progress) as tell:
        report = collect_neighbourhoods(seeds, radius, store=store, endpoint=endpoint_settings, limits=limits,
                                        progress=tell)
    if output_format == "json":
        click.echo(report.model_dump_json(indent=2))
    else:
        Console(width=120).print(_table(report))
