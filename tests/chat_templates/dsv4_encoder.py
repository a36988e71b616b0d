"""A port of DeepSeek V4's prompt encoder (encoding_dsv4.py's encode_messages and the helpers
it calls, DeepSeek's public release file; docs/architectures/deepseek-v4-flash.md writes its
rules down), for checking the engine's renderer (text/dsv4_template.cpp; tests/engine/tst_dsv4_encoding
runs `dsv4_encoder.py REQUESTS.json` and reads one encoded prompt per request, as JSON, from stdout). The internal
classification tasks (`task`, `wo_eos`) are left out: no API request carries them."""
import copy
import json

from dsml_common import (ASSISTANT, BOS, DSML, EOS, THINK_CLOSE, THINK_OPEN, USER, dsml_calls, last_user,
                         put_tools_on_system, request_thinking, to_json)

REMINDER = "<｜latest_reminder｜>"

EFFORT_MAX = (
    "Reasoning Effort: Absolute maximum with no shortcuts permitted.\n"
    "You MUST be very thorough in your thinking and comprehensively decompose the problem to resolve the root cause, "
    "rigorously stress-testing your logic against all potential paths, edge cases, and adversarial scenarios.\n"
    "Explicitly write out your entire deliberation process, documenting every intermediate step, considered "
    "alternative, and rejected hypothesis to ensure absolutely no assumption is left unchecked.\n\n")

TOOLS = (
    "## Tools\n\nYou have access to a set of tools to help answer the user's question. You can invoke tools by writing "
    "a \"<{d}tool_calls>\" block like the following:\n\n<{d}tool_calls>\n<{d}invoke name=\"$TOOL_NAME\">\n"
    "<{d}parameter name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE</{d}parameter>\n...\n</{d}invoke>\n"
    "<{d}invoke name=\"$TOOL_NAME2\">\n...\n</{d}invoke>\n</{d}tool_calls>\n\nString parameters should be specified as "
    "is and set `string=\"true\"`. For all other types (numbers, booleans, arrays, objects), pass the value in JSON "
    "format and set `string=\"false\"`.\n\nIf thinking_mode is enabled (triggered by {o}), you MUST output your "
    "complete reasoning inside {o}...{c} BEFORE any tool calls or final response.\n\nOtherwise, output directly after "
    "{c} with tool calls or final response.\n\n### Available Tool Schemas\n\n{schemas}\n\nYou MUST strictly follow the "
    "above defined tool name and parameter schemas to invoke tool calls.\n")


def render_tools(tools):
    schemas = "\n".join(to_json(t["function"]) for t in tools)
    return TOOLS.replace("{d}", DSML).replace("{o}", THINK_OPEN).replace("{c}", THINK_CLOSE).replace("{schemas}", schemas)


def render(i, messages, thinking, drop, effort):
    out = ""
    m = messages[i]
    last = last_user(messages)
    role = m.get("role")
    if i == 0 and thinking and effort == "max":
        out += EFFORT_MAX
    if role == "system":
        out += m.get("content") or ""
        if m.get("tools"):
            out += "\n\n" + render_tools(m["tools"])
    elif role == "developer":
        out += USER + m["content"]
        if m.get("tools"):
            out += "\n\n" + render_tools(m["tools"])
    elif role == "user":
        out += USER
        parts = []
        for b in m["content_blocks"]:
            if b["type"] == "text":
                parts.append(b.get("text", ""))
            else:
                c = b.get("content", "")
                if isinstance(c, list):
                    c = "\n\n".join(x.get("text", "") if x.get("type") == "text" else "[Unsupported %s]" % x.get("type")
                                    for x in c)
                parts.append("<tool_result>%s</tool_result>" % c)
        out += "\n\n".join(parts)
    elif role == "latest_reminder":
        out += REMINDER + m["content"]
    elif role == "assistant":
        calls = dsml_calls(m.get("tool_calls"), "tool_calls")
        reasoning = ""
        if thinking and (not drop or i > last):
            reasoning = (m.get("reasoning_content") or "") + THINK_CLOSE
        out += reasoning + (m.get("content") or "") + calls + EOS
    else:
        raise ValueError("role " + str(role))
    if i + 1 < len(messages) and messages[i + 1].get("role") not in ("assistant", "latest_reminder"):
        return out
    if role in ("user", "developer"):
        out += ASSISTANT + (THINK_OPEN if thinking and (not drop or i >= last) else THINK_CLOSE)
    return out


