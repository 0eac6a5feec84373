"""Chain records: immutable values that never point back into the store (DESIGN §4).

A record is everything a pipeline needs to trust a chain without the graph: the nodes
with their types and familiarity, each step with its property, relation class,
direction, statement id, qualifiers, references and provenance, the diversity score,
the crosswalk version and the parameters that produced it.

>>> rec = ChainRecord(seed="Q1", nodes=[ChainNode(id="Q1"), ChainNode(id="Q2")],
...     steps=[ChainStep(property="P361", direction="forward", statement_id="Q1$a",
...                      source="Q1", target="Q2", relation_class="part-whole")],
...     k=1, s_div=0.5, crosswalk_version="test")
>>> rec.target, rec.model_dump()["steps"][0]["direction"]
('Q2', 'forward')
>>> "properties" in ChainRecord.model_json_schema()
True
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chaingraph.settings import ChainBounds, CrawlLimits, TraversalPolicy
from chaingraph.timeline import Sensitivity, TimeWindow
from chaingraph.values import Value

__all__ = [
    "CHAIN_SCHEMA_VERSION",
    "ChainNode",
    "ChainParameters",
    "ChainRecord",
    "ChainStep",
    "Level",
    "MergeNote",
    "Provenance",
    "ReferenceSnak",
    "Snak",
    "difficulty_level",
]

CHAIN_SCHEMA_VERSION = "chaingraph.chain/2"
#: the entity-type inventory T (DESIGN §4) in tie-break priority order (Value is for literals),
#: and the weights of s_div; ranking uses these
TYPES = ("Person", "Organization", "Location", "Event", "Product", "Work", "Symbol", "Concept", "Value")
ALPHA, BETA = 0.6, 0.4
_FLAT_BOUNDS = frozenset({"min_hops", "max_hops", "top"})
_FLAT_LIMITS = frozenset({"max_neighbours", "select", "layer_budget", "in_limit"})
_FROZEN = ConfigDict(frozen=True, extra="forbid")

Direction = Literal["forward", "backward"]
Level = Literal["L1", "L2", "L3"]


def difficulty_level(evidence_steps: int) -> Level:
    """Difficulty by evidence steps H (DESIGN §6, §8): ``L1`` H < 5, ``L2`` 5 ≤ H < 10, ``L3`` H ≥ 10.

    >>> difficulty_level(4), difficulty_level(5), difficulty_level(9), difficulty_level(10)
    ('L1', 'L2', 'L2', 'L3')
    """
    return "L1" if evidence_steps < 5 else "L2" if evidence_steps < 10 else "L3"


class Snak(BaseModel):
    """A qualifier (or any property/value pair)."""

    model_config = _FROZEN
    property: str
    snaktype: Literal["value", "somevalue", "novalue"] = "value"
    value: Value | None = Field(default=None, discriminator="kind")


class ReferenceSnak(Snak):
    reference_hash: str


class Provenance(BaseModel):
    """Where a statement came from."""

    model_config = _FROZEN
    kind: str
    location: str
    query_file: str | None = None
    query_hash: str | None = None
    retrieved_at: str | None = None
    dump_date: str | None = None
    revision: str | None = None


class ChainNode(BaseModel):
    model_config = _FROZEN
    id: str
    label: str | None = None
    type: str | None = None
    classes: tuple[str, ...] = ()
    familiarity: int | None = None
    literal: bool = False
    value: Value | None = Field(default=None, discriminator="kind")


class ChainStep(BaseModel):
    """One hop. ``direction`` is ``forward`` when the walk follows subject→object."""

    model_config = _FROZEN
    property: str
    property_label: str | None = None
    relation_class: str | None = None
    relation_rule: str | None = None
    direction: Direction
    statement_id: str
    source: str
    target: str
    qualifiers: tuple[Snak, ...] = ()
    references: tuple[ReferenceSnak, ...] = ()
    provenance: tuple[Provenance, ...] = ()
    verified: bool = True
    confidence: float = 1.0
    window: TimeWindow | None = Field(default=None, description=(
        "when the statement holds (from its P580/P582/P585 qualifiers; DESIGN §11)"))
    time_sensitivity: Sensitivity | None = Field(default=None, description=(
        "ended, superseded, changing_property or stable (chaingraph.timeline)"))


class MergeNote(BaseModel):
    """What an alias merge contracted, and why."""

    model_config = _FROZEN
    kept: str
    dropped: str
    reason: str


class ChainParameters(BaseModel):
    """Everything that produced the chain, so it can be reproduced: the chain ``bounds``,
    the crawl ``limits`` (``None`` when the whole source store was the neighbourhood), the
    traversal ``policy``, the ``source``, the type table and its inventory (with α and β,
    ``s_div`` is recomputable from the record alone), the verifier and selector plug-ins
    and the collect run. Undeclared keys are refused; a ``chaingraph.chain/1`` record's flat
    parameters (``min_hops``, ``max_neighbours``, ...) are read into this shape.

    >>> ChainParameters.model_validate({"min_hops": 6, "max_neighbours": 3}).bounds.min_hops
    6
    """

    model_config = _FROZEN
    bounds: ChainBounds = ChainBounds()
    limits: CrawlLimits | None = None
    policy: TraversalPolicy = TraversalPolicy()
    source: str | None = None
    type_table: str | None = None
    type_inventory: tuple[str, ...] = TYPES
    verifier: str | None = None
    selector: str | None = None
    collect_run: str | None = None
    stable_only: bool = False
    alpha: float = ALPHA
    beta: float = BETA

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: Any) -> Any:
        """Read version-1 records, whose parameters were one flat mapping."""
        if not isinstance(data, dict) or not (_FLAT_BOUNDS | _FLAT_LIMITS) & data.keys():
            return data
        data = dict(data)
        bounds = {k: data.pop(k) for k in _FLAT_BOUNDS if k in data}
        limits = {k: v for k in _FLAT_LIMITS if (v := data.pop(k, None)) is not None}
        data.setdefault("bounds", bounds)
        if limits:
            data.setdefault("limits", limits)
        return data


class ChainRecord(BaseModel):
    model_config = _FROZEN
    schema_version: str = CHAIN_SCHEMA_VERSION
    seed: str
    nodes: tuple[ChainNode, ...]
    steps: tuple[ChainStep, ...]
    k: int
    s_div: float
    types: tuple[str, ...] = ()
    relation_classes: tuple[str, ...] = ()
    verification_confidence: float = 1.0
    crosswalk_version: str
    parameters: ChainParameters = Field(default_factory=ChainParameters)
    merged: tuple[MergeNote, ...] = ()
    as_of: str | None = Field(default=None, description="the date the chain's statements hold on, if any")
    time_sensitivity: Sensitivity | None = Field(default=None, description=(
        "stable only when every step is; else the first of ended, superseded, changing_property"))
    shortcut_scope: Literal["neighbourhood", "source", "endpoint"] | None = Field(
        default=None, description="where the no-shortcut rule was checked: the collected (capped) "
        "neighbourhood, the whole source store (`build --store` certifies this), or the whole "
        "SPARQL endpoint (`build --endpoint`, by a bidirectional bounded search)")

    @property
    def target(self) -> str:
        return self.nodes[-1].id
