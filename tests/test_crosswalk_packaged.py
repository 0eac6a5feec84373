"""The property facts shipped with chaingraph (data/crosswalk/properties.tsv.gz): what they hold,
that the crosswalk falls back on them (CLI, library, audit, expand), that an explicit list
replaces them, and that they are read only when a property outside the table is asked."""

from __future__ import annotations

import gzip
import importlib
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from chaingraph.cli import cli
from chaingraph.crosswalk import (
    PACKAGED_FACTS,
    Crosswalk,
    PackagedFacts,
    default_crosswalk,
    read_property_facts,
    relation_classifier,
)
from chaingraph.crosswalk import crosswalk as run_crosswalk
from chaingraph.errors import BadDumpLine
from chaingraph.resources import data_file

SHIPPED = data_file("crosswalk/properties.tsv.gz")
MERGED = "properties/wikidata_properties_merged.tsv.gz"


def _regenerate_module() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "data" / "crosswalk" / "regenerate_properties.py"
    spec = importlib.util.spec_from_file_location("regenerate_properties", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_file_is_what_the_regenerate_script_writes(shared_data: Path) -> None:
    assert _regenerate_module().render(shared_data / MERGED) == SHIPPED.read_bytes(), (
        "run python data/crosswalk/regenerate_properties.py and review the diff"
    )


def test_the_shipped_file_documents_its_columns_and_reads_as_a_property_list() -> None:
    with gzip.open(SHIPPED, "rt", encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    header = [line for line in lines if line.startswith("#")]
    assert header == lines[: len(header)], "documentation lines come first"
    columns = lines[len(header)].split("\t")
    assert columns[0] == "pid"
    for column in columns:
        assert any(line.startswith(f"#   {column} ") for line in header), f"column {column} is undocumented"
    assert "# properties: 13271" in header
    assert len(read_property_facts(SHIPPED)) == 13271


def test_the_shipped_facts_hold_every_property_of_the_list_and_classify_each_as_the_list_does(
    shared_data: Path,
) -> None:
    full = read_property_facts(shared_data / MERGED)
    shipped = dict(PackagedFacts())
    assert set(shipped) == set(full) and len(full) == 13271
    for ident, f in full.items():
        s = shipped[ident]
        assert (s.datatype, s.label, s.classes) == (f.datatype, f.label, f.classes), ident
    walk = Crosswalk.default()
    by_list = {c.property: c for c in walk.classify_all(full)}
    by_shipped = {c.property: c for c in walk.classify_all(shipped)}
    assert by_shipped == by_list


def test_crosswalk_answers_for_properties_outside_the_table_with_no_flag() -> None:
    result = CliRunner().invoke(cli, ["crosswalk", "P571", "P1082", "P2046"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split()[1:3] for line in result.output.splitlines()[2:]}
    assert rows == {
        "P571": ["temporal", "datatype"],
        "P1082": ["attributive", "datatype"],
        "P2046": ["attributive", "datatype"],
    }


def test_an_explicit_property_list_replaces_the_shipped_facts(tmp_path: Path) -> None:
    other = tmp_path / "props.tsv"
    other.write_text("pid\tlabel_en\tdatatype\nP571\tinception\texternal-id\n")
    result = CliRunner().invoke(cli, ["crosswalk", "P571", "--properties", str(other), "--format", "tsv"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1].split("\t")[:4] == ["P571", "", "not-a-relation", "datatype"]
    missing = CliRunner().invoke(cli, ["crosswalk", "P1082", "--properties", str(other)])
    assert missing.exit_code == 2 and f"P1082 is not in {other}" in missing.output


def test_all_without_a_list_summarises_the_shipped_properties() -> None:
    report = run_crosswalk(all=True)
    assert report.summary is not None and report.summary.total == 13271


def test_the_crosswalk_behind_expand_and_audit_falls_back_on_the_shipped_facts() -> None:
    classifier = relation_classifier(["P571", "P1082", "P131"])  # no store: nothing else is known
    assert classifier.classes == {
        "P571": ("temporal", "datatype"),
        "P1082": ("attributive", "datatype"),
        "P131": ("spatial", "table"),
    }
    assert default_crosswalk().facts is PACKAGED_FACTS
    assert Crosswalk(default_crosswalk().tables).classify("P571").status == "unclassified"


def test_the_shipped_facts_are_read_only_for_a_property_outside_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    facts = PackagedFacts()
    walk = Crosswalk(default_crosswalk().tables, facts)
    assert walk.classify("P131").rule == "table" and not facts.loaded
    assert walk.classify("P571").rule == "datatype" and facts.loaded
    report_facts = PackagedFacts()
    report_module = importlib.import_module("chaingraph.crosswalk.report")
    monkeypatch.setattr(report_module, "PACKAGED_FACTS", report_facts)
    assert run_crosswalk(["P361"], labels=["part_of"]).classifications[0].rule == "table"
    assert not report_facts.loaded
    assert run_crosswalk(["P2046"]).classifications[0].rule == "datatype" and report_facts.loaded


def test_a_malformed_row_of_a_packaged_file_is_an_error_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "props.tsv"
    path.write_text("# doc\npid\tdatatype\nP1\tquantity\nP2\tx\ty\n")
    facts = PackagedFacts(path)
    assert facts["P1"].datatype == "quantity" and len(facts) == 2
    with pytest.raises(BadDumpLine, match=r"props\.tsv:4: 3 tab-separated fields"):
        facts["P2"]
    path.write_text("pid\tdatatype\nP1\tquantity\nP1\tstring\n")
    with pytest.raises(BadDumpLine, match=r"props\.tsv:3: P1 appears twice"):
        len(PackagedFacts(path))


def test_documentation_lines_of_a_property_list_are_skipped_and_counted_in_line_numbers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "props.tsv"
    path.write_text("# a documented list\n# second line\npid\tdatatype\nP1\tquantity\nP2\tx\ty\n")
    with pytest.raises(BadDumpLine, match=r"props\.tsv:5: 3 tab-separated fields"):
        read_property_facts(path)
    path.write_text("# documented\npid\tdatatype\nP1\tquantity\n")
    assert read_property_facts(path)["P1"].datatype == "quantity"
