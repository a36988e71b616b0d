"""The Judged-by pipeline for the DeepSeek Sparse Attention families, DeepSeek-V3.2 and GLM-5.x:
`waste mktiny T --arch A --hf` writes the release layout (tensor names with each layer's
lightning indexer, dtypes: V3.2's FP8 blocks with weight_scale_inv, GLM's BF16; config
fields: index_n_heads / index_head_dim / index_topk, GLM-5.2's indexer_types with shared
layers that ship no indexer), `waste convert` turns it into a container, `waste info --json`
names the architecture, `waste run` over a prompt longer than index_topk (8) gives the same
tokens twice, and `waste plan --config` on the tiny release agrees with `waste plan` on the
converted container (the state, which holds the indexer's keys, the floor and the rest).
The steps every family shares are family_pipeline.py's; this file adds what sets these apart."""
import json
import os
import sys

from family_pipeline import Pipeline

p = Pipeline(sys.argv[1], "dsa-families")
check = p.check


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
    made = p.release(arch, architecture, model_type, tensors)
    if made is None:
        continue
    hf, cfg, stored = made
    check(cfg.get("index_topk") == 8 and cfg.get("index_head_dim", 0) > cfg.get("qk_rope_head_dim", 0),
          f"{arch}: index_topk {cfg.get('index_topk')}, index_head_dim {cfg.get('index_head_dim')}")
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

    # A prompt longer than index_topk (8): the indexer chooses.
    p.container(arch, hf, prompt, 12, "FP8B128" if arch == "deepseek-v32" else None)

p.finish()
