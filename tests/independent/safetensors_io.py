"""Safetensors written and read by hand from the format's public description (8-byte little-endian
header length, JSON header, raw little-endian data), numpy only: the checkpoints these tests make
owe nothing to the engine's reader or to the safetensors package. Also the element formats the
releases store: BF16, F8_E4M3 (e4m3fn), F8_E8M0 (power-of-two scales) and FP4 e2m1 packed two to
a byte in I8."""
import json
import os
import shutil
import struct

import numpy as np


def bf16_bits(a):
    """float -> bf16 bit patterns, rounded to nearest even through float32 (as torch casts)."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_decode(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def bf16_round(a):
    """The float64 value a BF16 tensor stores for a."""
    return bf16_decode(bf16_bits(a)).reshape(np.shape(a))


def _e4m3(c):
    s = -1.0 if c & 0x80 else 1.0
    e, m = (c >> 3) & 0xF, c & 7
    if e == 0xF and m == 7:
        return np.nan
    return s * (m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))


E4M3 = np.array([_e4m3(c) for c in range(256)])    # e4m3fn: bias 7, no infinities, 0x7F/0xFF NaN
E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])


def _nearest_code(x, grid):
    """Nearest of the increasing non-negative `grid` for |x| (ties to the smaller), sign in bit 7."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    assert np.all(a <= grid[-1]), "value past the format's largest"
    i = np.clip(np.searchsorted(grid, a), 1, len(grid) - 1)
    code = np.where(a - grid[i - 1] <= grid[i] - a, i - 1, i)
    return code, np.asarray(x) < 0


def e4m3_encode(x):
    """Nearest finite e4m3fn codes (uint8); a value that rounds to zero keeps code 0."""
    code, neg = _nearest_code(x, E4M3[:0x7F])
    return np.where(neg & (code != 0), code | 0x80, code).astype(np.uint8)


def e2m1_encode(x):
    """Nearest FP4 e2m1 codes (4 bits in a uint8), sign in bit 3."""
    code, neg = _nearest_code(x, E2M1[:8])
    return np.where(neg & (code != 0), code | 8, code).astype(np.uint8)


def e8m0_decode(codes):
    return 2.0 ** (np.asarray(codes, dtype=np.float64) - 127)


def _raw(dtype, a):
    if dtype == "BF16":
        return bf16_bits(a).astype("<u2").tobytes()
    if dtype == "F32":
        return np.ascontiguousarray(a, dtype="<f4").tobytes()
    if dtype in ("F8_E4M3", "F8_E8M0", "I8"):     # codes, given as uint8
        assert a.dtype == np.uint8, dtype
        return a.tobytes()
    if dtype == "I64":
        return np.ascontiguousarray(a, dtype="<i8").tobytes()
    raise ValueError(dtype)


def write_file(path, tensors):
    """tensors: [(name, dtype, array)], floats as values, F8_*/I8 as uint8 codes. Returns data bytes."""
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, dtype, a in tensors:
        b = _raw(dtype, a)
        header[name] = {"dtype": dtype, "shape": list(np.shape(a)), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)
    return off


def write_checkpoint(out, config, shards, tokdir):
    """A release folder: config.json, model-0000i-of-0000n.safetensors per shard (a list of
    write_file's tensors), model.safetensors.index.json, and the tokenizer files of `tokdir`."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    weight_map, total = {}, 0
    for i, tensors in enumerate(shards):
        fn = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        total += write_file(os.path.join(out, fn), tensors)
        weight_map.update((name, fn) for name, _, _ in tensors)
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f, indent=2)
    for fn in os.listdir(tokdir):
        if fn.startswith("tokenizer"):
            shutil.copy(os.path.join(tokdir, fn), os.path.join(out, fn))


def read_file(path):
    """{name: (dtype, array)}: BF16/F32 as float64 values, F8_*/I8 as uint8 codes, I64 as int64."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    kinds = {"BF16": "<u2", "F32": "<f4", "F8_E4M3": "u1", "F8_E8M0": "u1", "I8": "u1", "I64": "<i8"}
    out = {}
    for name, m in header.items():
        if name == "__metadata__":
            continue
        a, b = m["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype=kinds[m["dtype"]])
        if m["dtype"] == "BF16":
            arr = bf16_decode(arr)
        elif m["dtype"] == "F32":
            arr = arr.astype(np.float64)
        out[name] = (m["dtype"], arr.reshape(m["shape"]))
    return out


def read_checkpoint(folder):
    """Every tensor of a release folder, through its index as a loader finds them."""
    with open(os.path.join(folder, "model.safetensors.index.json")) as f:
        weight_map = json.load(f)["weight_map"]
    out = {}
    for fn in sorted(set(weight_map.values())):
        out.update(read_file(os.path.join(folder, fn)))
    assert set(out) == set(weight_map), "index and shards disagree"
    return out


def read_floats(folder):
    """{name: float64 array} of a checkpoint stored in BF16/F32 only."""
    out = {}
    for name, (dtype, a) in read_checkpoint(folder).items():
        assert dtype in ("BF16", "F32"), (name, dtype)
        out[name] = a
    return out
