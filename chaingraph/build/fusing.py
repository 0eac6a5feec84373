"""Fused tasks: pairs of kept tasks whose targets carry comparable values (DESIGN §7, §10).

**Pairing rule** (deterministic, in corpus order). Each kept task is the first component
of at most one fused task. For task *a* (not yet paired) the later tasks *b* (not yet
paired, another seed, another target) are tried in order, at most :data:`MAX_TRIES` of
them, until one fuses; *a* and *b* are comparable when their targets have a statement of
one property whose values are both dates (operation ``year_difference``, absolute) or both
quantities (``subtract``, *a* − *b*); the first such property in property-id order is
used. The components' values are the **whole statement sets** of that property on the
targets (store statement ids), so the calculator refuses a multi-valued one, a date too
coarse, or units of different dimensions: each refusal is counted under its reason code,
never written. A fused task carries the exact result, the spec it was computed from
(statement ids: recomputable from the store alone) and the necessity check's component
ablation (each component must be necessary).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from chaingraph.build.corpus import CorpusTask, NecessityCertificate, SeedContext
from chaingraph.records import difficulty_level
from chaingraph.tasks import Clue, Fusion, Target, Task
from chaingraph.values import QuantityValue, TimeValue

__all__ = ["MAX_TRIES", "comparable", "fuse_tasks"]

#: later tasks tried as the second component of one task
MAX_TRIES = 5


def comparable(
    a: dict[str, list[tuple[str, Any]]], b: dict[str, list[tuple[str, Any]]]
) -> tuple[str, str] | None:
    """The first property (id order) both targets have with dates or quantities on both
    sides, and the operation: ``(property, operation)`` or ``None``."""
    for prop in sorted(set(a) & set(b), key=lambda p: int(p[1:])):
        kinds = {type(v) for _sid, v in a[prop]} | {type(v) for _sid, v in b[prop]}
        if kinds == {TimeValue}:
            return prop, "year_difference"
        if kinds == {QuantityValue}:
            return prop, "subtract"
    return None


def _values(ctx: SeedContext, target: str) -> dict[str, list[tuple[str, Any]]]:
    out: dict[str, list[tuple[str, Any]]] = {}
    for sid, prop, value in ctx.values.statements_of([target]).get(target, ()):
        if isinstance(value, TimeValue | QuantityValue):
            out.setdefault(prop, []).append((sid, value))
    return out


def _component_clues(task: Task, c: int) -> list[Clue]:
    return [
        clue.model_copy(update={"component": c, "id": f"c{c + 1}:{clue.id or i}"})
        for i, clue in enumerate(task.clues)
    ]


def _fused(
    ctx: SeedContext,
    a: CorpusTask,
    b: CorpusTask,
    prop: str,
    operation: str,
    values: tuple[list[tuple[str, Any]], list[tuple[str, Any]]],
) -> tuple[CorpusTask | None, str | None]:
    from chaingraph.fusion import FusionResult, FusionSpec, fuse_spec
    from chaingraph.necessity import check_necessity

    spec = FusionSpec.model_validate(
        {
            "id": f"fused:{a.id}+{b.id}",
            "operation": operation,
            "minuend": "c1" if operation == "subtract" else None,
            "components": [
                {
                    "id": f"c{i + 1}",
                    "entity": t.task.target.entity,
                    "property": prop,
                    "statements": [{"statement": sid} for sid, _v in vals],
                }
                for i, (t, vals) in enumerate(zip((a, b), values))
            ],
        }
    )
    outcome = fuse_spec(spec, store=ctx.store)
    if not isinstance(outcome, FusionResult):
        return None, outcome.reason
    chosen = {f"c{i + 1}": vals[0][1] for i, vals in enumerate(values)}
    comps = tuple(t.task.components[0].model_copy(update={"id": f"c{i + 1}"}) for i, t in enumerate((a, b)))
    anchors = tuple({x.entity: x for t in (a, b) for x in t.task.anchors}.values())
    result = outcome.value if isinstance(outcome.value, QuantityValue | TimeValue) else None
    task = Task(
        id=spec.id or "",
        anchors=anchors,
        target=Target(value=result) if result is not None else Target(entity=comps[0].target.entity),
        components=comps,
        clues=(*_component_clues(a.task, 0), *_component_clues(b.task, 1)),
        store=a.task.store,
        policy=a.task.policy,
        fusion=Fusion(
            operation=operation, components=("c1", "c2"), minuend=spec.minuend, values=chosen, result=result
        ),
        anchor_necessary=True,
    )
    report = check_necessity(task, ctx.task_graph, values=ctx.values)
    ablation = [c.model_dump(mode="json") for c in report.component_ablations]
    if any(c.verdict != "necessary" for c in report.component_ablations):
        return None, "component_redundant"
    h = (a.evidence_steps or 0) + (b.evidence_steps or 0)
    record = {
        "spec": spec.model_dump(mode="json", exclude_none=True),
        "result": outcome.model_dump(mode="json", exclude_none=True),
        "component_ablation": ablation,
    }
    return CorpusTask(
        id=task.id,
        seed=f"{a.seed}+{b.seed}",
        rank=0,
        task=task,
        chains=(*a.chains, *b.chains),
        clue_selection={"components": [a.id, b.id]},
        certificates=(*a.certificates, *b.certificates),
        necessity=NecessityCertificate(
            policy=report.policy,
            necessary=report.necessary,
            redundant=report.redundant,
            review=report.review,
            text_only_shortcut=report.text_only_shortcut,
            evidence_steps=h,
            difficulty=difficulty_level(h),
        ),
        fusion=record,
        evidence_steps=h,
        level=difficulty_level(h),
        provenance=a.provenance,
        parameters=a.parameters,
    ), None


def fuse_tasks(ctx: SeedContext, tasks: Sequence[CorpusTask]) -> tuple[list[CorpusTask], dict[str, Any]]:
    """The fused tasks of a corpus under the pairing rule (module docstring) and the
    counts: pairs ``tried``, ``refused`` by reason, ``kept``."""
    values = {t.id: _values(ctx, t.task.target.entity or "") for t in tasks}
    paired: set[str] = set()
    fused: list[CorpusTask] = []
    refused: Counter[str] = Counter()
    tried = 0
    for i, a in enumerate(tasks):
        if a.id in paired or not values[a.id]:
            continue
        tries = 0
        for b in tasks[i + 1 :]:
            if tries >= MAX_TRIES:
                break
            if b.id in paired or b.seed == a.seed or b.task.target.entity == a.task.target.entity:
                continue
            how = comparable(values[a.id], values[b.id])
            if how is None:
                continue
            tries += 1
            tried += 1
            prop, operation = how
            got, reason = _fused(
                ctx, a, b, prop, operation, ([v for v in values[a.id][prop]], [v for v in values[b.id][prop]])
            )
            if got is None:
                refused[reason or "refused"] += 1
                continue
            fused.append(got)
            paired |= {a.id, b.id}
            break
    return fused, {"tried": tried, "refused": dict(sorted(refused.items())), "kept": len(fused)}
