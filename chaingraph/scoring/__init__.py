"""Process metrics of agent trajectories against the evidence graph (DESIGN §12).

Modules, imports flowing down this list::

    reference   mention resolution, equivalent relations, the tasks' reference routes
    claims      claims resolved to statements; the pluggable support judge
    routes      the claimed alternative route and its three-part adjudication
    records     claim records: each distinct claim of a task resolved and mapped once
    visual      anchor precision/recall, NVRC, DRI, revisits (boxes only)
    scorer      TaskScorer (per-task state); coverage: NC and RC, routes adjudicated
    score       score_trajectory: one item, every metric, every explanation
    batch       score_files: many items, macro averages, threshold sensitivity

The trajectory record itself is :mod:`chaingraph.trajectory`.
"""

from __future__ import annotations

from chaingraph.scoring.batch import ScoreReport, load_tasks, macro_average, score_files
from chaingraph.scoring.claims import GraphJudge, SupportJudge
from chaingraph.scoring.score import ItemScore, Metrics, score_trajectory
from chaingraph.scoring.scorer import Coverage, TaskScorer, coverage
from chaingraph.scoring.visual import Thresholds

__all__ = [
    "Coverage",
    "GraphJudge",
    "ItemScore",
    "Metrics",
    "ScoreReport",
    "SupportJudge",
    "TaskScorer",
    "Thresholds",
    "coverage",
    "load_tasks",
    "macro_average",
    "score_files",
    "score_trajectory",
]
