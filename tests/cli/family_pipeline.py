"""The Judged-by pipeline every family's test walks (test_gqa_families.py,
test_dsa_families.py), so a new family adds only what sets it apart: `waste mktiny T --arch
A --hf` writes the release layout (config names, stored tensors with dtype and rank),
`waste convert` makes a container, `waste info --json` names the architecture (and the
expert format convert kept), `waste run` greedy gives the same tokens twice, and
`waste plan --config` on the release agrees with `waste plan` on the container."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile


class Pipeline:
    def __init__(self, waste, name):
        self.waste = waste
        self.failures = []
        self.work = tempfile.mkdtemp(prefix=f"waste-{name}-")
        self.env = dict(os.environ, XDG_CACHE_HOME=self.work, HOME=self.work)

    def run(self, *args):
        p = subprocess.run([self.waste, *args], capture_output=True, text=True, timeout=110, env=self.env)
        return p.returncode, p.stdout, p.stderr

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)

    def release(self, variant, architecture, model_type, tensors):
        """mktiny --hf for `variant` ("arch [flags]"): (hf folder, config, stored tensors), or
        None when it could not be made. The config must name `architecture` / `model_type`, and
        each of `tensors` ({name: (dtype, rank)}) must be stored so."""
        arch, *flags = variant.split()
        hf = os.path.join(self.work, variant.replace(" ", "") + "-hf")
        rc, _, err = self.run("mktiny", hf, "--arch", arch, *flags, "--hf")
        self.check(rc == 0, f"{variant}: mktiny --hf exit {rc}: {err}")
        if rc != 0:
            return None
        cfg = json.load(open(os.path.join(hf, "config.json")))
        self.check(cfg.get("architectures") == [architecture] and cfg.get("model_type") == model_type,
                   f"{variant}: config names {cfg.get('architectures')} / {cfg.get('model_type')}")
        stored = stored_tensors(hf)
        for name, (dtype, rank) in tensors.items():
            t = stored.get(name)
            self.check(t is not None and t["dtype"] == dtype and len(t["shape"]) == rank,
                       f"{variant}: {name} is {t and (t['dtype'], t['shape'])}, expected {dtype} of rank {rank}")
        return hf, cfg, stored

    def container(self, variant, hf, prompt, tokens, native_format=None):
        """convert, info, two greedy runs of `tokens` tokens, and plan --config against the
        container's plan. native_format: the expert format convert keeps (the plan's "native"
        layout is then the one compared); None: VQ3R."""
        arch = variant.split()[0]
        ct = os.path.join(self.work, variant.replace(" ", "") + "-ct")
        rc, out, err = self.run("convert", hf, ct)
        self.check(rc == 0, f"{variant}: convert exit {rc}: {err[-400:]}")
        rc, out, err = self.run("info", ct, "--json")
        info = json.loads(out) if rc == 0 else {}
        self.check(info.get("arch") == arch, f"{variant}: info arch {info.get('arch')}")
        if native_format:
            self.check(info.get("expert_format") == native_format, f"{variant}: expert format {info.get('expert_format')}")
        answers = []
        for _ in range(2):
            rc, out, err = self.run("run", ct, prompt, "-n", str(tokens), "--temp", "0")
            self.check(rc == 0, f"{variant}: run exit {rc}: {err[-400:]}")
            answers.append(out)
            self.check(f"[{tokens} tokens" in err, f"{variant}: run did not generate {tokens} tokens: {err[-200:]}")
        self.check(answers[0] == answers[1], f"{variant}: two greedy runs differ: {answers}")

        # The plan of the release from its config alone equals the plan of the container.
        rc1, a, e1 = self.run("plan", "--config", os.path.join(hf, "config.json"), "--ram", "16G", "--json", "--ctx", "8192")
        rc2, b, e2 = self.run("plan", ct, "--json", "--ctx", "8192")
        self.check(rc1 == 0 and rc2 == 0, f"{variant}: plan exits {rc1} {rc2}: {e1[-300:]} {e2[-300:]}")
        if rc1 == 0 and rc2 == 0:
            a, b = json.loads(a), json.loads(b)
            self.check(a.get("arch") == arch, f"{variant}: plan --config arch {a.get('arch')}")
            layout = a.get("native", {}) if native_format else a  # what convert makes by default
            for k in ("state_bytes", "trunk_bytes", "scratch_bytes", "min_expert_cache", "floor_bytes",
                      "working_set_bytes"):
                self.check(layout.get(k) == b.get(k), f"{variant}: plan --config {k} {layout.get(k)} vs container {b.get(k)}")

    def finish(self):
        shutil.rmtree(self.work, ignore_errors=True)
        if self.failures:
            print("\n".join(self.failures))
            sys.exit(1)
        print("ok")


def stored_tensors(folder):
    """Every tensor the folder's safetensors files hold: {name: {dtype, shape, ...}}."""
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".safetensors"):
            with open(os.path.join(folder, name), "rb") as f:
                n = struct.unpack("<Q", f.read(8))[0]
                for k, v in json.loads(f.read(n)).items():
                    if k != "__metadata__":
                        out[k] = v
    return out
