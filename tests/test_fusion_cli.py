"""``chaingraph fuse``: readable and JSON output, exit codes 0 / 1 / 2, schema, store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from chaingraph.cli import cli
from chaingraph.fusion import FusionRefusal, FusionResult, FusionSpec
from chaingraph.store import Batch, Store, statement_row
from chaingraph.values import QuantityValue

FIXTURES = Path(__file__).parent / "fixtures" / "fusion"


def test_a_result_prints_inputs_steps_checks_and_exits_0(runner: CliRunner) -> None:
    res = runner.invoke(cli, ["fuse", str(FIXTURES / "augustus.json")])
    assert res.exit_code == 0, res.output
    assert "result: +57 year (Q577)" in res.output
    assert "astronomical year -43" in res.output
    assert "ok  targets_unique" in res.output


def test_json_output_is_the_result_record(runner: CliRunner) -> None:
    res = runner.invoke(cli, ["fuse", str(FIXTURES / "karlsruhe_bielefeld_2013.json"), "--format", "json"])
    assert res.exit_code == 0, res.output
    record = FusionResult.model_validate_json(res.output)
    assert (record.result, record.spec_id) == ("+29761", "population-gap-2013")
    assert [i.statement_id for i in record.inputs] == ["Q2112$A", "Q1040$A"]


def test_a_refusal_is_printed_and_exits_1(runner: CliRunner) -> None:
    path = str(FIXTURES / "karlsruhe_bielefeld_no_rule.json")
    res = runner.invoke(cli, ["fuse", path])
    assert res.exit_code == 1
    assert "refused: multi_valued (component bielefeld)" in res.output
    res = runner.invoke(cli, ["fuse", path, "--format", "json"])
    assert res.exit_code == 1
    assert FusionRefusal.model_validate_json(res.output).reason == "multi_valued"


def test_bad_input_is_one_line_with_the_json_path_and_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(cli, ["fuse", str(FIXTURES / "bad_precision.json")])
    assert res.exit_code == 2
    assert res.output.strip().count("\n") == 0
    assert "bad_precision.json: components[0].value: time value" in res.output
    assert "precision 19 is outside 0..14" in res.output
    broken = tmp_path / "broken.json"
    broken.write_text('{"operation": "add", "components": [', encoding="utf-8")
    res = runner.invoke(cli, ["fuse", str(broken)])
    assert res.exit_code == 2 and "not JSON" in res.output and "Traceback" not in res.output
    res = runner.invoke(cli, ["fuse", str(tmp_path / "missing.json")])
    assert res.exit_code == 2 and "cannot read the spec" in res.output


def test_spec_from_stdin_and_statement_ids_from_a_store(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    with Store(path) as store:
        store.write(Batch(statements=[
            statement_row("Q1040$P", "Q1040", "P2046", QuantityValue(amount="+173.46", unit="Q712226")),
            statement_row("Q2112$P", "Q2112", "P2046", QuantityValue(amount="+258.82", unit="Q712226"))]))
    spec = {"operation": "add", "components": [{"id": "a", "value": {"statement": "Q1040$P"}},
                                               {"id": "b", "entity": "Q2112", "property": "P2046"}]}
    res = runner.invoke(cli, ["fuse", "-", "--store", str(path)], input=json.dumps(spec))
    assert res.exit_code == 0, res.output
    assert "result: +432.28 square kilometre (Q712226)" in res.output
    res = runner.invoke(cli, ["fuse", "-"], input=json.dumps(spec))
    assert res.exit_code == 2 and "needs a store" in res.output


def test_schemas_are_published(runner: CliRunner) -> None:
    for name, model in (("fusion-spec", FusionSpec), ("fusion-result", FusionResult),
                        ("fusion-refusal", FusionRefusal)):
        res = runner.invoke(cli, ["schema", name])
        assert res.exit_code == 0
        assert json.loads(res.output) == model.model_json_schema()


def test_fuse_runs_as_a_subprocess() -> None:
    spec = (FIXTURES / "augustus.json").read_text(encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "chaingraph", "fuse", "-", "--format", "json"], input=spec,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "+57"
    bad = subprocess.run([sys.executable, "-m", "chaingraph", "fuse", "-"], input="[]", capture_output=True,
                         text=True, timeout=120, check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error: -:") and "Traceback" not in bad.stderr


def test_help_names_the_exit_codes(runner: CliRunner) -> None:
    res = runner.invoke(cli, ["fuse", "--help"])
    assert res.exit_code == 0 and "Exits 0 for a result, 1 for a refusal, 2 for a bad spec" in res.output
