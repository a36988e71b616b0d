#!/usr/bin/env python3
"""The tiny DeepSeek-V3 and Kimi K2 releases through the CLI (issue 16's "Judged by").

For deepseek-v3, kimi-k2 and kimi-k2 --int4: `mktiny --arch A --hf` writes the release
layout (FP8 e4m3 trunk and experts with `_scale_inv`, or INT4 `_packed` experts and a BF16
trunk; an MTP layer after the last on DeepSeek-V3); `waste convert` keeps the experts
native; `waste info --json` names the arch and the expert format; `waste run "Hello" -n 8
--temp 0` is repeatable and says something. `waste eval --ids` on these and on the
Kimi-Linear and K3 tiny models gives what eval of the same text gives, and bad ids are
refused with a reason.
usage: deepseek_cli.py WASTE_CLI WORK_DIR"""
import json
import os
import shutil
import subprocess
import sys

waste, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def run(*args, ok=True):
    p = subprocess.run([waste, *args], capture_output=True, text=True, timeout=120)
    if ok and p.returncode != 0:
        failures.append(f"{args}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return p


def fail(msg):
    failures.append(msg)


def check_eval_ids(container, label):
    """eval --ids of the tokenizer's ids equals eval of the text; bad ids are refused."""
    text = "Hello there, world"
    ids = json.loads(run("tokenize", container, text, "--json").stdout or "{}").get("ids", [])
    if len(ids) < 2:
        fail(f"{label}: tokenize gave {ids}")
        return
    by_text = run("eval", container, text, "--top-k", "5", "--json").stdout
    by_ids = run("eval", container, "--ids", ",".join(map(str, ids)), "--top-k", "5", "--json").stdout
    a, b = json.loads(by_text or "{}"), json.loads(by_ids or "{}")
    if not a.get("top") or a != b:
        fail(f"{label}: eval --ids {ids} gave {by_ids.strip()}, eval of the text {by_text.strip()}")
    if b.get("prompt_tokens") != len(ids) or len(b.get("top", [])) != 5:
        fail(f"{label}: eval --ids JSON {by_ids.strip()}")
    vocab = b.get("vocab", 0)
    for bad, says in ((f"1,{vocab}", "out of range"), ("1,,2", "not a token id"), ("x", "not a token id")):
        p = run("eval", container, "--ids", bad, "--json", ok=False)
        if p.returncode == 0 or says not in p.stderr:
            fail(f"{label}: eval --ids {bad} exit {p.returncode}: {p.stderr.strip()}")


for arch, extra, fmt, weight in (
        ("deepseek-v3", [], "FP8B128", "model.layers.2.mlp.experts.0.gate_proj.weight_scale_inv"),
        ("kimi-k2", [], "FP8B128", "model.layers.0.self_attn.q_a_proj.weight_scale_inv"),
        ("kimi-k2", ["--int4"], "INT4G32", "model.layers.4.mlp.experts.23.down_proj.weight_packed")):
    label = arch + "".join(extra)
    hf, c = f"{work}/{label}-hf", f"{work}/{label}.waste"
    run("mktiny", hf, "--arch", arch, *extra, "--hf")
    names = json.load(open(f"{hf}/model.safetensors.index.json"))["weight_map"] if os.path.exists(f"{hf}/model.safetensors.index.json") else {}
    if weight not in names:
        fail(f"{label}: mktiny --hf has no {weight}")
    cfg = json.load(open(f"{hf}/config.json")) if os.path.exists(f"{hf}/config.json") else {}
    if cfg.get("architectures") != ["DeepseekV3ForCausalLM"] or cfg.get("first_k_dense_replace", 0) < 2:
        fail(f"{label}: config.json {cfg.get('architectures')} first_k_dense_replace {cfg.get('first_k_dense_replace')}")
    if arch == "deepseek-v3" and not (cfg.get("n_group", 1) > 1 and "model.layers.5.eh_proj.weight" in names):
        fail(f"{label}: expected several groups and an MTP layer, config n_group {cfg.get('n_group')}")
    run("convert", hf, c, "--jobs", "2")
    info = json.loads(run("info", c, "--json").stdout or "{}")
    if info.get("arch") != arch or info.get("expert_format") != fmt or info.get("layers") != 5:
        fail(f"{label}: info says arch {info.get('arch')} experts {info.get('expert_format')} layers {info.get('layers')}")
    outs = [run("run", c, "Hello", "-n", "8", "--temp", "0").stdout for _ in range(2)]
    if outs[0] != outs[1] or not outs[0].strip():
        fail(f"{label}: greedy run not repeatable or empty: {outs!r}")
    check_eval_ids(c, label)

# --ids on the other architectures too.
for label, flags in (("kimi-linear", []), ("kimi-k3", ["--k3"])):
    c = f"{work}/{label}.waste"
    run("mktiny", c, *flags, "--container")
    check_eval_ids(c, label)

p = run("mktiny", f"{work}/bad", "--arch", "deepseek-v3", "--int4", "--hf", ok=False)
if p.returncode == 0 or "--arch kimi-k2" not in p.stderr:
    fail(f"--int4 without kimi-k2: exit {p.returncode}: {p.stderr.strip()}")

for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
