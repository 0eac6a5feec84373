"""``chaingraph schema NAME``: print the JSON Schema of a published record type."""

from __future__ import annotations

import importlib
import json

import click

from chaingraph.errors import InvalidInput

#: schema name -> "module:Model"
SCHEMAS: dict[str, str] = {
    "chain": "chaingraph.records:ChainRecord",
    "task": "chaingraph.tasks:Task",
    "necessity-report": "chaingraph.necessity:NecessityReport",
    "fusion-spec": "chaingraph.fusion:FusionSpec",
    "fusion-result": "chaingraph.fusion:FusionResult",
    "fusion-refusal": "chaingraph.fusion:FusionRefusal",
    "audit-report": "chaingraph.audit:AuditReport",
    "collect-report": "chaingraph.collect:CollectReport",
    "crosswalk-classification": "chaingraph.crosswalk:Classification",
    "crosswalk-report": "chaingraph.crosswalk:CrosswalkReport",
    "load-report": "chaingraph.sources.loaders:LoadReport",
    "store-summary": "chaingraph.sources.loaders:StoreSummary",
    "trajectory": "chaingraph.trajectory:Trajectory",
    "score-report": "chaingraph.scoring:ScoreReport",
    "corpus-task": "chaingraph.build:CorpusTask",
}


def json_schema(name: str) -> dict[str, object]:
    """The JSON Schema of record type ``name`` (one of :data:`SCHEMAS`)."""
    target = SCHEMAS.get(name)
    if target is None:
        raise InvalidInput(f"unknown schema {name!r}; choose one of: {', '.join(sorted(SCHEMAS))}")
    module, _, attr = target.partition(":")
    model = getattr(importlib.import_module(module), attr)
    return model.model_json_schema()  # type: ignore[no-any-return]


@click.command()
@click.argument("name", type=click.Choice(sorted(SCHEMAS)))
def schema(name: str) -> None:
    """Print the JSON Schema of a record type (chain, task, fusion-spec, ...)."""
    click.echo(json.dumps(json_schema(name), indent=2, sort_keys=True))
