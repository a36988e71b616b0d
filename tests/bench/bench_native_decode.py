#!/usr/bin/env python3
"""Decode speed on native MXFP4 expert records against the same model in VQ3R.

Usage: bench_native_decode.py WASTE [--size SIZE] [--tokens N] [--runs R] [--work DIR]
(--work keeps the source and containers there; a second run reuses the source)

Makes a Kimi-Linear-shaped release with MXFP4 experts (`waste mktiny --hf --experts-layout
mxfp4 --size SIZE`), converts it twice (`--experts native` and `--experts vq3r`), and runs
`waste bench` on each R times (median) at two budgets:
- every expert cached (after the prompt), where decoding is compute-bound;
- the floor, where most experts are read.
At both, bytes read per record fetched (misses plus lookahead fills) must equal the record
size `waste info --json` reports.
Also `WASTE_NATIVE_ACTIVATIONS=int8` on the native container. The last line gives the
native / VQ3R decode time ratio at the compute-bound budget. Not run by ctest: it converts
a model of SIZE and takes minutes.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(*args, env=None):
    p = subprocess.run(list(args), capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def bench(waste, model, budget, tokens, runs, env=None):
    out = [json.loads(run(waste, "bench", model, "--tokens", tokens, "--budget", str(budget), "--json", env=env))
           for _ in range(runs)]
    ms = statistics.median(o["ms_per_token"] for o in out)
    # Records read: demand misses plus the router lookahead's speculative fills.
    missed = sum(o["experts_missed"] + o["speculative_fills"] for o in out)
    read = sum(o["bytes_read"] for o in out)
    return ms, missed, read, out[0]["hit_rate"]


def main():
    argv = sys.argv[1:]
    opts = {"--size": "1200M", "--tokens": "32", "--runs": "3", "--work": None}
    for k in list(opts):
        if k in argv:
            i = argv.index(k)
            opts[k] = argv[i + 1]
            del argv[i:i + 2]
    if len(argv) != 1:
        sys.exit(__doc__)
    waste = argv[0]
    work = opts["--work"] or tempfile.mkdtemp(prefix="waste-native-decode-")
    tokens, runs = opts["--tokens"], int(opts["--runs"])
    try:
        hf = os.path.join(work, "hf")
        if not os.path.isdir(hf):  # a --work folder from an earlier run keeps its source
            run(waste, "mktiny", hf, "--hf", "--experts-layout", "mxfp4", "--size", opts["--size"])
        f32 = dict(os.environ)
        f32.pop("WASTE_NATIVE_ACTIVATIONS", None)
        int8 = dict(f32, WASTE_NATIVE_ACTIVATIONS="int8")
        rows = {}
        for enc in ("native", "vq3r"):
            c = os.path.join(work, enc)
            run(waste, "convert", hf, c, "--experts", enc)  # resumes, or finds it done
            info = json.loads(run(waste, "info", c, "--json"))
            plan = json.loads(run(waste, "plan", c, "--json"))
            size = sum(os.path.getsize(os.path.join(c, f)) for f in os.listdir(c))
            print(f"{enc}: {info['expert_format']}, record {info['record_bytes']} B, container {size / 1e6:.0f} MB",
                  flush=True)
            variants = [(enc, f32)] + ([("native int8", int8)] if enc == "native" else [])
            for name, env in variants:
                for label, budget in (("every expert", plan["every_expert_budget_bytes"]), ("floor", plan["floor_bytes"])):
                    ms, missed, read, hit = bench(waste, c, budget, tokens, runs, env)
                    per = read / missed if missed else 0
                    ok = "" if not missed or per == info["record_bytes"] else "  (MISMATCH)"
                    print(f"  {name:12s} {label:12s} {budget / 2**20:8.1f} MiB: {ms:8.2f} ms/token, hit {hit * 100:5.1f} %, "
                          f"{per:.0f} B read per record fetched (record {info['record_bytes']}){ok}", flush=True)
                    rows[(name, label)] = ms
        ratio = rows[("native", "every expert")] / rows[("vq3r", "every expert")]
        ratio8 = rows[("native int8", "every expert")] / rows[("vq3r", "every expert")]
        print(f"compute-bound decode, native MXFP4 / VQ3R time per token: {ratio:.2f} (f32 activations), "
              f"{ratio8:.2f} (int8 activations); {rows[('native', 'every expert')]:.2f} / "
              f"{rows[('native int8', 'every expert')]:.2f} / {rows[('vq3r', 'every expert')]:.2f} ms")
    finally:
        if not opts["--work"]:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
