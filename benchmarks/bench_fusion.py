"""Fusion calculator speed: exact chaingraph against float peers, on real Wikidata values.

    python benchmarks/bench_fusion.py [--quick]

Specs of 2–6 components are generated (seeded) from the real values of
``../shared/data/entities_full/wikidata_entities_full.jsonl.gz``: quantities with their
units (populations, areas in km², elevations in m, life expectancies in years, ...) grouped
by dimension, and dates of year or day precision. Operations: add, subtract, average, max,
min, select_max (quantities); year_difference, select_earliest (dates). Cases, each in a
fresh process (median of repeats, peak RSS above the post-setup baseline):

* ``chaingraph fuse_spec``   :func:`chaingraph.fusion.fuse_spec` on validated specs: exact
                             arithmetic, statement resolution, full records and checks;
* ``chaingraph JSON→JSON``   the CLI's path: parse and validate the spec JSON, fuse, dump
                             the result record as JSON;
* ``pint, Fraction``         pint with exact ``Fraction`` magnitudes (no records, no checks);
* ``pint, float``            pint with its default float magnitudes;
* ``naive float``            ``float(amount) * factor`` from a dict, the way a script would.

The float peers do only the arithmetic and give no record, refusal or check; they show
what exactness and explanation cost. The report also counts how many float answers differ
from the exact ones. Machine load is shared, so rates are also given per CPU second.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import random
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import SHARED_DATA, Case, Result, markdown_table, measure  # noqa: E402

MODULE = "bench_fusion"
Run = Callable[[], tuple[int, dict[str, Any]]]
QUANTITY_OPS = ("add", "subtract", "average", "max", "min", "select_max")
DATE_OPS = ("year_difference", "select_earliest")


def _shared() -> Path:
    return SHARED_DATA


def _walk(obj: Any, out: list[dict[str, Any]]) -> None:
    if isinstance(obj, dict):
        if obj.get("type") in ("quantity", "time") and isinstance(obj.get("value"), dict):
            out.append(obj)
        for v in obj.values():
            _walk(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _walk(v, out)


def value_pools() -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Real quantities grouped by dimension (units in the table), and real dates (precision ≥ 9)."""
    from chaingraph.units import unit_table

    table = unit_table()
    found: list[dict[str, Any]] = []
    with gzip.open(_shared() / "entities_full" / "wikidata_entities_full.jsonl.gz", "rt") as f:
        for line in f:
            _walk(json.loads(line), found)
    quantities: dict[str, list[dict[str, Any]]] = {}
    dates = []
    for dv in found:
        v = dv["value"]
        if dv["type"] == "time":
            if v.get("precision", 0) in (9, 11) and not v["time"].startswith(("-", "+0000")):
                dates.append(dv)
            continue
        unit = table.get(v.get("unit"))
        if unit is not None and not unit.is_offset and unit.kind != "currency":
            quantities.setdefault(unit.dimension, []).append(dv)
    return {d: vs for d, vs in quantities.items() if len(vs) >= 6}, dates


