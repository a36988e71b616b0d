"""`waste plan` and `waste cache-sim` end to end: reference fields and numbers, refusal
below the floor, usage errors, and the cache replay against Belady."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

WASTE, FIX = sys.argv[1], sys.argv[2]
failures = []


def run(*args):
    p = subprocess.run([WASTE, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)


# plan: the reference's numbers on both fixture containers
for container, ref in (("reference-container/r3.waste", "reference-container/r3.plan.json"),
                       ("k3-container/k3s1.waste", "k3-container/k3s1.plan.json")):
    rc, out, err = run("plan", f"{FIX}/{container}", "--json", "--disk-gbps", "2")
    check(rc == 0, f"plan {container} exit {rc}: {err}")
    got = json.loads(out)
    want = json.load(open(f"{FIX}/{ref}"))
    for key in ("ctx", "trunk_bytes", "state_bytes", "scratch_bytes", "min_expert_cache",
                "floor_bytes", "recommended_bytes", "vision_bytes"):
        if key in want:
            check(got.get(key) == want[key], f"{container} {key}: {got.get(key)} != {want[key]}")
    for key in ("physical_ram_bytes", "usable_ram_bytes", "other_process_bytes", "cliff_bytes", "forecast"):
        check(key in got, f"{container}: no {key}")
    check(got["usable_ram_bytes"] <= got["physical_ram_bytes"], "usable > physical")
    check(len(got["forecast"]["budgets"]) >= 4, "forecast ladder too short")

# plan --budget: the reference's expert_cache_bytes, which here also holds the state checkpoint
# (the reference keeps none)
rc, out, err = run("plan", f"{FIX}/reference-container/r3.waste", "--budget", "1G", "--json", "--disk-gbps", "2")
got = json.loads(out)
check(rc == 0 and got["budget_bytes"] == 1073741824 and got.get("checkpoint_kept") is True
      and got["expert_cache_bytes"] + got.get("checkpoint_bytes", 0) == 1063080896, f"plan --budget 1G: {rc} {out}")

# The plan's budget is the engine's: with no budget the engine opens at the plan's default,
# and at the floor (no room for the checkpoint), between the floor and the default and at the
# default, the plan's expert cache and slots are the ones the engine opens with.
r3 = f"{FIX}/reference-container/r3.waste"
rc, out, err = run("plan", r3, "--json", "--disk-gbps", "2")
plan = json.loads(out) if rc == 0 else {}
rc, out, err = run("info", r3, "--json")
opened = json.loads(out) if rc == 0 else {}
check(plan.get("default_budget_bytes", -1) == opened.get("budget_bytes"),
      f"default: plan {plan.get('default_budget_bytes')}, engine opened at {opened.get('budget_bytes')}: {err}")
floor, default = plan.get("floor_bytes", 0), plan.get("default_budget_bytes", 0)
for budget, kept in ((floor, False), ((floor + default) // 2, True), (default, True)):
    rc, out, err = run("plan", r3, "--json", "--disk-gbps", "2", "--budget", str(budget))
    planned = json.loads(out) if rc == 0 else {}
    rc2, out2, err2 = run("info", r3, "--json", "--budget", str(budget))
    info = json.loads(out2) if rc2 == 0 else {}
    slots = info["expert_cache_bytes"] // info["record_bytes"] if rc2 == 0 else -1
    check(planned.get("expert_cache_bytes") == info.get("expert_cache_bytes") and planned.get("cache_slots") == slots
          and planned.get("checkpoint_kept") is kept and info.get("budget_bytes") == budget,
          f"budget {budget}: plan says cache {planned.get('expert_cache_bytes')} ({planned.get('cache_slots')} slots, "
          f"checkpoint {planned.get('checkpoint_kept')}), engine opened {info.get('expert_cache_bytes')} ({slots} slots) "
          f"at {info.get('budget_bytes')}: {err}{err2}")

# a budget below the floor: exit 1, one line naming the floor
rc, out, err = run("plan", f"{FIX}/reference-container/r3.waste", "--budget", "1M", "--json", "--disk-gbps", "2")
check(rc == 1, f"below floor exit {rc}")
check(json.loads(out)["expert_cache_bytes"] == -1, "below floor: expert_cache_bytes must be -1")
check("10710080" in err and "floor" in err, f"below floor message: {err!r}")

rc, out, err = run("plan", f"{FIX}/reference-container/r3.waste", "--budget", "lots")
check(rc != 0 and "lots" in err, f"bad size accepted: {rc} {err!r}")
rc, out, err = run("plan", f"{FIX}/no-such-container")
check(rc == 1 and "manifest.json" in err, f"missing container: {rc} {err!r}")

# The decode scale's fallback is said, not silent. A calibration whose decode could not be
# measured keeps the reason; the next plan tries the decode again, and where that fails too
# (no usable temporary folder) --json and stderr say why; with a usable folder it is measured.
cache = tempfile.mkdtemp(prefix="waste-plan-calibration-")
env = dict(os.environ, XDG_CACHE_HOME=cache, TMPDIR=cache)


def plan_r3():
    return subprocess.run([WASTE, "plan", f"{FIX}/reference-container/r3.waste", "--json", "--disk-gbps", "2"],
                          capture_output=True, text=True, timeout=100, env=env)


p = plan_r3()  # the first calibration on this (empty) cache folder
check(p.returncode == 0 and json.loads(p.stdout)["forecast"]["decode_scale_fallback"] is None,
      f"first calibration: {p.returncode} {p.stderr!r}")
# A token's compute kernel by kernel: r3's VQ3R experts and their tables among them, and the
# parts add up to the whole.
if p.returncode == 0:
    f = json.loads(p.stdout)["forecast"]
    parts = f.get("compute_s_by_kernel", {})
    check(any(k.startswith("VQ-expert") for k in parts) and "LUT" in parts
          and abs(sum(parts.values()) - f["compute_s_per_token"]) <= 1e-9 + 1e-6 * f["compute_s_per_token"],
          f"compute_s_by_kernel: {parts} against {f['compute_s_per_token']}")
    # A prompt's passes decode r3's VQ3R experts into panels, priced by the calibration's own
    # "VQ-panels" timing: a part of the prompt's compute, never all of it.
    pf = f.get("prefill", {})
    check(0 < pf.get("panel_decode_seconds", 0) < pf.get("compute_seconds", 0),
          f"prefill's panel decoding: {pf}")
    # Its other timed parts (r3 is Kimi-Linear: KDA and MLA layers), never more than the whole.
    parts = [pf.get(k, 0) for k in ("panel_decode_seconds", "linear_attention_seconds", "attention_seconds",
                                    "vector_seconds")]
    check(all(p > 0 for p in parts) and sum(parts) < pf.get("compute_seconds", 0), f"prefill's parts: {pf}")
cal_file = os.path.join(cache, "waste", "compute-calibration.json")
cal = json.load(open(cal_file))
kernels = {t.get("kernel") for t in cal.get("timings", [])}
check({"VQ-panels", "VQ2R-panels", "VQ4P-panels", "MXFP4-panels", "FP8B128-panels", "INT4G32-panels", "BF16-panels",
       "ATTN-score", "KDA-token",
       "VEC-token"} <= kernels,
      f"calibration without the panel decoders: {sorted(kernels)}")
cal["decode_scale"], cal["decode_scale_error"] = 1.0, "could not decode a tiny model (test)"
json.dump(cal, open(cal_file, "w"))
not_a_dir = os.path.join(cache, "tmp-is-a-file")
open(not_a_dir, "w").write("x")
env["TMPDIR"] = not_a_dir
p = plan_r3()
check(p.returncode == 0, f"plan with a broken TMPDIR: exit {p.returncode}: {p.stderr}")
if p.returncode == 0:
    f = json.loads(p.stdout)["forecast"]
    check(f["decode_scale"] == 1 and "temporary folder" in (f["decode_scale_fallback"] or ""),
          f"fallback not in --json: {f.get('decode_scale')} {f.get('decode_scale_fallback')!r}")
    check("decode scale was not measured" in p.stderr and "TMPDIR" in p.stderr, f"no warning: {p.stderr!r}")
# A release planned from its config alone (the Models page's plan before a download) says the
# same, for each layout it prices.
p = subprocess.run([WASTE, "plan", "--config", f"{FIX}/release-configs/kimi-k3.json", "--ram", "64G", "--json",
                    "--disk-mbps", "3000"], capture_output=True, text=True, timeout=100, env=env)
check(p.returncode == 0, f"plan --config with a broken TMPDIR: exit {p.returncode}: {p.stderr}")
if p.returncode == 0:
    j = json.loads(p.stdout)
    for name, f in [("default", j["forecast"]), ("vq3r", j["vq3r"]["forecast"])] + \
            ([("native", j["native"]["forecast"])] if "native" in j else []):
        check(f.get("decode_scale") == 1 and "temporary folder" in (f.get("decode_scale_fallback") or ""),
              f"--config {name}: fallback not in --json: {f.get('decode_scale')} {f.get('decode_scale_fallback')!r}")
    check("decode scale was not measured" in p.stderr, f"--config: no warning: {p.stderr!r}")
env["TMPDIR"] = cache
p = plan_r3()
check(p.returncode == 0 and json.loads(p.stdout)["forecast"]["decode_scale_fallback"] is None
      and "decode scale" not in p.stderr, f"decode not measured again: {p.returncode} {p.stderr!r}")
shutil.rmtree(cache, ignore_errors=True)

# The budget the plan says holds every expert does: the demo keeps a state checkpoint,
# which every budget pays for from the expert cache, so that budget counts it.
work = tempfile.mkdtemp(prefix="waste-every-expert-")
demo = os.path.join(work, "demo.waste")
rc, out, err = run("mktiny", demo)
check(rc == 0, f"mktiny exit {rc}: {err}")
rc, out, err = run("plan", demo, "--json", "--disk-gbps", "2")
every = json.loads(out)["every_expert_budget_bytes"] if rc == 0 else 0
rc, out, err = run("bench", demo, "--budget", str(every), "--tokens", "64")
check(rc == 0 and " 0 miss = 100.0%" in out + err, f"bench at every_expert_budget_bytes {every} missed: {out}{err}")
# The forecast prices each budget's expert cache as the engine opens it: with the checkpoint
# taken from it where it fits (floor + 8 records: it does), whole where it does not (floor).
rc, out, err = run("plan", demo, "--json", "--disk-gbps", "2")
plan = json.loads(out) if rc == 0 else {}
record = plan.get("min_expert_cache", 0) // 4  # one layer's top-2 records, double-buffered
for budget in (plan.get("floor_bytes", 0), plan.get("floor_bytes", 0) + 8 * record):
    rc, out, err = run("plan", demo, "--json", "--disk-gbps", "2", "--budget", str(budget))
    rows = [b for b in json.loads(out)["forecast"]["budgets"] if b["budget_bytes"] == budget] if rc == 0 else []
    rc2, out2, err2 = run("bench", demo, "--budget", str(budget), "--tokens", "2", "--json")
    opened = json.loads(out2)["expert_cache_bytes"] // record if rc2 == 0 else -1
    check(len(rows) == 1 and rows[0]["cache_slots"] == opened,
          f"budget {budget}: forecast slots {[r['cache_slots'] for r in rows]}, engine opened {opened}: {err}{err2}")
shutil.rmtree(work, ignore_errors=True)

# cache-sim
trace = f"{FIX}/traces/olmoe_299.jsonl"
rc, out, err = run("cache-sim", trace, "--ws", "1", "--json")
check(rc == 0, f"cache-sim exit {rc}: {err}")
got = json.loads(out)
check(list(got) == ["accesses", "hits", "hit_rate", "opt_hit_rate", "policy", "slots"], f"fields {list(got)}")
check(got["accesses"] == 299 * 16 * 8 and got["slots"] == 128 and got["policy"] == "reuse", str(got))
check(0 < got["hit_rate"] <= got["opt_hit_rate"] <= 1, str(got))
rc, out, err = run("cache-sim", trace, "--slots", "64", "--policy", "lru", "--json")
check(rc == 0 and json.loads(out)["hits"] == 0, f"LRU below one working set should collapse: {out}")
rc, out, err = run("cache-sim", trace, "--slots", "64", "--ws", "1")
check(rc == 2, f"--slots with --ws: {rc}")
rc, out, err = run("cache-sim", trace, "--ws", "1", "--policy", "fifo")
check(rc == 1 and "fifo" in err, f"unknown policy: {rc} {err!r}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
