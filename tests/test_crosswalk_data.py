"""The shipped crosswalk files are consistent: inverse pairs agree, families are handled one way."""

from __future__ import annotations

import pytest

from chaingraph.crosswalk import RELATION_CLASSES, Crosswalk, default_crosswalk
from chaingraph.crosswalk.tables import NOT_A_RELATION, default_paths


@pytest.fixture(scope="module")
def cw() -> Crosswalk:
    return default_crosswalk()


def _cls(cw: Crosswalk, pid: str) -> str:
    got = cw.classify(pid)
    return got.relation_class or got.status


def test_every_shipped_inverse_pair_agrees(cw: Crosswalk) -> None:
    pairs = {tuple(sorted((a, b))) for a, b in cw.tables.inverses.items()}
    assert len(pairs) >= 25
    disagree = {(a, b): (_cls(cw, a), _cls(cw, b)) for a, b in pairs if _cls(cw, a) != _cls(cw, b)}
    assert disagree == {}
    assert all(cw.classify(p).rule == "table" for pair in pairs for p in pair)


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        (("P361", "P527"), "part-whole"),
        (("P155", "P156"), "temporal"),
        (("P355", "P749"), "part-whole"),
        (("P150", "P131"), "spatial"),
        (("P40", "P22", "P25", "P26", "P3373", "P1038", "P451", "P43", "P44", "P1290"), "attributive"),
        (
            ("P108", "P39", "P1308", "P6", "P35", "P169", "P488", "P1037", "P286", "P6087"),
            "member-collection",
        ),
        (("P463", "P102", "P54", "P27", "P172", "P140", "P53", "P118", "P69", "P1416"), "member-collection"),
        (("P17", "P131", "P276", "P19", "P20", "P551", "P159", "P937", "P495", "P706"), "spatial"),
    ],
    ids=["part-of", "follows", "subsidiary", "admin", "kinship", "employment", "membership", "location"],
)
def test_named_pairs_and_families_are_handled_one_way(
    cw: Crosswalk, members: tuple[str, ...], expected: str
) -> None:
    assert {p: _cls(cw, p) for p in members} == dict.fromkeys(members, expected)


def test_each_family_has_one_class_and_every_row_names_a_family(cw: Crosswalk) -> None:
    seen: dict[str, set[str]] = {}
    for entry in cw.tables.table.values():
        assert entry.family is not None
        seen.setdefault(entry.family, set()).add(entry.verdict)
    assert all(len(classes) == 1 for classes in seen.values())
    assert set(seen) == set(cw.tables.families)
    assert set(cw.tables.families.values()) == {*RELATION_CLASSES, NOT_A_RELATION}


def test_every_data_file_documents_its_columns() -> None:
    for key, path in default_paths().items():
        lines = path.read_text(encoding="utf-8").splitlines()
        header = lines[: next(i for i, ln in enumerate(lines) if not ln.startswith("#"))]
        assert header and any(ln.startswith("# Columns") for ln in header), f"{key}: no '# Columns' header"
        documented = " ".join(header)
        columns = lines[len(header)].split("\t")
        assert all(c in documented for c in columns), f"{key}: a column is not explained in the header"


def test_property_class_map_and_labels_cover_the_seven_classes(cw: Crosswalk) -> None:
    assert {e.verdict for e in cw.tables.property_classes.values()} == {*RELATION_CLASSES, NOT_A_RELATION} - {
        "part-whole"
    }
    assert {e.verdict for e in cw.tables.labels.values()} == set(RELATION_CLASSES)
    assert {e.scheme for e in cw.tables.labels.values()} == {"class-name", "scheme12", "label"}
