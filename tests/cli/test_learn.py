"""`waste run --learn`: the run's experts go to a usage record in the reference's layout,
its routing to usage.routing.jsonl in the trace format that `waste cache-sim` replays, and
the next open warms the cache from the record (fewer misses than a cold start). A record
that cannot be written is a clear error that names the path; the container is not touched."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

WASTE, FIX = sys.argv[1], sys.argv[2]
MODEL = f"{FIX}/reference-container/r3.waste"
failures = []


def run(*args):
    p = subprocess.run([WASTE, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)


def misses(stderr):
    m = re.search(r"experts (\d+) hit / (\d+) miss", stderr)
    return (int(m.group(1)), int(m.group(2))) if m else None


tmp = tempfile.mkdtemp(prefix="waste-learn-")
try:
    info = json.loads(run("info", MODEL, "--json")[1])
    usage = os.path.join(tmp, "usage.waste")
    routing = os.path.join(tmp, "usage.routing.jsonl")
    before = sorted(os.listdir(MODEL))
    prompt = "The river ran past the mill"  # greedy, it runs all 24 tokens (a longer one ends at once)
    tokens = 24

    rc, out, err = run("run", MODEL, prompt, "-n", str(tokens), "--temp", "0", "--raw", "--learn", "--usage", usage)
    check(rc == 0, f"run --learn exit {rc}: {err}")
    check(f"recorded in {usage}" in err and routing in err, f"--learn names neither file: {err!r}")
    cold = misses(err)
    check(cold is not None, f"no stats line: {err!r}")
    made = re.search(r"\[(\d+) tokens", err)
    check(made and int(made.group(1)) == tokens, f"the run did not make {tokens} tokens: {err!r}")
    check(sorted(os.listdir(MODEL)) == before, "--usage elsewhere still wrote into the container")

    # usage.waste: 16-byte header {"WUSG", version 1, clock}, 16-byte entries {u16 layer, u16 expert, u32 hits, ...}
    blob = open(usage, "rb").read()
    check(len(blob) >= 16 and (len(blob) - 16) % 16 == 0, f"usage record size {len(blob)}")
    magic, version, clock = struct.unpack_from("<4sIQ", blob, 0)
    check(magic == b"WUSG" and version == 1, f"usage header {magic!r} v{version}")
    entries = [struct.unpack_from("<HHII", blob, 16 + 16 * i) for i in range((len(blob) - 16) // 16)]
    check(entries, "the usage record lists no experts")
    # (a record prefetched by the lookahead and never asked for is resident with no hits)
    check(sum(e[2] for e in entries) > 0, "no recorded expert has a hit")

    # The routing: one line per decode token, each MoE layer's top-k ids.
    lines = [json.loads(l) for l in open(routing) if l.strip()]
    check(len(lines) >= tokens - 1, f"{len(lines)} routing lines for {tokens} tokens")
    top_k = info.get("top_k") or info.get("experts_per_token")
    widths = {len(layer) for line in lines for layer in line["layers"]}
    check(len(widths) == 1 and (top_k is None or widths == {top_k}), f"layer widths {widths}, top-k {top_k}")
    check(len({len(line["layers"]) for line in lines}) == 1, "passes list different numbers of MoE layers")
    ids = [e for line in lines for layer in line["layers"] for e in layer]
    check(min(ids) >= 0 and (not info.get("experts") or max(ids) < info["experts"]), "expert id out of range")
    recorded = {(e[0], e[1]) for e in entries}
    check(len(recorded) == len(entries), "an expert is recorded twice")

    # cache-sim replays it against Belady.
    rc, out, err = run("cache-sim", routing, "--ws", "1", "--json")
    check(rc == 0, f"cache-sim on the learned routing: exit {rc}: {err}")
    if rc == 0:
        sim = json.loads(out)
        layers = len(lines[0]["layers"])
        check(sim["accesses"] == len(lines) * layers * len(lines[0]["layers"][0]), f"accesses {sim}")
        check(0 <= sim["hit_rate"] <= sim["opt_hit_rate"] <= 1, f"hit rates {sim}")

    # The next open warms from the record: fewer misses than the cold start.
    rc, out, err = run("run", MODEL, prompt, "-n", str(tokens), "--temp", "0", "--raw", "--usage", usage)
    warm = misses(err)
    check(rc == 0 and warm is not None, f"warm run exit {rc}: {err}")
    if cold and warm and cold[1] > 0:
        check(warm[1] < cold[1], f"warm start missed {warm[1]}, cold {cold[1]}")

    # A record that cannot be written: a clear error naming the path, exit 1.
    bad = os.path.join(tmp, "no-such-folder", "usage.waste")
    rc, out, err = run("run", MODEL, prompt, "-n", "2", "--raw", "--learn", "--usage", bad)
    check(rc == 1 and "no-such-folder" in err, f"unwritable record: exit {rc}, {err!r}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
