"""The Judged-by pipeline for the GQA families, Qwen3-MoE, Qwen3-Next, Qwen3.5-MoE, gpt-oss and GLM-4.5
(and its Air variant), and DeepSeek V4 Flash: `waste mktiny T --arch A --hf` writes the release layout (tensor names, dtypes, config fields), `waste
convert` turns it into a container, `waste info --json` names the architecture, and
`waste run ... -n 8 --temp 0` gives the same tokens twice. `waste plan --config` on the
tiny release agrees with `waste plan` on the converted container (floor and state).
The steps every family shares are family_pipeline.py's; this file adds what sets these apart."""
import json
import os
import sys

from family_pipeline import Pipeline

p = Pipeline(sys.argv[1], "gqa-families")
check = p.check


EXPECT = {
    # arch: (architectures, model_type, a few stored tensors with dtype and rank)
    "qwen3-moe": ("Qwen3MoeForCausalLM", "qwen3_moe", {
        "model.layers.0.self_attn.q_norm.weight": ("BF16", 1),
        "model.layers.0.mlp.gate.weight": ("BF16", 2),
        "model.layers.0.mlp.experts.0.gate_proj.weight": ("BF16", 2),
        "model.layers.3.mlp.experts.15.down_proj.weight": ("BF16", 2),
    }),
    "qwen3-next": ("Qwen3NextForCausalLM", "qwen3_next", {
        "model.layers.0.linear_attn.in_proj_qkvz.weight": ("BF16", 2),
        "model.layers.0.linear_attn.in_proj_ba.weight": ("BF16", 2),
        "model.layers.0.linear_attn.conv1d.weight": ("BF16", 3),
        "model.layers.0.linear_attn.A_log": ("BF16", 1),
        "model.layers.2.linear_attn.norm.weight": ("BF16", 1),
        "model.layers.3.self_attn.q_proj.weight": ("BF16", 2),
        "model.layers.3.self_attn.q_norm.weight": ("BF16", 1),
        "model.layers.1.mlp.shared_expert.up_proj.weight": ("BF16", 2),
        "model.layers.1.mlp.shared_expert_gate.weight": ("BF16", 2),
        "model.layers.3.mlp.experts.15.down_proj.weight": ("BF16", 2),
        "mtp.fc.weight": ("BF16", 2),
    }),
    "qwen3.5-moe": ("Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe", {
        "model.language_model.embed_tokens.weight": ("BF16", 2),
        "model.language_model.layers.0.linear_attn.in_proj_qkv.weight": ("BF16", 2),
        "model.language_model.layers.0.linear_attn.in_proj_z.weight": ("BF16", 2),
        "model.language_model.layers.0.linear_attn.in_proj_b.weight": ("BF16", 2),
        "model.language_model.layers.0.linear_attn.in_proj_a.weight": ("BF16", 2),
        "model.language_model.layers.0.linear_attn.conv1d.weight": ("BF16", 3),
        "model.language_model.layers.3.self_attn.q_proj.weight": ("BF16", 2),
        "model.language_model.layers.1.mlp.experts.gate_up_proj": ("BF16", 3),
        "model.language_model.layers.1.mlp.experts.down_proj": ("BF16", 3),
        "model.language_model.layers.1.mlp.shared_expert_gate.weight": ("BF16", 2),
        "model.language_model.norm.weight": ("BF16", 1),
        "lm_head.weight": ("BF16", 2),
        "model.visual.patch_embed.proj.weight": ("BF16", 5),
        "mtp.fc.weight": ("BF16", 2),
    }),
    "gpt-oss": ("GptOssForCausalLM", "gpt_oss", {
        "model.layers.0.self_attn.sinks": ("BF16", 1),
        "model.layers.0.self_attn.q_proj.bias": ("BF16", 1),
        "model.layers.0.mlp.router.bias": ("BF16", 1),
        "model.layers.0.mlp.experts.gate_up_proj_blocks": ("U8", 4),
        "model.layers.0.mlp.experts.gate_up_proj_scales": ("U8", 3),
        "model.layers.0.mlp.experts.gate_up_proj_bias": ("BF16", 2),
        "model.layers.1.mlp.experts.down_proj_blocks": ("U8", 4),
    }),
    "glm4-moe": ("Glm4MoeForCausalLM", "glm4_moe", {
        "model.layers.0.self_attn.q_proj.bias": ("BF16", 1),
        "model.layers.0.self_attn.q_norm.weight": ("BF16", 1),
        "model.layers.0.mlp.gate_proj.weight": ("BF16", 2),
        "model.layers.1.mlp.gate.weight": ("BF16", 2),
        "model.layers.1.mlp.gate.e_score_correction_bias": ("F32", 1),
        "model.layers.1.mlp.shared_experts.gate_proj.weight": ("BF16", 2),
        "model.layers.3.mlp.experts.15.down_proj.weight": ("BF16", 2),
        "model.layers.4.eh_proj.weight": ("BF16", 2),
        "model.layers.4.shared_head.head.weight": ("BF16", 2),
    }),
    "deepseek-v4": ("DeepseekV4ForCausalLM", "deepseek_v4", {
        "embed.weight": ("BF16", 2),
        "layers.0.hc_attn_fn": ("F32", 2),
        "layers.0.attn.attn_sink": ("F32", 1),
        "layers.0.attn.wq_a.weight": ("F8_E4M3", 2),
        "layers.0.attn.wq_a.scale": ("F8_E8M0", 2),
        "layers.0.ffn.gate.tid2eid": ("I64", 2),
        "layers.2.attn.compressor.ape": ("F32", 2),
        "layers.2.attn.indexer.wq_b.weight": ("F8_E4M3", 2),
        "layers.2.attn.indexer.compressor.wkv.weight": ("BF16", 2),
        "layers.2.ffn.gate.bias": ("F32", 1),
        "layers.2.ffn.experts.0.w1.weight": ("I8", 2),
        "layers.2.ffn.experts.0.w1.scale": ("F8_E8M0", 2),
        "layers.3.attn.compressor.wgate.weight": ("BF16", 2),
        "mtp.0.e_proj.weight": ("F8_E4M3", 2),
        "hc_head_fn": ("F32", 2),
        "head.weight": ("BF16", 2),
    }),
    "glm4-moe --air": ("Glm4MoeForCausalLM", "glm4_moe", {
        "model.layers.0.self_attn.k_proj.bias": ("BF16", 1),
        "model.layers.1.mlp.gate.e_score_correction_bias": ("F32", 1),
    }),
}

