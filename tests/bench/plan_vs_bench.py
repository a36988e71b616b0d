#!/usr/bin/env python3
"""Predicted vs measured decode speed: `waste plan MODEL --json` against `waste bench` at
the floor, the default and a budget holding every expert.

Usage: plan_vs_bench.py WASTE MODEL [MODEL...] [--tokens N] [--runs R] [--no-recalibrate]

A virtual machine's speed drifts by tens of percent from one minute to the next, so a
prediction calibrated once and measurements taken minutes later differ by that drift
alone. Each measurement therefore comes right after its own prediction: R times per
budget, `waste plan MODEL --calibrate --json` (the compute calibration and the disk
measured again) then `waste bench --budget B`. The table gives the medians, the error of
the medians, and the spread: the range of the R predictions, of the R measurements, and of
the R paired errors (each prediction against the measurement right after it).
--no-recalibrate keeps the cached calibration (the disk is still measured each time).
The plans leave out the model's earlier real runs and the benches keep none (`--no-observed`,
`--no-record`): this measures the calibrated forecast itself, not one already corrected by
the runs it is compared with.

Not run by ctest: it reads the disk and takes minutes on a mid-size container.
"""
import json
import statistics
import subprocess
import sys


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def option(argv, name, default):
    if name in argv:
        i = argv.index(name)
        value = argv[i + 1]
        del argv[i:i + 2]
        return value
    return default


def spread(values, fmt):
    return f"{fmt.format(min(values))}–{fmt.format(max(values))}"


def main():
    argv = sys.argv[1:]
    tokens = option(argv, "--tokens", "64")
    runs = int(option(argv, "--runs", "3"))
    recalibrate = "--no-recalibrate" not in argv
    argv = [a for a in argv if a != "--no-recalibrate"]
    if len(argv) < 2:
        sys.exit(__doc__)
    waste, models = argv[0], argv[1:]
    plan_args = ["--json", "--no-observed"] + (["--calibrate"] if recalibrate else [])
    print("| model | budget | predicted tok/s, median (compute + unhidden reads, hit rate) [range] "
          "| measured tok/s, median (hit rate, read a token) [range] | error of medians [paired errors] | decode scale "
          "| disk beside a decode, GB/s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for model in models:
        first = run(waste, "plan", model, "--json", "--no-observed")
        for name, budget in (("floor", first["floor_bytes"]), ("default", first["default_budget_bytes"]),
                             ("every expert", first["every_expert_budget_bytes"])):
            predicted, measured, scales, speeds = [], [], [], []
            for _ in range(runs):
                plan = run(waste, "plan", model, *plan_args)
                rows = {r["budget_bytes"]: r for r in plan["forecast"]["budgets"]}
                predicted.append(rows[budget])
                scales.append(plan["forecast"].get("decode_scale", 0))
                speeds.append(plan["forecast"].get("decode_disk_gbps", 0))
                measured.append(run(waste, "bench", model, "--tokens", tokens, "--budget", str(budget), "--no-record", "--json"))
            ptps = [p["tok_per_s"] for p in predicted]
            mtps = [m["tok_per_s"] for m in measured]
            paired = [(p - m) / m * 100 for p, m in zip(ptps, mtps)]
            mid = statistics.median(ptps)
            p = min(predicted, key=lambda r: abs(r["tok_per_s"] - mid))  # the run at the median
            tps = statistics.median(mtps)
            hit = statistics.median(m["hit_rate"] for m in measured)
            # The bench counts the lookahead's early reads as hits (the forecast's hit rate is the
            # cache's alone): the bytes it read a token say what the disk carried.
            read = statistics.median(m.get("gb_per_token", 0) for m in measured)
            err = (mid - tps) / tps * 100
            print(f"| {model.rstrip('/').split('/')[-1]} | {name} {budget / 2**20:.1f} MiB | "
                  f"{mid:.0f} ({p['compute_s_per_token'] * 1e3:.2f} + "
                  f"{p['unhidden_io_s_per_token'] * 1e3:.2f} ms, hit {p['hit_rate'] * 100:.0f} %) "
                  f"[{spread(ptps, '{:.0f}')}] | {tps:.0f} (hit {hit * 100:.0f} %, {read * 1e3:.1f} MB) [{spread(mtps, '{:.0f}')}] | "
                  f"{err:+.0f} % [{spread(paired, '{:+.0f}')} %] | {spread(scales, '{:.2f}')} "
                  f"| {spread(speeds, '{:.2f}')} |", flush=True)


if __name__ == "__main__":
    main()
