"""A port of DeepSeek-V3.2's prompt encoder (encoding/encoding_dsv32.py's encode_messages and the
helpers it calls, from the release; docs/architectures/dsa.md writes its rules down), for
checking the engine's renderer (text/deepseek_v32_template.cpp; tests/engine/tst_dsml_encodings
runs `dsv32_encoder.py REQUESTS.json` and reads one encoded prompt per request, as JSON, from
stdout). Where the release's encoder stops on an assertion (a call's arguments that are not
JSON) this port writes what the engine writes instead: the text as one `arguments` parameter."""
import copy
import json

from dsml_common import (ASSISTANT, BOS, DSML, EOS, THINK_CLOSE, THINK_OPEN, USER, dsml_calls, last_user,
                         put_tools_on_system, request_thinking, to_json)

TOOLS = (
    "## Tools\n\nYou have access to a set of tools you can use to answer the user's question.\n"
    "You can invoke functions by writing a \"<{d}function_calls>\" block like the following as part of your reply to "
    "the user:\n<{d}function_calls>\n<{d}invoke name=\"$FUNCTION_NAME\">\n<{d}parameter name=\"$PARAMETER_NAME\" "
    "string=\"true|false\">$PARAMETER_VALUE</{d}parameter>\n...\n</{d}invoke>\n<{d}invoke name=\"$FUNCTION_NAME2\">\n"
    "...\n</{d}invoke>\n</{d}function_calls>\n\nString and scalar parameters should be specified as is without any "
    "escaping or quotes, while lists and objects should use JSON format. The \"string\" attribute should be set to "
    "\"true\" for string type parameters and \"false\" for other types (numbers, booleans, arrays, objects).\n\n"
    "If the thinking_mode is enabled, then after function results you should strongly consider outputting a thinking "
    "block. Here is an example:\n\n<{d}function_calls>\n...\n</{d}function_calls>\n\n<function_results>\n...\n"
    "</function_results>\n\n{o}...thinking about results{c}\n\nHere are the functions available in JSONSchema "
    "format:\n<functions>\n{schemas}\n</functions>\n")
RESPONSE_FORMAT = "## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n"


def render_tools(tools):
    schemas = "\n".join(to_json(t["function"] if "function" in t else t) for t in tools)
    return TOOLS.replace("{d}", DSML).replace("{o}", THINK_OPEN).replace("{c}", THINK_CLOSE).replace("{schemas}", schemas)


def render(i, messages, thinking):
    out = ""
    m = messages[i]
    last = last_user(messages)
    role = m.get("role")
    content = m.get("content")
    if role == "system":
        out += content or ""
        if m.get("tools"):
            out += "\n\n" + render_tools(m["tools"])
        if m.get("response_format"):
            out += "\n\n" + RESPONSE_FORMAT + to_json(m["response_format"])
    elif role in ("user", "developer"):
        if role == "developer":
            inner = ""
            if m.get("tools"):
                inner += "\n\n" + render_tools(m["tools"])
            if m.get("response_format"):
                inner += "\n\n" + RESPONSE_FORMAT + to_json(m["response_format"])
            content = inner + "\n\n# The user's message is: " + (content or "")
        out += USER + (content or "") + ASSISTANT
        out += THINK_OPEN if i == last and thinking else THINK_CLOSE
    elif role == "tool":
        prev = i - 1
        while prev >= 0 and messages[prev].get("role") == "tool":
            prev -= 1
        if prev < 0 or messages[prev].get("role") != "assistant":
            raise ValueError("a tool result must follow the assistant turn that called it")
        order = i - prev
        calls = messages[prev].get("tool_calls") or []
        if len(calls) < order:
            raise ValueError("more tool results than calls")
        if order == 1:
            out += "\n\n<function_results>"
        out += "\n<result>%s</result>" % (content or "")
        if order == len(calls):
            out += "\n</function_results>"
            out += "\n\n" + (THINK_OPEN if i >= last and thinking else THINK_CLOSE)
    elif role == "assistant":
        calls = dsml_calls(m.get("tool_calls"), "function_calls")
        reasoning = ""
        if thinking and i > last:
            reasoning = (m.get("reasoning_content") or "") + THINK_CLOSE
        out += reasoning + (content or "") + calls + EOS
    else:
        raise ValueError("role " + str(role))
    return out


def drop_thinking_messages(messages):
    last = last_user(messages)
    out = []
    for i, m in enumerate(messages):
        if m.get("role") in ("user", "system", "tool") or i >= last:
            out.append(m)
        elif m.get("role") == "assistant":
            m = copy.copy(m)
            m.pop("reasoning_content", None)
            out.append(m)
    return out


def encode_messages(messages, thinking_mode, drop_thinking=True):
    thinking = thinking_mode == "thinking"
    if thinking and drop_thinking:
        messages = drop_thinking_messages(messages)
    return BOS + "".join(render(i, messages, thinking) for i in range(len(messages)))


def encode_request(request):
    """An OpenAI-style request as the engine takes it: contents given as parts joined as text,
    the request's tools on the first system message (one with empty content put first when
    there is none), thinking unless switched off, and add_generation_prompt false taking the
    generation prompt (<｜Assistant｜> and its think marker) off a prompt that ends with it."""
    messages = copy.deepcopy(request["messages"])
    for m in messages:
        if isinstance(m.get("content"), list):
            m["content"] = "".join(p.get("text", "") for p in m["content"] if p.get("type") == "text")
    put_tools_on_system(messages, request.get("tools"))
    thinking = request_thinking(request)
    out = encode_messages(messages, "thinking" if thinking else "chat")
    if request.get("add_generation_prompt") is False and messages and messages[-1].get("role") in ("user", "developer"):
        for end in (ASSISTANT + THINK_OPEN, ASSISTANT + THINK_CLOSE):
            if out.endswith(end):
                out = out[:-len(end)]
                break
    return out


if __name__ == "__main__":
    import sys
    cases = json.load(open(sys.argv[1], encoding="utf-8"))
    json.dump([encode_request(c["request"]) for c in cases], sys.stdout, ensure_ascii=False)
