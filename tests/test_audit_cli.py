"""``chaingraph audit`` through click's runner and once as a real subprocess; plots; formats."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from chaingraph.audit import AuditReport
from chaingraph.cli import cli

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "audit"


def test_json_output_is_an_audit_report(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["audit", str(FIXTURES / "properties"), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = AuditReport.model_validate_json(result.output)
    assert report.edges == 21 and report.class_counts()["spatial"] == 11


def test_markdown_has_the_class_table_with_a_total(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["audit", str(FIXTURES / "labels"), "--format", "md"])
    assert result.exit_code == 0, result.output
    assert "| causal | 3 | 21.43 |" in result.output
    assert "| **total** | **14** | **100.00** |" in result.output
    assert "| L2 | 5 ≤ H < 10 | 2 | 66.67 |" in result.output


def test_csv_is_one_long_table(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["audit", str(FIXTURES / "roles"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    classes = {r["key"]: (int(r["count"]), r["percent"]) for r in rows if r["section"] == "relation_class"}
    assert classes["spatial"] == (2, "25.00") and classes["total"] == (8, "100.00")
    assert {r["key"] for r in rows if r["section"] == "unclassified"} == {
        "role 'wibble_of'",
        "role 'sibling/sibling'",
    }


def test_table_output_and_plots(runner: CliRunner, tmp_path: Path) -> None:
    png, svg = tmp_path / "audit.png", tmp_path / "audit.svg"
    result = runner.invoke(cli, ["audit", str(FIXTURES / "chaingraph"), "--plot", str(png)])
    assert result.exit_code == 0, result.output
    assert "Relation classes" in result.output and "total" in result.output and "24" in result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    result = runner.invoke(
        cli, ["audit", str(FIXTURES / "chaingraph"), "--format", "json", "--plot", str(svg)]
    )
    assert result.exit_code == 0
    assert "<svg" in svg.read_text()[:500]


def test_bad_input_is_listed_but_strict_fails_with_one_line(runner: CliRunner) -> None:
    lenient = runner.invoke(cli, ["audit", str(FIXTURES / "mixed"), "--format", "json"])
    assert lenient.exit_code == 0
    assert json.loads(lenient.output)["problem_count"] == 7
    strict = runner.invoke(cli, ["audit", str(FIXTURES / "mixed"), "--strict"])
    assert strict.exit_code == 2
    assert strict.output.startswith("error: ") and strict.output.count("\n") == 1
    assert "a_tasks.json:5 (record 4)" in strict.output


def test_argument_errors(runner: CliRunner, tmp_path: Path) -> None:
    missing = runner.invoke(cli, ["audit", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "no such file or folder" in missing.output
    bad_plot = runner.invoke(cli, ["audit", str(FIXTURES / "labels"), "--plot", str(tmp_path / "x.gif")])
    assert bad_plot.exit_code == 2 and ".png, .svg, .pdf" in bad_plot.output
    assert not (tmp_path / "x.gif").exists()


def test_the_installed_command_runs_as_a_subprocess() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "chaingraph", "audit", str(FIXTURES / "mixed"), "--format", "md"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "| spatial | 5 | 35.71 |" in out.stdout and "Traceback" not in out.stderr
    strict = subprocess.run(
        [sys.executable, "-m", "chaingraph", "audit", str(FIXTURES / "mixed"), "--strict"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert strict.returncode == 2 and strict.stderr.startswith("error: ") and "Traceback" not in strict.stderr


def test_the_shipped_property_facts_decide_properties_outside_the_table_and_a_list_overrides_them(
    runner: CliRunner, shared_data: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"steps": [["Q1", "P214", "Q2"], ["Q2", "P131", "Q3"]]}) + "\n")
    plain = AuditReport.model_validate_json(
        runner.invoke(cli, ["audit", str(corpus), "--format", "json"]).output
    )
    # P214 (VIAF ID) is outside the table: the shipped facts say external-id, not a relation
    assert plain.class_counts()["not-a-relation"] == 1 and plain.class_counts()["spatial"] == 1
    assert "unclassified" not in plain.class_counts()
    listed = runner.invoke(
        cli,
        [
            "audit",
            str(corpus),
            "--format",
            "json",
            "--no-progress",
            "--properties",
            str(shared_data / "properties" / "wikidata_properties_merged.tsv.gz"),
        ],
    )
    assert listed.exit_code == 0, listed.output
    report = AuditReport.model_validate_json(listed.output)
    assert report.class_counts()["not-a-relation"] == 1 and "unclassified" not in report.class_counts()
    assert [r.route for r in report.routes if r.edges] == ["property"]
    other = tmp_path / "other.tsv"
    other.write_text("pid\tlabel_en\tdatatype\nP214\tVIAF ID\tquantity\n")
    overridden = runner.invoke(
        cli, ["audit", str(corpus), "--format", "json", "--no-progress", "--properties", str(other)]
    )
    assert overridden.exit_code == 0, overridden.output
    counts = AuditReport.model_validate_json(overridden.output).class_counts()
    assert counts["attributive"] == 1 and "not-a-relation" not in counts
