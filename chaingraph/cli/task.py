"""``chaingraph task --path Q…,[P…,]Q… --store PATH``: the CLI twin of
:func:`chaingraph.propose.propose_tasks` (clue proposal, DESIGN §6)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from chaingraph.errors import InvalidInput


@click.command()
@click.option("--path", "path", default=None, metavar="Q…,[P…,]Q…",
              help="The chain as node ids, optionally with the property of a step between its nodes "
                   "(the syntax of `expand --explain`).")
@click.option("--chain", "chain_file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Chain records from `chaingraph expand --format jsonl`: one task per record, JSON Lines.")
@click.option("--store", type=click.Path(dir_okay=False), required=True,
              help="DuckDB store whose statements the answer sets are computed over (all of them).")
@click.option("--hub-limit", type=click.IntRange(min=0), default=None,
              help="Compute answer sets under the hub rule (entities with more than N step edges are not "
                   "walked through). Default: no hub rule, every statement counts.")
@click.option("--embed-evidence", "embed", is_flag=True,
              help="Embed the evidence subgraph the verdicts rest on, so the task is self-contained.")
@click.option("--max-values", type=click.IntRange(min=0), default=8, show_default=True,
              help="Candidate value clues per node (one per property first, in property order).")
@click.option("--budget", type=click.IntRange(min=1), default=30, show_default=True,
              help="Pattern evaluations the last-resort search for a clue set with a necessary anchor "
                   "may spend.")
@click.option("--record", is_flag=True,
              help="Print the proposal record (candidates, removal order, anchor screen, H) with the task.")
def task(path: str | None, chain_file: str | None, store: str, hub_limit: int | None, embed: bool,
         max_values: int, budget: int, record: bool) -> None:
    """Propose a task (task.json) for a chain: a minimal clue set that keeps the target the
    unique answer and the anchor necessary.

    Exit 0 with the task(s) on stdout; exit 1 when no clue set makes the target unique (one
    line with the reason; with --chain such chains are listed on stderr, counted, and the
    others printed); exit 2 on bad input.
    """
    from chaingraph.propose import ChainPath, Proposal, propose_tasks
    from chaingraph.records import ChainRecord

    if (path is None) == (chain_file is None):
        raise InvalidInput("give exactly one of --path Q…,[P…,]Q… or --chain FILE")

    def shown(p: Proposal) -> str:
        body = p.model_dump(mode="json", by_alias=True, exclude_none=True) if record else \
            p.task.model_dump(mode="json", by_alias=True, exclude_none=True) if p.task else {}
        return json.dumps(body, ensure_ascii=False, indent=None if chain_file else 2)

    if path is not None:
        (one,) = propose_tasks([path.split(",")], store=store, hub_limit=hub_limit, embed=embed,
                               max_values=max_values, budget=budget)
        if one.task is None:
            click.echo(f"cannot: {one.cannot}", err=True)
            raise SystemExit(1)
        click.echo(shown(one))
        return
    assert chain_file is not None
    chains = []
    for n, line in enumerate(_lines(Path(chain_file)), start=1):
        try:
            chains.append(ChainPath.from_record(ChainRecord.model_validate_json(line)))
        except ValueError as exc:
            first = str(exc).splitlines()[:3]
            raise InvalidInput(f"{chain_file}: line {n} is not a chain record ({' '.join(first)}); write it "
                               "with `chaingraph expand --format jsonl`") from None
    proposals = propose_tasks(chains, store=store, hub_limit=hub_limit, embed=embed, max_values=max_values,
                              budget=budget)
    failed = 0
    for n, p in enumerate(proposals, start=1):
        if p.task is None:
            failed += 1
            click.echo(f"chain {n} ({' → '.join(p.record.chain.nodes)}): cannot: {p.cannot}", err=True)
        else:
            click.echo(shown(p))
    if failed:
        click.echo(f"{failed} of {len(proposals)} chain(s) cannot become a task (see above)", err=True)
        raise SystemExit(1)


def _lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"--chain {path}: cannot read the file ({exc.strerror or exc})") from None
    return [ln for ln in text.splitlines() if ln.strip()]
