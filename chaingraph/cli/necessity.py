"""``chaingraph necessity task.json [more.json ...]``: the CLI twin of
:func:`chaingraph.necessity.check_necessity_files`."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from chaingraph.errors import InvalidInput, InvalidTask
from chaingraph.terminal import safe_markup, safe_text

if TYPE_CHECKING:  # the necessity engine (igraph, DuckDB) is imported when the command runs
    from rich.console import Console

    from chaingraph.necessity import HubLimit, NecessityReport

_STYLE = {"redundant": "yellow", "necessary": "green", "review": "magenta"}


def _solver(original: bool | None, without: bool | None) -> str:
    if original is None:
        return "-"
    return f"{'ok' if original else 'fail'}/{'-' if without is None else 'ok' if without else 'fail'}"


def render(report: NecessityReport, console: Console) -> None:
    """Print one report as readable tables."""
    from rich.table import Table

    title = f"task {report.task}" + (f"  ({report.file})" if report.file else "")
    console.print(f"[bold]{safe_markup(title)}[/bold]")
    if report.text_only_shortcut:
        console.print("[bold red]!! TEXT-ONLY SHORTCUT: the target stays the unique answer without the "
                      "anchor — the image is not needed[/bold red]")
    for f in report.component_ablations:
        if f.determined_without:
            console.print(f"[bold yellow]!! COMPONENT NOT NEEDED: {safe_markup(f.component)} "
                          f"({safe_markup(f.reason)})[/bold yellow]")
    table = Table(show_lines=False, header_style="bold")
    for col in ("clue", "kind", "component", "text", "answers", "target", "paths", "solver",
                "verdict", "reason"):
        table.add_column(col, overflow="fold")
    for a in report.clues:
        ans = a.answers
        first = safe_markup(", ".join(ans.first[:3]) + (" …" if ans.count > 3 else ""))
        row_style = "bold red" if a.text_only_shortcut else None
        kind = safe_markup(a.kind) + (" (shortcut!)" if a.text_only_shortcut else "")
        table.add_row(safe_markup(a.clue), kind, safe_markup(a.component), safe_markup(a.text),
                      f"{ans.count}: {first}" if ans.count else "0",
                      "yes" if ans.target_in else "no", str(ans.paths_to_target),
                      _solver(a.solver_original, a.solver_without),
                      f"[{_STYLE[a.verdict]}]{a.verdict}[/]", safe_markup(a.reason), style=row_style)
    console.print(table)
    comps = Table(header_style="bold")
    for col in ("component", "anchor → target", "k", "all clues", "tried in order", "removed",
                "minimal set", "path after pruning", "H"):
        comps.add_column(col, overflow="fold")
    for c in report.components:
        path = c.pruned.shortest_path
        shown = " → ".join(path.nodes) if path else "-"
        kept = ", ".join(c.kept)
        if c.minimum is not None:
            kept += f"; minimum{'' if c.minimum_proven else ' (not proven)'}: {', '.join(c.minimum)}"
        comps.add_row(safe_markup(c.id), safe_markup(f"{c.anchor} → {c.target}"), str(c.k),
                      f"{c.full.count} answer(s), {'unique' if c.full.unique else 'NOT unique'}",
                      safe_markup(", ".join(c.order) or "-"), safe_markup(", ".join(c.removed) or "none"),
                      safe_markup(f"{kept} ({c.pruned.count} answer(s))"), safe_markup(shown),
                      "-" if c.evidence_steps is None else str(c.evidence_steps))
    console.print(comps)
    if report.component_ablations:
        fused = Table(header_style="bold")
        for col in ("without component", "operation", "still determined", "verdict", "reason"):
            fused.add_column(col, overflow="fold")
        for f in report.component_ablations:
            fused.add_row(safe_markup(f.component), safe_markup(f.operation),
                          "yes" if f.determined_without else "no",
                          f"[{_STYLE[f.verdict]}]{f.verdict}[/]", safe_markup(f.reason))
        console.print(fused)
    for note in report.notes:
        console.print(f"note: {safe_markup(note)}")
    h = ("no match: no H" if report.evidence_steps is None
         else f"H = {report.evidence_steps} → {report.difficulty}")
    limit = report.policy.get("hub_limit")
    console.print(f"redundant: {safe_markup(', '.join(report.redundant) or 'none')}; review: "
                  f"{safe_markup(', '.join(report.review) or 'none')}; pruned pattern unique: "
                  f"{'yes' if report.pruned_unique else 'NO'}; {h}; policy: "
                  f"{'no hub limit' if limit is None else f'hub limit {limit}'}; time: "
                  f"{report.time_sensitivity or '-'}{f' (as of {report.as_of})' if report.as_of else ''}\n")


def _hub_limit(text: str | None) -> HubLimit:
    if text is None:
        return "task"
    if text.strip().lower() == "none":
        return None
    if not text.strip().isdigit():
        raise InvalidInput(f"--hub-limit {text!r}: give a non-negative integer or 'none'")
    return int(text)


@click.command()
@click.argument("tasks", nargs=-1, required=True, metavar="TASK.json...")
@click.option("--store", type=click.Path(dir_okay=False), default=None,
              help="DuckDB evidence store to read instead of each task's own evidence/store.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table for people, json for programs (one report, or a list for several files).")
@click.option("--hub-limit", "hub_limit", default=None, metavar="N|none",
              help="Compute answer sets under the chain engine's hub rule: entities with more than N step "
                   "edges are not walked through ('none': no hub rule). Default: each task's own policy, "
                   "which by default uses every statement.")
@click.option("--minimum", is_flag=True,
              help="Also search an exact minimum-size clue set per component (bounded by "
                   "--minimum-budget pattern evaluations; the report says whether it is proven).")
@click.option("--minimum-budget", type=click.IntRange(min=1), default=2000, show_default=True,
              help="Pattern evaluations the --minimum search may spend per component.")
@click.option("--strict", is_flag=True,
              help="Exit 1 if any clue is redundant or needs review, or a fused component is not "
                   "needed.")
@click.option("--as-of", "as_of", metavar="DATE", default=None,
              help="Only statements valid on this date (ISO date, YYYY-MM or a year) are evidence; "
                   "overrides each task's own policy.as_of.")
def necessity(tasks: tuple[str, ...], store: str | None, fmt: str, hub_limit: str | None, minimum: bool,
              minimum_budget: int, strict: bool, as_of: str | None) -> None:
    """Decide which clues of each task are necessary, by clue ablation on the evidence graph.

    Exit 0 when every task was checked; 1 with --strict when a clue is redundant or needs
    review or a fused component is not needed; 2 when a task file is bad (each bad file is
    named on stderr, the others are still checked).
    """
    from rich.console import Console

    from chaingraph.necessity import check_necessity_files

    err = Console(stderr=True)
    show = sys.stderr.isatty() and len(tasks) > 1
    result = check_necessity_files(
        tasks, store=store,
        on_task=(lambda f: err.print(f"[dim]checking {safe_markup(f)}[/dim]")) if show else None,
        hub_limit=_hub_limit(hub_limit), minimum=minimum, minimum_budget=minimum_budget, as_of=as_of)
    if fmt == "json":
        reports = [r.model_dump(mode="json") for r in result.reports]
        click.echo(json.dumps(reports[0] if len(tasks) == 1 and reports else reports, indent=2))
    else:
        console = Console(width=max(Console().width, 160), highlight=False, soft_wrap=False)
        for report in result.reports:
            render(report, console)
    for failure in result.failures if len(tasks) > 1 else ():
        click.echo(f"error: {safe_text(failure.error)}", err=True)
    if len(tasks) == 1 and result.failures:
        raise InvalidTask(result.failures[0].error)
    if result.failures:
        raise InvalidTask(f"{len(result.failures)} of {len(tasks)} task file(s) could not be checked "
                          "(see the errors above)")
    if strict and not all(r.clean for r in result.reports):
        raise SystemExit(1)
