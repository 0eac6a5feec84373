"""Clue ablation: is every clue of a task necessary? (DESIGN §6)

:func:`check_necessity` compiles the task's clues into one path pattern per component
(:mod:`chaingraph.patterns`), evaluates it on the evidence graph, then drops one clue at a
time — an ``anchor`` clue frees ``x0``, a ``relation`` clue turns its step into a
wildcard, a ``type`` or ``value`` clue disappears — and reports for each ablation the
answer set (size, first members), whether the target is in it, how many matches reach
the target, a witness path, and a verdict.

Verdict rule (:func:`decide`), in this order. Solver evidence *counts* only when the
Solver recovered the original (``solver.original.correct``); *paired recovery* means it
also recovered the target without the clue.

======================================================  ===========  =====================
situation                                               verdict      why
======================================================  ===========  =====================
all clues do not make the target the unique answer,     review       evidence missing or
no paired recovery                                                   the task is ambiguous
paired recovery (whatever the graph says)               redundant    Solver did not need it
target still the unique answer in the graph, and the    review       conflict: the graph is
counting Solver *failed* without the clue                            a collected subgraph
target still the unique answer in the graph             redundant    graph uniqueness
unique reachability lost, no paired recovery            necessary
======================================================  ===========  =====================

Anchor ablation is the graph's own **text-only shortcut screen**: if the target stays
the unique answer with ``x0`` free, the question is answerable without the image; the
report raises :attr:`NecessityReport.text_only_shortcut` (a component without any anchor
clue is a shortcut by construction when its target is unique).

Answer sets use **every statement** of the evidence by default (SPARQL semantics: no
hub rule, an agent may walk through a hub); a policy can be asked for with the task's
``policy`` field or ``hub_limit`` here, and the report records the policy used. When
the task's own chain cannot match under it, the note names the node and the rule
(``x1 Q40348 has 1,052 step edges > hub limit 1000``).

**Pruning** is sequential (:func:`chaingraph.minimal.prune_sequential`): the redundant
clues are tried one at a time in the order of :func:`chaingraph.minimal.removal_order`
(item values, literal values, types, relations, the anchor last; within a kind in clue
order), each removed only if the target stays unique given the removals so far — a
*minimal* clue set. With ``minimum=True`` a bounded search
(:func:`chaingraph.minimal.largest_removal`) also finds a minimum-size set. The pruned
pattern is evaluated once more: its witness gives the recomputed path; its hop count,
with repeated-node detours cut out, summed over components is the evidence-step count
``H``, and ``L1`` (H < 5), ``L2`` (5 ≤ H < 10) or ``L3`` (H ≥ 10) its difficulty — none
when the pattern has no match. Fused tasks are
also ablated one whole component at a time through a :class:`FusionCheck`: a component
is redundant when the fused result is still determined without it (e.g. it is not the
maximum).

>>> from chaingraph.tasks import Task
>>> task = Task.model_validate({"id": "t", "anchors": [{"entity": "Q1"}], "target": {"entity": "Q3"},
...     "components": [{"anchor": "Q1", "target": {"entity": "Q3"}, "steps": [
...         {"property": "P50"}, {"property": "P19"}]}],
...     "clues": [{"kind": "anchor"}, {"kind": "relation", "step": 1}, {"kind": "relation", "step": 2}],
...     "evidence": {"edges": [["s1", "Q1", "P50", "Q2"], ["s2", "Q2", "P19", "Q3"],
...         ["s3", "Q4", "P19", "Q5"], ["s4", "Q2", "P27", "Q6"], ["s5", "Q7", "P50", "Q4"]]},
...     "policy": {"hub_limit": None}})
>>> report = check_necessity(task)
>>> [(a.clue, a.verdict) for a in report.clues]
[('c1', 'necessary'), ('c2', 'redundant'), ('c3', 'necessary')]
>>> report.text_only_shortcut, report.evidence_steps, report.difficulty
(False, 2, 'L1')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from chaingraph.errors import ChaingraphError, InvalidInput, InvalidTask, UnknownEntity
from chaingraph.graph import EvidenceGraph
from chaingraph.minimal import largest_removal, prune_sequential, removal_order
from chaingraph.necessity_records import (
    NECESSITY_SCHEMA_VERSION,
    AnswerSet,
    BatchResult,
    ClueAblation,
    ComponentAblation,
    ComponentCheck,
    NecessityReport,
    PathRecord,
    TaskFailure,
    Verdict,
)
from chaingraph.patterns import (
    PatternResult,
    ValueLookup,
    compile_pattern,
    evaluate,
    known_class,
    value_key,
)
from chaingraph.records import difficulty_level
from chaingraph.task_graphs import TASK_POLICY, GraphCache, HubLimit, embedded_values, policy_for
from chaingraph.tasks import SolverResult, Task, load_task
from chaingraph.timeline import Sensitivity, overall, parse_as_of
from chaingraph.values import EntityValue, Value

__all__ = [
    "NECESSITY_SCHEMA_VERSION",
    "TASK_POLICY",
    "AnswerSet",
    "BatchResult",
    "ClueAblation",
    "ComponentAblation",
    "ComponentCheck",
    "FusionCheck",
    "GraphCache",
    "HubLimit",
    "NecessityReport",
    "PathRecord",
    "TaskFailure",
    "Verdict",
    "check_necessity",
    "check_necessity_files",
    "decide",
    "default_fusion_check",
    "difficulty",
    "embedded_values",
    "policy_for",
]

# -- the verdict rule ---------------------------------------------------------------
def decide(*, graph_unique: bool, answers: int, target_in: bool, base_ok: bool, base_problem: str = "",
           original: SolverResult | None = None, without: SolverResult | None = None
           ) -> tuple[Verdict, str]:
    """The DESIGN §6 verdict for one ablated clue, with its reason (see the module table).

    >>> decide(graph_unique=True, answers=1, target_in=True, base_ok=True)
    ('redundant', 'the target stays the unique answer without it')
    >>> decide(graph_unique=True, answers=1, target_in=True, base_ok=True,
    ...        original=SolverResult(correct=True), without=SolverResult(correct=False))[0]
    'review'
    """
    counts = original is not None and original.correct
    paired = counts and without is not None and without.correct
    if not base_ok:
        if paired:
            return "redundant", ("paired recovery: the Solver found the target with and without it "
                                 f"({base_problem})")
        return "review", base_problem
    if paired:
        graph = ("the graph agrees" if graph_unique
                 else f"although the graph then has {answers} answers")
        return "redundant", f"paired recovery: the Solver found the target with and without it; {graph}"
    if graph_unique:
        if counts and without is not None and not without.correct:
            return "review", ("conflict: the target stays the unique answer in the graph, but the Solver "
                              "lost it without this clue (the graph is only the collected neighbourhood)")
        return "redundant", "the target stays the unique answer without it"
    lost = (f"{answers} answers without it" if target_in
            else "the target is no longer reached without it")
    if original is not None and not original.correct:
        solver = "; the Solver failed the original, so its runs do not count"
    elif counts and without is None:
        solver = "; no Solver run without this clue"
    elif counts:
        solver = "; the Solver also failed without it"
    else:
        solver = ""
    return "necessary", f"unique reachability lost ({lost}){solver}"


#: ``L1`` (H < 5), ``L2`` (5 ≤ H < 10), ``L3`` (H ≥ 10): the one rule in :mod:`chaingraph.records`.
difficulty = difficulty_level


# -- fused components ---------------------------------------------------------------
class FusionCheck(Protocol):
    """Can the fused result still be determined from the component values minus ``dropped``?
    Returns ``(determined, reason)``."""

    def __call__(self, operation: str, values: Sequence[tuple[str, Value]], dropped: str, *,
                 minuend: str | None = None) -> tuple[bool, str]: ...


def default_fusion_check(operation: str, values: Sequence[tuple[str, Value]], dropped: str, *,
                         minuend: str | None = None) -> tuple[bool, str]:
    """Fuse all values and the values without ``dropped`` with :func:`chaingraph.fusion.fuse`;
    the result is determined without ``dropped`` when both give the same result.

    >>> from chaingraph.values import TimeValue
    >>> y = lambda n: TimeValue.make(n, precision=9)
    >>> default_fusion_check("max", [("a", y(1521)), ("b", y(1600))], "a")
    (True, 'max is 1600 with or without a')
    >>> default_fusion_check("year_difference", [("a", y(1521)), ("b", y(1600))], "a", minuend="b")[0]
    False
    """
    rest = [(c, v) for c, v in values if c != dropped]
    full = _fuse(operation, values, minuend)
    if isinstance(full, Exception):
        return False, f"the fused result cannot be computed even with every component ({full})"
    part = _fuse(operation, rest, minuend if minuend != dropped else None)
    if isinstance(part, Exception):
        return False, f"without {dropped} the {operation} cannot be computed ({part})"
    if part == full:
        return True, f"{operation} is {full} with or without {dropped}"
    return False, f"without {dropped} the {operation} changes from {full} to {part}"


def _fuse(operation: str, values: Sequence[tuple[str, Value]], minuend: str | None) -> str | Exception:
    """The fused result as text, or why there is none (a refusal, or an invalid spec such
    as a difference of one value). ``chaingraph.fusion`` sits below this module in the
    layering, so it is imported here, at call time, behind the :class:`FusionCheck` seam."""
    from chaingraph.fusion import FusionResult, RationalValue, fuse

    try:
        outcome = fuse([{"id": c, "value": v.model_dump(mode="json")} for c, v in values], operation,
                       minuend=minuend)
    except InvalidInput as exc:
        return exc
    if isinstance(outcome, FusionResult):
        v = outcome.value
        return outcome.result if v is None or isinstance(v, RationalValue) else value_key(v)
    return InvalidInput(outcome.message)


# -- the check ----------------------------------------------------------------------
def _check_ids(task: Task, graph: EvidenceGraph, file: str) -> None:
    dated = f" as of {graph.policy.as_of} (no statement about it holds then)" if graph.policy.as_of else ""
    for j, a in enumerate(task.anchors):
        if a.entity not in graph:
            raise InvalidTask(f"{a.entity} is not in the evidence graph{dated}; collect its neighbourhood "
                              "or fix the id",
                              path=f"anchors[{j}].entity", file=file)
    for c, comp in enumerate(task.components):
        if comp.target.entity is not None and comp.target.entity not in graph:
            raise InvalidTask(f"{comp.target.entity} is not in the evidence graph{dated}; fix the id or "
                              "the evidence",
                              path=f"components[{c}].target.entity", file=file)
    for i, clue in enumerate(task.clues):
        if clue.kind == "type" and clue.class_ is not None and not known_class(graph, clue.class_):
            raise InvalidTask(f"{clue.class_} is not a class of anything in the evidence graph",
                              path=f"clues[{i}].class", file=file)
        if (clue.kind == "value" and isinstance(clue.value, str) and clue.value not in graph
                and not known_class(graph, clue.value)):
            raise InvalidTask(f"{clue.value} is not in the evidence graph", path=f"clues[{i}].value",
                              file=file)


def _target(task: Task, c: int) -> str | Value:
    t = task.components[c].target
    return t.entity if t.entity is not None else t.value  # type: ignore[return-value]


def check_necessity(task: Task, graph: EvidenceGraph | None = None, *, values: ValueLookup | None = None,
                    fusion_check: FusionCheck = default_fusion_check, cache: GraphCache | None = None,
                    file: str | None = None, base: Path | None = None, hub_limit: HubLimit = TASK_POLICY,
                    minimum: bool = False, minimum_budget: int = 2000,
                    as_of: str | None = None) -> NecessityReport:
    """Ablate every clue (and, for fused tasks, every component) of ``task``.

    ``as_of`` (default: the task's ``policy.as_of``) keeps only statements valid on that
    date: answer sets, ablations and pruning all run on that one graph (DESIGN §11); the
    report records the date and the task's time sensitivity (from each component's witness).

    Without ``graph`` the task's embedded evidence or store is read (through ``cache``
    when given, so that many tasks share one graph) under the task's policy, or
    ``hub_limit`` when given (a given ``graph`` brings its own policy). Ids absent from
    the graph raise :class:`~chaingraph.errors.InvalidTask` with the JSON path of the
    offending field. ``minimum``: also search a minimum-size clue set per component,
    within ``minimum_budget`` pattern evaluations each.
    """
    own = cache is None
    if as_of is not None:
        as_of = parse_as_of(as_of).text
    cache = cache or GraphCache(hub_limit=hub_limit, as_of=as_of)
    file = file if file is not None else task.file
    if base is None and task.file:
        base = Path(task.file).parent
    try:
        if graph is None:
            graph, found = cache.get(task, base=base, file=file or "")
            values = values if values is not None else found
        elif values is None and task.evidence is not None:
            values = embedded_values(task)
        _check_ids(task, graph, file or "")
        return _check(task, graph, values, fusion_check, file, minimum_budget if minimum else None)
    except UnknownEntity as exc:
        raise InvalidTask(str(exc), file=file or "") from None
    finally:
        if own:
            cache.close()


def _blocked(task: Task, c: int, graph: EvidenceGraph, values: ValueLookup | None) -> str | None:
    """Why the component's own chain cannot match under the graph's hub rule (each blocked
    inner node and the rule), or ``None`` when the hub rule is not what stops it. Chain
    nodes are the annotated step targets, else a match found with the hub rule lifted."""
    if graph.policy.hub_limit is None:
        return None
    comp = task.components[c]
    nodes: Sequence[str | None] = [s.target for s in comp.steps[:-1]]
    if any(n is None or n not in graph for n in nodes):
        free = graph.with_policy(graph.policy.model_copy(update={"hub_limit": None}))
        r = evaluate(free, compile_pattern(task, c), target=_target(task, c), values=values)
        if r.witness is None:
            return None
        nodes = r.witness.nodes[1:-1]
    blocked = [f"x{i} {why}" for i, n in enumerate(nodes, start=1)
               if n is not None and (why := graph.blocked(graph.vertex(n))) is not None]
    return "; ".join(blocked) or None


def _check(task: Task, graph: EvidenceGraph, values: ValueLookup | None, fusion_check: FusionCheck,
           file: str | None, minimum_budget: int | None) -> NecessityReport:
    solver = task.solver
    notes: list[str] = []
    if graph.policy.as_of is not None and graph.timeline is None:
        notes.append(f"as of {graph.policy.as_of}: the embedded evidence carries no time qualifiers, so "
                     "every statement counts as valid; give a store to filter by date")
    full: dict[int, PatternResult] = {}
    base_problem: dict[int, str] = {}
    for c in range(len(task.components)):
        full[c] = r = evaluate(graph, compile_pattern(task, c), target=_target(task, c), values=values)
        if not r.target_in:
            hubs = _blocked(task, c, graph, values)
            base_problem[c] = (
                f"the chain cannot match under the policy: {hubs} (the statements exist; lift the hub "
                "limit to use them)" if hubs else
                "evidence missing: the full clue set does not reach the target in the evidence graph")
        elif not r.unique:
            base_problem[c] = (f"the full clue set does not single out the target ({r.answer_count} "
                               "answers); necessity is undefined")
        if c in base_problem:
            notes.append(f"{task.component_id(c)}: {base_problem[c]}")
    if solver is not None and not solver.original.correct:
        notes.append("the Solver did not recover the original target: its ablation runs do not count")

    ablations: list[ClueAblation] = []
    for i, clue in enumerate(task.clues):
        c = clue.component
        keep = [j for j in range(len(task.clues)) if j != i]
        r = evaluate(graph, compile_pattern(task, c, keep), target=_target(task, c), values=values)
        cid = task.clue_id(i)
        without = solver.ablated.get(cid) if solver is not None else None
        verdict, reason = decide(graph_unique=r.unique, answers=r.answer_count, target_in=r.target_in,
                                 base_ok=c not in base_problem, base_problem=base_problem.get(c, ""),
                                 original=solver.original if solver else None, without=without)
        shortcut = clue.kind == "anchor" and r.unique and c not in base_problem
        ablations.append(ClueAblation(
            clue=cid, index=i, kind=clue.kind, component=task.component_id(c), text=clue.text,
            answers=AnswerSet.of(r), solver_original=solver.original.correct if solver else None,
            solver_without=None if without is None else without.correct, verdict=verdict, reason=reason,
            text_only_shortcut=shortcut))

    components: list[ComponentCheck] = []
    shortcut_any = any(a.text_only_shortcut for a in ablations)
    for c, comp in enumerate(task.components):
        anchored = any(cl.kind == "anchor" and cl.component == c for cl in task.clues)
        if not anchored and full[c].unique:
            shortcut_any = True
            notes.append(f"{task.component_id(c)}: no anchor clue, and the text alone singles out the target")
        mine = [j for j, cl in enumerate(task.clues) if cl.component == c]
        redundant = [a.index for a in ablations
                     if a.verdict == "redundant" and task.clues[a.index].component == c]
        order = removal_order(task.clues, redundant)
        target = _target(task, c)

        def unique(kept: frozenset[int], c: int = c, target: str | Value = target) -> bool:
            return evaluate(graph, compile_pattern(task, c, sorted(kept)), target=target, values=values,
                            paths=False).unique

        if c in base_problem:
            order, removed = (), []
        else:
            removed = list(prune_sequential(mine, order, unique).removed)
        keep = [j for j in range(len(task.clues)) if j not in removed]
        pruned = (evaluate(graph, compile_pattern(task, c, keep), target=target, values=values)
                  if removed else full[c])  # nothing removed: the pattern with every clue again
        smallest: tuple[str, ...] | None = None
        proven: bool | None = None
        if minimum_budget is not None and c not in base_problem:
            best = largest_removal(order, frozenset(mine), unique, budget=minimum_budget,
                                   at_least=len(removed) - 1)
            gone = set(best.removed if best.removed is not None else removed)
            smallest, proven = tuple(task.clue_id(j) for j in mine if j not in gone), best.proven
        hops = pruned.witness.hops if pruned.witness is not None else None
        components.append(ComponentCheck(
            id=task.component_id(c), anchor=comp.anchor, target=comp.target.key, k=comp.k, anchored=anchored,
            full=AnswerSet.of(full[c]), pruned=AnswerSet.of(pruned),
            order=tuple(task.clue_id(j) for j in order),
            removed=tuple(task.clue_id(j) for j in removed),
            kept=tuple(task.clue_id(j) for j in mine if j not in removed), minimum=smallest,
            minimum_proven=proven, evidence_steps=hops))
        joint = [task.clue_id(j) for j in order if j not in removed]
        if joint:
            notes.append(f"{task.component_id(c)}: {', '.join(joint)} redundant but kept: without it, after "
                         "the earlier removals, the target is not the unique answer")
    pruned_unique = all(cc.pruned.unique for cc in components)
    steps = [cc.evidence_steps for cc in components]
    h = None if any(x is None for x in steps) else sum(x for x in steps if x is not None)
    sensitive = _time_sensitivity(task, graph, full)
    return NecessityReport(
        task=task.id, file=file, policy=graph.policy.describe(), text_only_shortcut=shortcut_any,
        components=tuple(components), clues=tuple(ablations),
        component_ablations=_component_ablations(task, fusion_check),
        redundant=tuple(a.clue for a in ablations if a.verdict == "redundant"),
        necessary=tuple(a.clue for a in ablations if a.verdict == "necessary"),
        review=tuple(a.clue for a in ablations if a.verdict == "review"),
        pruned_unique=pruned_unique, evidence_steps=h, difficulty=None if h is None else difficulty(h),
        notes=tuple(notes), as_of=graph.policy.as_of, time_sensitivity=overall(r for _s, r in sensitive),
        time_sensitive_steps=tuple(f"{s}: {r}" for s, r in sensitive if r != "stable"))


def _time_sensitivity(task: Task, graph: EvidenceGraph, full: dict[int, PatternResult]
                      ) -> list[tuple[str, Sensitivity]]:
    """``(component/step, reason)`` for every step of each component's witness path (the
    task's own annotation where it gives one), from the graph's timeline."""
    from chaingraph.timeline import time_properties

    timeline = graph.timeline
    out: list[tuple[str, Sensitivity]] = []
    for c, comp in enumerate(task.components):
        w = full[c].witness
        sids = [sid for _p, _d, sid in w.steps] if w is not None else []
        for i, step in enumerate(comp.steps):
            sid = step.statement_id or (sids[i] if i < len(sids) else None)
            if step.time_sensitivity is not None:
                reason: Sensitivity = step.time_sensitivity
            elif timeline is not None and sid is not None:
                reason = timeline.sensitivity(sid.removesuffix("#value"), step.property)
            else:
                reason = "changing_property" if step.property in time_properties().changing else "stable"
            out.append((f"{task.component_id(c)}/step{i + 1}", reason))
    return out


def _component_ablations(task: Task, fusion_check: FusionCheck) -> tuple[ComponentAblation, ...]:
    fusion = task.fusion
    if fusion is None or len(task.components) < 2:
        return ()
    ids = list(fusion.components) or [task.component_id(c) for c in range(len(task.components))]
    by_id = {task.component_id(c): comp for c, comp in enumerate(task.components)}
    vals: list[tuple[str, Value]] = []
    missing = []
    for cid in ids:
        v = fusion.values.get(cid) or by_id[cid].target.value
        entity = by_id[cid].target.entity
        if v is None and entity is not None:
            v = EntityValue(id=entity)
        if v is None:
            missing.append(cid)
        else:
            vals.append((cid, v))
    out = []
    for cid in ids:
        if missing:
            out.append(ComponentAblation(component=cid, operation=fusion.operation, determined_without=False,
                                         verdict="review", reason=f"no value for {', '.join(missing)}"))
            continue
        determined, reason = fusion_check(fusion.operation, vals, cid, minuend=fusion.minuend)
        out.append(ComponentAblation(component=cid, operation=fusion.operation, determined_without=determined,
                                     verdict="redundant" if determined else "necessary", reason=reason))
    return tuple(out)


# -- many tasks ---------------------------------------------------------------------
def check_necessity_files(paths: Iterable[str | Path], *, store: str | Path | None = None,
                          fusion_check: FusionCheck = default_fusion_check,
                          on_task: Callable[[str], None] | None = None, hub_limit: HubLimit = TASK_POLICY,
                          minimum: bool = False, minimum_budget: int = 2000,
                          as_of: str | None = None) -> BatchResult:
    """Check many task files with shared graphs; a bad file is recorded, not fatal.
    ``as_of`` overrides every task's own date."""
    dated = None if as_of is None else parse_as_of(as_of).text
    cache = GraphCache(store=store, hub_limit=hub_limit, as_of=dated)
    reports, failures = [], []
    try:
        for p in paths:
            if on_task is not None:
                on_task(str(p))
            try:
                task = load_task(p)
                reports.append(check_necessity(task, cache=cache, fusion_check=fusion_check, file=str(p),
                                               base=Path(p).parent, minimum=minimum,
                                               minimum_budget=minimum_budget))
            except InvalidTask as exc:
                failures.append(TaskFailure(file=str(p), error=str(exc) if exc.file else f"{p}: {exc}"))
            except ChaingraphError as exc:
                failures.append(TaskFailure(file=str(p), error=f"{p}: {exc}"))
    finally:
        cache.close()
    return BatchResult(reports=tuple(reports), failures=tuple(failures))

