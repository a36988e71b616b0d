#!/usr/bin/env python3
"""`waste run` / `waste chat` with chat templates (see CMakeLists.txt). Greedy decoding, so every
comparison is exact: a saved-and-loaded conversation must print the same third answer as one
that never stopped, and `run` must answer like the first turn of `chat`."""
import os
import re
import shutil
import subprocess
import sys

waste, fixtures, out = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
failures = []
IMAGE = os.path.join(fixtures, "vision-container", "img_a.png")


def call(*args, stdin=None):
    p = subprocess.run([waste, *args], input=stdin, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        failures.append(f"{args}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def chat(model, lines, *extra):
    return call("chat", model, "-n", "12", *extra, stdin="".join(line + "\n" for line in lines))


tiny = os.path.join(out, "tiny-vision")
call("mktiny", tiny, "--vision")
models = {
    "chatml": (tiny, []),
    "k3": (os.path.join(fixtures, "k3-container", "k3s1.waste"), ["--think"]),
    "raw": (os.path.join(fixtures, "reference-container", "r3.waste"), []),
}
banners = {"chatml": "ChatML chat template", "k3": "K3 chat template", "raw": "raw continuation"}
for name, (model, extra) in models.items():
    turns = ["Hello there", "Tell me more.", "And then?"]
    whole = chat(model, turns, *extra)
    if banners[name] not in whole.stderr:
        failures.append(f"{name}: banner does not say {banners[name]!r}: {whole.stderr.splitlines()[:1]}")
    saved = os.path.join(out, f"{name}.state")
    first = chat(model, turns[:2] + [f"/save {saved}"], *extra)
    second = chat(model, [f"/load {saved}", turns[2]], *extra)
    if "(loaded, position" not in second.stderr:
        failures.append(f"{name}: /load did not load: {second.stderr.strip()}")
    if first.stdout + second.stdout != whole.stdout:
        failures.append(f"{name}: saved and loaded conversation differs:\n{first.stdout + second.stdout!r}\n{whole.stdout!r}")
    if name != "raw":
        # Turns 2 and 3 read only what the engine does not hold (its state, or the
        # checkpoint at the last answer's start): /stats counts what was not read again.
        stats = chat(model, turns + ["/stats"], *extra)
        kept = re.search(r"(\d+) tokens read, (\d+) not read again", stats.stderr)
        if not kept or int(kept.group(2)) == 0:
            failures.append(f"{name}: later turns read the whole conversation again: {stats.stderr.strip()[-200:]}")
        # run renders PROMPT as the first user message, exactly as chat does.
        once = call("run", model, turns[0], "-n", "12", *extra)
        one_turn = chat(model, turns[:1], *extra)
        if once.stdout != one_turn.stdout:
            failures.append(f"{name}: run {once.stdout!r} != first chat answer {one_turn.stdout!r}")
        raw = call("run", model, turns[0], "-n", "12", "--raw")
        if raw.stdout == once.stdout:
            failures.append(f"{name}: --raw gave the templated answer")
    print(f"{name}: {len(whole.stdout)} characters over 3 turns")

# Images: /image attaches to the next message, which answers as `run --image` does.
viewed = chat(tiny, [f"/image {IMAGE}", "Describe the picture."])
if "230x170" not in viewed.stderr:
    failures.append(f"/image did not name the picture: {viewed.stderr.strip()}")
once = call("run", tiny, "Describe the picture.", "--image", IMAGE, "-n", "12")
if once.stdout != viewed.stdout:
    failures.append(f"image: run {once.stdout!r} != chat {viewed.stdout!r}")
bad = chat(tiny, [f"/image {os.path.join(fixtures, 'vision-container', 'index.json')}"])
if "not an image" not in bad.stderr:
    failures.append(f"a non-image was not refused in words: {bad.stderr.strip()}")

for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
