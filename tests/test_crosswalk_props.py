"""Invariants of the crosswalk under generated property facts (hypothesis)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.crosswalk import RELATION_CLASSES, RULES, Crosswalk, PropertyFacts, default_crosswalk

CW = default_crosswalk()
WORDS = [
    "part",
    "of",
    "located",
    "in",
    "member",
    "cause",
    "follows",
    "same",
    "as",
    "genre",
    "zq",
    "xy",
    "after",
    "parent",
    "organization",
    "place",
    "date",
    "by",
    "author",
    "list",
    "category",
    "type",
]
DATATYPES = [
    None,
    "wikibase-item",
    "wikibase-item",
    "quantity",
    "time",
    "external-id",
    "string",
    "novel-type",
]
CLASSES = [*list(CW.tables.property_classes)[:12], "Q18608871", "Q18616576", "Q1"]
TABLED = sorted(CW.tables.table, key=lambda p: int(p[1:]))[:40]


def _text(draw: st.DrawFn) -> str | None:
    return draw(st.none() | st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join))


@st.composite
def property_lists(draw: st.DrawFn) -> dict[str, PropertyFacts]:
    """A small property list: fresh ids and some tabled ids, with links among them."""
    fresh = [f"P9{n:07d}" for n in draw(st.sets(st.integers(1, 9_999_999), min_size=1, max_size=12))]
    ids = fresh + draw(st.lists(st.sampled_from(TABLED), max_size=4, unique=True))
    facts = {}
    for ident in ids:
        facts[ident] = PropertyFacts(
            ident,
            label=_text(draw),
            aliases=tuple(draw(st.lists(st.sampled_from(WORDS), max_size=2))),
            description=_text(draw),
            datatype=draw(st.sampled_from(DATATYPES)),
            classes=tuple(draw(st.lists(st.sampled_from(CLASSES), max_size=3, unique=True))),
            superproperties=tuple(draw(st.lists(st.sampled_from(ids), max_size=2, unique=True))),
            inverse=draw(st.none() | st.sampled_from(ids)),
        )
    return facts


@settings(max_examples=60, deadline=None)
@given(property_lists(), st.randoms(use_true_random=False))
def test_classifying_a_list_is_order_independent_and_deterministic(
    facts: dict[str, PropertyFacts], rnd: random.Random
) -> None:
    first = {c.property: c for c in CW.classify_all(facts)}
    keys = list(facts)
    rnd.shuffle(keys)
    shuffled = {k: facts[k] for k in keys}
    again = {c.property: c for c in Crosswalk.default().classify_all(shuffled)}
    one_by_one = {k: CW.classify(k, shuffled) for k in reversed(keys)}
    assert first == again == one_by_one


@settings(max_examples=60, deadline=None)
@given(property_lists())
def test_every_answer_is_well_formed_and_tabled_ids_always_follow_the_table(
    facts: dict[str, PropertyFacts],
) -> None:
    for c in CW.classify_all(facts):
        assert c.rule in RULES and c.reason and c.version == CW.version
        assert (c.status == "relation") == (c.relation_class in RELATION_CLASSES)
        assert (c.status == "unclassified") == (c.rule == "none")
        if c.property in CW.tables.table:
            assert c.rule == "table" and c == CW.classify(c.property)
            assert (c.relation_class or c.status) == CW.tables.table[c.property].verdict


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(sorted(CW.tables.labels)),
    st.lists(st.sampled_from(["_", "-", " ", "  "]), min_size=3, max_size=3),
    st.sampled_from(["lower", "upper", "title", "camel"]),
)
def test_label_spelling_does_not_change_the_answer(label: str, seps: list[str], case: str) -> None:
    words = label.split()
    if case == "camel":
        variant = "".join(w.capitalize() for w in words)
    else:
        joined = words[0] + "".join(seps[i % 3] + w for i, w in enumerate(words[1:]))
        variant = getattr(joined, case)()
    # the table's own verdict, not the classifier's answer on the original spelling (both could be None)
    assert CW.classify_label(variant).relation_class == CW.tables.labels[label].verdict
