"""A ``p:`` triple staged with the plain value of the ``ps:`` triple that follows it
(:func:`~chaingraph.sources.loaders.nt_ids.pair_statements`) gives the store the general join
of the build gives: on a real dump in and out of order, and on the odd shapes a pair could
get wrong (a value node beside the plain value, a novalue statement, repeated and misplaced
triples, a ``ps:`` of another property or statement)."""

from __future__ import annotations

import gzip
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chaingraph.sources.loaders import load, nt_ids
from chaingraph.store import Store

WD = "http://www.wikidata.org/entity/"
P = "http://www.wikidata.org/prop/"
_FACTS = ("statements", "qualifiers", "reference_snaks")


def _facts(path: Path) -> dict[str, list[str]]:
    with Store() as store:
        load([path], store)
        return {t: sorted(map(repr, store.con.execute(f"SELECT * FROM {t}").fetchall())) for t in _FACTS}


@pytest.fixture
def pairs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many pairs each block made (the loads below must make some)."""
    made: list[int] = []
    pair = nt_ids.pair_statements

    def counting(*args: Any) -> Any:
        out = pair(*args)
        made.append(len(out[0]))
        return out
    monkeypatch.setattr(nt_ids, "pair_statements", counting)
    return made


def _unpaired(monkeypatch: pytest.MonkeyPatch) -> None:
    none = np.zeros(0, dtype=np.int64)
    monkeypatch.setattr(nt_ids, "pair_statements", lambda *args: (none, none))


def test_a_shuffled_dump_gives_the_statements_of_the_dump_in_order(
        shared_data: Path, tmp_path: Path, pairs: list[int]) -> None:
    """In order nearly every statement is paired; shuffled nearly none is, and the build joins them."""
    lines = gzip.decompress((shared_data / "world" / "codex-s.nt.gz").read_bytes()).splitlines()
    in_order = tmp_path / "in-order.nt"
    in_order.write_bytes(b"\n".join(lines) + b"\n")
    random.Random(14).shuffle(lines)
    shuffled = tmp_path / "shuffled.nt"
    shuffled.write_bytes(b"\n".join(lines) + b"\n")
    expected = _facts(in_order)
    assert sum(pairs) > 0.99 * len(expected["statements"])
    del pairs[:]
    assert _facts(shuffled) == expected
    assert sum(pairs) < 0.01 * len(expected["statements"])


def _odd_shapes() -> str:
    def st(name: str) -> str:
        return f"<{WD}statement/{name}>"

    def item(qid: str) -> str:
        return f"<{WD}{qid}>"
    triples = [
        (item("Q1"), f"<{P}P31>", st("Q1-A")),  # a plain pair
        (st("Q1-A"), f"<{P}statement/P31>", item("Q5")),
        (item("Q1"), f"<{P}P39>", st("Q1-B")),  # a value node says more than the plain value
        (st("Q1-B"), f"<{P}statement/P39>", item("Q6")),
        (st("Q1-B"), f"<{P}statement/value/P39>", "<http://www.wikidata.org/value/V1>"),
        ("<http://www.wikidata.org/value/V1>", "<http://wikiba.se/ontology#timeValue>",
         '"2001-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'),
        ("<http://www.wikidata.org/value/V1>", "<http://wikiba.se/ontology#timePrecision>",
         '"11"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        (item("Q1"), f"<{P}P40>", st("Q1-C")),  # novalue, and a ps: triple all the same
        (st("Q1-C"), "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{P}novalue/P40>"),
        (st("Q1-C"), f"<{P}statement/P40>", item("Q7")),
        (item("Q2"), f"<{P}P31>", st("Q2-D")),  # the p: triple twice
        (item("Q2"), f"<{P}P31>", st("Q2-D")),
        (st("Q2-D"), f"<{P}statement/P31>", item("Q5")),
        (st("Q2-E"), f"<{P}statement/P31>", item("Q8")),  # ps: before p:
        (item("Q2"), f"<{P}P31>", st("Q2-E")),
        (item("Q2"), f"<{P}P279>", st("Q2-F")),  # a ps: of another property
        (st("Q2-F"), f"<{P}statement/P31>", item("Q9")),
        (item("Q3"), f"<{P}P31>", st("Q3-G")),  # the next ps: is another statement's
        (item("Q3"), f"<{P}P31>", st("Q3-H")),
        (st("Q3-H"), f"<{P}statement/P31>", item("Q10")),
        (st("Q3-G"), f"<{P}statement/P31>", item("Q11")),
        (st("Q3-G"), "<http://wikiba.se/ontology#rank>", "<http://wikiba.se/ontology#PreferredRank>"),
        (item("Q3"), f"<{P}P17>", st("Q3-I")),  # the ps: twice
        (st("Q3-I"), f"<{P}statement/P17>", item("Q12")),
        (st("Q3-I"), f"<{P}statement/P17>", item("Q12")),
        (st("Q3-I"), f"<{P}qualifier/P585>", item("Q13")),
    ]
    return "".join(f"{s} {p} {o} .\n" for s, p, o in triples)


def test_odd_shapes_give_the_store_the_build_joins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   pairs: list[int]) -> None:
    path = tmp_path / "odd.nt"
    path.write_text(_odd_shapes())
    paired = _facts(path)
    assert sum(pairs) >= 6
    _unpaired(monkeypatch)
    assert paired == _facts(path)
    statements = {eval(row)[0]: eval(row) for row in paired["statements"]}
    assert statements["Q1$B"][5:7] == ("string", None)  # the value node wins (a time without calendar)
    assert statements["Q1$C"][4:7] == ("value", "item", "Q7")  # as the build joins it without pairs
    assert statements["Q3$G"][3] == "preferred" and statements["Q3$G"][6] == "Q11"
    assert {sid for sid in statements} == {"Q1$A", "Q1$B", "Q1$C", "Q2$D", "Q2$E", "Q2$F", "Q3$G", "Q3$H",
                                           "Q3$I"}
