"""Rewrite ``properties.tsv.gz``: the property facts the crosswalk falls back on.

    python data/crosswalk/regenerate_properties.py [MERGED.tsv.gz]

MERGED defaults to ``../shared/data/properties/wikidata_properties_merged.tsv.gz`` beside the
repository (or under ``$CHAINGRAPH_SHARED_DATA``). The output is deterministic (rows in id
order, gzip without a timestamp), so a re-run on the same list gives the same bytes;
``tests/test_crosswalk_packaged.py`` checks the shipped file is what this script writes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "properties.tsv.gz"
SOURCE = "properties/wikidata_properties_merged.tsv.gz"
#: output columns, named as in the merged list so this file is itself a property list
COLUMNS = ("pid", "datatype", "label_en", "sqid_p31_classes", "aliases_en_json", "description_en")
#: properties whose aliases and description are kept: only these reach the keyword rule
ITEM_VALUED = (None, "wikibase-item")

HEADER = """\
# Property facts for the crosswalk: datatype, English label and own P31 classes of every
# Wikidata property of the shared property list, so that the crosswalk decides properties
# outside table.tsv without being given a list (`chaingraph crosswalk P571`, and the crosswalk
# behind expand and audit). A list given explicitly (`--properties FILE`, `properties=`)
# replaces these facts. Read by chaingraph.crosswalk.facts.PackagedFacts.
# source: {source} (sha256 {digest})
# properties: {count}
#
# Columns (tab-separated; named as in the source list, so this file is a property list too):
#   pid               the property id
#   datatype          Wikidata JSON spelling (wikibase-item, external-id, quantity, time, ...):
#                     the 2026 list, else January 2022, else SQID 2016 (see the data README)
#   label_en          English label (January 2022, else SQID 2016); empty for properties
#                     created after January 2022
#   sqid_p31_classes  the property's own P31 classes, ;-separated Q-ids (SQID, 2016-04-19)
#   aliases_en_json   English aliases as a JSON list (January 2022), item-valued rows only
#   description_en    English description (January 2022), item-valued rows only
#
# Aliases and descriptions are kept only for item-valued properties (datatype wikibase-item
# or unknown): only those reach the keyword rule, every other datatype is decided by the
# datatype rule (datatypes.tsv) first. tests/test_crosswalk_packaged.py checks that these
# facts classify every property exactly as the full source list does.
# Regenerate: python data/crosswalk/regenerate_properties.py [MERGED.tsv.gz]
"""


def default_source() -> Path:
    env = os.environ.get("CHAINGRAPH_SHARED_DATA")
    return (Path(env) if env else HERE.parents[1].parent / "shared" / "data") / SOURCE


def render(source: Path) -> bytes:
    """The gzip'd bytes of ``properties.tsv.gz`` made from the merged list at ``source``."""
    from chaingraph.crosswalk import read_property_facts

    facts = read_property_facts(source)
    lines = [HEADER.format(source=SOURCE, digest=hashlib.sha256(source.read_bytes()).hexdigest(),
                           count=len(facts)), "\t".join(COLUMNS) + "\n"]
    for ident in sorted(facts, key=lambda p: int(p[1:])):
        f = facts[ident]
        lexical = f.datatype in ITEM_VALUED
        cells = (
            f.id,
            f.datatype or "",
            f.label or "",
            ";".join(f.classes),
            json.dumps(list(f.aliases), ensure_ascii=False) if lexical and f.aliases else "",
            (f.description or "") if lexical else "",
        )
        if any("\t" in c or "\n" in c for c in cells):
            raise ValueError(f"{ident}: a field holds a tab or a newline; the TSV cannot carry it")
        lines.append("\t".join(cells) + "\n")
    return gzip.compress("".join(lines).encode("utf-8"), compresslevel=9, mtime=0)


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else default_source()
    OUTPUT.write_bytes(render(source))
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size:,} bytes) from {source}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1]))
    raise SystemExit(main(sys.argv[1:]))