def merge_tool_messages(messages):
    merged = []
    for m in messages:
        m = copy.deepcopy(m)
        if m.get("role") == "tool":
            block = {"type": "tool_result", "tool_use_id": m.get("tool_call_id", ""), "content": m.get("content", "")}
            if merged and merged[-1].get("role") == "user" and "content_blocks" in merged[-1]:
                merged[-1]["content_blocks"].append(block)
            else:
                merged.append({"role": "user", "content_blocks": [block]})
        elif m.get("role") == "user":
            block = {"type": "text", "text": m.get("content", "")}
            if merged and merged[-1].get("role") == "user" and "content_blocks" in merged[-1]:
                merged[-1]["content_blocks"].append(block)
            else:
                merged.append({"role": "user", "content": m.get("content", ""), "content_blocks": [block]})
        else:
            merged.append(m)
    return merged


def sort_tool_results(messages):
    order = {}
    for m in messages:
        if m.get("role") == "assistant" and m.get("tool_calls"):
            order = {c["id"]: k for k, c in enumerate(m["tool_calls"]) if c.get("id")}
        elif m.get("role") == "user" and m.get("content_blocks"):
            results = [b for b in m["content_blocks"] if b["type"] == "tool_result"]
            if len(results) > 1 and order:
                results = sorted(results, key=lambda b: order.get(b.get("tool_use_id", ""), 0))
                it = iter(results)
                m["content_blocks"] = [next(it) if b["type"] == "tool_result" else b for b in m["content_blocks"]]
    return messages


def drop_thinking_messages(messages):
    last = last_user(messages)
    out = []
    for i, m in enumerate(messages):
        if m.get("role") in ("user", "system", "tool", "latest_reminder", "direct_search_results") or i >= last:
            out.append(m)
        elif m.get("role") == "assistant":
            m = copy.copy(m)
            m.pop("reasoning_content", None)
            out.append(m)
    return out


def encode_messages(messages, thinking_mode, drop_thinking=True, reasoning_effort=None):
    messages = sort_tool_results(merge_tool_messages(messages))
    thinking = thinking_mode == "thinking"
    drop = drop_thinking and not any(m.get("tools") for m in messages)
    if thinking and drop:
        messages = drop_thinking_messages(messages)
    return BOS + "".join(render(i, messages, thinking, drop, reasoning_effort) for i in range(len(messages)))


def encode_request(request):
    """An OpenAI-style request as the engine takes it: the request's tools on the first system
    message (one with empty content put first when there is none), thinking unless switched
    off, reasoning_effort max or high passed on."""
    messages = copy.deepcopy(request["messages"])
    for m in messages:  # text parts joined as the engine reads them (tool results: the encoder's own rule)
        if m.get("role") != "tool" and isinstance(m.get("content"), list):
            m["content"] = "".join(p.get("text", "") for p in m["content"] if p.get("type") == "text")
    put_tools_on_system(messages, request.get("tools"))
    thinking = request_thinking(request)
    effort = request.get("reasoning_effort")
    return encode_messages(messages, "thinking" if thinking else "chat",
                           reasoning_effort=effort if effort in ("max", "high") else None)


if __name__ == "__main__":
    import sys
    cases = json.load(open(sys.argv[1], encoding="utf-8"))
    json.dump([encode_request(c["request"]) for c in cases], sys.stdout, ensure_ascii=False)
