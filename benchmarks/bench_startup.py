"""Start-up cost of the command line, measured as whole processes (wall time, start to exit).

    python benchmarks/bench_startup.py [--quick] [--runs N]

Commands (each a fresh process, the repository first on ``PYTHONPATH``; ``chaingraph`` is the
console script beside the running ``python``, else ``python -m chaingraph``):

* ``chaingraph --help``                       list the commands;
* ``chaingraph crosswalk P131``               one crosswalk answer (table rule);
* ``chaingraph crosswalk P571 P1082 P2046``   three answers from the packaged property facts;
* ``chaingraph expand --seed Q42``            chains from the bundled sample store;

beside the reference points ``python -c pass`` (the interpreter alone),
``python -c "import click, pydantic"`` (the two libraries every command needs: the yardstick
of issue 11, ``--help`` and ``crosswalk P131`` must stay within 3x of it) and
``python -c "import igraph"`` (the graph library alone).

Every command runs once unmeasured and its output is checked (exit 0, the expected
answer); then the commands run in turn, round after round (A B C ... A B C ...), so a
drift in machine speed hits them all alike. Medians of ``--runs`` rounds (default 10) and
their ratios to ``import click, pydantic`` and to ``python -c pass`` are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SCRIPT = Path(sys.executable).with_name("chaingraph")  # the installed console script, as users run it
CHAINGRAPH = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "chaingraph"]
YARDSTICK = "import click, pydantic"

Check = Callable[[str], bool]


def _lists_commands(out: str) -> bool:
    return all(name in out for name in ("audit", "crosswalk", "expand", "fuse", "load", "necessity"))


def _crosswalk_p131(out: str) -> bool:
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[2:] if line.strip()}
    return rows == {"P131": "spatial"}


def _crosswalk_packaged(out: str) -> bool:
    rows = {line.split()[0]: line.split()[1:3] for line in out.splitlines()[2:] if line.strip()}
    return rows == {
        "P571": ["temporal", "datatype"],
        "P1082": ["attributive", "datatype"],
        "P2046": ["attributive", "datatype"],
    }


def _chains(out: str) -> bool:
    return out.count('"seed":"Q42"') >= 1


#: (name, argv, check of stdout or None)
COMMANDS: list[tuple[str, list[str], Check | None]] = [
    ("python -c pass", [sys.executable, "-c", "pass"], None),
    (f'python -c "{YARDSTICK}"', [sys.executable, "-c", YARDSTICK], None),
    ('python -c "import igraph"', [sys.executable, "-c", "import igraph"], None),
    ("chaingraph --help", [*CHAINGRAPH, "--help"], _lists_commands),
    ("chaingraph crosswalk P131", [*CHAINGRAPH, "crosswalk", "P131"], _crosswalk_p131),
    (
        "chaingraph crosswalk P571 P1082 P2046",
        [*CHAINGRAPH, "crosswalk", "P571", "P1082", "P2046"],
        _crosswalk_packaged,
    ),
    ("chaingraph expand --seed Q42", [*CHAINGRAPH, "expand", "--seed", "Q42", "--format", "jsonl"], _chains),
]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, cwd=ROOT)
    return time.perf_counter() - t0, proc


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 10")
    parser.add_argument("--runs", type=int, default=None, metavar="N",
                        help="rounds of every command (default 10; --quick: 3)")
    args = parser.parse_args(argv)
    runs = args.runs if args.runs is not None else (3 if args.quick else 10)
    env = _env()
    timed = []
    for name, command, check in COMMANDS:  # warm-up and answer check, not timed
        _, proc = _run(command, env)
        if proc.returncode != 0 or (check is not None and not check(proc.stdout)):
            print(f"**{name}** gave a wrong answer (exit {proc.returncode}); not timed:\n```\n"
                  f"{proc.stdout[-1500:]}{proc.stderr[-1500:]}\n```\n")
        else:
            timed.append((name, command))
    seconds: dict[str, list[float]] = {name: [] for name, _ in timed}
    for _ in range(runs):
        for name, command in timed:
            seconds[name].append(_run(command, env)[0])
    median = {name: statistics.median(values) for name, values in seconds.items()}
    bare, yardstick = median["python -c pass"], median[f'python -c "{YARDSTICK}"']
    print(f"### Start-up, whole processes (wall time, median of {runs}, interleaved)\n")
    print(f"`chaingraph` = `{' '.join(CHAINGRAPH)}`\n")
    print(f"| command | median s | min s | max s | ratio vs `{YARDSTICK}` | ratio vs `python -c pass` |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, values in seconds.items():
        print(f"| `{name}` | {median[name]:.3f} | {min(values):.3f} | {max(values):.3f} | "
              f"{median[name] / yardstick:.2f}× | {median[name] / bare:.2f}× |")
    print()
    return 0 if len(timed) == len(COMMANDS) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
