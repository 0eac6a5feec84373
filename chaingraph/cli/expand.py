"""``chaingraph expand``: the twin of :func:`chaingraph.expand.expand` (and ``--explain``
of :func:`chaingraph.expand.explain_path`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from chaingraph.cli.progress import progress_bars
from chaingraph.errors import InvalidInput
from chaingraph.ids import pid
from chaingraph.settings import ChainBounds, CrawlLimits, EndpointSettings, TraversalPolicy, settings
from chaingraph.terminal import safe_markup, safe_text

if TYPE_CHECKING:
    from chaingraph.records import ChainRecord

__all__ = ["chain_text", "expand"]

#: the settings defaults, shown in --help (their one home is chaingraph.settings)
_BOUNDS, _LIMITS, _POLICY, _ENDPOINT = ChainBounds(), CrawlLimits(), TraversalPolicy(), EndpointSettings()


def _endpoint(url: str | None, **options: object) -> EndpointSettings | None:
    given = {name: value for name, value in options.items() if value is not None}
    if url is None:
        if given:
            name = sorted(given)[0]
            raise InvalidInput(f"{name}: applies only to a SPARQL endpoint; give --endpoint too").about(name)
        return None
    return settings(EndpointSettings, url=url, **given)


def _node_text(record: ChainRecord, i: int) -> str:
    node = record.nodes[i]
    if node.literal and node.value is not None:
        return str(node.value.model_dump(exclude_none=True).get("text") or
                   node.value.model_dump(exclude_none=True))
    return f"{node.label} ({node.id})" if node.label else node.id


def chain_text(record: ChainRecord) -> str:
    """``A (Q1) —P19→ B (Q2) ←P50— C (Q3)``: arrows in Wikidata's direction."""
    parts = [_node_text(record, 0)]
    for i, step in enumerate(record.steps, start=1):
        label = step.property_label or step.property
        arrow = f" —{label}→ " if step.direction == "forward" else f" ←{label}— "
        parts += [arrow, _node_text(record, i)]
    return "".join(parts)


