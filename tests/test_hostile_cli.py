"""Every command as a hostile or careless user would run it: the exit-code contract
(0 ok, 1 refusal or --strict, 2 bad input, 3 store, 4 endpoint, 70 internal error,
130 interrupted), store paths that are not stores, inputs that are not files or hold
impossible values, and data that tries to drive the terminal. Every failure is one line
on stderr, never a traceback; tiny inputs cannot demand unbounded memory or time (checked
in a subprocess under an address-space limit and a time-out).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import chaingraph
from chaingraph.cli import cli
from chaingraph.errors import StoreError
from chaingraph.store import Store

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
TASK = FIXTURES / "necessity" / "story" / "birth-year.json"
SPEC = FIXTURES / "fusion" / "augustus.json"
SAMPLE = REPO / "data" / "sample" / "douglas-adams.json"
CODE = str(Path(chaingraph.__file__).resolve().parent.parent)
RAW = ("\x1b", "\x07", "\x9b")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def one_line_error(res: Result, code: int) -> str:
    assert res.exit_code == code, (res.exit_code, res.output)
    assert "Traceback" not in res.output and res.stderr.count("\n") == 1, res.stderr
    return res.stderr


def run(args: list[str], *, megabytes: int = 2000, timeout: float = 60,
        **kw: Any) -> subprocess.CompletedProcess[str]:
    """``python -m chaingraph ARGS`` under an address-space limit, as a user would run it."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([CODE, os.environ.get("PYTHONPATH", "")])}
    kw.setdefault("capture_output", True)
    return subprocess.run([sys.executable, "-m", "chaingraph", *args], text=True, timeout=timeout, env=env,
                          preexec_fn=limit, **kw)


