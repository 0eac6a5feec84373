"""Bad input: every path ends in a one-line error naming file and line, keeps what was
loaded before it, or (``skip_bad_lines``) is skipped and counted."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chaingraph.cli import cli
from chaingraph.errors import BadDumpLine, InvalidInput, UnsupportedFormat
from chaingraph.sources.loaders import json_chunks, load
from chaingraph.store import Store

WD = "http://www.wikidata.org/entity/"
P = "http://www.wikidata.org/prop/"


def _item(qid: str, obj: str = "Q5", sid: str | None = None) -> str:
    return json.dumps({"type": "item", "id": qid, "labels": {"en": {"language": "en", "value": qid}},
                       "claims": {"P31": [{"mainsnak": {"snaktype": "value", "property": "P31", "datavalue": {
                           "type": "wikibase-entityid", "value": {"id": obj}}},
                           "id": sid or f"{qid}$1", "rank": "normal"}]}})


def _dump(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    body = "[\n" + "".join(f"{ln},\n" for ln in lines[:-1]) + f"{lines[-1]}\n]\n"
    path.write_text(body)
    return path


def _triples(qid: str) -> list[str]:
    st = f"<{WD}statement/{qid}-S1>"
    return [f"<{WD}{qid}> <{P}P31> {st} .", f"{st} <{P}statement/P31> <{WD}Q5> ."]


def _ids(db: Path) -> set[str]:
    with Store(db, read_only=True) as s:
        return {r[0] for r in s.con.execute("SELECT subject FROM statements").fetchall()}


JSON_BAD = {
    "truncated line": '{"type":"item","id":"Q3","labels":{"en":{"lang',
    "not JSON": "this is not json",
    "invalid entity id": _item("Q3x"),
    "invalid value id": _item("Q3", obj="X9"),
    "lexeme entity": json.dumps({"type": "lexeme", "id": "L3"}),
    "array line": "[1, 2]",
}


@pytest.fixture(params=["in-process", "workers"])
def json_workers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """JSON dumps parsed in this process, or on worker processes in chunks of a line or two."""
    if request.param == "workers":
        monkeypatch.setattr(json_chunks, "PARALLEL_BYTES", 0)
        monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 64)
    return str(request.param)


@pytest.mark.parametrize("problem", sorted(JSON_BAD))
def test_bad_json_line_stops_with_file_and_line_and_keeps_what_came_before(
        tmp_path: Path, problem: str, json_workers: str) -> None:
    path = _dump(tmp_path, "d.json", [_item("Q1"), _item("Q2"), JSON_BAD[problem], _item("Q4")])
    db = tmp_path / "s.duckdb"
    with Store(db) as store, pytest.raises(BadDumpLine) as info:
        load([path], store)
    assert info.value.line == 4 and info.value.path == str(path)
    message = str(info.value)
    assert message.startswith(f"{path}:4: ") and "\n" not in message and "`skip_bad_lines`" in message
    assert _ids(db) == {"Q1", "Q2"}  # committed before the bad line, nothing after


@pytest.mark.parametrize("problem", sorted(JSON_BAD))
def test_bad_json_lines_can_be_skipped_and_counted(tmp_path: Path, problem: str, json_workers: str) -> None:
    path = _dump(tmp_path, "d.json", [_item("Q1"), JSON_BAD[problem], _item("Q4"), "{oops"])
    with Store() as store:
        report = load([path], store, skip_bad_lines=True)
        assert report.files[0].bad_lines == 2
        assert report.files[0].bad_line_examples[0].startswith(f"{path}:3: ")
        assert {e.subject for e in store.edges()} == {"Q1", "Q4"}


NT_BAD = {
    "truncated line": f"<{WD}Q3> <{P}P31> <{WD}statement/Q3-",
    "missing final dot": f"<{WD}Q3> <{P}P31> <{WD}statement/Q3-S1>",
    "unterminated literal": f'<{WD}Q3> <http://www.w3.org/2000/01/rdf-schema#label> "abc .',
    "not a triple": "hello world",
    "invalid subject id": f"<{WD}Q3x> <{P}P31> <{WD}statement/Q3x-S1> .",
}


@pytest.mark.parametrize("problem", sorted(NT_BAD))
def test_bad_ntriples_line_stops_with_file_and_line_and_keeps_what_came_before(
        tmp_path: Path, problem: str) -> None:
    path = tmp_path / "d.nt"
    path.write_text("\n".join([*_triples("Q1"), *_triples("Q2"), NT_BAD[problem], *_triples("Q4")]) + "\n")
    db = tmp_path / "s.duckdb"
    with Store(db) as store, pytest.raises(BadDumpLine) as info:
        load([path], store)
    assert info.value.line == 5
    assert str(info.value).startswith(f"{path}:5: ")
    assert _ids(db) == {"Q1", "Q2"}


@pytest.mark.parametrize("problem", sorted(NT_BAD))
def test_bad_ntriples_lines_can_be_skipped_and_counted(tmp_path: Path, problem: str) -> None:
    path = tmp_path / "d.nt"
    path.write_text("\n".join([*_triples("Q1"), NT_BAD[problem], *_triples("Q4")]) + "\n")
    with Store() as store:
        report = load([path], store, skip_bad_lines=True)
        assert report.files[0].bad_lines == 1
        assert {e.subject for e in store.edges()} == {"Q1", "Q4"}


def test_non_utf8_bytes_are_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "d.nt"
    lines = [ln.encode() for ln in (*_triples("Q1"), *_triples("Q4"))]
    lines.insert(2, b'<http://a> <http://b> "caf\xe9" .')
    path.write_bytes(b"\n".join(lines) + b"\n")
    with Store() as store, pytest.raises(BadDumpLine, match=r":3: .*UTF-8"):
        load([path], store)
    with Store() as store:
        assert load([path], store, skip_bad_lines=True).files[0].bad_lines == 1
        assert {e.subject for e in store.edges()} == {"Q1", "Q4"}


def test_turtle_syntax_error_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "d.ttl"
    path.write_text(f"@prefix wd: <{WD}> .\n@prefix p: <{P}> .\nwd:Q1 p:P31 wd:Q5 .\nwd:Q2 p:P31 ;;; .\n")
    with Store() as store, pytest.raises(BadDumpLine, match=r"d\.ttl:4: Turtle syntax error"):
        load([path], store)


def test_truncated_gzip_reports_where_reading_stopped_and_keeps_the_rest(tmp_path: Path,
                                                                        json_workers: str) -> None:
    lines = [_item(f"Q{i}") for i in range(1, 3001)]
    whole = gzip.compress(("[\n" + ",\n".join(lines) + "\n]\n").encode())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(whole[: len(whole) * 2 // 3])
    db = tmp_path / "s.duckdb"
    with Store(db) as store, pytest.raises(BadDumpLine, match="truncated or corrupt") as info:
        load([path], store)
    assert "\n" not in str(info.value)
    kept = _ids(db)
    assert kept and kept == {f"Q{i}" for i in range(1, len(kept) + 1)}
    assert info.value.line == len(kept) + 2  # the "[" line, then one entity per line


@pytest.mark.parametrize(("name", "data", "match"), [
    ("d.json.xz", lzma.compress(b"[\n]\n"), "xz compression is not supported"),
    ("d.json.gz", b"[\n]\n", "the name says gzip but the file is not compressed"),
    ("d.nt.bz2", gzip.compress(b"<a> <b> <c> .\n", mtime=0), "the name says bz2 but the file is gzip"),
    ("d.csv", b"a,b\n", "cannot tell the dump format"),
    ("d.json", b"<http://a> <http://b> <http://c> .\n", "looks like N-Triples"),
    ("d.nt", b'[\n{"id": "Q1"}\n]\n', "looks like a Wikidata JSON dump"),
    ("d.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
    ("d.nt.bz2", b"BZh91AY&SYgarbage", "cannot be decompressed"),
], ids=["xz", "not-gzip", "gzip-named-bz2", "csv", "nt-named-json", "json-named-nt", "binary", "corrupt-bz2"])
def test_wrong_file_type_or_compression_is_refused_before_loading(
        tmp_path: Path, name: str, data: bytes, match: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with Store() as store:  # the same store: a fresh one would have no sources whatever load did
        with pytest.raises(UnsupportedFormat, match=match):
            load([path], store)
        assert store.counts()["sources"] == 0 and store.counts()["statements"] == 0


def test_every_file_is_checked_before_any_is_loaded(tmp_path: Path) -> None:
    good = _dump(tmp_path, "ok.json", [_item("Q1")])
    with Store() as store:
        with pytest.raises(InvalidInput, match="no such file"):
            load([good, tmp_path / "missing.json"], store)
        assert store.counts()["statements"] == 0


def test_bz2_multi_stream_reads_every_stream(tmp_path: Path) -> None:
    path = tmp_path / "d.json.bz2"
    path.write_bytes(bz2.compress(b"[\n" + _item("Q1").encode() + b",\n") + bz2.compress(
        _item("Q2").encode() + b"\n]\n"))
    with Store() as store:
        load([path], store)
        assert {e.subject for e in store.edges()} == {"Q1", "Q2"}


def test_cli_reports_one_line_and_exits_non_zero(runner: Any, tmp_path: Path) -> None:
    path = _dump(tmp_path, "d.json", [_item("Q1"), "{broken"])
    db = tmp_path / "s.duckdb"
    result = runner.invoke(cli, ["load", str(path), "--store", str(db)])
    assert result.exit_code == 2
    assert result.output.strip() == (f"error: {path}:3: the line is not complete JSON (truncated?): "
                                      "Expecting property name enclosed in double quotes at column 2; "
                                      "fix or remove the line, or pass --skip-bad-lines to skip and "
                                      "count such lines")
    skipped = runner.invoke(cli, ["load", str(path), "--store", str(db), "--skip-bad-lines",
                                  "--format", "json"])
    assert skipped.exit_code == 0
    assert json.loads(skipped.stdout)["files"][0]["bad_lines"] == 1


def test_cli_bad_input_as_a_subprocess_has_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "d.json.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 16)
    out = subprocess.run([sys.executable, "-m", "chaingraph", "load", str(path), "--store",
                          str(tmp_path / "s.duckdb")], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"error: {path}: zstd compression is not supported")


def test_truncated_ntriples_gzip_keeps_every_line_before_the_damage(tmp_path: Path) -> None:
    lines = [t for i in range(1, 4001) for t in _triples(f"Q{i}")]
    whole = gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0)
    path = tmp_path / "cut.nt.gz"
    path.write_bytes(whole[: len(whole) // 2])
    db = tmp_path / "s.duckdb"
    with Store(db) as store, pytest.raises(BadDumpLine, match="truncated or corrupt") as info:
        load([path], store)
    kept = _ids(db)
    assert kept and kept == {f"Q{i}" for i in range(1, len(kept) + 1)}
    assert len(kept) * 2 < info.value.line <= len(kept) * 2 + 2


def test_cli_names_its_flag_where_the_library_names_its_parameter(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from chaingraph.cli import cli

    path = _dump(tmp_path, "d.json", [_item("Q1"), JSON_BAD["not JSON"]])
    out = CliRunner().invoke(cli, ["load", str(path), "--store", str(tmp_path / "s.duckdb")])
    assert out.exit_code == 2
    assert "pass --skip-bad-lines to skip" in out.stderr and "`" not in out.stderr


def test_claims_with_bad_ids_are_reported_as_written_and_odd_good_ones_kept(tmp_path: Path) -> None:
    """p: triples are staged as ids (entity id, statement id): a bad one is still shown with
    the terms of the file, and valid statement nodes the quick checks leave to the regular
    expression (a digit run of 20, a lowercase letter) still join their ps: triples."""
    s = f"{WD}statement/"
    ttl = tmp_path / "b.ttl"
    ttl.write_text(f"@prefix wd: <{WD}> .\n@prefix s: <{s}> .\n@prefix p: <{P}> .\n"
                   f"@prefix ps: <{P}statement/> .\n"
                   "wd:Q1 p:P31 s:Q1-AAA .\ns:Q1-AAA ps:P31 wd:Q5 .\n"
                   "<http://example.org/x> p:P31 s:Q2-BBB .\n"
                   f"wd:Q3 p:P32 <{s}Q3$DDD> .\n")
    with Store() as store:
        report = load([ttl], store, skip_bad_lines=True).files[0]
        assert store.con.execute("SELECT statement_id FROM statements").fetchall() == [("Q1$AAA",)]
    assert report.bad_line_examples == (
        f"{ttl}:3: subject <http://example.org/x> or statement Q2-BBB> is not a Wikidata entity / "
        "statement IRI",
        f"{ttl}:4: subject <{WD}Q3> or statement Q3$DDD> is not a Wikidata entity / statement IRI")
    nt = tmp_path / "b.nt"
    long, lower = "Q2-12345678901234567890-X", "q5-e-f"
    nt.write_text(f"<{WD}Q2> <{P}P31> <{s}{long}> .\n<{s}{long}> <{P}statement/P31> <{WD}Q5> .\n"
                  f"<{WD}Q5> <{P}P31> <{s}{lower}> .\n<{s}{lower}>\t<{P}statement/P31> <{WD}Q1> .\n"
                  f"<{s}Q2$CCC> <{P}statement/P31> <{WD}Q7> .\n<{s}Q2-CCC> <{P}statement/P31> <{WD}Q8> .\n"
                  f"<{WD}Q4> <{P}P31> <{s}Q4$DDD> .\n")
    with Store() as store:
        report = load([nt], store, skip_bad_lines=True).files[0]
        rows = store.con.execute("SELECT statement_id, subject, object FROM statements ORDER BY 1").fetchall()
    assert rows == [("Q2$12345678901234567890-X", "Q2", "Q5"), ("q5$e-f", "Q5", "Q1")]
    assert report.bad_line_examples == (
        f"{nt}:7: subject <{WD}Q4> or statement <{s}Q4$DDD> is not a Wikidata entity / statement IRI",)


@pytest.mark.parametrize("between", [0, 1])
def test_a_truthy_triple_before_a_bad_line_is_kept_though_its_full_statement_follows(
        tmp_path: Path, between: int) -> None:
    """A wdt: triple next to the p: triple of its statement is not staged (the statement
    makes it redundant), but not when a bad line between them stops the load first: the
    store then holds everything before the bad line, the truthy statement included (with a
    line that stages nothing between them, or not)."""
    s = f"{WD}statement/"
    path = tmp_path / "d.nt"
    path.write_text(f"<{WD}Q1> <{P}direct/P31> <{WD}Q5> .\n"
                    + f"<{s}Q9-A> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
                      "<http://wikiba.se/ontology#Statement> .\n" * between
                    + f"{NT_BAD['not a triple']}\n"
                    f"<{WD}Q1> <{P}P31> <{s}Q1-A> .\n<{s}Q1-A> <{P}statement/P31> <{WD}Q5> .\n")
    with Store() as store:
        with pytest.raises(BadDumpLine, match=f":{2 + between}: "):
            load([path], store)
        rows = store.con.execute("SELECT subject, object FROM statements").fetchall()
    assert rows == [("Q1", "Q5")]
