"""Property tests: audit counts do not depend on file order or on how a corpus is split into files,
and nested copies never count twice."""

from __future__ import annotations

import itertools
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.audit import AuditReport, audit
from chaingraph.crosswalk import default_crosswalk

NODES = [f"Q{i}" for i in range(1, 8)]
RELATIONS = [
    "P131",
    "P17",
    "P361",
    "P463",
    "P155",
    "P9999999",
    "part_of",
    "temporal",
    "similar",
    "frobnicates",
]
ROLES = [{"role": "located_in"}, {"subject_role": "part", "object_role": "whole"}, {"role": "wibble"}]

CROSSWALK = default_crosswalk()


@st.composite
def chains(draw: st.DrawFn) -> list[Any]:
    nodes = draw(st.lists(st.sampled_from(NODES), min_size=2, max_size=7, unique=True))
    edges: list[Any] = []
    for a, b in itertools.pairwise(nodes):
        if draw(st.booleans()):
            edges.append([a, draw(st.sampled_from(RELATIONS)), b])
        else:
            edges.append({"source": a, "target": b, **draw(st.sampled_from(ROLES))})
    return edges


@st.composite
def records(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["chain", "task", "fused-with-copies", "bad"]))
    if kind == "chain":
        return {"steps": draw(chains())}
    if kind == "task":
        return {"chains": draw(st.lists(chains(), min_size=1, max_size=3))}
    if kind == "fused-with-copies":
        parts = draw(st.lists(chains(), min_size=1, max_size=3))
        copies = draw(st.lists(st.sampled_from(parts), max_size=3))
        return {"steps": parts[0], "components": [{"chain": c} for c in parts + copies]}
    return draw(st.sampled_from([{"question": "?"}, {"chains": []}, [1, 2]]))


def _write(folder: Path, groups: list[list[Any]]) -> list[Path]:
    paths = []
    for i, group in enumerate(groups):
        path = folder / f"part{i:03d}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in group))
        paths.append(path)
    return paths


def _counts(report: AuditReport) -> dict[str, Any]:
    data = report.model_dump()
    data.pop("files")
    problems = data.pop("problems")
    data["problem_kinds"] = Counter(p["kind"] for p in problems)
    return data


@settings(max_examples=25, deadline=None)
@given(
    corpus=st.lists(records(), min_size=1, max_size=25),
    cuts=st.lists(st.integers(0, 25), max_size=4),
    order=st.randoms(use_true_random=False),
)
def test_counts_do_not_depend_on_splitting_or_file_order(
    corpus: list[Any], cuts: list[int], order: Any
) -> None:
    bounds = sorted({min(c, len(corpus)) for c in cuts} | {0, len(corpus)})
    groups = [corpus[a:b] for a, b in itertools.pairwise(bounds)]
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as many:
        whole = audit(_write(Path(one), [corpus]), crosswalk=CROSSWALK)
        files = _write(Path(many), groups)
        order.shuffle(files)
        split = audit(files, crosswalk=CROSSWALK)
    assert _counts(split) == _counts(whole)
    assert whole.records == len(corpus)


@settings(max_examples=25, deadline=None)
@given(parts=st.lists(chains(), min_size=1, max_size=4), copies=st.integers(1, 3))
def test_nested_copies_of_a_chain_never_count_twice(parts: list[Any], copies: int) -> None:
    plain = {"chains": parts}
    nested = {
        "steps": parts[0],
        "chains": parts * copies,
        "components": [{"chains": parts}, {"chain": parts[-1]}],
    }
    with tempfile.TemporaryDirectory() as tmp:
        a = audit(_write(Path(tmp), [[plain]]), crosswalk=CROSSWALK)
        b = audit(_write(Path(tmp), [[nested]]), crosswalk=CROSSWALK)
    distinct = len({json.dumps(p) for p in parts})
    assert a.chains == b.chains == distinct
    assert a.class_counts() == b.class_counts()
    assert a.edges == b.edges == sum(len(p) for p in {json.dumps(p): p for p in parts}.values())
