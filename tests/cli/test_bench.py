"""`waste bench` end to end on the reference container: the JSON fields, figures that
cover the decode alone (accesses scale with --tokens), a small budget that must miss, a budget
holding every expert (read at open, so nothing misses; WASTE_LOAD_EVERY_EXPERT=0 leaves them
to the tokens), the lookahead switch, and usage errors."""
import json
import os
import subprocess
import sys

WASTE, FIX = sys.argv[1], sys.argv[2]
R3 = f"{FIX}/reference-container/r3.waste"
failures = []


def run(*args, env=None):
    p = subprocess.run([WASTE, *args], capture_output=True, text=True, timeout=60,
                       env={**os.environ, **(env or {})})
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)


def bench(*extra, env=None):
    rc, out, err = run("bench", R3, "--json", *extra, env=env)
    check(rc == 0, f"bench {extra} exit {rc}: {err}")
    return json.loads(out) if rc == 0 else {}


FIELDS = ["tokens", "tok_per_s", "ms_per_token", "prompt_tokens", "prefill_seconds", "decode_seconds",
          "experts_hit", "experts_missed", "hit_rate", "bytes_read", "gb_per_token", "io_wait_seconds",
          "io_wait_share", "lookahead_predicted", "lookahead_correct", "lookahead_accuracy",
          "speculative_fills", "budget_bytes", "expert_cache_bytes", "experts_loaded_at_open",
          "experts_load_seconds", "direct_io"]

a = bench("--tokens", "8")
check(list(a) == FIELDS, f"fields {list(a)}")
check(a.get("tokens") == 8 and a.get("tok_per_s", 0) > 0 and isinstance(a.get("direct_io"), bool), str(a))
check(0 <= a.get("io_wait_share", -1) <= 1 and 0 <= a.get("hit_rate", -1) <= 1, str(a))
b = bench("--tokens", "16")
acc = lambda r: r.get("experts_hit", 0) + r.get("experts_missed", 0)
check(acc(a) > 0 and acc(b) == 2 * acc(a), f"decode accesses must scale with --tokens: {acc(a)} vs {acc(b)}")
check(a.get("lookahead_predicted", 0) > 0 and a.get("lookahead_accuracy") is not None, "lookahead figures missing")

# at the floor the cache holds two layers' records: the decode has to read. (While tokens are
# generated it also holds the floor's prompt room, where r3's other records fit: read ahead by the
# router's lookahead, they can all arrive in time, so the lookahead is off here.)
plan = json.loads(run("plan", R3, "--json", "--disk-gbps", "2")[1])
small = bench("--tokens", "8", "--budget", str(plan["floor_bytes"]), env={"WASTE_LOOKAHEAD": "0"})
check(small.get("experts_missed", 0) > 0 and small.get("bytes_read", 0) > 0 and small.get("hit_rate", 1) < 1,
      f"floor budget should miss: {small}")
check(small.get("gb_per_token", 0) > 0, str(small))

every = str(plan["every_expert_budget_bytes"])
loaded = bench("--tokens", "8", "--budget", every)
check(loaded.get("experts_loaded_at_open", 0) > 0 and loaded.get("experts_load_seconds", -1) >= 0
      and loaded.get("experts_missed") == 0 and loaded.get("bytes_read") == 0 and loaded.get("hit_rate") == 1,
      f"every expert read at open, none by the decode: {loaded}")
left = bench("--tokens", "8", "--budget", every, env={"WASTE_LOAD_EVERY_EXPERT": "0", "WASTE_LOOKAHEAD": "0"})
# (r3's 65-token prompt reads every expert itself, so its decode misses nothing either way)
check(left.get("experts_loaded_at_open") == 0 and left.get("tokens") == 8,
      f"WASTE_LOAD_EVERY_EXPERT=0 leaves the experts to the tokens: {left}")
rc, out, err = run("bench", R3, "--tokens", "4", "--budget", every)
check(rc == 0 and "every expert loaded at open" in out, f"human output at every expert: {rc} {out!r}")

off = bench("--tokens", "4", env={"WASTE_LOOKAHEAD": "0"})
check(off.get("lookahead_predicted") == 0 and off.get("lookahead_accuracy", 0) is None, f"lookahead off: {off}")

rc, out, err = run("bench", R3, "--tokens", "4")
check(rc == 0 and "tok/s" in out and "direct_io" in out, f"human output: {rc} {out!r}")
rc, out, err = run("bench", R3, "--tokens", "0")
check(rc == 2 and "--tokens" in err, f"--tokens 0: {rc} {err!r}")
rc, out, err = run("bench", f"{FIX}/no-such-container", "--json")
check(rc == 1 and out == "", f"missing container: {rc} {out!r}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
