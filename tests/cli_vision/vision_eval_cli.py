#!/usr/bin/env python3
"""Runs `waste eval v1.waste PROMPT --image F… --json` for every case of the vision fixture's
index.json and compares prompt_tokens exactly and the top-10 ids and logits (within 1e-3)
with the reference engine's JSON. Also checks that a file that is not an image is refused."""
import json
import os
import subprocess
import sys

cli, fixtures = sys.argv[1], sys.argv[2]
index = json.load(open(os.path.join(fixtures, "index.json")))
failures = 0
for case in index["cases"]:
    cmd = [cli, "eval", os.path.join(fixtures, case["container"]), case["prompt"], "--json"]
    for image in case["images"]:
        cmd += ["--image", os.path.join(fixtures, image)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    name = f'{case["images"]} "{case["prompt"]}"'
    if run.returncode != 0:
        print(f"FAIL {name}: exit {run.returncode}: {run.stderr.strip()}")
        failures += 1
        continue
    got = json.loads(run.stdout)
    want = json.load(open(os.path.join(fixtures, case["json"])))
    want["top"] = want["top"][: len(got["top"])]  # the reference printed more rows than our default 10
    problems = [] if len(got["top"]) == 10 else [f'{len(got["top"])} rows instead of 10']
    if got["prompt_tokens"] != want["prompt_tokens"]:
        problems.append(f'prompt_tokens {got["prompt_tokens"]} != {want["prompt_tokens"]}')
    if [t["id"] for t in got["top"]] != [t["id"] for t in want["top"]]:
        problems.append("top ids differ")
    worst = max(abs(a["logit"] - b["logit"]) for a, b in zip(got["top"], want["top"]))
    if worst > 1e-3:
        problems.append(f"logit off by {worst:.2e}")
    print(("FAIL " if problems else "ok   ") + f"{name}: max |dlogit| {worst:.1e} {'; '.join(problems)}")
    failures += bool(problems)

# Not an image: refused with a one-line reason and a non-zero exit.
notimage = os.path.join(fixtures, "index.json")
run = subprocess.run([cli, "eval", os.path.join(fixtures, "v1.waste"), "A", "--image", notimage, "--json"],
                     capture_output=True, text=True, timeout=60)
if run.returncode == 0 or not run.stderr.strip() or run.stdout.strip():
    print(f"FAIL a non-image was not refused cleanly: exit {run.returncode}, stderr {run.stderr!r}")
    failures += 1
else:
    print(f"ok   non-image refused: {run.stderr.strip()}")

print(f"{len(index['cases']) + 1 - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
