"""Loading as a careless or hostile user would: interrupted loads, reloads, duplicates,
impossible values and text that is not text. Every reload must end in exactly the store a
clean load gives; every bad line is one ``file:line`` error (or skipped and counted).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from chaingraph.cli import cli
from chaingraph.errors import BadDumpLine
from chaingraph.sources.loaders import json_rows, load
from chaingraph.store import Store

CONTENT_TABLES = ("statements", "qualifiers", "reference_snaks", "entities", "properties")


def content(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tables that hold facts, and how many sources gave each statement
    (a source id hashes the file's absolute path and its retrieval time)."""
    rows = {t: sorted(store.con.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in CONTENT_TABLES}
    rows["statement_sources"] = sorted(store.con.execute(
        "SELECT statement_id, count(*) FROM statement_sources GROUP BY 1").fetchall())
    return rows


@pytest.fixture(scope="module")
def codex_s_nt(shared_data: Path) -> bytes:
    return gzip.decompress((shared_data / "world" / "codex-s.nt.gz").read_bytes())


@pytest.fixture(scope="module")
def clean_codex_s(codex_s_nt: bytes, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("clean") / "codex-s.nt"
    path.write_bytes(codex_s_nt)
    with Store() as store:
        load([path], store)
        return content(store)


def test_ntriples_reload_after_a_broken_line_equals_a_clean_load(
        codex_s_nt: bytes, clean_codex_s: dict[str, Any], tmp_path: Path) -> None:
    lines = codex_s_nt.split(b"\n")
    path = tmp_path / "codex-s.nt"  # the same file name: the user fixes the file and loads again
    broken = b"<http://www.wikidata.org/entity/Q1> <broken"
    path.write_bytes(b"\n".join([*lines[:100_014], broken, *lines[100_014:]]))
    with Store() as store:
        with pytest.raises(BadDumpLine, match=r"codex-s.nt:100015:"):
            load([path], store)
        path.write_bytes(codex_s_nt)
        load([path], store)
        again = content(store)
    assert len(again["statements"]) == len(clean_codex_s["statements"]) == 39_985
    assert not [r for r in again["statements"] if "$TRUTHY-" in r[0] and r[0].startswith("Q239587$")]
    assert again == clean_codex_s


def test_truncated_ntriples_gz_then_the_whole_file_equals_a_clean_load(shared_data: Path,
                                                                      clean_codex_s: dict[str, Any],
                                                                      tmp_path: Path) -> None:
    whole = (shared_data / "world" / "codex-s.nt.gz").read_bytes()
    path = tmp_path / "codex-s.nt"
    gz = tmp_path / "codex-s.nt.gz"
    gz.write_bytes(whole[: len(whole) * 2 // 3])  # a download cut short
    with Store() as store:
        with pytest.raises(BadDumpLine, match="truncated or corrupt"):
            load([gz], store)
        gz.unlink()
        path.write_bytes(gzip.decompress(whole))
        load([path], store)
        again = content(store)
    # the statements the cut file delivered have two sources (the cut and the whole file)
    again["statement_sources"] = [(sid, 1) for sid, _ in again["statement_sources"]]
    assert again == clean_codex_s


def _entity(ident: str, claims: dict[str, list[tuple[str, str]]], label: str) -> str:
    """A JSON-dump entity line with item-valued claims {property: [(statement id, value)]}."""
    return json.dumps({
        "type": "item", "id": ident, "labels": {"en": {"language": "en", "value": label}},
        "claims": {p: [{"id": sid, "rank": "normal", "mainsnak": {
            "snaktype": "value", "property": p,
            "datavalue": {"type": "wikibase-entityid", "value": {"id": value}}}} for sid, value in group]
            for p, group in claims.items()}})


@pytest.mark.parametrize("batch", [1, 2, 5_000])
def test_a_duplicate_entity_in_one_dump_is_kept_whole_as_its_last_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int) -> None:
    monkeypatch.setattr(json_rows, "BATCH_ENTITIES", batch)
    dump = tmp_path / "dup.json"
    dump.write_text("[\n" + ",\n".join([
        _entity("Q1", {"P31": [("Q1$a", "Q5")], "P19": [("Q1$b", "Q60")]}, "first"),
        _entity("Q2", {"P31": [("Q2$a", "Q5")]}, "other"),
        _entity("Q1", {"P31": [("Q1$a", "Q515")]}, "last"),
    ]) + "\n]\n")
    with Store() as store:
        load([dump], store)
        assert store.entity("Q1").label == "last"  # type: ignore[union-attr]
        assert [(e.statement_id, e.object) for e in store.edges(subject="Q1")] == [("Q1$a", "Q515")]
        assert store.edges(subject="Q2")[0].object == "Q5"


def test_reloading_a_newer_dump_updates_statements_with_the_same_ids(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(_entity("Q1", {"P31": [("Q1$a", "Q5")], "P27": [("Q1$c", "Q145")]}, "old") + "\n")
    new.write_text(_entity("Q1", {"P31": [("Q1$a", "Q515")]}, "new") + "\n")
    with Store() as store:
        load([old], store)
        load([new], store)
        assert [(e.statement_id, e.object) for e in store.edges(subject="Q1")] == [("Q1$a", "Q515")]
        load([new], store)  # loading the same file again still changes nothing
        assert store.counts()["statements"] == 1


LONE_SURROGATE = ('{"type":"item","id":"Q7","labels":{"en":{"language":"en","value":"bad \\ud800 text"}},'
                  '"claims":{}}')


def test_a_lone_surrogate_is_a_bad_line_with_file_and_line(tmp_path: Path) -> None:
    dump = tmp_path / "s.json"
    dump.write_text("[\n" + _entity("Q1", {}, "fine") + ",\n" + LONE_SURROGATE + ",\n"
                    + _entity("Q3", {}, "also fine") + "\n]\n")
    res = CliRunner().invoke(cli, ["load", str(dump), "--store", str(tmp_path / "s.duckdb")])
    assert res.exit_code == 2, res.output
    assert f"{dump}:3:" in res.stderr and "surrogate" in res.stderr and "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["load", str(dump), "--store", str(tmp_path / "t.duckdb"),
                                   "--skip-bad-lines", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["summary"]["entities"] == 2


@pytest.mark.parametrize(("line", "needle"), [
    ('{"id": "Q1", "claims": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"type":"item","id":"Q1","claims":{"P585":[{"id":"Q1$t","rank":"normal","mainsnak":{"snaktype":"value",'
     '"property":"P585","datavalue":{"type":"time","value":{"time":"+2020-13-45T00:00:00Z","precision":11,'
     '"calendarmodel":"http://www.wikidata.org/entity/Q1985727"}}}}]}}', "month 13"),
    ('{"type":"item","id":"Q1","claims":{"P1082":[{"id":"Q1$q","rank":"normal","mainsnak":{"snaktype":"value",'
     '"property":"P1082","datavalue":{"type":"quantity","value":{"amount":"+1e999999999","unit":"1"}}}}]}}',
     "exponent"),
    ('{"type":"item","id":"Q1","claims":{"P1082":[{"id":"Q1$q","rank":"normal","mainsnak":{"snaktype":"value",'
     '"property":"P1082","datavalue":{"type":"quantity","value":{"amount":"NaN","unit":"1"}}}}]}}',
     "not a decimal number"),
    ('{"type":"item","id":"Q1","claims":{"P31":[{"id":"Q1$i","rank":"normal","mainsnak":{"snaktype":"value",'
     '"property":"P31","datavalue":{"type":"wikibase-entityid","value":{"id":"Q12345678901234567890123"}}}}]}}',
     "Q12345678901234567890123"),
])
def test_impossible_or_unbounded_values_in_a_dump_are_bad_lines(tmp_path: Path, line: str,
                                                               needle: str) -> None:
    dump = tmp_path / "v.json"
    dump.write_text(line + "\n")
    with Store() as store, pytest.raises(BadDumpLine, match=r"v.json:1:") as err:
        load([dump], store)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_a_surrogate_escape_in_ntriples_is_a_bad_line_not_a_store_error(tmp_path: Path) -> None:
    label = "<http://www.w3.org/2000/01/rdf-schema#label>"
    dump = tmp_path / "s.nt"
    dump.write_text(f'<http://www.wikidata.org/entity/Q2> {label} "fine"@en .\n'
                    f'<http://www.wikidata.org/entity/Q1> {label} "bad \\uD800 x"@en .\n')
    res = CliRunner().invoke(cli, ["load", str(dump), "--store", str(tmp_path / "s.duckdb")])
    assert res.exit_code == 2 and f"{dump}:2:" in res.stderr and "UTF-16" in res.stderr, res.output
    res = CliRunner().invoke(cli, ["load", str(dump), "--store", str(tmp_path / "t.duckdb"),
                                   "--skip-bad-lines", "--format", "json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["summary"]["entities"] == 1
