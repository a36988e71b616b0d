"""`waste plan` corrects its forecast by this machine's real runs of the model, as the app's
Planner does: `waste bench` (and `waste run`, and each answer of `waste chat` and `waste serve`) keeps its decode speed among them (in the app's observed-speeds
file, under $XDG_DATA_HOME), and the plan's tok/s at the benched budget then equals what the
bench measured. --no-observed shows the forecast without them, --no-record keeps a bench out,
and a file written on another machine is ignored. Data and caches in this test's own folders."""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

WASTE, FIX = sys.argv[1], sys.argv[2]
MODEL = f"{FIX}/reference-container/r3.waste"
home = tempfile.mkdtemp(prefix="waste-plan-observed-")
env = dict(os.environ, XDG_CACHE_HOME=f"{home}/cache", XDG_DATA_HOME=f"{home}/data", HOME=home)
STORE = f"{home}/data/WASTE Studio/observed-speeds.json"
failures = []


def run(*args):
    p = subprocess.run([WASTE, *args], capture_output=True, text=True, timeout=110, env=env)
    if p.returncode != 0:
        sys.exit(f"waste {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def check(cond, what):
    if not cond:
        failures.append(what)


def plan(*extra):
    # The disk speed given, so every plan prices reads alike.
    return json.loads(run("plan", MODEL, "--json", "--disk-gbps", "2", *extra))["forecast"]


def at(forecast, budget):
    return next(b["tok_per_s"] for b in forecast["budgets"] if b["budget_bytes"] == budget)


before = plan()
check(before.get("observed", {}).get("decode_runs") == 0, f"no runs yet: {before.get('observed')}")
check("observed" not in plan("--no-observed"), "--no-observed reports no runs")

bench = json.loads(run("bench", MODEL, "--tokens", "32", "--json"))
check(os.path.exists(STORE), "the bench kept its run in the app's file")
budget, measured = bench["budget_bytes"], bench["tok_per_s"]
after = plan("--budget", str(budget))
obs = after.get("observed", {})
check(obs.get("decode_runs") == 1 and obs.get("file") == STORE, f"one run, in {STORE}: {obs}")
raw = plan("--budget", str(budget), "--no-observed")
# (bench prints six significant digits; the file keeps the speed whole)
check(abs(obs.get("decode_scale", 0) - measured / at(raw, budget)) < 1e-5 * obs.get("decode_scale", 1),
      f"scale {obs.get('decode_scale')} = measured {measured} / forecast {at(raw, budget)}")
check(abs(at(after, budget) - measured) < 1e-5 * measured, f"corrected {at(after, budget)} against measured {measured}")
# The whole curve moves by the same factor.
check(all(abs(c["tok_per_s"] - r["tok_per_s"] * obs["decode_scale"]) <= 1e-6 * max(c["tok_per_s"], 1)
          for c, r in zip(after["budgets"], raw["budgets"])), "every budget scaled alike")
text = run("plan", MODEL, "--disk-gbps", "2")
check("corrected by this model's real runs on this machine" in text and "(1 run)" in text, text)

run("bench", MODEL, "--tokens", "32", "--no-record")
check(plan().get("observed", {}).get("decode_runs") == 1, "--no-record kept the run count at 1")

# An answer of `waste run` is a real run too, when it wrote enough tokens to say.
p = subprocess.run([WASTE, "run", MODEL, "hello there", "-n", "40", "--raw", "-q"], capture_output=True, text=True,
                   timeout=110, env=env)
check(p.returncode == 0, f"run: {p.stderr}")
summary = [line for line in p.stderr.splitlines() if line.startswith("[") and " tokens," in line]
wrote = int(summary[-1][1:].split()[0]) if summary else 0
check(bool(summary), f"run printed no summary: {p.stderr!r}")
check(plan().get("observed", {}).get("decode_runs") == (2 if wrote >= 16 else 1), f"run wrote {wrote}: {p.stderr!r}")

# So is an answer of `waste chat` (its /stats line counts the tokens it wrote).
runs = plan().get("observed", {}).get("decode_runs")
p = subprocess.run([WASTE, "chat", MODEL], input="Tell me a story\n/stats\n", capture_output=True, text=True,
                   timeout=110, env=env, errors="replace")
check(p.returncode == 0, f"chat: {p.stderr}")
summary = [line for line in p.stderr.replace("> ", "\n").splitlines() if line.startswith("[") and " tokens," in line]
chatted = int(summary[-1][1:].split()[0]) if summary else 0
check(bool(summary), f"chat printed no /stats line: {p.stderr!r}")
check(plan().get("observed", {}).get("decode_runs") == runs + (1 if chatted >= 16 else 0),
      f"chat wrote {chatted}: {plan().get('observed')}")

# So is an answer of `waste serve`.
runs = plan().get("observed", {}).get("decode_runs")
server = subprocess.Popen([WASTE, "serve", MODEL, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, env=env)
try:
    port = json.loads(server.stdout.readline())["port"]
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                if json.loads(r.read())["status"] == "ok":
                    break
        except OSError:
            pass
        time.sleep(0.1)
    body = json.dumps({"model": "m", "prompt": "hello there", "max_tokens": 40, "temperature": 0}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        answered = json.loads(r.read())["usage"]["completion_tokens"]
finally:
    server.terminate()
    server.wait()
check(plan().get("observed", {}).get("decode_runs") == runs + (1 if answered >= 16 else 0),
      f"serve answered {answered} tokens: {plan().get('observed')}")

# Another machine's file (its key differs) is no evidence for this one.
with open(STORE) as f:
    store = json.load(f)
store["machine"] = "another machine"
with open(STORE, "w") as f:
    json.dump(store, f)
check(plan().get("observed", {}).get("decode_runs") == 0, "another machine's runs are ignored")

if failures:
    sys.exit("\n".join(failures))
print(f"plan observed: ok (waste run wrote {wrote} tokens, waste chat {chatted}, waste serve {answered})")
