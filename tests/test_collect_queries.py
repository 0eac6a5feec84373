"""The query files document themselves: header names the file, its parameters and columns,
and every projected variable and placeholder is documented (docs that cannot drift)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chaingraph.resources import queries_dir
from chaingraph.sources.sparql_source import render_query

QUERIES = sorted(queries_dir().glob("*.rq"))


def test_the_crawl_queries_are_all_there() -> None:
    assert {q.stem for q in QUERIES} >= {"statements", "snaks_by_item", "snaks_by_statement", "in_edges",
                                        "entity_info", "properties"}


@pytest.mark.parametrize("path", QUERIES, ids=lambda p: p.name)
def test_header_names_parameters_and_columns(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    assert text.startswith(f"# {path.name}:")
    assert "# Parameters:" in header and "# Columns:" in header
    for placeholder in set(re.findall(r"\{\{(\w+)\}\}", text)):
        assert "{{" + placeholder + "}}" in header, placeholder
    select = re.search(r"^SELECT (.*?)\nWHERE", text, re.S | re.M)
    assert select is not None
    for var in re.findall(r"\?(\w+)", select.group(1)):
        assert f"?{var}" in header, var
    # explicit prefixes only: every prefix used is declared in the file
    declared = set(re.findall(r"^PREFIX (\w+):", text, re.M))
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    used = set(re.findall(r"(?<![\w<\"/#])([a-z]+):[A-Za-z]", body)) - {"http", "https"}
    assert used <= declared, used - declared


def test_rendered_queries_hold_only_validated_ids() -> None:
    q = render_query("in_edges", items=["Q5", "Q42"], limit=7)
    body = "\n".join(line for line in q.splitlines() if not line.startswith("#"))
    assert body.count("LIMIT 7") == 2 and "VALUES ?item { wd:Q5 }" in body and "{{" not in body
    injected = "http://www.wikidata.org/entity/statement/Q1-x> } ?s ?p ?o {"
    with pytest.raises(ValueError, match="not a Wikidata statement IRI"):
        render_query("snaks_by_statement", statements=[injected])
