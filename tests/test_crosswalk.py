"""The crosswalk's rules, one by one, on hand-written property facts; label mapping; errors; CLI."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from chaingraph.cli import cli
from chaingraph.crosswalk import (
    CROSSWALK_VERSION,
    RELATION_CLASSES,
    RULES,
    Classification,
    Crosswalk,
    PropertyFacts,
    crosswalk,
    default_crosswalk,
    normalise_label,
    read_property_facts,
)
from chaingraph.crosswalk.tables import COLUMNS, default_paths, load_tables
from chaingraph.errors import BadDumpLine, InvalidId, InvalidInput, UnknownEntity

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "crosswalk"
# ids far above any real property, so that no table row can decide them
NEW = "P99999001"


@pytest.fixture(scope="module")
def cw() -> Crosswalk:
    return default_crosswalk()


# -- rule 1: the explicit table -------------------------------------------------------------------


def test_table_decides_without_any_facts(cw: Crosswalk) -> None:
    got = cw.classify("P131")
    assert (got.relation_class, got.status, got.rule) == ("spatial", "relation", "table")
    assert got.version == CROSSWALK_VERSION and got.property == "P131"
    assert got.reason.startswith("location:")


def test_table_wins_over_every_later_rule(cw: Crosswalk) -> None:
    # P361 with facts that would say "attributive" by datatype and "spatial" by lexical rules
    facts = PropertyFacts("P361", label="located in", datatype="quantity", classes=("Q18615777",))
    got = cw.classify(facts)
    assert (got.relation_class, got.rule) == ("part-whole", "table")


def test_table_can_say_not_a_relation(cw: Crosswalk) -> None:
    got = cw.classify("P910")
    assert (got.status, got.relation_class, got.rule) == ("not-a-relation", None, "table")


def test_every_table_row_classifies_from_the_id_alone(cw: Crosswalk) -> None:
    for ident, entry in cw.tables.table.items():
        got = cw.classify(ident)
        assert got.rule == "table"
        assert (got.relation_class or got.status) == entry.verdict


# -- rule 2: datatype -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("datatype", "expected"),
    [
        ("quantity", "attributive"),
        ("string", "attributive"),
        ("monolingualtext", "attributive"),
        ("globe-coordinate", "attributive"),
        ("url", "attributive"),
        ("commonsMedia", "attributive"),
        ("math", "attributive"),
        ("time", "temporal"),
        ("external-id", "not-a-relation"),
        ("wikibase-property", "not-a-relation"),
        ("wikibase-lexeme", "not-a-relation"),
        ("wikibase-sense", "not-a-relation"),
    ],
)
def test_datatype_decides_value_properties(cw: Crosswalk, datatype: str, expected: str) -> None:
    got = cw.classify(PropertyFacts(NEW, label="located in", datatype=datatype))
    assert got.rule == "datatype"
    assert (got.relation_class or got.status) == expected


def test_time_properties_are_temporal_unless_listed_as_book_keeping(cw: Crosswalk) -> None:
    birth = cw.classify(PropertyFacts("P569", label="date of birth", datatype="time"))
    retrieved = cw.classify(PropertyFacts("P813", label="retrieved", datatype="time"))
    constraint = cw.classify(PropertyFacts("P2310", label="minimum date", datatype="time"))
    assert (birth.relation_class, birth.rule) == ("temporal", "datatype")
    assert (retrieved.relation_class, retrieved.rule) == ("attributive", "datatype")
    assert (constraint.status, constraint.rule) == ("not-a-relation", "datatype")


def test_item_datatype_is_left_to_later_rules(cw: Crosswalk) -> None:
    got = cw.classify(PropertyFacts(NEW, datatype="wikibase-item"))
    assert got.status == "unclassified" and got.rule == "none"


# -- rule 3: property classes, super-properties, inverses --------------------------------------------


def test_property_class_decides_an_item_property(cw: Crosswalk) -> None:
    got = cw.classify(PropertyFacts(NEW, datatype="wikibase-item", classes=("Q18615777",)))
    assert (got.relation_class, got.rule) == ("spatial", "property-class")
    assert "Q18615777" in got.reason


def test_first_listed_property_class_wins_whatever_the_order_of_the_facts(cw: Crosswalk) -> None:
    # Q18644427 (obsolete) is listed before Q18615777 (location) in property_classes.tsv
    a = cw.classify(PropertyFacts(NEW, datatype="wikibase-item", classes=("Q18615777", "Q18644427")))
    b = cw.classify(PropertyFacts(NEW, datatype="wikibase-item", classes=("Q18644427", "Q18615777")))
    assert a == b
    assert (a.status, a.rule) == ("not-a-relation", "property-class")


def test_domain_classes_decide_nothing(cw: Crosswalk) -> None:
    # Q18608871 = property for items about people: a domain hint, not a relation kind
    got = cw.classify(PropertyFacts(NEW, datatype="wikibase-item", classes=("Q18608871",)))
    assert got.status == "unclassified"


def test_superproperty_is_inherited_through_a_chain_of_p1647(cw: Crosswalk) -> None:
    child, middle = "P99999002", "P99999003"
    facts = {
        child: PropertyFacts(child, label="zzz", datatype="wikibase-item", superproperties=(middle,)),
        middle: PropertyFacts(middle, label="qqq", datatype="wikibase-item", superproperties=("P361",)),
    }
    got = cw.classify(child, facts)
    assert (got.relation_class, got.rule) == ("part-whole", "superproperty")
    assert middle in got.reason and "P361" in got.reason


def test_superproperty_cycles_end_unclassified(cw: Crosswalk) -> None:
    a, b = "P99999004", "P99999005"
    facts = {
        a: PropertyFacts(a, datatype="wikibase-item", superproperties=(b,)),
        b: PropertyFacts(b, datatype="wikibase-item", superproperties=(a,)),
    }
    assert cw.classify(a, facts).status == "unclassified"


def test_superproperty_decided_only_lexically_is_not_inherited(cw: Crosswalk) -> None:
    parent = "P99999006"
    facts = {
        NEW: PropertyFacts(NEW, datatype="wikibase-item", superproperties=(parent,)),
        parent: PropertyFacts(parent, label="located somewhere", datatype="wikibase-item"),
    }
    assert cw.classify(parent, facts).rule == "lexical"
    assert cw.classify(NEW, facts).status == "unclassified"


def test_inverse_from_facts_shares_its_class(cw: Crosswalk) -> None:
    got = cw.classify(PropertyFacts(NEW, datatype="wikibase-item", inverse="P155"))
    assert (got.relation_class, got.rule) == ("temporal", "inverse")


def test_a_superproperty_decides_before_the_inverse(cw: Crosswalk) -> None:
    got = cw.classify(PropertyFacts(NEW, datatype="wikibase-item", superproperties=("P361",), inverse="P155"))
    assert (got.relation_class, got.rule) == ("part-whole", "superproperty")


def test_inverse_from_the_shipped_pairs_when_facts_are_silent(tmp_path: Path) -> None:
    table = tmp_path / "table.tsv"
    shipped = default_paths()["table"].read_text().splitlines(keepends=True)
    table.write_text("".join(line for line in shipped if not line.startswith("P527\t")))
    walk = Crosswalk.from_files(table)
    got = walk.classify("P527")
    assert (got.relation_class, got.rule) == ("part-whole", "inverse")
    assert "P361" in got.reason
    assert walk.version.startswith(CROSSWALK_VERSION + "+") and walk.version != CROSSWALK_VERSION


# -- rule 4: lexical ----------------------------------------------------------------------------------


def test_lexical_rules_read_label_then_aliases_then_description(cw: Crosswalk) -> None:
    by_label = cw.classify(PropertyFacts(NEW, label="has cause of trouble", datatype="wikibase-item"))
    by_alias = cw.classify(
        PropertyFacts(NEW, label="zzz", aliases=("yyy", "part of"), datatype="wikibase-item")
    )
    by_text = cw.classify(PropertyFacts(NEW, label="zzz", description="the river this lies on"))
    assert (by_label.relation_class, by_label.rule) == ("causal", "lexical")
    assert (by_alias.relation_class, by_alias.reason.split()[0]) == ("part-whole", "alias")
    assert (by_text.relation_class, by_text.reason.split()[0]) == ("spatial", "description")


def test_label_only_keywords_do_not_fire_on_descriptions(cw: Crosswalk) -> None:
    # "after" is a temporal keyword for labels only; running text uses it for anything
    got = cw.classify(PropertyFacts(NEW, label="zzz", description="named after nothing in particular"))
    assert got.status == "unclassified"
    assert cw.classify(PropertyFacts(NEW, label="after")).relation_class == "temporal"


def test_first_lexical_rule_wins(cw: Crosswalk) -> None:
    # "parent organization" (composition) comes before "parent" (kinship)
    assert cw.classify(PropertyFacts(NEW, label="parent organization of x")).relation_class == "part-whole"
    assert cw.classify(PropertyFacts(NEW, label="parent of x")).relation_class == "attributive"


def test_nothing_decides_means_unclassified_never_a_default(cw: Crosswalk) -> None:
    got = cw.classify(PropertyFacts(NEW, label="zzqx", datatype="wikibase-item"))
    assert (got.status, got.relation_class, got.rule) == ("unclassified", None, "none")
    bare = cw.classify(NEW)
    assert bare.status == "unclassified" and "not in the crosswalk table" in bare.reason
    assert cw.relation_class(NEW) is None


# -- free-text labels -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "expected", "rule"),
    [
        ("part_of", "part-whole", "label"),
        ("member of", "member-collection", "label"),
        ("located_in", "spatial", "label"),
        ("PartWhole", "part-whole", "class-name"),
        ("Part-Whole", "part-whole", "class-name"),
        ("temporal", "temporal", "class-name"),
        ("member-collection", "member-collection", "class-name"),
        ("MEMBER_COLLECTION", "member-collection", "class-name"),
        ("conditional", "causal", "scheme12"),
        ("purpose", "causal", "scheme12"),
        ("similar", "comparative", "scheme12"),
        ("antithetic", "comparative", "scheme12"),
        ("associative", "attributive", "scheme12"),
        ("capital city of", "spatial", "lexical"),
        ("P361", "part-whole", "table"),
        ("wdt:P131", "spatial", "table"),
    ],
)
def test_free_text_labels(cw: Crosswalk, label: str, expected: str, rule: str) -> None:
    got = cw.classify_label(label)
    assert (got.relation_class, got.rule, got.property) == (expected, rule, label)


def test_the_twelve_class_scheme_maps_onto_the_seven_classes(cw: Crosswalk) -> None:
    twelve = [
        "part_whole",
        "member_collection",
        "causal",
        "conditional",
        "purpose",
        "temporal",
        "spatial",
        "comparative",
        "similar",
        "antithetic",
        "associative",
        "attributive",
    ]
    got = {name: cw.classify_label(name).relation_class for name in twelve}
    assert set(got.values()) == set(RELATION_CLASSES)
    assert {got[n] for n in ("part_whole", "causal", "temporal", "spatial", "comparative")} == {
        "part-whole",
        "causal",
        "temporal",
        "spatial",
        "comparative",
    }


def test_unknown_label_is_unclassified_and_empty_label_is_an_error(cw: Crosswalk) -> None:
    assert cw.classify_label("zorblax").status == "unclassified"
    with pytest.raises(InvalidInput, match="is empty"):
        cw.classify_label(" _ ")


def test_normalise_label_splits_camel_case_and_separators() -> None:
    assert normalise_label("locatedIn") == normalise_label("located-in") == "located in"
    assert normalise_label("HTTPServer_part") == "http server part"


# -- records and versions ---------------------------------------------------------------------------


def test_classification_is_a_frozen_json_record(cw: Crosswalk) -> None:
    got = cw.classify("P31")
    again = Classification.model_validate_json(got.model_dump_json())
    assert again == got
    with pytest.raises(ValueError):
        got.rule = "lexical"  # type: ignore[misc]
    assert set(Classification.model_json_schema()["properties"]) == {
        "property",
        "relation_class",
        "status",
        "rule",
        "reason",
        "version",
    }


def test_shipped_version_is_the_table_header_version(cw: Crosswalk) -> None:
    assert cw.version == CROSSWALK_VERSION
    assert f"# version: {CROSSWALK_VERSION}\n" in default_paths()["table"].read_text()


def test_rules_named_in_results_are_all_known(cw: Crosswalk) -> None:
    got = [cw.classify(p) for p in ("P31", NEW)] + [cw.classify_label(x) for x in ("purpose", "zz", "x part")]
    assert {c.rule for c in got} <= set(RULES)


def test_with_facts_serves_relation_class_for_untabled_ids(cw: Crosswalk) -> None:
    walk = cw.with_facts({NEW: PropertyFacts(NEW, datatype="quantity")})
    assert walk.relation_class(NEW) == "attributive"
    assert cw.relation_class(NEW) is None


# -- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["Q42", "P0", "p31", "P31x", "", "31"])
def test_malformed_ids_raise_invalid_id(cw: Crosswalk, bad: str) -> None:
    with pytest.raises(InvalidId):
        cw.classify(bad)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_property_list_reads_plain_and_gzip(tmp_path: Path) -> None:
    text = (FIXTURES / "properties_small.tsv").read_text(encoding="utf-8")
    plain = _write(tmp_path / "p.tsv", text)
    packed = tmp_path / "p.tsv.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    assert read_property_facts(plain) == read_property_facts(packed)
    facts = read_property_facts(plain)
    assert facts["P361"].superproperties == () and facts["P7000001"].superproperties == ("P361",)
    assert facts["P7000002"].inverse == "P155"
    assert facts["P131"].usage == 11060435 and facts["P131"].classes == ("Q18615777", "Q18647515")


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("pid\tlabel_en\nP1\ta\nP2\n", 3, "fields"),
        ("pid\tlabel_en\nP1\ta\nQ2\tb\n", 3, "not a Wikidata id"),
        ("pid\taliases_en_json\nP1\t[oops\n", 2, "not JSON"),
        ("pid\tsqid_p31_classes\nP1\tQ1;P2\n", 2, "not a Q-id"),
        ("pid\tusage_count_2022\nP1\tmany\n", 2, "not a count"),
        ("pid\tlabel_en\nP1\ta\nP1\tb\n", 3, "twice"),
    ],
)
def test_malformed_property_list_names_file_and_line(
    tmp_path: Path, text: str, line: int, needle: str
) -> None:
    path = _write(tmp_path / "bad.tsv", text)
    with pytest.raises(BadDumpLine) as err:
        read_property_facts(path)
    assert f"{path}:{line}:" in str(err.value) and needle in str(err.value)
    assert "\n" not in str(err.value)


def test_property_list_without_pid_header_or_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no 'pid' column"):
        read_property_facts(_write(tmp_path / "x.tsv", "id\tlabel\nP1\ta\n"))
    with pytest.raises(InvalidInput, match="cannot read"):
        read_property_facts(tmp_path / "missing.tsv")


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        ("P99\tspatial\tkinship: a location?\n", "family kinship is attributive"),
        ("P99\tspatial\tnowhere: x\n", "declared family"),
        ("P99\tplace\tlocation: x\n", "not one of"),
        ("P31\tspatial\tlocation: twice\n", "listed twice"),
        ("P99\tspatial\n", "fields"),
    ],
)
def test_bad_table_rows_are_refused_with_file_and_line(tmp_path: Path, row: str, needle: str) -> None:
    shipped = default_paths()["table"].read_text()
    path = _write(tmp_path / "table.tsv", shipped + row)
    with pytest.raises(BadDumpLine) as err:
        load_tables({"table": path})
    assert f"{path}:{shipped.count(chr(10)) + 1}:" in str(err.value) and needle in str(err.value)


def test_bad_lexical_pattern_and_unknown_file_key(tmp_path: Path) -> None:
    path = _write(tmp_path / "lex.tsv", "class\tfields\tpattern\tnote\nspatial\tany\t(unclosed\tx\n")
    with pytest.raises(BadDumpLine, match="not a regular expression"):
        load_tables({"lexical": path})
    with pytest.raises(InvalidInput, match="unknown crosswalk file key"):
        load_tables({"tabel": path})
    assert set(COLUMNS) == set(default_paths())


# -- library twin and CLI --------------------------------------------------------------------------------


def test_crosswalk_report_validates_before_reading(tmp_path: Path) -> None:
    with pytest.raises(InvalidId):
        crosswalk(["P1", "bad"], properties=tmp_path / "never-read.tsv")
    with pytest.raises(UnknownEntity, match="P99999001 is not in the crosswalk table"):
        crosswalk([NEW])
    with pytest.raises(InvalidInput, match="nothing to classify"):
        crosswalk()


def test_cli_prints_class_rule_and_reason(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["crosswalk", "P131", "P910", "--label", "PartWhole"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split()[1:3] for line in result.output.splitlines()[2:]}
    assert rows == {
        "P131": ["spatial", "table"],
        "P910": ["not-a-relation", "table"],
        "PartWhole": ["part-whole", "class-name"],
    }


def test_cli_json_and_tsv(runner: CliRunner) -> None:
    out = runner.invoke(cli, ["crosswalk", "P361", "--format", "json"])
    assert out.exit_code == 0
    doc = json.loads(out.output)
    assert doc["classifications"][0]["relation_class"] == "part-whole" and doc["version"] == CROSSWALK_VERSION
    tsv = runner.invoke(cli, ["crosswalk", "P155", "--format", "tsv"]).output.splitlines()
    assert tsv[0].split("\t")[:4] == ["property", "class", "status", "rule"]
    assert tsv[1].split("\t")[:4] == ["P155", "temporal", "relation", "table"]


def test_cli_all_prints_distribution_over_classes_and_rules(runner: CliRunner) -> None:
    small = FIXTURES / "properties_small.tsv"
    out = runner.invoke(cli, ["crosswalk", "--all", "--properties", str(small), "--format", "json"])
    assert out.exit_code == 0, out.output
    summary = json.loads(out.output)["summary"]
    facts = read_property_facts(small)
    assert (
        summary["total"]
        == len(facts)
        == sum(summary["by_class"].values())
        == sum(summary["by_rule"].values())
    )
    assert summary["by_rule"]["superproperty"] == 1 and summary["by_rule"]["inverse"] == 1
    text = runner.invoke(cli, ["crosswalk", "--all", "--properties", str(small)]).output
    assert f"{len(facts)} properties by class" in text and "by rule" in text


def test_cli_errors_are_one_line_with_exit_code(runner: CliRunner, tmp_path: Path) -> None:
    bad = runner.invoke(cli, ["crosswalk", "P13x"])
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and bad.output.startswith("error:")
    broken = _write(tmp_path / "broken.tsv", "pid\tlabel_en\nP1\n")
    out = runner.invoke(cli, ["crosswalk", "--all", "--properties", str(broken)])
    assert out.exit_code == 2 and f"{broken}:2:" in out.output and out.output.count("\n") == 1


def test_cli_compare_reference(runner: CliRunner) -> None:
    out = runner.invoke(cli, ["crosswalk", "--compare-reference"])
    assert out.exit_code == 0
    assert "agreement with the reference" in out.output and "P6 head of government" in out.output


def test_cli_as_a_subprocess() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "chaingraph", "crosswalk", "P27", "--format", "tsv"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split("\t")[:4] == ["P27", "member-collection", "relation", "table"]
    bad = subprocess.run(
        [sys.executable, "-m", "chaingraph", "crosswalk", "Q42"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "Traceback" not in bad.stderr


def test_facts_from_a_store_file_classify_untabled_properties(tmp_path: Path) -> None:
    from chaingraph.crosswalk import facts_from_store
    from chaingraph.store import Batch, Store, property_row

    path = tmp_path / "evidence.duckdb"
    with Store(path) as store:
        store.write(
            Batch(
                properties=[
                    property_row(NEW, "cruising speed", datatype="quantity"),
                    property_row("P99999007", "exclave located in zz", datatype="wikibase-item"),
                    property_row(
                        "P131", "located in the administrative territorial entity", datatype="wikibase-item"
                    ),
                ]
            )
        )
    with Store(path, read_only=True) as store:
        facts = facts_from_store(store)
    assert sorted(facts) == ["P131", NEW, "P99999007"]
    walk = default_crosswalk().with_facts(facts)
    assert (walk.relation_class(NEW), walk.classify(NEW).rule) == ("attributive", "datatype")
    assert walk.classify("P99999007").rule == "lexical" and walk.classify("P131").rule == "table"
