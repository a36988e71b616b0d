"""`waste plan --config` plans a release from its config.json alone, and `waste plan MODEL`
prices a token: compute from the calibration plus the reads it cannot hide, per budget.
The compute calibration is kept in a cache folder of this test's own."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

WASTE, FIX = sys.argv[1], sys.argv[2]
GiB = 1 << 30
failures = []
cache = tempfile.mkdtemp(prefix="waste-plan-config-")
env = dict(os.environ, XDG_CACHE_HOME=cache, HOME=cache)


def run(*args):
    p = subprocess.run([WASTE, *args], capture_output=True, text=True, timeout=110, env=env)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)


# Full-size Kimi K3 on a 64 GB machine: the container `waste convert` makes by default (MXFP4,
# as released) at the top level; with VQ3R experts, the reference's floor (29.06 GiB) and
# default (46.25 GiB); the cliff.
rc, out, err = run("plan", "--config", f"{FIX}/release-configs/kimi-k3.json", "--ram", "64G", "--json",
                   "--disk-mbps", "3000")
check(rc == 0, f"plan --config exit {rc}: {err}")
got = json.loads(out) if rc == 0 else {}
check(got.get("arch") == "kimi-k3", f"arch {got.get('arch')}")
vq = got.get("vq3r", {})
check(abs(vq.get("floor_bytes", 0) / GiB - 29.06) < 0.29, f"K3 VQ3R floor {vq.get('floor_bytes', 0) / GiB:.2f} GiB")
check(abs(vq.get("default_budget_bytes", 0) / GiB - 46.25) < 0.46,
      f"K3 VQ3R default {vq.get('default_budget_bytes', 0) / GiB:.2f} GiB")
check(got.get("physical_ram_bytes") == 64 * GiB and got.get("other_process_assumed") is True, "the machine asked for")
check(got.get("expert_format") == "MXFP4" and got.get("native", {}).get("expert_format") == "MXFP4"
      and vq.get("expert_format") == "VQ3R", "both layouts, convert's default first")
check(got.get("floor_bytes") == got.get("native", {}).get("floor_bytes"), "the top level is the native layout")
check(got.get("fits") is True, "K3 fits 64 GB at the floor")
fc = got.get("forecast", {})
check(abs(fc.get("disk_gbps", 0) - 3.0) < 1e-9, f"disk {fc.get('disk_gbps')}")
check(fc.get("compute_s_per_token", 0) > 0, "compute priced from the calibration")
rows = fc.get("budgets", [])
check(len(rows) >= 5, "budget ladder")
for r in rows:
    for k in ("tok_per_s", "hit_rate", "io_s_per_token", "compute_s_per_token"):
        check(k in r, f"budget row without {k}")
    if not r.get("past_cliff"):
        check(r.get("tok_per_s") and r["tok_per_s"] > 0, f"no speed at {r.get('budget_bytes')}")
# More RAM buys hit rate: the forecast rises from the floor to the default.
by_budget = {r["budget_bytes"]: r for r in rows}
floor_row, def_row = by_budget.get(got.get("floor_bytes")), by_budget.get(got.get("default_budget_bytes"))
check(floor_row and def_row and def_row["hit_rate"] > floor_row["hit_rate"], "hit rate rises with the budget")

# On 16 GB it does not fit.
rc, out, err = run("plan", "--config", f"{FIX}/release-configs/kimi-k3.json", "--ram", "16G", "--json")
check(rc == 0 and json.loads(out).get("fits") is False, f"K3 on 16 GB: {rc} {out[:200]}")

# DeepSeek-V3 and Kimi K2 plan; a config of another architecture is refused in words.
# Each names the experts convert keeps by default: FP8 blocks kept, BF16 as VQ3R.
for name, fmt, arch in (("deepseek-v3", "FP8B128", "deepseek-v3"), ("kimi-k2", "FP8B128", "kimi-k2"),
                        ("kimi-linear-48b", "VQ3R", "kimi-linear")):
    rc, out, err = run("plan", "--config", f"{FIX}/release-configs/{name}.json", "--ram", "128G", "--json")
    got = json.loads(out) if rc == 0 else {}
    check(rc == 0 and got["floor_bytes"] > 0, f"{name}: {rc} {err}")
    check(got.get("expert_format") == fmt and got.get("arch") == arch, f"{name}: {got.get('expert_format')} {got.get('arch')}")
    # No --disk-mbps: the models folder's disk is measured; this test's home has no container
    # there, so it says why instead of predicting reads that take no time.
    check(got.get("disk_gbps") == 0 and "no container" in got.get("disk_not_measured", ""),
          f"{name}: disk {got.get('disk_gbps')} {got.get('disk_not_measured')!r}")
rc, out, err = run("plan", "--config", f"{FIX}/release-configs/kimi-linear-48b.json", "--ram", "128G")
check(rc == 0 and "disk: not measured (no container in" in out and "give --disk-mbps" in out, f"disk sentence: {out[:400]}")
check("as `waste convert` makes it by default:\n  VQ3R experts" in out, f"default named: {out[:600]}")
bad = os.path.join(cache, "llama.json")
with open(bad, "w") as f:
    json.dump({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096}, f)
rc, out, err = run("plan", "--config", bad)
check(rc != 0 and "not one this engine runs" in err, f"llama config: {rc} {err!r}")
rc, out, err = run("plan", f"{FIX}/reference-container/r3.waste", "--config", bad)
check(rc != 0, "MODEL and --config together must be refused")

# A container: compute from the calibration, the calibration file written and reused.
rc, out, err = run("plan", f"{FIX}/reference-container/r3.waste", "--json")
check(rc == 0, f"plan r3 exit {rc}: {err}")
fc = json.loads(out)["forecast"] if rc == 0 else {}
check(fc.get("compute_s_per_token", 0) > 0, "container compute priced")
check(fc.get("disk_gbps", 0) > 0 and fc.get("queue_depth", 0) >= 2, "disk measured at the engine's queue depth")
cal = fc.get("calibration_file") or ""
check(cal.startswith(cache) and os.path.exists(cal), f"calibration file {cal}")
machine = json.load(open(cal))["machine"] if os.path.exists(cal) else ""
rc, out, err = run("plan", f"{FIX}/reference-container/r3.waste", "--json", "--disk-gbps", "2")
check(rc == 0 and json.load(open(cal))["machine"] == machine, "calibration reused")

# With a container in the models folder, that folder's disk is measured, and a release's
# forecast charges each predicted miss the CPU time a read cost there; a disk speed given on
# the command line times no read, so charges none.
home = tempfile.mkdtemp(prefix="waste-plan-config-folder-")
models = os.path.join(home, "data", "WASTE Studio", "models")
os.makedirs(models)
shutil.copytree(f"{FIX}/reference-container/r3.waste", os.path.join(models, "r3.waste"))
folder_env = dict(env, HOME=home, XDG_DATA_HOME=os.path.join(home, "data"), XDG_CONFIG_HOME=os.path.join(home, "config"))
for given in ([], ["--disk-mbps", "3000"]):
    p = subprocess.run([WASTE, "plan", "--config", f"{FIX}/release-configs/kimi-linear-48b.json", "--ram", "128G",
                        "--json", *given], capture_output=True, text=True, timeout=110, env=folder_env)
    got = json.loads(p.stdout) if p.returncode == 0 else {}
    fc = got.get("forecast", {})
    floor = (fc.get("budgets") or [{}])[0]
    check(got.get("disk_gbps", 0) > 0 and floor.get("budget_bytes") == got.get("floor_bytes") and
          0 <= floor.get("hit_rate", 1) < 1, f"folder disk {given}: {p.returncode} {p.stderr[:300]} {str(got)[:300]}")
    if given:
        check(fc.get("read_cpu_ms") == 0 and floor.get("read_cpu_s_per_token") == 0,
              f"--disk-mbps: read CPU {fc.get('read_cpu_ms')} {floor.get('read_cpu_s_per_token')}")
    else:
        check(fc.get("read_cpu_ms", 0) > 0 and floor.get("read_cpu_s_per_token", 0) > 0,
              f"measured folder: read CPU {fc.get('read_cpu_ms')} ms a read, {floor.get('read_cpu_s_per_token')} s a token")
shutil.rmtree(home, ignore_errors=True)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("plan --config: ok")
