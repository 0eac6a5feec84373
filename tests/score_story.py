"""A tiny world for the §12 scoring tests (imported by tests/test_score*.py).

A widget (Q1) is made by Acme (Q2), headquartered in Springfield (Q3), in Freedonia (Q4):
the reference chain ``Q1 —P176→ Q2 —P159→ Q3 —P17→ Q4``. A gadget (Q20) is also made by
Acme: the second component ``Q20 —P176→ Q2``. Holdco (Q5) owns the widget and lies in
Freedonia, so ``Q1 —P127→ Q5 —P17→ Q4`` is an alternative route that keeps Freedonia the
one answer; Holdco is also *part of* both Freedonia and Sylvania (Q9), so a route over
``P361`` does not. Q10 is said to be the same as Acme (``P460``). The image is 100×100:
the widget logo at (10, 10, 30, 30), the gadget at (60, 60, 80, 80), and a decoy sticker
Q30 at (40, 0, 50, 10) that no component needs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from chaingraph.graph import EvidenceGraph, TraversalPolicy
from chaingraph.lookups import StoreValues
from chaingraph.scoring import TaskScorer
from chaingraph.scoring.scorer import Coverage
from chaingraph.store import Batch, Store, entity_row, property_row, reference_row, statement_row
from chaingraph.tasks import Task
from chaingraph.values import EntityValue, StringValue

EDGES = [("s1", "Q1", "P176", "Q2"), ("s2", "Q2", "P159", "Q3"), ("s3", "Q3", "P17", "Q4"),
         ("s4", "Q1", "P127", "Q5"), ("s5", "Q5", "P17", "Q4"), ("s6", "Q5", "P361", "Q4"),
         ("s7", "Q5", "P361", "Q9"), ("s8", "Q10", "P460", "Q2"), ("s9", "Q20", "P176", "Q2"),
         ("s10", "Q4", "P31", "Q6256"), ("s11", "Q9", "P31", "Q6256"), ("s12", "Q3", "P31", "Q515")]
REFERENCE_URLS = {"s1": "https://example.org/widget", "s3": "https://example.org/springfield",
                  "s5": "https://example.org/holdco", "s9": "https://example.org/gadget"}
LABELS = {"Q1": "Widget", "Q2": "Acme", "Q3": "Springfield", "Q4": "Freedonia", "Q5": "Holdco",
          "Q9": "Sylvania", "Q10": "Acme Corporation", "Q20": "Gadget", "Q30": "Sticker",
          "Q40": "Springfield Township", "Q6256": "country", "Q515": "city"}
ALIASES = {"Q40": ["Springfield"], "Q2": ["Acme Inc."]}
PROPERTIES = {"P176": "manufacturer", "P159": "headquarters location", "P17": "country",
              "P127": "owned by", "P361": "part of", "P460": "said to be the same as",
              "P131": "located in the administrative territorial entity", "P31": "instance of"}
IMAGE = (100, 100)
WIDGET, GADGET, STICKER = (10, 10, 30, 30), (60, 60, 80, 80), (40, 0, 50, 10)

TASK: dict[str, Any] = {
    "id": "story/widget-country",
    "anchors": [{"entity": "Q1", "region": list(WIDGET)}, {"entity": "Q20", "region": list(GADGET)},
                {"entity": "Q30", "region": list(STICKER)}],
    "target": {"entity": "Q4"},
    "components": [
        {"anchor": "Q1", "target": {"entity": "Q4"}, "steps": [
            {"property": "P176", "source": "Q1", "target": "Q2"},
            {"property": "P159", "source": "Q2", "target": "Q3"},
            {"property": "P17", "source": "Q3", "target": "Q4"}]},
        {"anchor": "Q20", "target": {"entity": "Q2"}, "steps": [{"property": "P176"}]}],
    "clues": [{"kind": "anchor"}, {"kind": "relation", "step": 1}, {"kind": "relation", "step": 2},
              {"kind": "relation", "step": 3}, {"kind": "type", "variable": 3, "class": "Q6256"},
              {"kind": "anchor", "component": 1}, {"kind": "relation", "step": 1, "component": 1}],
    "policy": {"hub_limit": None},
}


def build_store(path: str | None = None) -> Store:
    store = Store(path)
    batch = Batch()
    batch.entities = [entity_row(q, label, aliases=ALIASES.get(q), label_lang="en")
                      for q, label in LABELS.items()]
    batch.properties = [property_row(p, label, datatype="wikibase-item", label_lang="en")
                        for p, label in PROPERTIES.items()]
    batch.statements = [statement_row(sid, s, p, EntityValue(id=o)) for sid, s, p, o in EDGES]
    batch.reference_snaks = [reference_row(sid, f"r-{sid}", "P854", StringValue(text=url))
                             for sid, url in REFERENCE_URLS.items()]
    store.write(batch)
    return store


def task() -> Task:
    return Task.model_validate(TASK)


def scorer(store: Store, **kwargs: Any) -> TaskScorer:
    graph = EvidenceGraph.from_store(store, policy=TraversalPolicy(hub_limit=None))
    return TaskScorer(task(), graph, StoreValues(store), store, **kwargs)


def claim(subject: str, relation: str, obj: str, **kw: Any) -> dict[str, Any]:
    return {"kind": "claim", "subject": subject, "relation": relation, "object": obj, **kw}


def view(box: tuple[float, float, float, float]) -> dict[str, Any]:
    return {"kind": "view", "box": list(box)}


def trajectory(*events: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {"task": TASK["id"], "image_size": list(IMAGE), "events": list(events), **kw}


def coverage_fields(cov: Coverage) -> dict[str, Any]:
    """Every field of a coverage, in comparable form (what the scorers are checked equal on)."""
    return {"claims": list(cov.claims), "asserted": dict(cov.asserted), "named": set(cov.named),
            "node": dict(cov.node), "aliases": list(cov.aliases), "claimed": set(cov.claimed),
            "routes": list(cov.routes), "verdicts": list(cov.verdicts), "v_req": cov.v_req,
            "e_req": cov.e_req, "nc": cov.nc, "rc": cov.rc}


@contextmanager
def general_path(sc: TaskScorer) -> Iterator[None]:
    """Force ``sc``'s :func:`~chaingraph.scoring.scorer.coverage` onto the general path (the
    oracle of the claim index): both of its readers through the index say "a claim of a
    value", and on leaving, ``sc`` must hold no index entry (else the index was read)."""
    with mock.patch("chaingraph.scoring.scorer.read", lambda *_: None), \
            mock.patch("chaingraph.scoring.scorer.read_bits", lambda *_: None):
        yield
    assert not sc._index, "the general path read the claim index"
