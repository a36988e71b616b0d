#!/usr/bin/env python3
"""Predicted vs measured decode speed: `waste plan MODEL --json` against `waste bench` at
the floor, the default and a budget holding every expert.

Usage: plan_vs_bench.py WASTE MODEL [MODEL...] [--tokens N] [--runs R]

For each model: the plan's forecast at those three budgets (compute from this machine's
calibration + the reads it cannot hide, the disk measured on the model's own expert file),
then `waste bench --budget B` R times (median), and the error. Not run by ctest: it reads
the disk and takes minutes on a mid-size container.
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


def main():
    argv = sys.argv[1:]
    tokens, runs = "64", 3
    if "--tokens" in argv:
        i = argv.index("--tokens")
        tokens = argv[i + 1]
        del argv[i:i + 2]
    if "--runs" in argv:
        i = argv.index("--runs")
        runs = int(argv[i + 1])
        del argv[i:i + 2]
    waste, models = argv[0], argv[1:]
    print("| model | budget | predicted tok/s (compute + unhidden reads, hit rate) | measured tok/s (hit rate) | error |")
    print("| --- | --- | --- | --- | --- |")
    for model in models:
        plan = run(waste, "plan", model, "--json")
        rows = {r["budget_bytes"]: r for r in plan["forecast"]["budgets"]}
        for name, budget in (("floor", plan["floor_bytes"]), ("default", plan["default_budget_bytes"]),
                             ("every expert", plan["every_expert_budget_bytes"])):
            p = rows[budget]
            measured = [run(waste, "bench", model, "--tokens", tokens, "--budget", str(budget), "--json")
                        for _ in range(runs)]
            tps = statistics.median(m["tok_per_s"] for m in measured)
            hit = statistics.median(m["hit_rate"] for m in measured)
            err = (p["tok_per_s"] - tps) / tps * 100
            print(f"| {model.rstrip('/').split('/')[-1]} | {name} {budget / 2**20:.1f} MiB | "
                  f"{p['tok_per_s']:.0f} ({p['compute_s_per_token'] * 1e3:.2f} + "
                  f"{p['unhidden_io_s_per_token'] * 1e3:.2f} ms, hit {p['hit_rate'] * 100:.0f} %) | "
                  f"{tps:.0f} (hit {hit * 100:.0f} %) | {err:+.0f} % |", flush=True)


if __name__ == "__main__":
    main()
