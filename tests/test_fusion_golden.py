"""Golden files: ``chaingraph fuse`` on every spec in ``tests/fixtures/fusion/``.

Each ``golden/<spec>.txt`` starts with ``# key: value`` meta lines (the spec file and the
exit status), then the exact readable output. After a deliberate change, regenerate them
and review the diff::

    python tests/test_fusion_golden.py --regenerate && git diff tests/fixtures/fusion/golden
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from chaingraph.cli import cli

FIXTURES = Path(__file__).parent / "fixtures" / "fusion"
GOLDEN = FIXTURES / "golden"
SPECS = sorted(FIXTURES.glob("*.json"))


def render(spec: Path) -> str:
    res = CliRunner().invoke(cli, ["fuse", str(spec)])
    body = res.output if res.exit_code != 2 else res.output.replace(str(spec), spec.name)
    return f"# spec: {spec.name}\n# exit: {res.exit_code}\n{body}"


def test_every_spec_has_a_golden_file() -> None:
    assert SPECS
    assert {p.stem for p in GOLDEN.glob("*.txt")} == {s.stem for s in SPECS}


@pytest.mark.parametrize("spec", SPECS, ids=[s.stem for s in SPECS])
def test_fuse_output_matches_its_golden_file(spec: Path) -> None:
    expected = (GOLDEN / f"{spec.stem}.txt").read_text(encoding="utf-8")
    assert render(spec) == expected


if __name__ == "__main__":
    if "--regenerate" not in sys.argv:
        sys.exit("usage: python tests/test_fusion_golden.py --regenerate")
    GOLDEN.mkdir(exist_ok=True)
    for spec in SPECS:
        (GOLDEN / f"{spec.stem}.txt").write_text(render(spec), encoding="utf-8")
        print(f"wrote {GOLDEN.name}/{spec.stem}.txt")
