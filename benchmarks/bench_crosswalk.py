"""Crosswalk speed on the real property list (13,271 properties) and on per-edge lookups.

    python benchmarks/bench_crosswalk.py [--quick]

Cases (each in a fresh process, median of repeats):

* ``chaingraph classify_all``   all rules over the parsed list (facts read in setup);
* ``chaingraph end-to-end``     read the gzip'd TSV, load the tables, classify everything;
* ``naive regex pass``          the peer: one keyword regex per class over each label, first
                                class that matches wins (no table, datatype or classes) - what a
                                pure lexical crosswalk costs;
* per-edge ``relation_class``   the chain engine's call, once per edge of CoDEx-M (206k edges),
                                against a plain ``dict.get`` over a precomputed map.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import SHARED_DATA, Case, markdown_table, measure  # noqa: E402

MODULE = "bench_crosswalk"
Run = Callable[[], tuple[int, dict[str, Any]]]


def _shared() -> Path:
    return SHARED_DATA


PROPERTIES = _shared() / "properties" / "wikidata_properties_merged.tsv.gz"
CODEX = _shared() / "codex" / "codex-m.tsv.gz"

NAIVE = [  # a plain lexical crosswalk: one regex per class, first match wins
    ("part-whole", r"\b(part|parts|component|consists|made from|material|contains)\b"),
    ("member-collection", r"\b(instance|subclass|member|collection|catalog|taxon|league|affiliation)\b"),
    ("causal", r"\b(cause|causes|effect|influenced|inspired|based on|derived|regulates|encodes)\b"),
    ("temporal", r"\b(follows|followed|replaces|replaced|date|time|period|event|season|participant)\b"),
    ("spatial", r"\b(located|location|place|country|territorial|border|capital|headquarters|route)\b"),
    ("comparative", r"\b(same|different|opposite|synonym|homolog|ortholog|equivalent)\b"),
    ("attributive", r"."),
]


def chaingraph_classify_all() -> Run:
    from chaingraph.crosswalk import Crosswalk, read_property_facts

    facts = read_property_facts(PROPERTIES)
    walk = Crosswalk.default()

    def run() -> tuple[int, dict[str, Any]]:
        out = walk.classify_all(facts)
        return len(out), {"unclassified": sum(c.status == "unclassified" for c in out)}

    return run


def chaingraph_end_to_end() -> Run:
    from chaingraph.crosswalk import Crosswalk, read_property_facts

    def run() -> tuple[int, dict[str, Any]]:
        out = Crosswalk.default().classify_all(read_property_facts(PROPERTIES))
        return len(out), {}

    return run


def naive_regex() -> Run:
    from chaingraph.crosswalk import read_property_facts

    facts = read_property_facts(PROPERTIES)
    rules = [(name, re.compile(pattern)) for name, pattern in NAIVE]

    def run() -> tuple[int, dict[str, Any]]:
        out = {}
        for ident, f in facts.items():
            label = (f.label or "").lower()
            out[ident] = next((name for name, rx in rules if rx.search(label)), None)
        return len(out), {}

    return run


def _edges() -> list[str]:
    with gzip.open(CODEX, "rt", encoding="utf-8") as handle:
        next(handle)
        return [line.split("\t")[2] for line in handle if not line.split("\t")[0].endswith("_neg")]


def relation_class_per_edge() -> Run:
    from chaingraph.crosswalk import Crosswalk

    props = _edges()
    walk = Crosswalk.default()

    def run() -> tuple[int, dict[str, Any]]:
        hits = sum(walk.relation_class(p) is not None for p in props)
        return len(props), {"with class": hits}

    return run


def dict_get_per_edge() -> Run:
    from chaingraph.crosswalk import Crosswalk

    props = _edges()
    walk = Crosswalk.default()
    table = {p: walk.relation_class(p) for p in set(props)}

    def run() -> tuple[int, dict[str, Any]]:
        hits = sum(table.get(p) is not None for p in props)
        return len(props), {"with class": hits}

    return run


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else 7
    if not PROPERTIES.is_file():
        print(f"shared data not found at {PROPERTIES}; set CHAINGRAPH_SHARED_DATA", file=sys.stderr)
        return 2
    whole = [
        measure(Case("chaingraph classify_all", f"{MODULE}:chaingraph_classify_all", {}, repeat)),
        measure(
            Case("chaingraph end-to-end (read+load+classify)", f"{MODULE}:chaingraph_end_to_end", {}, repeat)
        ),
        measure(Case("naive regex pass (peer)", f"{MODULE}:naive_regex", {}, repeat)),
    ]
    print(
        markdown_table(
            "Classify all 13,271 real properties",
            whole,
            baseline="naive regex pass (peer)",
            unit="properties",
        )
    )
    print(f"unclassified by chaingraph: {whole[0].extra['unclassified']}\n")
    edges = [
        measure(Case("chaingraph relation_class", f"{MODULE}:relation_class_per_edge", {}, repeat)),
        measure(Case("dict.get over a precomputed map", f"{MODULE}:dict_get_per_edge", {}, repeat)),
    ]
    print(
        markdown_table(
            "relation_class per edge (CoDEx-M, positives)",
            edges,
            baseline="dict.get over a precomputed map",
            unit="edges",
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
