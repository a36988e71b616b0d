#!/usr/bin/env python3
"""The tiny Kimi K3 through the CLI and the API server.

mktiny --k3 --hf writes K3's release layout (MXFP4 expert pairs); `waste convert` turns it
into a container equal to `mktiny --k3 --container`; `waste info` says kimi-k3 with 16
experts, 4 per token; `waste run` generates (greedy twice the same, a seed repeats
itself); `waste serve` answers one chat completion whose prompt is the K3 template's
rendering of the request (prompt_tokens equals the template's segments tokenised one by
one), and stops cleanly on SIGTERM.
usage: k3_cli.py WASTE_CLI WORK_DIR"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

waste, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def run(*args, ok=True, timeout=120):
    p = subprocess.run([waste, *args], capture_output=True, text=True, timeout=timeout)
    if ok and p.returncode != 0:
        failures.append(f"{args}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return p


def fail(msg):
    failures.append(msg)


hf, container, direct = f"{work}/hf", f"{work}/k3.waste", f"{work}/k3-direct.waste"
run("mktiny", hf, "--k3", "--hf")
names = json.load(open(f"{hf}/model.safetensors.index.json"))["weight_map"]
if not any(n.endswith(".experts.0.w1.weight_packed") for n in names):
    fail("mktiny --k3 --hf wrote no MXFP4 expert pairs")
run("convert", hf, container, "--jobs", "2")
run("mktiny", direct, "--k3", "--container")
for f in sorted(os.listdir(container)):
    if not f.startswith(".") and open(f"{container}/{f}", "rb").read() != open(f"{direct}/{f}", "rb").read():
        fail(f"converted {f} differs from mktiny --container")

info = json.loads(run("info", container, "--json").stdout or "{}")
for k, v in (("arch", "kimi-k3"), ("experts", 16), ("top_k", 4), ("layers", 6), ("hidden", 256)):
    if info.get(k) != v:
        fail(f"info {k} = {info.get(k)!r}, expected {v!r}")

# Generation through `waste run`.
prompt = "The capital of France is"
greedy = [run("run", container, prompt, "-n", "16", "--temp", "0") for _ in range(2)]
if greedy[0].stdout != greedy[1].stdout:
    fail("greedy run gave two different texts")
if "tokens" not in greedy[0].stderr or not greedy[0].stdout.strip():
    fail(f"run printed no text or no statistics: {greedy[0].stdout!r} / {greedy[0].stderr[-300:]!r}")
print(f"greedy run: {greedy[0].stdout.strip()!r}")
seeded = [run("run", container, prompt, "-n", "16", "--temp", "0.9", "--seed", "7").stdout for _ in range(2)]
if seeded[0] != seeded[1]:
    fail("the same seed gave two different texts")

# One chat completion through `waste serve`.
request = {"messages": [{"role": "system", "content": "Be brief."},
                        {"role": "user", "content": "Hello there, who are you?"}],
           "max_tokens": 8, "temperature": 0}
server = subprocess.Popen([waste, "serve", container, "--port", "0", "--ctx", "1024"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    hello = json.loads(server.stdout.readline())
    base = hello["url"]
    root = base[: -len("/v1")]
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"{root}/health", timeout=5) as r:
                if r.status == 200:
                    break
        except urllib.error.HTTPError as e:
            if e.code != 503:
                raise
        time.sleep(0.1)
    with urllib.request.urlopen(f"{base}/models", timeout=10) as r:
        model_id = json.load(r)["data"][0]["id"]
    body = dict(request, model=model_id)
    req = urllib.request.Request(f"{base}/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        status, reply = r.status, json.load(r)
    if status != 200 or reply.get("object") != "chat.completion":
        fail(f"chat completion: {status} {reply}")
    msg = reply["choices"][0]["message"]
    if msg.get("role") != "assistant" or not isinstance(msg.get("content"), str):
        fail(f"chat completion message: {msg}")
    usage = reply.get("usage", {})
    if not 1 <= usage.get("completion_tokens", 0) <= 8:
        fail(f"completion_tokens {usage.get('completion_tokens')} not in 1..8")
    # The server renders K3's XTML (thinking as K3's default: on, read back as
    # reasoning_content): the same segments as `waste template` for that request, each
    # tokenised on its own.
    req_file = f"{work}/request.json"
    json.dump(request, open(req_file, "w"))
    segments = json.loads(run("template", container, "--request", req_file, "--json").stdout or "{}").get("segments", [])
    if not any(m and t == "<|open|>" for t, m in segments):
        fail(f"template did not render K3 markup: {segments}")
    expected = 0
    for text, markup in segments:
        ids = json.loads(run("tokenize", container, text, "--json").stdout or "{}").get("ids", [])
        if markup and len(ids) != 1:
            fail(f"markup segment {text!r} is {len(ids)} tokens")
        expected += len(ids)
    print(f"chat completion: {msg.get('content')!r}, usage {usage}, template tokens {expected}")
    if usage.get("prompt_tokens") != expected:
        fail(f"prompt_tokens {usage.get('prompt_tokens')} != {expected} from the K3 template")
finally:
    server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(timeout=20)
        if code != 0:
            fail(f"waste serve exited with {code} on SIGTERM")
    except subprocess.TimeoutExpired:
        server.kill()
        fail("waste serve did not stop on SIGTERM")

for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
