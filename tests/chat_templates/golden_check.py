#!/usr/bin/python3
# The family chat templates (DeepSeek R1 and V3.1, Kimi K2-Thinking and K2-Instruct, Qwen3,
# gpt-oss harmony, GLM-4.5 / 4.6, Qwen3.5-MoE) against the releases' own Jinja chat_template: renders each request of requests.json with Jinja the
# way Hugging Face's apply_chat_template does (sandboxed environment, trim_blocks,
# lstrip_blocks, loop controls, its tojson, strftime_now), renders the same request with
# `waste template --format F --json`, and compares segment for segment: the texts must be
# equal and every marker of the family must lie in a markup segment (text segments carry
# only what the conversation wrote).
# usage: golden_check.py WASTE_CLI TEMPLATES_DIR OUT_DIR
# Exits 77 with the reason when Jinja is missing (Debian: apt-get install python3-jinja2).
import json
import os
import subprocess
import sys
import time

try:
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    print("SKIP: the chat template goldens need Jinja (Debian: apt-get install python3-jinja2)")
    sys.exit(77)

cli, templates, out_dir = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
cases = json.load(open(os.path.join(here, "requests.json"), encoding="utf-8"))
os.makedirs(out_dir, exist_ok=True)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
# Hugging Face's strftime_now: the local time now (gpt-oss writes the current date).
env.globals["strftime_now"] = lambda fmt: time.strftime(fmt)

FAMILIES = {
    "deepseek": {"template": "deepseek-r1.jinja", "bos_token": "<｜begin▁of▁sentence｜>",
                 "eos_token": "<｜end▁of▁sentence｜>",
                 "markers": ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
                             "<think>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>",
                             "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<｜tool▁outputs▁begin｜>",
                             "<｜tool▁outputs▁end｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"]},
    "deepseek-v3.1": {"template": "deepseek-v3.1.jinja", "bos_token": "<｜begin▁of▁sentence｜>",
                      "eos_token": "<｜end▁of▁sentence｜>",
                      "markers": ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
                                  "<think>", "</think>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
                                  "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>",
                                  "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"]},
    "kimi-k2": {"template": "kimi-k2-thinking.jinja", "bos_token": "[BOS]", "eos_token": "[EOS]",
                "markers": ["<|im_system|>", "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|im_end|>",
                            "<think>", "</think>", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                            "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"]},
    "kimi-k2-instruct": {"template": "kimi-k2-instruct.jinja", "bos_token": "[BOS]", "eos_token": "[EOS]",
                         "markers": ["<|im_system|>", "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|im_end|>",
                                     "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                                     "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>",
                                     "<|media_start|>"]},
    "qwen3": {"template": "qwen3.jinja", "bos_token": None, "eos_token": "<|im_end|>",
              "markers": ["<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>",
                          "</tool_response>", "<think>", "</think>"]},
    "glm-4.5": {"template": "glm-4.6.jinja", "bos_token": None, "eos_token": "<|endoftext|>",
                "markers": ["[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>", "<think>",
                            "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>",
                            "</arg_value>", "<tool_response>", "</tool_response>"]},
    "qwen3.5": {"template": "qwen3.5-moe.jinja", "bos_token": None, "eos_token": "<|im_end|>",
                "markers": ["<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>",
                            "</tool_response>", "<think>", "</think>", "<function=", "</function>", "<parameter=",
                            "</parameter>"]},
    "harmony": {"template": "gpt-oss.jinja", "bos_token": "<|startoftext|>", "eos_token": "<|return|>",
                "markers": ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>",
                            "<|call|>"]},
}

failures = 0
checked = 0
for i, case in enumerate(cases):
    family = FAMILIES[case["format"]]
    request = case["request"]
    template = env.from_string(open(os.path.join(templates, family["template"]), encoding="utf-8").read())
    variables = {"messages": request["messages"], "add_generation_prompt": request.get("add_generation_prompt", True),
                 "bos_token": family["bos_token"], "eos_token": family["eos_token"]}
    if "tools" in request:
        variables["tools"] = request["tools"]
    for kwarg in ("thinking", "enable_thinking", "reasoning_effort", "model_identity"):
        if kwarg in request:
            variables[kwarg] = request[kwarg]
    golden = template.render(**variables)

    path = os.path.join(out_dir, "request-%d.json" % i)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(request, f, ensure_ascii=False)
    run = subprocess.run([cli, "template", "--format", case["format"], "--request", path, "--json"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print("FAIL %s: waste template exited %d: %s" % (case["name"], run.returncode, run.stderr.strip()))
        failures += 1
        continue
    segments = json.loads(run.stdout)["segments"]
    ours = "".join(text for text, _ in segments)
    if ours != golden:
        at = next((k for k in range(min(len(ours), len(golden))) if ours[k] != golden[k]), min(len(ours), len(golden)))
        print("FAIL %s: the rendering differs from the release template at character %d\n  template %r\n  engine   %r"
              % (case["name"], at, golden[max(0, at - 40):at + 60], ours[max(0, at - 40):at + 60]))
        failures += 1
        continue
    # Markers the conversation itself wrote (Qwen's tool results sent as a user turn) may
    # stay text; any other marker must come from the template, as markup.
    written = json.dumps(request, ensure_ascii=False)
    for text, markup in segments:
        if not markup and any(m in text and m not in written for m in family["markers"]):
            print("FAIL %s: a text segment holds the family's markup: %r" % (case["name"], text))
            failures += 1
            break
    checked += 1

print("%d of %d requests match their release template" % (checked, len(cases)))
sys.exit(1 if failures else 0)