def _table(records: tuple[ChainRecord, ...]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="evidence chains (best s_div first per seed)", show_lines=True)
    table.add_column("seed", no_wrap=True)
    for col in ("#", "k", "s_div"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("types / relations", max_width=24)
    table.add_column("chain", ratio=1)
    rank = 0
    previous = None
    for r in records:
        rank = rank + 1 if r.seed == previous else 1
        previous = r.seed
        table.add_row(safe_markup(r.seed), str(rank), str(r.k), f"{r.s_div:.3f}",
                      f"{safe_markup(', '.join(r.types))}\n{safe_markup(', '.join(r.relation_classes))}\n"
                      f"time: {r.time_sensitivity or '-'}{f' (as of {r.as_of})' if r.as_of else ''}",
                      safe_markup(chain_text(r)))
    Console().print(table)


@click.command()
@click.option("--seed", "seeds", multiple=True, metavar="QID", help="Seed entity (repeatable), e.g. Q42.")
@click.option("--endpoint", metavar="URL", help="Collect from this SPARQL endpoint.")
@click.option("--store", "store", metavar="PATH", type=click.Path(dir_okay=False),
              help="Collect from this existing store (read only, no network). "
                   "Default source: the bundled sample.")
@click.option("--min-hops", default=_BOUNDS.min_hops, show_default=True, type=int)
@click.option("--max-hops", default=_BOUNDS.max_hops, show_default=True, type=int)
@click.option("--max-neighbours", default=_LIMITS.max_neighbours, show_default=True, type=int,
              help="Neighbours kept per entity while collecting.")
@click.option("--select", default=_LIMITS.select, show_default=True, type=int,
              help="Neighbours the selector expands further per entity.")
@click.option("--layer-budget", type=int, default=_LIMITS.layer_budget, show_default=True,
              help="Entities expanded per BFS layer (0: no budget).")
@click.option("--in-limit", default=_LIMITS.in_limit, show_default=True, type=int,
              help="In-edges kept per entity while collecting.")
@click.option("--user-agent", default=None, help="User-Agent sent to the SPARQL endpoint.")
@click.option("--timeout", type=float, default=None,
              help=f"Seconds to wait for the endpoint's data before retrying "
                   f"[default: {_ENDPOINT.timeout:g}].")
@click.option("--deadline", type=float, default=None,
              help=f"Seconds one request may take in all, however slowly the endpoint sends "
                   f"[default: {_ENDPOINT.deadline:g}].")
@click.option("--max-response-bytes", type=int, default=None,
              help=f"Largest endpoint response read [default: {_ENDPOINT.max_response_bytes}].")
@click.option("--top", default=_BOUNDS.top, show_default=True, type=int,
              help="Chains kept per seed, best s_div first.")
@click.option("--hub-limit", default=_POLICY.hub_limit, show_default=True, type=int,
              help="Entities with more step edges are not walked through (0: no limit).")
@click.option("--include-literals/--no-include-literals", default=False, show_default=True,
              help="Literal values (dates, quantities, ...) as terminal chain nodes.")
@click.option("--exclude-property", "excluded", multiple=True, metavar="PID",
              help="Never use this property as a step (repeatable).")
@click.option("--property", "allowed", multiple=True, metavar="PID",
              help="Use only these properties as steps (repeatable).")
@click.option("--collect/--no-collect", default=True, show_default=True,
              help="--no-collect: take the whole source store as the neighbourhood (no caps).")
@click.option("--format", "fmt", type=click.Choice(["table", "jsonl"]), default=None,
              help="Output format (default: table on a terminal, jsonl otherwise).")
@click.option("--explain", "explain", metavar="Q…,[P…,]Q…,…", multiple=True,
              help="Say why this path is or is not a valid chain (its first node is the seed); "
                   "repeatable, each path is explained in turn.")
@click.option("--as-of", "as_of", metavar="DATE", default=None,
              help="Only statements valid on this date (ISO date, YYYY-MM or a year) are edges.")
@click.option("--stable-only", is_flag=True, default=False,
              help="Keep only chains whose every step is time-stable (no end, no successor, "
                   "no changing property).")
@click.option("--progress/--no-progress", default=None, help="Progress on stderr (default: on a terminal).")
def expand(seeds: tuple[str, ...], endpoint: str | None, store: str | None, min_hops: int, max_hops: int,
           max_neighbours: int, select: int, layer_budget: int | None, in_limit: int,
           user_agent: str | None, timeout: float | None, deadline: float | None,
           max_response_bytes: int | None, top: int, hub_limit: int,
           include_literals: bool, excluded: tuple[str, ...], allowed: tuple[str, ...], collect: bool,
           fmt: str | None, explain: tuple[str, ...], as_of: str | None, stable_only: bool,
           progress: bool | None) -> None:
    """Collect around seeds and print their best evidence chains (DESIGN §3, §4).

    Chains have MIN-HOPS..MAX-HOPS hops, repeat no node and cannot be short-cut in the
    collected evidence graph; they are ranked by entity-type and relation diversity.

    \b
    chaingraph expand --seed Q42
    chaingraph expand --seed Q42 --top 5 --format jsonl
    chaingraph expand --explain Q42,Q350,Q178517,Q1327329,Q352766,Q264137
    chaingraph expand --seed Q42 --as-of 2001-05-11 --stable-only
    """
    import pyarrow as pa

    from chaingraph.expand import expand as run_expand
    from chaingraph.expand import explain_path

    # Arrow's default allocator (mimalloc) keeps what the graph build frees; this process
    # builds one graph, so the C library's allocator, which gives it back, keeps its peak
    # lower (CoDEx-M: ~10 MB of a ~250 MB peak) at no measurable cost in time
    pa.set_memory_pool(pa.system_memory_pool())

    policy = settings(TraversalPolicy, hub_limit=hub_limit or None, include_literals=include_literals,
                      excluded_properties=frozenset(pid(p, field="--exclude-property") for p in excluded),
                      properties=frozenset(pid(p, field="--property") for p in allowed) if allowed else None,
                      as_of=as_of)
    limits = settings(CrawlLimits, max_neighbours=max_neighbours, select=select,
                      layer_budget=layer_budget or None, in_limit=in_limit) if collect else None
    bounds = settings(ChainBounds, min_hops=min_hops, max_hops=max_hops, top=top)
    settings_ = _endpoint(endpoint, user_agent=user_agent, timeout=timeout, deadline=deadline,
                          max_response_bytes=max_response_bytes)
    if explain:
        for path in explain:
            with progress_bars(progress) as tell:
                result = explain_path(path.split(","), store=store, endpoint=settings_, bounds=bounds,
                                      limits=limits, policy=policy, collect=collect, progress=tell)
            click.echo(safe_text(result.describe(), newlines=True))
            for v in result.violations:
                if v.shorter_path:
                    click.echo(f"  shorter path: {safe_text(' '.join(v.shorter_path))}")
        return
    if not seeds:
        raise InvalidInput("give at least one --seed (a Q-id such as Q42), or --explain PATH")
    with progress_bars(progress) as tell:
        out = run_expand(list(seeds), store=store, endpoint=settings_, bounds=bounds, limits=limits,
                         policy=policy, collect=collect, progress=tell, stable_only=stable_only)
    fmt = fmt or ("table" if sys.stdout.isatty() else "jsonl")
    if fmt == "jsonl":
        for record in out.records:
            click.echo(record.model_dump_json())
    else:
        _table(out.records)
    for s in out.seeds:
        click.echo(f"{safe_text(s.seed)}: {s.chains} chain(s), best s_div "
                   f"{'-' if s.best_s_div is None else f'{s.best_s_div:.3f}'} ({s.seconds:.2f} s; graph "
                   f"{out.graph_vertices} nodes, {out.graph_edges} edges)", err=True)
