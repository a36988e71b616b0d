"""The Judged-by pipeline for the DeepSeek Sparse Attention families, DeepSeek-V3.2 and GLM-5.x:
`waste mktiny T --arch A --hf` writes the release layout (tensor names with each layer's
lightning indexer, dtypes: V3.2's FP8 blocks with weight_scale_inv, GLM's BF16; config
fields: index_n_heads / index_head_dim / index_topk, GLM-5.2's indexer_types with shared
layers that ship no indexer), `waste convert` turns it into a container, `waste info --json`
names the architecture, `waste run` over a prompt longer than index_topk (8) gives the same
tokens twice, and `waste plan --config` on the tiny release agrees with `waste plan` on the
converted container (the state, which holds the indexer's keys, the floor and the rest)."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

WASTE = sys.argv[1]
failures = []
work = tempfile.mkdtemp(prefix="waste-dsa-families-")
env = dict(os.environ, XDG_CACHE_HOME=work, HOME=work)


def run(*args):
    p = subprocess.run([WASTE, *args], capture_output=True, text=True, timeout=110, env=env)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)


def stored_tensors(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".safetensors"):
            with open(os.path.join(folder, name), "rb") as f:
                n = struct.unpack("<Q", f.read(8))[0]
                for k, v in json.loads(f.read(n)).items():
                    if k != "__metadata__":
                        out[k] = v
    return out


EXPECT = {
    "deepseek-v32": ("DeepseekV32ForCausalLM", "deepseek_v32", {
        "model.layers.0.self_attn.indexer.wq_b.weight": ("F8_E4M3", 2),
        "model.layers.0.self_attn.indexer.wq_b.weight_scale_inv": ("F32", 2),
        "model.layers.0.self_attn.indexer.wk.weight": ("F8_E4M3", 2),
        "model.layers.0.self_attn.indexer.k_norm.weight": ("BF16", 1),
        "model.layers.0.self_attn.indexer.k_norm.bias": ("BF16", 1),
        "model.layers.0.self_attn.indexer.weights_proj.weight": ("BF16", 2),
        "model.layers.3.mlp.experts.15.down_proj.weight": ("F8_E4M3", 2),
        "model.layers.5.self_attn.indexer.wk.weight": ("F8_E4M3", 2),  # the MTP layer's own
    }),
    "glm-moe-dsa": ("GlmMoeDsaForCausalLM", "glm_moe_dsa", {
        "model.layers.0.self_attn.indexer.wq_b.weight": ("BF16", 2),
        "model.layers.1.self_attn.indexer.weights_proj.weight": ("BF16", 2),
        "model.layers.3.self_attn.indexer.k_norm.bias": ("BF16", 1),
        "model.layers.3.mlp.gate.e_score_correction_bias": ("F32", 1),
        "model.layers.5.mlp.experts.15.down_proj.weight": ("BF16", 2),
        "model.layers.6.eh_proj.weight": ("BF16", 2),
    }),
}

prompt = "The quick brown fox jumps over the lazy dog while the cat sleeps in the warm sun all day long"

for arch, (architecture, model_type, tensors) in EXPECT.items():
    hf, ct = os.path.join(work, arch + "-hf"), os.path.join(work, arch + "-ct")
    rc, out, err = run("mktiny", hf, "--arch", arch, "--hf")
    check(rc == 0, f"{arch}: mktiny --hf exit {rc}: {err}")
    if rc != 0:
        continue
    cfg = json.load(open(os.path.join(hf, "config.json")))
    check(cfg.get("architectures") == [architecture] and cfg.get("model_type") == model_type,
          f"{arch}: config names {cfg.get('architectures')} / {cfg.get('model_type')}")
    check(cfg.get("index_topk") == 8 and cfg.get("index_head_dim", 0) > cfg.get("qk_rope_head_dim", 0),
          f"{arch}: index_topk {cfg.get('index_topk')}, index_head_dim {cfg.get('index_head_dim')}")
    stored = stored_tensors(hf)
    for name, (dtype, rank) in tensors.items():
        t = stored.get(name)
        check(t is not None and t["dtype"] == dtype and len(t["shape"]) == rank,
              f"{arch}: {name} is {t and (t['dtype'], t['shape'])}, expected {dtype} of rank {rank}")
    if arch == "deepseek-v32":
        check(cfg.get("quantization_config", {}).get("quant_method") == "fp8", "deepseek-v32: quant_method fp8")
        check("indexer_rope_interleave" not in cfg, "deepseek-v32: its config says nothing of the indexer's layout")
        tc = json.load(open(os.path.join(hf, "tokenizer_config.json")))
        check("chat_template" not in tc, "deepseek-v32: the release ships no Jinja template")
    if arch == "glm-moe-dsa":
        types = cfg.get("indexer_types", [])
        check("shared" in types and types[0] == "full", f"glm-moe-dsa: indexer_types {types}")
        for i, kind in enumerate(types):
            has = f"model.layers.{i}.self_attn.indexer.wk.weight" in stored
            check(has == (kind == "full"), f"glm-moe-dsa: layer {i} ({kind}) indexer tensors present: {has}")
        check(cfg.get("indexer_rope_interleave") is True and cfg.get("rope_parameters", {}).get("rope_theta"),
              f"glm-moe-dsa: indexer_rope_interleave {cfg.get('indexer_rope_interleave')}")
        check(len(cfg.get("eos_token_id", [])) == 3, f"glm-moe-dsa: eos_token_id {cfg.get('eos_token_id')}")

    rc, out, err = run("convert", hf, ct)
    check(rc == 0, f"{arch}: convert exit {rc}: {err[-400:]}")
    rc, out, err = run("info", ct, "--json")
    info = json.loads(out) if rc == 0 else {}
    check(info.get("arch") == arch, f"{arch}: info arch {info.get('arch')}")
    if arch == "deepseek-v32":
        check(info.get("expert_format") == "FP8B128", f"deepseek-v32: expert format {info.get('expert_format')}")
    answers = []
    for _ in range(2):
        rc, out, err = run("run", ct, prompt, "-n", "12", "--temp", "0")
        check(rc == 0, f"{arch}: run exit {rc}: {err[-400:]}")
        answers.append(out)
        check("[12 tokens" in err, f"{arch}: run did not generate 12 tokens: {err[-200:]}")
    check(answers[0] == answers[1], f"{arch}: two greedy runs differ: {answers}")

    # The plan of the release from its config alone equals the plan of the container.
    rc1, a, e1 = run("plan", "--config", os.path.join(hf, "config.json"), "--ram", "16G", "--json", "--ctx", "8192")
    rc2, b, e2 = run("plan", ct, "--json", "--ctx", "8192")
    check(rc1 == 0 and rc2 == 0, f"{arch}: plan exits {rc1} {rc2}: {e1[-300:]} {e2[-300:]}")
    if rc1 == 0 and rc2 == 0:
        a, b = json.loads(a), json.loads(b)
        check(a.get("arch") == arch, f"{arch}: plan --config arch {a.get('arch')}")
        layout = a.get("native", {}) if arch == "deepseek-v32" else a  # what convert makes by default
        for k in ("state_bytes", "trunk_bytes", "scratch_bytes", "min_expert_cache", "floor_bytes", "working_set_bytes"):
            check(layout.get(k) == b.get(k), f"{arch}: plan --config {k} {layout.get(k)} vs container {b.get(k)}")

shutil.rmtree(work, ignore_errors=True)
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok")
