"""The vectorised N-Triples splitter agrees with the line-by-line regular expression: every
line it takes is a triple with the same three terms, and what it refuses goes the slow way."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.sources.loaders.nt_views import ESCAPED, PLAIN, split_lines, surely_claims, views
from chaingraph.sources.loaders.ntriples import _LITERAL, _SUFFIX, parse_line_slow

_LITERAL_RE, _SUFFIX_RE = re.compile(_LITERAL), re.compile(_SUFFIX)
_CLAIM_S = re.compile(r"<http://www\.wikidata\.org/entity/[QP][1-9][0-9]{0,11}>")
_CLAIM_O = re.compile(r"<http://www\.wikidata\.org/entity/statement/[QPLqpl][0-9]+-[^$]+>")

_IRIS = st.sampled_from(["<http://www.wikidata.org/entity/Q42>", "<http://a>", "<>", "<http://x/é>",
                         "<http://www.wikidata.org/entity/statement/Q42-A-B>", "<a b>", "<a\\u0041>"])
_BLANKS = st.sampled_from(["_:b0", "_:x", "_x", "_:"])
_LITERALS = st.builds(lambda body, suffix: f'"{body}"{suffix}',
                      st.text(alphabet='ab "\\.@<>é\t', max_size=8),
                      st.sampled_from(["", "@en", "@en-GB", "@", "@1", "^^<http://t>", "^^<a b>", " x"]))
_TERMS = st.one_of(_IRIS, _BLANKS, _LITERALS, st.text(alphabet="<>_: .\"a", max_size=6))
_SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\t"])
_ENDS = st.sampled_from([" .", " .", ".", " . ", "", " ..", " .\r"])
_LINES = st.one_of(
    st.builds(lambda s, a, p, b, o, e: f"{s}{a}{p}{b}{o}{e}", st.one_of(_IRIS, _BLANKS), _SEPARATORS,
              _IRIS, _SEPARATORS, _TERMS, _ENDS),
    st.text(alphabet="<>_:. \"a#", max_size=12))


def _fast_terms(data: bytes) -> list[tuple[str, str, str] | None]:
    """What the fast path makes of each line (``None``: left for the slow path), with the
    literal checks the stager runs in DuckDB done here by Python's ``re``."""
    split = split_lines(data)
    out: list[tuple[str, str, str] | None] = []
    for i in range(split.lines):
        if not split.ok[i]:
            out.append(None)
            continue
        row = np.array([i])
        s, p, o = (views(split.buf, a[row], b[row], data).to_pylist()[0] for a, b in (
            (split.s_start, split.s_end), (split.p_start, split.p_end), (split.o_start, split.o_end)))
        suffix = views(split.buf, split.suffix_start[row], split.o_end[row], data).to_pylist()[0]
        bad_suffix = split.literal[i] == PLAIN and suffix and not _SUFFIX_RE.fullmatch(suffix)
        if bad_suffix or (split.literal[i] == ESCAPED and not _LITERAL_RE.fullmatch(o)):
            out.append(None)
        else:
            out.append((s, p, o))
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINES, min_size=1, max_size=8))
def test_every_line_the_fast_path_takes_is_the_triple_the_regex_reads(lines: list[str]) -> None:
    data = "\n".join(lines).encode() + b"\n"
    for line, fast in zip(lines, _fast_terms(data)):
        if fast is not None:
            assert parse_line_slow(line.strip()) == fast, line


def test_the_common_shapes_take_the_fast_path() -> None:
    lines = ['<http://a> <http://b> "x y"@en .', "_:b1 <http://b> <http://c> .",
             '<http://a> <http://b> "say \\"hi\\""^^<http://t> .', "<http://a> <http://b> _:c .\r",
             '<http://a> <http://b> "" .']
    data = "\n".join(lines).encode()  # the last line without its newline
    assert _fast_terms(data) == [parse_line_slow(line.strip()) for line in lines]


_IDS = st.one_of(st.sampled_from(["Q42", "P31", "Q0", "X1", "Q", "Q123456789012", "Q1234567890123", "q1",
                                  "Q42-ABC", "Q-A", "Q42-", "Q42-a$b", "L1-F1-x", "Q1234567890123456-x"]),
                 st.text(alphabet="QP0123456789-x$", max_size=16))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_IDS, _IDS), min_size=1, max_size=6))
def test_surely_claims_never_vouches_for_an_id_the_regex_refuses(ids: list[tuple[str, str]]) -> None:
    lines = [f"<http://www.wikidata.org/entity/{e}> <http://www.wikidata.org/prop/P31> "
             f"<http://www.wikidata.org/entity/statement/{s}> ." for e, s in ids]
    data = "\n".join(lines).encode() + b"\n"
    split = split_lines(data)
    rows = np.flatnonzero(split.ok)
    for row, sure in zip(rows, surely_claims(split, rows)):
        s, _, o = parse_line_slow(lines[row]) or ("", "", "")
        exact = bool(_CLAIM_S.fullmatch(s) and _CLAIM_O.fullmatch(o))
        assert not sure or exact, lines[row]
        if ids[row][0] == "Q42" and ids[row][1] == "Q42-ABC":
            assert sure
