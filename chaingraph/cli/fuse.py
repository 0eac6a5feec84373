"""``chaingraph fuse SPEC``: the twin of :func:`chaingraph.fusion.fuse_spec`.

Exit status: 0 for a result, 1 for a refusal (a normal outcome, printed like a result),
2 for bad input (the root group prints the one-line error with the JSON path).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import click

from chaingraph.fusion import FusionRefusal, FusionResult, fuse_spec, read_spec
from chaingraph.terminal import safe_text
from chaingraph.units import unit_table
from chaingraph.values import QuantityValue

__all__ = ["format_table", "fuse"]


def _unit_label(unit: str | None) -> str:
    if unit is None:
        return ""
    row = unit_table().get(unit)
    if row is None or row.qid == "Q199":
        return "" if unit in ("1", "Q199") else unit
    return f"{row.label} ({row.qid})"


def format_table(outcome: FusionResult | FusionRefusal) -> str:
    """A readable, plain-text account of a result or refusal (control characters in the
    data are shown as escapes, never sent to the terminal)."""
    head = f"fusion {outcome.operation}" + (f"  [{outcome.spec_id}]" if outcome.spec_id else "")
    lines = [head, "inputs:"]
    for i in outcome.inputs:
        who = " ".join(x for x in (i.entity, f"({i.label})" if i.label else None, i.property) if x)
        lines.append(f"  {i.component}: {who}".rstrip())
        lines.append(f"      value    {i.normalised}")
        lines.append(f"      chosen   {i.resolution}" + (f" [{i.statement_id}]" if i.statement_id else ""))
    if not outcome.inputs:
        lines.append("  (none normalised)")
    lines.append("steps:")
    lines.extend(f"  {n}. {s.action}: {s.detail}" for n, s in enumerate(outcome.steps, start=1))
    if outcome.checks:
        lines.append("checks:")
        lines.extend(f"  {'ok ' if c.passed else 'FAIL'} {c.name}: {c.detail}" for c in outcome.checks)
    if isinstance(outcome, FusionRefusal):
        who = f" (component {outcome.component})" if outcome.component else ""
        lines.append(f"refused: {outcome.reason}{who}: {outcome.message}")
    else:
        exact = f"  (exact {outcome.exact})" if outcome.exact and outcome.exact != outcome.result else ""
        sel = f"  (component {outcome.selected})" if outcome.selected and outcome.operation.startswith(
            "select_") else ""
        value = outcome.value
        bounded = isinstance(value, QuantityValue) and value.lower is not None
        bounds = f" [{value.lower}, {value.upper}]" if bounded else ""  # type: ignore[union-attr]
        lines.append(f"result: {outcome.result}{bounds} {_unit_label(outcome.unit)}".rstrip() + exact + sel)
    return "\n".join(safe_text(line) for line in lines)


@contextlib.contextmanager
def _maybe_store(path: str | None) -> Iterator[object]:
    if path is None:
        yield None
        return
    from chaingraph.store import Store

    with Store(path, read_only=True) as store:
        yield store


@click.command()
@click.argument("spec_file", metavar="SPEC", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="readable text, or the FusionResult / FusionRefusal record as JSON")
@click.option("--store", "store_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="DuckDB store for statement ids ({\"statement\": \"Q42$...\"}) in the spec")
@click.option("--as-of", "as_of", metavar="DATE", default=None,
              help="Only statements that hold on this date (ISO date, YYYY-MM or a year) are "
                   "candidates; overrides the spec's as_of.")
@click.pass_context
def fuse(ctx: click.Context, spec_file: str, fmt: str, store_path: str | None, as_of: str | None) -> None:
    """Fuse component values exactly as SPEC says (JSON; `chaingraph schema fusion-spec`).

    Prints the result with its normalised inputs, steps and checks, or the refusal and its
    reason. Exits 0 for a result, 1 for a refusal, 2 for a bad spec.
    """
    spec = read_spec(spec_file)
    if as_of is not None:
        from chaingraph.timeline import parse_as_of

        spec = spec.model_copy(update={"as_of": parse_as_of(as_of).text})
    with _maybe_store(store_path) as store:
        outcome = fuse_spec(spec, store=store)
    if fmt == "json":
        click.echo(json.dumps(outcome.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        click.echo(format_table(outcome))
    if isinstance(outcome, FusionRefusal):
        ctx.exit(1)
