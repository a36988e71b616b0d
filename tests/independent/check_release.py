"""One family's independent check: random checkpoints in the release's own layout, converted
losslessly, their `waste eval` logits against a float64 reference written from the public
modeling code.

usage: check_release.py FAMILY WASTE WORKDIR   (FAMILY: a module of this folder, e.g. glm4_moe)

A family module gives MKTINY_ARCH (the `waste mktiny --arch` whose tokenizer files the
checkpoints ship), VARIANTS (names; fixed seeds inside), generate(variant, folder, tokdir) ->
(prompt ids, prefixes to check), reference(folder, ids, wrong=False) -> [len(ids), vocab] float64
logits, and WRONG_READING, the rule reference(wrong=True) deliberately gets wrong. Every prefix of
every variant must give the reference's top-5 ids in order and all logits within TOL of the
largest; on the first variant, the wrong reading must miss by more than 100 x TOL at the full
prompt, so the comparison is shown able to fail."""
import importlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np

# `--experts native --trunk-bits 16` keeps the release's values exactly, so only the engine's
# float32 arithmetic and eval's printed digits separate it from float64: ~1e-5 in practice.
TOL = 1e-4
CONVERT = ["--experts", "native", "--trunk-bits", "16"]


def waste(*args):
    p = subprocess.run([WASTE, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL waste {' '.join(args[:2])}: exit {p.returncode}: {p.stderr.strip()[-800:]}")
    return p.stdout


def engine_logits(container, ids, vocab):
    """Every logit of the last position, as `waste eval` prints them (full vocabulary)."""
    out = waste("eval", container, "--ids", ",".join(map(str, ids)), "--json", "--top-k", str(vocab))
    j = json.loads(out.strip().splitlines()[-1])
    assert j["prompt_tokens"] == len(ids), j["prompt_tokens"]
    assert len(j["top"]) == vocab, f"eval printed {len(j['top'])} of {vocab} logits"
    lg = np.full(vocab, np.nan)
    for e in j["top"]:
        lg[e["id"]] = e["logit"]
    return lg, [e["id"] for e in j["top"][:5]]


def rel_diff(engine, ref):
    return float(np.abs(engine - ref).max() / np.abs(ref).max())


def main(family, work):
    fam = importlib.import_module(family)
    shutil.rmtree(work, ignore_errors=True)
    tokdir = os.path.join(work, "tokenizer")
    waste("mktiny", tokdir, "--arch", fam.MKTINY_ARCH, "--hf")
    failed = 0
    for n, variant in enumerate(fam.VARIANTS):
        src, container = os.path.join(work, variant), os.path.join(work, variant + ".waste")
        ids, prefixes = fam.generate(variant, src, tokdir)
        waste("convert", src, container, *CONVERT)
        ref = fam.reference(src, ids)
        V = ref.shape[1]
        for P in prefixes:
            eng, eng_top = engine_logits(container, ids[:P], V)
            order = np.argsort(-ref[P - 1], kind="stable")
            ref_top = [int(i) for i in order[:5]]
            d = rel_diff(eng, ref[P - 1])
            ok = eng_top == ref_top and d <= TOL
            failed += not ok
            top = "top-5 equal" if eng_top == ref_top else f"top-5 differ (reference {ref_top}, engine {eng_top})"
            print(f"{'ok  ' if ok else 'FAIL'} {family} {variant} prefix {P:3d}, {top}, "
                  f"max|dlogit|/max|logit| (limit {TOL:.0e}): {d:.2e}", flush=True)
            # Logits within TOL keep the top-5 order only where the reference's own gaps exceed
            # 2 TOL; a seed or prompt nearer a tie would make the order check luck.
            gap = float(-np.diff(ref[P - 1][order[:6]]).min() / np.abs(ref[P - 1]).max())
            if gap < 2 * TOL:
                failed += 1
                print(f"FAIL {family} {variant} prefix {P:3d}, the reference's top-6 nearer a tie than {2 * TOL:.0e} "
                      f"(choose another seed): {gap:.2e}", flush=True)
        if n == 0:   # eng: the engine's logits at the full prompt
            P = prefixes[-1]
            d = rel_diff(eng, fam.reference(src, ids[:P], wrong=True)[-1])
            ok = d > 100 * TOL
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {family} {variant} prefix {P:3d}, reference with the wrong reading "
                  f"\"{fam.WRONG_READING}\" must miss by > {100 * TOL:.0e}: {d:.2e}", flush=True)
    print(f"{family}: {'FAIL, ' + str(failed) + ' check(s)' if failed else 'PASS'}")
    if failed:
        return 1
    shutil.rmtree(work)   # ~50 MB a family; a failing run's files stay for a look
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    WASTE = os.path.abspath(sys.argv[2])
    sys.exit(main(sys.argv[1], sys.argv[3]))
