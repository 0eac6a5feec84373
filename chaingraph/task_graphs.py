"""The evidence graph a task is checked on, under the policy it asks for (DESIGN §6).

:func:`policy_for` reads a task's ``policy``: answer sets use every statement unless the
task names a ``hub_limit`` (or the caller overrides it), and literal nodes are on when a
target is a value. :class:`GraphCache` builds one graph per (store, policy) or per
(embedded evidence, policy) and shares it between tasks; :func:`embedded_values` is the
value lookup of a task's embedded evidence.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from chaingraph.errors import InvalidInput, InvalidTask
from chaingraph.graph import EvidenceGraph
from chaingraph.lookups import EmbeddedValues, StoreValues, ValueLookup
from chaingraph.settings import TraversalPolicy
from chaingraph.store import Store
from chaingraph.tasks import Task
from chaingraph.timeline import Timeline
from chaingraph.values import EntityValue

__all__ = ["TASK_POLICY", "GraphCache", "HubLimit", "embedded_values", "policy_for"]


#: ``hub_limit`` argument meaning "the task's own policy" (by default: no hub limit)
TASK_POLICY: Literal["task"] = "task"
HubLimit = int | None | Literal["task"]


def policy_for(task: Task, hub_limit: HubLimit = TASK_POLICY, as_of: str | None = None) -> TraversalPolicy:
    """The traversal policy answer sets are computed under: the task's ``policy``, where the
    hub rule applies only when the task names a ``hub_limit`` (by default every statement
    counts, DESIGN §6) or ``hub_limit`` here overrides it (``None``: no hub rule); unless
    the task says otherwise, literal nodes are on exactly when some component's target is
    a value. ``as_of`` overrides the policy's date."""
    policy = task.policy
    update: dict[str, Any] = {} if as_of is None else {"as_of": as_of}
    if "include_literals" not in policy.model_fields_set:
        update["include_literals"] = any(c.target.value is not None for c in task.components)
    if hub_limit != TASK_POLICY:
        if hub_limit is not None and (isinstance(hub_limit, bool) or not isinstance(hub_limit, int)
                                      or hub_limit < 0):
            raise InvalidInput(f"hub_limit: must be a non-negative integer or None, got {hub_limit!r}"
                               ).about("hub_limit")
        update["hub_limit"] = hub_limit
    elif "hub_limit" not in policy.model_fields_set:
        update["hub_limit"] = None
    return policy.model_copy(update=update) if update else policy


@dataclass
class GraphCache:
    """Evidence graphs shared by many tasks: one per (store path, policy) or per (embedded
    evidence, policy). ``store`` overrides every task's own store, ``hub_limit`` every
    task's policy (see :func:`policy_for`). Close when done."""

    store: str | Path | None = None
    hub_limit: HubLimit = TASK_POLICY
    as_of: str | None = None
    _timelines: dict[str, Timeline] = field(default_factory=dict)
    _graphs: dict[tuple[Any, ...], tuple[EvidenceGraph, ValueLookup | None]] = field(default_factory=dict)
    _stores: dict[str, Store] = field(default_factory=dict)

    def get(self, task: Task, *, base: Path | None = None,
            file: str = "") -> tuple[EvidenceGraph, ValueLookup | None]:
        policy = policy_for(task, self.hub_limit, self.as_of)
        where = self.store if self.store is not None else task.store
        if where is None and task.evidence is None:
            raise InvalidTask("the task has neither 'evidence' nor 'store'; embed its evidence subgraph "
                              "or pass `store`", path="evidence", file=file)
        if where is not None and (self.store is not None or task.evidence is None):
            path = Path(where)
            if not path.is_absolute() and base is not None and self.store is None:
                path = base / path
            key: tuple[Any, ...] = ("store", str(path.resolve()), policy)
            if key not in self._graphs:
                if not path.is_file():
                    raise InvalidTask(f"store {path} does not exist; check the path", path="store", file=file)
                store = self._stores.get(str(path.resolve()))
                if store is None:
                    store = self._stores[str(path.resolve())] = Store(path, read_only=True)
                graph = EvidenceGraph.from_store(store, policy=policy)
                timeline = self._timelines.get(str(path.resolve())) or graph.timeline
                timeline = self._timelines[str(path.resolve())] = timeline or Timeline.from_store(store)
                graph.timeline = timeline  # for time sensitivity, with or without a date
                self._graphs[key] = (graph, StoreValues(store, exclude=graph.time_excluded))
            return self._graphs[key]
        ev = task.evidence
        assert ev is not None
        digest = hashlib.sha1(ev.model_dump_json().encode()).hexdigest()
        key = ("evidence", digest, policy)
        if key not in self._graphs:
            edges = [*ev.edges, *((f"{e}$P31${c}", e, "P31", c) for e, cs in ev.classes.items() for c in cs)]
            lits = [(s.statement_id, s.subject, s.property, s.value) for s in ev.literals]
            graph = EvidenceGraph.from_edges(edges, policy=policy, labels=dict(ev.labels),
                                             literals=[(sid, s, p) for sid, s, p, _v in lits])
            self._graphs[key] = (graph, embedded_values(task))
        return self._graphs[key]

    def close(self) -> None:
        for store in self._stores.values():
            store.close()
        self._stores.clear()


def embedded_values(task: Task) -> EmbeddedValues:
    """The statement values of a task's embedded evidence (literals and item edges)."""
    ev = task.evidence
    if ev is None:
        return EmbeddedValues()
    return EmbeddedValues([*((s.statement_id, s.subject, s.property, s.value) for s in ev.literals),
                           *((sid, s, p, EntityValue(id=o)) for sid, s, p, o in ev.edges)])
