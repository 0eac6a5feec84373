"""Run every benchmark (``benchmarks/bench_*.py``) and print one markdown report.

    python benchmarks/run.py            # full
    python benchmarks/run.py --quick    # smaller inputs, fewer repeats
    python benchmarks/run.py load chains   # only these

Each benchmark runs in its own process; each prints its own markdown tables (medians,
rates, peak memory and ratios of chaingraph against the peers on the same data).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    benches = sorted(HERE.glob("bench_*.py"))
    names = [b.stem.removeprefix("bench_") for b in benches]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benches", nargs="*", metavar="BENCH",
                        help=f"only these benchmarks (default: all of {', '.join(names)})")
    parser.add_argument("--quick", action="store_true", help="smaller inputs, fewer repeats (passed to each)")
    args = parser.parse_intermixed_args(argv)  # names before and after --quick
    unknown = [w for w in args.benches if w not in names]
    if unknown:
        parser.error(f"no such benchmark: {', '.join(unknown)} (choose from {', '.join(names)})")
    if args.benches:
        benches = [b for b in benches if b.stem.removeprefix("bench_") in args.benches]
    failed = 0
    print(f"# chaingraph benchmarks ({time.strftime('%Y-%m-%d %H:%M')})\n")
    for bench in benches:
        print(f"## {bench.stem.removeprefix('bench_')}\n", flush=True)
        cmd = [sys.executable, str(bench), *(["--quick"] if args.quick else [])]
        proc = subprocess.run(cmd, cwd=HERE.parent, text=True, capture_output=True)
        print(proc.stdout)
        if proc.returncode:
            failed += 1
            print(f"**failed** (exit {proc.returncode}):\n```\n{proc.stderr[-2000:]}\n```\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
