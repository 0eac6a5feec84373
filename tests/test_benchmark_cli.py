"""Every benchmark script has a real command line: ``--help`` explains it and runs nothing,
and a flag it does not know is refused, not ignored (a mistyped ``--paried 4`` used to start
the whole multi-minute default benchmark)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted([*(ROOT / "benchmarks").glob("bench_*.py"), ROOT / "benchmarks" / "run.py"])


def _run(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, check=False)


def test_every_benchmark_script_is_covered() -> None:
    assert len(SCRIPTS) >= 13 and ROOT / "benchmarks" / "bench_load.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_help_explains_the_flags_and_runs_nothing(script: Path) -> None:
    proc = _run(script, "--help")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("usage: ") and "--quick" in proc.stdout
    assert "|---|" not in proc.stdout  # no benchmark table: nothing was measured


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_an_unknown_flag_is_refused(script: Path) -> None:
    proc = _run(script, "--no-such-flag")
    assert proc.returncode == 2
    assert "unrecognized arguments: --no-such-flag" in proc.stderr
    assert proc.stdout == ""


def test_the_load_benchmark_refuses_what_it_cannot_do() -> None:
    paired = _run(ROOT / "benchmarks" / "bench_load.py", "--paired", "2")
    assert paired.returncode == 2 and "give --before ROOT too" in paired.stderr
    both = _run(ROOT / "benchmarks" / "bench_load.py", "--json", "--nt")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    unknown = _run(ROOT / "benchmarks" / "run.py", "lod")
    assert unknown.returncode == 2 and "no such benchmark: lod" in unknown.stderr


def test_the_load_benchmark_imports_no_chaingraph_before_it_loads() -> None:
    """``--before ROOT`` times another checkout's chaingraph in a child process that imports
    this script first: a chaingraph module imported by the script itself would be this
    checkout's, and the child refuses to time it (a top-level settings import did that)."""
    probe = ("import sys; sys.path.insert(0, 'benchmarks'); import bench_load; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'chaingraph'))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, check=True)
    assert proc.stdout.strip() == "[]"