def make_specs(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    quantities, dates = value_pools()
    dims = sorted(quantities)
    specs = []
    for i in range(n):
        if rng.random() < 0.25:
            op = rng.choice(DATE_OPS)
            k = 2 if op == "year_difference" else rng.randint(2, 6)
            values = rng.sample(dates, k)
        else:
            op = rng.choice(QUANTITY_OPS)
            k = 2 if op == "subtract" else rng.randint(2, 6)
            values = rng.sample(quantities[rng.choice(dims)], k)
        comps = [{"id": f"c{j}", "entity": f"Q{1000 * i + j + 1}", "value": v} for j, v in enumerate(values)]
        spec: dict[str, Any] = {"id": f"s{i}", "operation": op, "components": comps}
        if op in ("subtract", "year_difference"):
            spec["minuend"] = "c0"
        specs.append(spec)
    return specs


def _timed(work: Callable[[], int]) -> Run:
    """Run ``work`` (the harness times it, in CPU seconds too). Setup data is moved out of
    the garbage collector's way first (``gc.freeze``, as long-running services do), for
    every case alike; results are consumed one by one, as a pipeline would, not kept."""
    gc.collect()
    gc.freeze()

    def run() -> tuple[int, dict[str, Any]]:
        return work(), {}
    return run


# -- cases --------------------------------------------------------------------------------
def chaingraph_fuse_spec(n: int) -> Run:
    from chaingraph.fusion import FusionSpec, fuse_spec
    from chaingraph.units import unit_table

    unit_table()
    specs = [FusionSpec.model_validate(s) for s in make_specs(n)]
    refused = sum(1 for s in specs if fuse_spec(s).status == "refusal")
    print(f"chaingraph: {refused:,} of {len(specs):,} specs refused (overlaps, ties, coarse dates)",
          file=sys.stderr)
    def work() -> int:
        done = 0
        for spec in specs:
            done += fuse_spec(spec).operation is not None
        return done

    return _timed(work)


def chaingraph_json(n: int) -> Run:
    from chaingraph.fusion import FusionSpec, fuse_spec
    from chaingraph.units import unit_table

    unit_table()
    texts = [json.dumps(s) for s in make_specs(n)]
    def work() -> int:
        return sum(1 for t in texts if fuse_spec(FusionSpec.model_validate_json(t)).model_dump_json())

    return _timed(work)


def _plain(specs: list[dict[str, Any]]) -> list[tuple[str, list[tuple[str, str, int]]]]:
    """(operation, [(amount, unit Q-id, astronomical year)]) — the peers' input."""
    from chaingraph.units import unit_id

    out = []
    for s in specs:
        vals = []
        for c in s["components"]:
            v = c["value"]["value"]
            if c["value"]["type"] == "time":
                vals.append(("", "", int(v["time"][:v["time"].index("-", 1)])))
            else:
                vals.append((v["amount"], unit_id(v["unit"]), 0))
        out.append((s["operation"], vals))
    return out


def _peer(plain: list[tuple[str, list[tuple[str, str, int]]]], make: Callable[[str, str], Any],
          base: Callable[[Any], Any]) -> int:
    done = 0
    for op, vals in plain:
        if op == "year_difference":
            result: Any = vals[0][2] - vals[1][2]
        elif op == "select_earliest":
            result = min(range(len(vals)), key=lambda i: vals[i][2])
        else:
            qs = [base(make(a, u)) for a, u, _ in vals]
            if op == "add":
                result = sum(qs[1:], qs[0])
            elif op == "subtract":
                result = qs[0] - qs[1]
            elif op == "average":
                result = sum(qs[1:], qs[0]) / len(qs)
            elif op == "max":
                result = max(qs)
            elif op == "min":
                result = min(qs)
            else:
                result = max(range(len(qs)), key=lambda i: qs[i])
        done += result is not None
    return done


def _pint_registry(exact: bool) -> Any:
    import pint

    from chaingraph.resources import data_file

    ureg: Any = pint.UnitRegistry(non_int_type=Fraction) if exact else pint.UnitRegistry()
    ureg.load_definitions(str(data_file("units_pint.txt")))
    return ureg


def _pint_peer(n: int, exact: bool) -> Run:
    from chaingraph.units import unit_table

    table = unit_table()
    ureg = _pint_registry(exact)
    number: Any = Fraction if exact else float
    plain = _plain(make_specs(n))
    exprs = {u.qid: u.pint for u in table}

    def make(amount: str, unit: str) -> Any:
        return ureg.Quantity(number(amount), exprs[unit])

    return _timed(lambda: _peer(plain, make, lambda q: q.to_base_units()))


def pint_fraction(n: int) -> Run:
    return _pint_peer(n, exact=True)


def pint_float(n: int) -> Run:
    return _pint_peer(n, exact=False)


def naive_float(n: int) -> Run:
    from chaingraph.units import unit_table

    factors = {u.qid: float(u.factor) for u in unit_table()}
    plain = _plain(make_specs(n))
    return _timed(lambda: _peer(plain, lambda a, u: float(a) * factors[u], lambda x: x))


def float_disagreements(n: int) -> tuple[int, int]:
    """(float answers whose printed form differs from chaingraph's exact answer, answers compared)."""
    from chaingraph.fusion import FusionResult, FusionSpec, fuse_spec
    from chaingraph.units import unit_id, unit_table

    table = unit_table()
    factors = {u.qid: float(u.factor) for u in table}
    differ = compared = 0
    for s in make_specs(n):
        if s["operation"] not in ("add", "subtract", "average"):
            continue
        r = fuse_spec(FusionSpec.model_validate(s))
        if not isinstance(r, FusionResult) or r.unit is None:
            continue
        xs = [float(c["value"]["value"]["amount"]) * factors[unit_id(c["value"]["value"]["unit"])]
              for c in s["components"]]
        f = {"add": sum(xs), "subtract": xs[0] - xs[1], "average": sum(xs) / len(xs)}[s["operation"]]
        exact = table.unit(r.unit).to_base(r.fraction())
        compared += 1
        differ += Fraction(repr(f)) != exact  # the float as printed, shortest round-trip form
    return differ, compared


def _cpu_table(title: str, results: list[Result], baseline: str) -> str:
    base = next(r for r in results if r.name == baseline)
    lines = [f"### {title}", "", "| implementation | median CPU s | specs per CPU s | ratio vs "
             f"{baseline} |", "|---|---:|---:|---:|"]
    for r in results:
        cpu = r.median_cpu
        lines.append(f"| {r.name} | {cpu:.4f} | {r.items / cpu:,.0f} | {cpu / base.median_cpu:.2f}× |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 specs instead of 10,000, 3 repeats")
    args = parser.parse_args(argv)
    n = 2_000 if args.quick else 10_000
    repeat = 3 if args.quick else 5
    cases = [Case("chaingraph fuse_spec", f"{MODULE}:chaingraph_fuse_spec", {"n": n}, repeat),
             Case("chaingraph JSON→JSON", f"{MODULE}:chaingraph_json", {"n": n}, repeat),
             Case("pint, Fraction", f"{MODULE}:pint_fraction", {"n": n}, repeat),
             Case("pint, float", f"{MODULE}:pint_float", {"n": n}, repeat),
             Case("naive float", f"{MODULE}:naive_float", {"n": n}, repeat)]
    results = [measure(case) for case in cases]
    title = f"Fusion of {n:,} specs of 2–6 real Wikidata values"
    print(markdown_table(title, results, baseline="chaingraph fuse_spec", unit="specs"))
    print(_cpu_table(f"{title}, per CPU second", results, baseline="chaingraph fuse_spec"))
    differ, compared = float_disagreements(n)
    print(f"Naive float answers (add / subtract / average, in base units, printed with repr) that "
          f"differ from the exact answer: "
          f"{differ:,} of {compared:,}.\n")
    print(f"Load average when done: {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} CPUs.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
