"""``chaingraph crosswalk``: relation class, deciding rule and reason of properties and labels."""

from __future__ import annotations

from pathlib import Path

import click

from chaingraph.crosswalk import CrosswalkReport
from chaingraph.crosswalk import crosswalk as run_crosswalk
from chaingraph.terminal import safe_text


def _class_of(status: str, relation_class: str | None) -> str:
    return relation_class or status


def _text(report: CrosswalkReport) -> str:
    lines: list[str] = [f"crosswalk {report.version}"]
    if report.classifications:
        width = max(len("property"), *(len(c.property) for c in report.classifications))
        lines.append(f"{'property'.ljust(width)}  {'class':<17}  {'rule':<14}  reason")
        for c in report.classifications:
            lines.append(
                f"{c.property.ljust(width)}  {_class_of(c.status, c.relation_class):<17}  "
                f"{c.rule:<14}  {c.reason}"
            )
    if report.summary is not None:
        total = report.summary.total or 1
        lines.append(f"\n{report.summary.total} properties by class")
        for name, n in report.summary.by_class.items():
            lines.append(f"  {name:<17} {n:>7}  {100 * n / total:5.1f}%")
        lines.append("by rule")
        for name, n in report.summary.by_rule.items():
            lines.append(f"  {name:<17} {n:>7}  {100 * n / total:5.1f}%")
    if report.comparison is not None:
        cmp = report.comparison
        lines.append(
            f"\nagreement with the reference (§4.3): {cmp.agree}/{cmp.total} "
            f"({100 * cmp.agreement:.1f}%); differences:"
        )
        for d in cmp.differences:
            lines.append(
                f"  {d.property} {d.label}: reference {d.reference_class}, crosswalk "
                f"{_class_of(d.status, d.relation_class)} ({d.rule}): {d.reason}"
            )
    return "\n".join(lines)


def _tsv(report: CrosswalkReport) -> str:
    rows = ["property\tclass\tstatus\trule\treason\tversion"]
    rows += [
        f"{c.property}\t{c.relation_class or ''}\t{c.status}\t{c.rule}\t{c.reason}\t{c.version}"
        for c in report.classifications
    ]
    return "\n".join(rows)


@click.command()
@click.argument("ids", nargs=-1, metavar="[PID]...")
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="TEXT",
    help="A free-text relation label of another tool (part_of, PartWhole, purpose, ...). Repeatable.",
)
@click.option(
    "--properties",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Property list (merged TSV, .tsv or .tsv.gz) giving labels, datatypes and P31 classes; "
    "replaces the property facts shipped with chaingraph.",
)
@click.option(
    "--all",
    "all_",
    is_flag=True,
    help="Classify every property of --properties (default: the 13,271 shipped ones) and print the "
    "distribution over classes and rules.",
)
@click.option(
    "--compare-reference",
    is_flag=True,
    help="Print the agreement of the explicit table with §4.3 of the reference notes.",
)
@click.option(
    "--table",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Use this explicit table instead of the shipped data/crosswalk/table.tsv.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "tsv"]), default="table", show_default=True
)
def crosswalk(
    ids: tuple[str, ...],
    labels: tuple[str, ...],
    properties: Path | None,
    all_: bool,
    compare_reference: bool,
    table: Path | None,
    fmt: str,
) -> None:
    """Print the relation class, deciding rule and reason of property ids and relation labels.

    \b
    chaingraph crosswalk P131 P361
    chaingraph crosswalk P571 P1082 P2046
    chaingraph crosswalk --label part_of --label PartWhole
    chaingraph crosswalk --all --properties wikidata_properties_merged.tsv.gz
    """
    report = run_crosswalk(
        ids,
        labels=labels,
        properties=properties,
        all=all_,
        compare_reference_table=compare_reference,
        table=table,
    )
    if fmt == "json":
        click.echo(report.model_dump_json(indent=2))
    elif fmt == "tsv":
        click.echo(_tsv(report))
    else:
        click.echo(safe_text(_text(report), newlines=True))