def foreground() -> None:
    """In a child before it runs: Ctrl-C (SIGINT) as a program started in the foreground of a
    shell gets it. A test run started in the background (``pytest &``, or by a script) has
    SIGINT ignored, the child inherits that, and the signal a Ctrl-C test sends does nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# -- 1. a store is a local DuckDB file --------------------------------------------------------

@pytest.mark.parametrize("name", ["ex.json", "ex.jsonl", "ex.csv", "ex.parquet", "a.sqlite", ":memory:",
                                  "md:foo", "http://example.org/x.duckdb", "s3://bucket/x.duckdb"])
def test_a_store_path_that_is_not_a_duckdb_file_is_refused_before_it_is_opened(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    if name.startswith("ex."):
        Path(name).write_text("{}\n")  # an existing data file must not be mistaken for a store
    res = invoke("load", str(SAMPLE), "--store", name)
    assert "store" in one_line_error(res, 3)
    res = invoke("collect", "--seed", "Q42", "--radius", "1", "--store", name,
                 "--endpoint", "http://127.0.0.1:9/q")
    one_line_error(res, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ([name] if name.startswith("ex.") else [])
    if name.startswith("ex."):
        assert Path(name).read_text() == "{}\n"


def test_someone_elses_duckdb_file_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    import duckdb

    path = tmp_path / "theirs.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE invoices (id INTEGER, total DECIMAL(10, 2))")
    res = invoke("load", str(SAMPLE), "--store", str(path))
    assert "not a chaingraph store" in one_line_error(res, 3)
    with duckdb.connect(str(path), read_only=True) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert tables == {"invoices"}
    with pytest.raises(StoreError):
        Store(path, read_only=True)


def test_the_library_keeps_an_in_memory_store_and_a_real_store_still_opens(tmp_path: Path) -> None:
    with Store() as s:
        assert s.path is None
    path = tmp_path / "world.duckdb"
    assert invoke("load", str(SAMPLE), "--store", str(path)).exit_code == 0
    assert invoke("summary", "--store", str(path)).exit_code == 0


# -- 2. bounded inputs -----------------------------------------------------------------------

def _spec(tmp_path: Path, amounts: list[Any], **extra: Any) -> Path:
    spec = {"operation": "add", "components": [
        {"id": f"c{i}", "value": {"type": "quantity", "value": {"amount": a, "unit": "1", **extra}}}
        for i, a in enumerate(amounts)]}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


@pytest.mark.parametrize("amount", ["+1e-999999999", "+1e999999999", "+1e99999999999999999999"])
def test_a_tiny_spec_with_a_huge_exponent_is_refused_fast_in_bounded_memory(tmp_path: Path,
                                                                            amount: str) -> None:
    res = run(["fuse", str(_spec(tmp_path, [amount, "+1"]))], megabytes=1500, timeout=60)
    assert res.returncode == 2, res.stderr
    assert "exponent" in res.stderr and res.stderr.count("\n") == 1


def test_an_integer_of_5000_digits_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text('{"operation": "add", "components": [{"id": "a", "value": ' + "9" * 5000 + "}]}")
    assert "4300" in one_line_error(invoke("fuse", str(path)), 2)


@pytest.mark.parametrize("command", ["fuse", "necessity", "audit", "audit-properties",
                                     "crosswalk-properties"])
@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_inputs_that_are_not_regular_files_are_refused(tmp_path: Path, command: str, kind: str) -> None:
    if kind == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    args = {"fuse": ["fuse", str(path)], "necessity": ["necessity", str(path)], "audit": ["audit", str(path)],
            "audit-properties": ["audit", str(FIXTURES / "audit"), "--properties", str(path)],
            "crosswalk-properties": ["crosswalk", "P31", "--properties", str(path)]}[command]
    res = run(args, megabytes=1500, timeout=60)
    assert res.returncode == 2, res.stderr
    assert "not a regular file" in res.stderr and "Traceback" not in res.stderr


def test_a_property_list_line_longer_than_the_limit_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "props.tsv"
    path.write_text("pid\tlabel\nP1\t" + "x" * 2_000_000)  # 2 MB, no line end
    res = run(["crosswalk", "--all", "--properties", str(path)], megabytes=1500)
    assert res.returncode == 2 and "props.tsv:2: a line longer than" in res.stderr, res.stderr


@pytest.mark.parametrize("command", ["fuse", "necessity"])
def test_json_nested_100k_deep_is_one_line(tmp_path: Path, command: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "nested too deeply" in one_line_error(invoke(command, str(path)), 2)


def test_an_audit_record_nested_100k_deep_is_a_listed_problem(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    res = invoke("audit", str(path), "--format", "json")
    assert res.exit_code == 0 and "nested too deeply" in res.stdout
    assert "nested too deeply" in one_line_error(invoke("audit", str(path), "--strict"), 2)


# -- 7. impossible values ----------------------------------------------------------------------

@pytest.mark.parametrize(("amounts", "extra", "needle"), [
    (["NaN", "+1"], {}, "not a decimal number"),
    (["+Infinity", "+1"], {}, "not a decimal number"),
    (["+5", "+1"], {"upperBound": "+1", "lowerBound": "+9"}, "outside its bounds"),
])
def test_impossible_quantities_are_refused(tmp_path: Path, amounts: list[str], extra: dict[str, str],
                                           needle: str) -> None:
    assert needle in one_line_error(invoke("fuse", str(_spec(tmp_path, amounts, **extra))), 2)


@pytest.mark.parametrize(("time", "needle"), [("+2023-02-30T00:00:00Z", "February 2023 has 28 days"),
                                              ("+2020-13-01T00:00:00Z", "month 13")])
def test_impossible_dates_are_refused_not_rolled_over(tmp_path: Path, time: str, needle: str) -> None:
    spec = json.loads(SPEC.read_text())
    spec["components"][0]["value"]["value"]["time"] = time
    spec["components"][0]["value"]["value"]["calendarmodel"] = "http://www.wikidata.org/entity/Q1985727"
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    assert needle in one_line_error(invoke("fuse", str(path)), 2)


def test_a_value_with_precision_minus_one_is_refused_by_necessity_too(tmp_path: Path) -> None:
    task = json.loads(TASK.read_text())
    task["target"]["value"]["precision"] = -1
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    assert "precision -1 is outside 0..14" in one_line_error(invoke("necessity", str(path)), 2)


# -- 5. the terminal ---------------------------------------------------------------------------

HOSTILE = "\x1b[2J\x1b]0;pwned\x07\x9b31m"


def test_necessity_neutralises_clue_text_even_when_piped(tmp_path: Path) -> None:
    task = json.loads(TASK.read_text())
    task["clues"][1]["text"] = HOSTILE + "[bold]headquartered[/bold]"
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    res = invoke("necessity", str(path))
    assert res.exit_code == 0, res.output
    assert "\\x1b[2J" in res.stdout and "headquartered[/bold]" in res.stdout  # shown, escaped
    assert not any(c in res.output for c in RAW)
    data = json.loads(invoke("necessity", str(path), "--format", "json").stdout)  # data keeps the data
    assert any(c["text"].startswith(HOSTILE) for c in data["clues"])


def test_fuse_neutralises_the_title_sequence_too(tmp_path: Path) -> None:
    spec = json.loads(SPEC.read_text())
    spec["components"][0]["label"] = HOSTILE + "Caesar"
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    res = invoke("fuse", str(path))
    assert res.exit_code == 0 and "\\x1b]0;pwned\\x07" in res.stdout
    assert not any(c in res.output for c in RAW)


def test_crosswalk_and_audit_neutralise_labels(tmp_path: Path) -> None:
    res = invoke("crosswalk", "--label", HOSTILE + "part_of")
    assert res.exit_code == 0 and not any(c in res.output for c in RAW)
    corpus = tmp_path / "c.jsonl"
    record = {"edges": [{"relation": HOSTILE + "part_of", "subject": "a", "object": "b"}]}
    corpus.write_text(json.dumps(record) + "\n")
    for fmt in ("table", "md"):
        res = invoke("audit", str(corpus), "--format", fmt)
        assert res.exit_code == 0, res.output
        assert not any(c in res.output for c in RAW)


# -- 6. one exit-code contract -----------------------------------------------------------------

@pytest.mark.parametrize(("args", "code"), [
    (["load", str(SAMPLE), "--store", "{tmp}/s.duckdb"], 0),
    (["load", "{tmp}/missing.json", "--store", "{tmp}/s.duckdb"], 2),
    (["summary", "--store", "{tmp}/missing.duckdb"], 3),
    (["collect", "--seed", "Q42", "--radius", "1", "--store", "{tmp}/c.duckdb", "--endpoint",
      "http://127.0.0.1:9/sparql", "--retries", "0"], 4),
    (["collect", "--seed", "Q42", "--radius", "1", "--store", "{tmp}/c.duckdb", "--offline"], 4),
    (["collect", "--seed", "Q0x", "--radius", "1", "--store", "{tmp}/c.duckdb"], 2),
    (["crosswalk", "P31"], 0),
    (["crosswalk", "X31"], 2),
    (["expand", "--seed", "Q42", "--top", "1"], 0),
    (["expand", "--seed", "Q42", "--hub-limit", "-5"], 2),
    (["expand", "--seed", "Q42", "--store", "{tmp}/missing.duckdb"], 2),
    (["necessity", str(TASK)], 0),
    (["necessity", "{tmp}/missing.json"], 2),
    (["fuse", str(SPEC)], 0),
    (["fuse", str(FIXTURES / "fusion" / "karlsruhe_bielefeld_no_rule.json")], 1),
    (["fuse", "{tmp}/missing.json"], 2),
    (["audit", str(FIXTURES / "audit")], 0),
    (["audit", "{tmp}/missing"], 2),
    (["audit", str(FIXTURES / "audit"), "--plot", "{tmp}/no/such/folder/plot.png"], 2),
    (["audit", str(FIXTURES / "audit"), "--plot", "{tmp}/plot.png"], 0),
    (["score", "{tmp}/missing.json", "{tmp}/runs.jsonl"], 2),
    (["schema", "task"], 0),
    (["schema", "nonsense"], 2),
])
def test_every_command_keeps_the_exit_code_contract(tmp_path: Path, args: list[str], code: int) -> None:
    res = invoke(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert res.exit_code == code, res.output
    assert "Traceback" not in res.output
    if code > 1 and "Usage:" not in res.stderr:  # click's usage errors print usage and a hint
        assert res.stderr.count("\n") == 1, res.stderr


def test_a_bug_is_exit_70_with_one_line_to_report(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr("chaingraph.cli.fuse.fuse_spec", broken)
    err = one_line_error(invoke("fuse", str(SPEC)), 70)
    assert err.startswith("internal error: ZeroDivisionError") and "report" in err


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), StoreError("cannot write: Query interrupted"),
                                 RuntimeError("Query interrupted")])
def test_an_interrupt_is_130_whoever_reports_it(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise exc

    monkeypatch.setattr("chaingraph.cli.fuse.fuse_spec", interrupted)
    assert "interrupted" in one_line_error(invoke("fuse", str(SPEC)), 130)


def test_ctrl_c_during_a_real_load_exits_130_without_a_traceback(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "world" / "codex-m.nt.gz"
    interrupted = 0
    for n, delay in enumerate((1.0, 2.0, 3.5, 5.0)):
        proc = subprocess.Popen([sys.executable, "-m", "chaingraph", "load", str(source), "--store",
                                 str(tmp_path / f"i{n}.duckdb")], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": CODE},
                                preexec_fn=foreground)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        if proc.returncode == 0:
            continue  # finished before the signal: nothing to check
        assert proc.returncode == 130, err
        assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("interrupted"), err
        interrupted += 1
    assert interrupted, "every load finished before its signal: nothing was checked"


def test_ctrl_c_after_the_command_finished_does_not_kill_the_shutdown() -> None:
    # The signal arrives while the interpreter shuts down (an atexit hook sends it): the
    # command's work is done and written, so its exit status stands and nothing is printed.
    script = ("import atexit, os, signal\n"
              "atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))\n"
              "from chaingraph.cli import cli\n"
              "cli()\n")
    res = subprocess.run([sys.executable, "-c", script, "--version"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": CODE}, timeout=60, preexec_fn=foreground)
    assert res.returncode == 0 and "chaingraph" in res.stdout, res
    assert res.stderr == "", res.stderr


def test_ctrl_c_while_a_failed_command_is_on_its_way_out_keeps_its_exit_status() -> None:
    # The command fails (exit 2, one line); a SIGINT arrives while click closes its context,
    # after the command's own handler is gone: the program ignores it, as it does once a
    # command has returned, instead of letting it replace the exit status (click's
    # "Aborted!" exit 1, or a death by signal, -2, seen in a real load interrupted late).
    script = ("import os, signal, click\n"
              "import chaingraph.cli.fuse as f\n"
              "from chaingraph.errors import InvalidInput\n"
              "def failing(*a, **k):\n"
              "    ctx = click.get_current_context().find_root()\n"
              "    ctx.call_on_close(lambda: os.kill(os.getpid(), signal.SIGINT))\n"
              "    raise InvalidInput('spec: no such thing')\n"
              "f.fuse_spec = failing\n"
              "from chaingraph.cli import cli\n"
              "cli()\n")
    res = subprocess.run([sys.executable, "-c", script, "fuse", str(SPEC)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": CODE}, timeout=60, preexec_fn=foreground)
    assert res.returncode == 2, res
    assert res.stderr.strip().splitlines() == ["error: spec: no such thing"], res.stderr


def test_ctrl_c_inside_code_run_from_a_string_still_exits_130(tmp_path: Path) -> None:
    # A Ctrl-C that lands while code run from a string executes (dataclasses and namedtuple
    # define their methods so, when a command first imports a library) is marked unhandled
    # by CPython even though the command catches it; under `python -m` the interpreter then
    # died by SIGINT (-2) after the command had printed its line. Seen in 3 of 40 real loads
    # interrupted in their first half second.
    (tmp_path / "interrupting_load.py").write_text(
        "import chaingraph.sources.loaders as loaders\n"
        "def load(*args, **kwargs):\n"
        "    exec('import os, signal\\nos.kill(os.getpid(), signal.SIGINT)\\nwhile True:\\n    pass\\n')\n"
        "loaders.load = load\n"
        "from chaingraph.__main__ import main\n"
        "main()\n")
    sample = REPO / "data" / "sample" / "douglas-adams.json"
    res = subprocess.run([sys.executable, "-m", "interrupting_load", "load", str(sample), "--store",
                          str(tmp_path / "s.duckdb")], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([CODE, str(tmp_path)])}, timeout=60,
                         preexec_fn=foreground)
    assert res.returncode == 130, res
    assert res.stderr.strip().splitlines()[-1].startswith("interrupted"), res.stderr
    assert "Traceback" not in res.stderr


def test_a_second_ctrl_c_does_not_cut_the_first_ones_cleanup_short() -> None:
    from chaingraph.cli import _INTERRUPTS, _note_interrupt

    _INTERRUPTS.clear()
    with pytest.raises(KeyboardInterrupt):
        _note_interrupt(signal.SIGINT, None)
    _note_interrupt(signal.SIGINT, None)  # noted, not raised: the command is on its way out
    assert _INTERRUPTS == [signal.SIGINT, signal.SIGINT]
    _INTERRUPTS.clear()


def test_output_to_a_full_disk_is_one_line_not_a_traceback() -> None:
    with open("/dev/full", "w") as full:
        res = run(["schema", "task"], stdout=full, stderr=subprocess.PIPE, capture_output=False)
    assert res.returncode == 2, res.stderr
    assert "No space left on device" in res.stderr and "Traceback" not in res.stderr
    assert res.stderr.count("\n") == 1


def test_a_repeated_explain_explains_every_path() -> None:
    first = "Q42,Q350,Q178517,Q1327329,Q352766,Q264137"
    res = invoke("expand", "--explain", first, "--explain", "Q42,Q350")
    assert res.exit_code == 0, res.output
    assert res.stdout.count("Q42") >= 2 and "too_short" in res.stdout


def test_score_neutralises_ids_and_refuses_fifos_and_deep_json(tmp_path: Path) -> None:
    from score_story import TASK, build_store, claim, trajectory

    build_store(str(tmp_path / "story.duckdb")).close()
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{**TASK, "store": "story.duckdb"}]))
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(trajectory(claim("Q1", "P176", "Q2"), id=HOSTILE + "run")) + "\n")
    res = invoke("score", str(tasks), str(runs))
    assert res.exit_code == 0, res.output
    assert "\\x1b[2J" in res.stdout and not any(c in res.output for c in RAW)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    res = run(["score", str(tasks), str(fifo)], timeout=60)
    assert res.returncode == 2 and "not a regular file" in res.stderr, res.stderr
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in one_line_error(invoke("score", str(tasks), str(deep)), 2)


def test_ctrl_c_while_the_command_line_is_imported_is_one_line_not_a_traceback() -> None:
    # The signal arrives while the program imports click (a busy machine can spend a second
    # importing): the program says it was interrupted before it did anything and exits 130.
    script = ("import os, signal, sys\n"
              "class Interrupting:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name == 'click':\n"
              "            os.kill(os.getpid(), signal.SIGINT)\n"
              "        return None\n"
              "sys.meta_path.insert(0, Interrupting())\n"
              "from chaingraph.__main__ import main\n"
              "main()\n")
    res = subprocess.run([sys.executable, "-c", script, "--version"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": CODE}, timeout=60, preexec_fn=foreground)
    assert res.returncode == 130, res
    assert "Traceback" not in res.stderr and res.stderr.startswith("interrupted"), res.stderr
    assert res.stderr.count("\n") == 1 and res.stdout == ""


def test_a_duckdb_error_no_module_wrapped_shows_what_caused_the_aborted_transaction() -> None:
    # DuckDB's relation queries report an error as the aborted transaction it leaves
    # ("Current transaction is aborted"), the error itself its cause: the one line shows that.
    import duckdb

    from chaingraph.cli import exit_status

    con = duckdb.connect()
    con.execute("SET memory_limit = '1MB'")
    try:
        try:
            con.execute("SELECT list(range) FROM range(3000000)").fetchall()
        except duckdb.OutOfMemoryException as memory:
            raise duckdb.TransactionException("TransactionContext Error: Current transaction is "
                                              "aborted (please ROLLBACK)") from memory
    except duckdb.Error as aborted:
        code, line = exit_status(aborted)
    assert code == 3 and line.startswith("error: the store failed: Out of Memory Error: "), line
