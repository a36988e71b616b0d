#!/usr/bin/env python3
"""Concurrent requests through `waste serve` against the engine's own batch at the same budget.

Usage: bench_serve_concurrent.py WASTE BENCH_CONCURRENT CONTAINER [--budget 160M] [--ctx 4096]
                                 [--tokens 64] [--reps 5] [--temperature 0]

Two measurements of the same thing, one after the other on the same container and budget:
1. `bench_concurrent --container C --budget B --streams 1,4`: the engine alone (waste/batch.hpp),
   4 streams' aggregate decode speed over one stream's, median of the repetitions' ratios;
2. `waste serve --budget B`: one new streaming chat completion, then four new ones sent at
   once (no two share a prompt prefix, and the prompt cache is off), greedy as bench_concurrent's
   streams are unless --temperature is given, repeated and interleaved
   1, 4, 1, 4, ... so a change in the machine's load hits both alike.
For each server run, "decode" is the streams' decode speeds summed over the streams that ran
together; "whole" is every completion token over the time from sending to the last token
(prompt reading included). Each stream's decode speed is the server's own measure (the usage
chunk's "waste".tokens_per_second), since a generated model's tokens are often no text (markup,
stray bytes) and send no chunk to time; a server that gives none is timed by its chunks. /health
is polled to report how many ran at once. The last line gives the server's decode ratio and its share of the engine's.

Not run by ctest: it reads the disk for minutes on a mid-size container.
"""
import json
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request


def arg(name, default):
    if name in sys.argv:
        i = sys.argv.index(name)
        return sys.argv[i + 1]
    return default


if len(sys.argv) < 4:
    sys.exit(__doc__)
WASTE, BENCH, CONTAINER = sys.argv[1:4]
BUDGET = arg("--budget", "160M")
CTX = int(arg("--ctx", "4096"))
TOKENS = int(arg("--tokens", "64"))
REPS = int(arg("--reps", "5"))
TEMPERATURE = float(arg("--temperature", "0"))

WORDS = "river stone cloud amber quiet orbit lantern meadow copper signal harbor violet".split()


def prompt(i):
    # Different from the first word on, so no request shares a prefix with another.
    return f"{i} " + " ".join(WORDS[(i * 7 + k * 5) % len(WORDS)] for k in range(30))


def stream(port, text, out, peak):
    body = json.dumps({"model": "m", "stream": True, "max_tokens": TOKENS, "temperature": TEMPERATURE,
                       "stream_options": {"include_usage": True},
                       "messages": [{"role": "user", "content": text}]}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body,
                                 {"Content-Type": "application/json"})
    times, usage, server_tps, ended = [], 0, 0.0, 0.0
    with urllib.request.urlopen(req, timeout=900) as r:
        for line in r:
            line = line.strip()
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            d = json.loads(line[6:])
            ended = time.time()
            ch = d.get("choices") or []
            if ch and any((ch[0].get("delta") or {}).get(k) for k in ("content", "reasoning_content", "tool_calls")):
                times.append(ended)
            if d.get("usage"):
                usage = d["usage"]["completion_tokens"]
                server_tps = (d.get("waste") or {}).get("tokens_per_second", 0.0)
    out.append((times, usage, server_tps, ended))


def together(port, n, first):
    out, peak, stop = [], [0], threading.Event()

    def poll():
        while not stop.is_set():
            try:
                h = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5).read())
                peak[0] = max(peak[0], h["requests"]["running"])
            except OSError:
                pass
            time.sleep(0.05)

    poller = threading.Thread(target=poll)
    poller.start()
    sent = time.time()
    ts = [threading.Thread(target=stream, args=(port, prompt(first + i), out, peak)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    stop.set()
    poller.join()
    if len(out) != n:
        sys.exit("a request failed")
    if any(u < 2 for _, u, _, _ in out):
        return None  # a sampled end of text at once: nothing to time
    end = max(e for _, _, _, e in out)
    whole = sum(u for _, u, _, _ in out) / (end - sent)
    # (nan when a stream sent no text: a generated model's tokens often are none)
    first = max(times[0] for times, _, _, _ in out) - sent if all(times for times, _, _, _ in out) else float("nan")
    if all(tps > 0 for _, _, tps, _ in out):
        # Each stream's decode speed as the server measured it (usage's "waste"): tokens that
        # are no text (a generated model's markup and stray bytes) send no chunk to time.
        return sum(tps for _, _, tps, _ in out), whole, peak[0], first, "server"
    if all(len(times) >= 2 for times, _, _, _ in out):
        # A chunk may carry several tokens (the engine sends text about every 40 ms): each
        # stream's decode speed is its tokens after the first over the time from its first
        # chunk to its last; running together, the streams' speeds add up.
        return sum((u - 1) / (times[-1] - times[0]) for times, u, _, _ in out), whole, peak[0], first, "chunks"
    return None


def measured(port, n, first):
    for attempt in range(5):
        r = together(port, n, first + 50 * attempt)
        if r:
            return r
    sys.exit("five tries in a row, a request ended at its first token")


def main():
    b = subprocess.run([BENCH, "--container", CONTAINER, "--budget", BUDGET, "--ctx", str(CTX), "--streams", "1,4",
                        "--tokens", str(TOKENS), "--reps", str(REPS)], capture_output=True, text=True)
    if b.returncode != 0:
        sys.exit(f"bench_concurrent: exit {b.returncode}: {b.stderr.strip()}")
    m = re.search(r"4 streams = ([0-9.]+) x one", b.stdout)
    if not m:
        sys.exit("bench_concurrent printed no ratio:\n" + b.stdout)
    engine_ratio = float(m.group(1))
    print(f"bench_concurrent at {BUDGET}: 4 streams = {engine_ratio:.2f} x one (median of {REPS})", flush=True)

    server = subprocess.Popen([WASTE, "serve", CONTAINER, "--port", "0", "--budget", BUDGET, "--ctx", str(CTX),
                               "--prompt-cache-size", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = json.loads(server.stdout.readline())["port"]
        for _ in range(600):
            try:
                if json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5).read())["status"] == "ok":
                    break
            except OSError:
                pass
            time.sleep(0.1)
        measured(port, 1, 99999)  # warms what a first request warms
        ratios, wholes, peaks = [], [], []
        for rep in range(REPS):
            d1, w1, _, f1, how1 = measured(port, 1, 1000 * rep)
            d4, w4, peak, f4, how4 = measured(port, 4, 1000 * rep + 10)
            if how1 != how4:  # one measure for both sides of a ratio
                continue
            ratios.append(d4 / d1)
            wholes.append(w4 / w1)
            peaks.append(peak)
            print(f"  serve: 1 request {d1:.1f} tok/s decode ({w1:.1f} whole), 4 at once {d4:.1f} ({w4:.1f} whole): "
                  f"{d4 / d1:.2f} x one decode, {w4 / w1:.2f} x whole, {peak} running at once; first tokens after "
                  f"{f1:.2f} s alone, {f4:.2f} s for the last of 4 (decode timed by {how4})", flush=True)
    finally:
        server.terminate()
        server.wait()
    if not ratios:
        sys.exit("no repetition was timed the same way alone and four at once")
    r = statistics.median(ratios)
    print(f"serve 4 new requests at {BUDGET} = {r:.2f} x one decode (whole requests {statistics.median(wholes):.2f} x, "
          f"at most {max(peaks)} at once), bench_concurrent {engine_ratio:.2f} x: {100 * r / engine_ratio:.0f} % of it")


main()