for variant, (architecture, model_type, tensors) in EXPECT.items():
    arch, *flags = variant.split()
    made = p.release(variant, architecture, model_type, tensors)
    if made is None:
        continue
    hf, cfg, stored = made
    if arch == "qwen3-next":
        types = cfg.get("layer_types", [])
        check(types == ["linear_attention"] * 3 + ["full_attention"] and cfg.get("full_attention_interval") == 4,
              f"qwen3-next: layer_types {types}, full_attention_interval {cfg.get('full_attention_interval')}")
        kw = cfg["linear_num_key_heads"] * cfg["linear_key_head_dim"]
        vw = cfg["linear_num_value_heads"] * cfg["linear_value_head_dim"]
        qkvz = stored["model.layers.0.linear_attn.in_proj_qkvz.weight"]["shape"]
        check(qkvz == [2 * kw + 2 * vw, cfg["hidden_size"]], f"qwen3-next: in_proj_qkvz shape {qkvz}")
        q = stored["model.layers.3.self_attn.q_proj.weight"]["shape"]
        check(q == [2 * cfg["num_attention_heads"] * cfg["head_dim"], cfg["hidden_size"]],
              f"qwen3-next: q_proj (with its gate) shape {q}")
        check(cfg.get("partial_rotary_factor") == 0.25 and cfg.get("shared_expert_intermediate_size", 0) > 0,
              f"qwen3-next: partial_rotary_factor {cfg.get('partial_rotary_factor')}")
        check(os.path.exists(os.path.join(hf, "tokenizer.json")), "qwen3-next: Qwen's tokenizer.json")
    if arch == "qwen3.5-moe":
        t = cfg.get("text_config", {})
        check(t.get("model_type") == "qwen3_5_moe_text" and "vision_config" in cfg,
              f"qwen3.5-moe: the multimodal wrapper (text_config {t.get('model_type')})")
        check(t.get("layer_types") == ["linear_attention"] * 3 + ["full_attention"],
              f"qwen3.5-moe: layer_types {t.get('layer_types')}")
        check(t.get("rope_parameters", {}).get("partial_rotary_factor") == 0.25 and
              t.get("rope_parameters", {}).get("mrope_section") == [11, 11, 10], "qwen3.5-moe: nested rope_parameters")
        check("norm_topk_prob" not in t and "mlp_only_layers" not in t, "qwen3.5-moe: Qwen3-Next's MoE keys are gone")
        kw = t["linear_num_key_heads"] * t["linear_key_head_dim"]
        vw = t["linear_num_value_heads"] * t["linear_value_head_dim"]
        qkv = stored["model.language_model.layers.0.linear_attn.in_proj_qkv.weight"]["shape"]
        check(qkv == [2 * kw + vw, t["hidden_size"]], f"qwen3.5-moe: in_proj_qkv shape {qkv}")
        gu = stored["model.language_model.layers.1.mlp.experts.gate_up_proj"]["shape"]
        check(gu == [t["num_experts"], 2 * t["moe_intermediate_size"], t["hidden_size"]],
              f"qwen3.5-moe: gate_up_proj shape {gu}")
        check(not any(".experts.0." in n for n in stored if n.startswith("model.language_model.")),
              "qwen3.5-moe: the trunk's experts are fused")
        tok = json.load(open(os.path.join(hf, "tokenizer.json")))
        check(tok.get("normalizer", {}).get("type") == "NFC" and
              "\\p{M}" in json.dumps(tok.get("pre_tokenizer")), "qwen3.5-moe: NFC and the \\p{M} split rule")
    if arch == "glm4-moe":
        air = "--air" in flags
        check(cfg.get("use_qk_norm") is (not air) and cfg.get("routed_scaling_factor") == (1.0 if air else 2.5),
              f"{variant}: use_qk_norm {cfg.get('use_qk_norm')}, routed_scaling_factor {cfg.get('routed_scaling_factor')}")
        check(air != ("model.layers.0.self_attn.q_norm.weight" in stored), f"{variant}: q_norm present iff not Air")
        check(cfg.get("partial_rotary_factor") == 0.5 and cfg.get("num_nextn_predict_layers") == 1,
              f"{variant}: partial_rotary_factor {cfg.get('partial_rotary_factor')}")
        check(len(cfg.get("eos_token_id", [])) == 3, f"{variant}: eos_token_id {cfg.get('eos_token_id')}")
    if arch == "gpt-oss":
        check(not any(".experts.0." in n for n in stored), "gpt-oss: experts are fused, not per expert")
        check(cfg.get("quantization_config", {}).get("quant_method") == "mxfp4", "gpt-oss: quant_method mxfp4")
        blocks = stored["model.layers.0.mlp.experts.gate_up_proj_blocks"]["shape"]
        check(blocks == [cfg["num_local_experts"], 2 * cfg["intermediate_size"], cfg["hidden_size"] // 32, 16],
              f"gpt-oss: gate_up blocks shape {blocks}")

    if arch == "deepseek-v4":
        check(cfg.get("expert_dtype") == "fp4" and cfg.get("quantization_config", {}).get("scale_fmt") == "ue8m0",
              f"deepseek-v4: expert_dtype {cfg.get('expert_dtype')}, quantization_config {cfg.get('quantization_config')}")
        ratios = cfg.get("compress_ratios", [])
        check(len(ratios) == cfg["num_hidden_layers"] + 1 and 4 in ratios and 0 in ratios,
              f"deepseek-v4: compress_ratios {ratios}")
        check("layers.1.ffn.gate.bias" not in stored and "layers.1.ffn.gate.tid2eid" in stored
              and "layers.2.ffn.gate.tid2eid" not in stored, "deepseek-v4: tid2eid on the hash layers only")
        check("layers.3.attn.indexer.wq_b.weight" not in stored, "deepseek-v4: no indexer on a ratio-8 layer")
        w = stored["layers.2.ffn.experts.0.w1.weight"]["shape"]
        check(w == [cfg["moe_intermediate_size"], cfg["hidden_size"] // 2], f"deepseek-v4: FP4 w1 shape {w}")
    # The container holds what convert chose: VQ3R for BF16 experts, MXFP4 kept for gpt-oss and V4.
    p.container(variant, hf, "The quick brown fox", 8, "MXFP4" if arch in ("gpt-oss", "deepseek-v4") else None)

p.finish()
