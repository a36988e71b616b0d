"""What the Python ports of DeepSeek-V3.2's and V4's encoders (dsv32_encoder.py,
dsv4_encoder.py) share: the markers, Python's json.dumps as the encoders call it, a call's
arguments as DSML parameters, the calls block, and how an OpenAI-style request becomes the
encoder's messages (tools on the first system message, thinking unless switched off)."""
import json

BOS = "<｜begin▁of▁sentence｜>"
EOS = "<｜end▁of▁sentence｜>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
DSML = "｜DSML｜"
USER, ASSISTANT = "<｜User｜>", "<｜Assistant｜>"


def to_json(v):
    return json.dumps(v, ensure_ascii=False)


def dsml_arguments(call):
    """encode_arguments_to_dsml; arguments that are not a JSON object (where the releases'
    encoders stop) go as one `arguments` parameter, as the engine writes them."""
    try:
        args = json.loads(call["arguments"])
    except Exception:
        args = None
    if not isinstance(args, dict):
        args = {"arguments": call["arguments"]}
    return "\n".join('<%sparameter name="%s" string="%s">%s</%sparameter>' % (
        DSML, k, "true" if isinstance(v, str) else "false", v if isinstance(v, str) else to_json(v), DSML)
        for k, v in args.items())


def dsml_calls(tool_calls, block):
    """An assistant turn's calls: "\\n\\n" and one <｜DSML｜BLOCK> of invokes, or nothing."""
    if not tool_calls:
        return ""
    invokes = ['<%sinvoke name="%s">\n%s\n</%sinvoke>' % (
        DSML, c["function"]["name"], dsml_arguments(c["function"]), DSML) for c in tool_calls]
    return "\n\n<%s%s>\n%s\n</%s%s>" % (DSML, block, "\n".join(invokes), DSML, block)


def last_user(messages):
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") in ("user", "developer"):
            return i
    return -1


def request_thinking(request):
    """Thinking unless "thinking" / "enable_thinking" is false or disabled, or the
    reasoning effort is none, minimal or off."""
    thinking = not any(request.get(k) is False or (isinstance(request.get(k), dict) and
                                                   request[k].get("type") == "disabled")
                       for k in ("thinking", "enable_thinking"))
    return thinking and request.get("reasoning_effort") not in ("none", "minimal", "off")


def put_tools_on_system(messages, tools):
    """The request's tools on the first system message (one with empty content put first
    when there is none): the encoders read tools from a system or developer message."""
    if not tools:
        return
    system = next((m for m in messages if m.get("role") == "system"), None)
    if system is None:
        system = {"role": "system", "content": ""}
        messages.insert(0, system)
    system["tools"] = tools
