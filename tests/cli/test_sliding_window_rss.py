"""gpt-oss's sliding-window layers keep their KV bounded by the window, in `waste plan` and
in the peak RSS of a real 16K-token prompt.

- `waste plan --config` on the tiny gpt-oss release (`waste mktiny --arch gpt-oss --hf`,
  sliding and full layers alternating) and `waste plan` on its container give the state
  the arithmetic gives: window slots for a sliding layer, ctx slots for a full one, far
  below the KV of every layer holding the whole context.
- Positive control: on that container, a short prompt at --ctx 16400 peaks higher than at
  --ctx 256 by about the full layers' KV, so the RSS measurement sees KV memory.
- The same release with every layer sliding (its config's layer_types rewritten: no
  full layer, so 16K tokens of prefill take seconds, not minutes of O(n^2) attention) runs
  a 16K-token prompt at --ctx 16400 and peaks no higher than a short prompt at --ctx 256,
  to within a quarter of what its KV would take unbounded."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

WASTE = sys.argv[1]
CTX = 16400
work = tempfile.mkdtemp(prefix="waste-sliding-rss-")
env = dict(os.environ, XDG_CACHE_HOME=work, HOME=work)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(*args):
    p = subprocess.run([WASTE, *args], capture_output=True, text=True, timeout=110, env=env)
    if p.returncode != 0:
        sys.exit(f"waste {' '.join(args[:3])} … failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    return p.stdout


def peak_rss(*args):
    """Peak RSS in bytes of one `waste` run (the kernel's own high-water mark for that child)."""
    with open(os.path.join(work, "run.err"), "w") as err:
        child = subprocess.Popen([WASTE, *args], stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        with open(os.path.join(work, "run.err")) as f:
            sys.exit(f"waste {' '.join(args[:2])} … failed: {f.read().strip()[-400:]}")
    return usage.ru_maxrss * 1024  # Linux reports KiB


def plan(*args):
    """`waste plan --json`; the state does not depend on speeds, so none are measured."""
    return json.loads(run("plan", *args, "--json", "--compute-ms", "1", "--disk-mbps", "1000"))


def state_bytes(config, ctx, sliding):
    """The GQA KV the engine keeps: keys and values in float32, window slots on a sliding layer."""
    per_slot = 2 * config["num_key_value_heads"] * config["head_dim"] * 4
    return sum((min(config["sliding_window"], ctx) if s else ctx) * per_slot for s in sliding)


def mib(n):
    return f"{n / 2**20:.1f} MiB"


try:
    hf = os.path.join(work, "hf")
    run("mktiny", hf, "--arch", "gpt-oss", "--hf")
    cfg_path = os.path.join(hf, "config.json")
    with open(cfg_path) as f:
        config = json.load(f)
    layers = config["num_hidden_layers"]
    release_sliding = [t == "sliding_attention" for t in config["layer_types"]]
    check(any(release_sliding) and not all(release_sliding),
          f"the tiny gpt-oss should alternate sliding and full layers: {config['layer_types']}")
    unbounded = state_bytes(config, CTX, [False] * layers)

    # The plan, from the release config and from the converted container.
    release_state = state_bytes(config, CTX, release_sliding)
    planned = plan("--config", cfg_path, "--ctx", str(CTX))["state_bytes"]
    check(planned == release_state, f"plan --config: state {planned} bytes, the arithmetic gives {release_state}")
    release = os.path.join(work, "release.waste")
    run("convert", hf, release)
    planned = plan(release, "--ctx", str(CTX))["state_bytes"]
    check(planned == release_state, f"plan on the container: state {planned} bytes, the arithmetic gives {release_state}")
    check(release_state < unbounded * 0.6,
          f"the release's state at ctx {CTX} ({release_state}) should be about half the unbounded {unbounded}")

    # Positive control: the full layers' KV shows in the peak RSS.
    full_kv = state_bytes(config, CTX, release_sliding) - state_bytes(config, 256, release_sliding)
    short_small = peak_rss("run", release, "many words", "--raw", "--ctx", "256", "-n", "1", "-q")
    short_big = peak_rss("run", release, "many words", "--raw", "--ctx", str(CTX), "-n", "1", "-q")
    print(f"release layout, short prompt: peak RSS {mib(short_small)} at ctx 256, {mib(short_big)} at ctx {CTX} "
          f"(the full layers' KV: {mib(full_kv)})")
    check(short_big - short_small > 0.75 * full_kv,
          f"the RSS does not show the full layers' KV: +{mib(short_big - short_small)} for {mib(full_kv)}")

    # Every layer sliding: a 16K-token prompt.
    config["layer_types"] = ["sliding_attention"] * layers
    with open(cfg_path, "w") as f:
        json.dump(config, f, indent=2)
    sliding = os.path.join(work, "sliding.waste")
    run("convert", hf, sliding)
    bounded = state_bytes(config, CTX, [True] * layers)
    planned = plan(sliding, "--ctx", str(CTX))["state_bytes"]
    check(planned == bounded, f"plan, every layer sliding: state {planned} bytes, window slots give {bounded}")

    prompt = "many words " * 2330
    ids = json.loads(run("tokenize", sliding, prompt, "--json"))["n"]
    check(16000 <= ids < CTX, f"the long prompt is {ids} tokens, not about 16K below ctx {CTX}")
    prompt_file = os.path.join(work, "prompt.txt")
    with open(prompt_file, "w") as f:
        f.write(prompt)
    short = peak_rss("run", sliding, "many words", "--raw", "--ctx", "256", "-n", "1", "-q")
    long = peak_rss("run", sliding, "--file", prompt_file, "--raw", "--ctx", str(CTX), "-n", "1", "-q")
    print(f"every layer sliding: peak RSS {mib(short)} (short prompt, ctx 256), {mib(long)} ({ids}-token prompt, "
          f"ctx {CTX}); plan: KV {bounded} bytes; unbounded it would be {mib(unbounded)}")
    check(long - short < unbounded / 4,
          f"a {ids}-token prompt peaks {mib(long - short)} above a short one: the sliding KV grows with the "
          f"prompt (unbounded it is {mib(unbounded)})")
finally:
    shutil.rmtree(work, ignore_errors=True)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
