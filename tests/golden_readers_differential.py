#!/usr/bin/env python3
"""The two golden readers held to one rule (specs/golden-format.md "What a reader refuses"):
seeded corruptions of real goldens, each read by kvbench's C++ reader (`kvbench check`, against
the pristine golden's expected outputs) and by the Python package (load_golden, then
assert_matches on the same outputs). Each reader's verdict is `refuse` (the golden is
invalid), `fail` (read, and the outputs do not match it) or `pass`; the two must agree. A
Python exception other than GoldenError, a C++ crash and a hang (either side) are failures.

One stated difference of scope is counted apart, not as a disagreement: `kvbench check`
reads only what it compares (the outputs, an in-place output's initial contents), not the
inputs (role input); the Python reader reads them, as the C++ library's Golden::load does.
So a corruption of an input's header entry that its checksum cannot see (dtype or shape, the
bytes unchanged) is refused by Python and passed by check: `scope`.

Then the stored catalogue tests/data/bad_golden: every golden and manifest problem there,
refused by Python with a GoldenError naming the file (the actual-file problems concern
`check`'s actual reader, not a golden reader).

Usage: golden_readers_differential.py KVBENCH SOURCE_DIR WORK_DIR [--seed N] [--rounds N]
"""
import argparse
import glob
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time

import numpy as np

# Safetensors read and packed as the stored catalogue's generator does (one writer of test files).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "bad_golden"))
from make_catalogue import pack, raw_file, tensors_of as read_st  # noqa: E402  (an absolute path joins as itself)

CASES = [  # (case file, --filter): a format-1-like tiny in-place case, s4/alternates, SDPA bound + nan_permitted
    ("tests/data/bad_golden/tiny_case.json", None),
    ("cases/pmx.KeyValueCache/quantized.json",
     r"^kvc_quant\[cache_layout=0,current_key=f16,layer_idx=0,num_repeat=1,quant_bit=8,quant_group=8,start_pos=7\]$"),
    ("cases/dnnl.SDPACompressedKV/sdpa_masked_nonfinite_v_causal.json", None),
]


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def xxh(raw):
    import xxhash
    return xxhash.xxh3_128(raw).hexdigest()


class Golden:
    """A pristine golden: manifest dict, tensors, metadata, raw bytes."""

    def __init__(self, manifest_path):
        self.manifest_path = manifest_path
        self.stem = os.path.basename(manifest_path)[:-5]
        self.m = json.load(open(manifest_path))
        self.data_path = os.path.join(os.path.dirname(manifest_path), self.m["safetensors"])
        self.t, self.meta = read_st(self.data_path)
        self.manifest_bytes = open(manifest_path, "rb").read()
        self.data_bytes = open(self.data_path, "rb").read()
        self.roles = {t["name"]: t["role"] for t in self.m["tensors"]}


def corruptions(g, rng):
    """(label, scope_input, make) where make(dir) writes the corrupt golden's two files into dir
    (as <stem>.json and <stem>.safetensors) and may return a special note."""
    out = []
    fmt = g.m.get("format", 1)

    def add(label, make, scope_input=False):
        out.append(("%s/%s" % (g.stem, label), scope_input, make))

    def files(manifest=None, data=None, manifest_raw=None):
        def make(d):
            with open(os.path.join(d, g.stem + ".json"), "wb") as f:
                f.write(manifest_raw if manifest_raw is not None else
                        json.dumps(manifest if manifest is not None else g.m, indent=1).encode())
            with open(os.path.join(d, g.stem + ".safetensors"), "wb") as f:
                f.write(data if data is not None else g.data_bytes)
        return make

    def edit_m(change):
        m = json.loads(json.dumps(g.m))
        change(m)
        return m

    def tensors_edit(change, resum=True, offsets=None):
        """The data file with `change(t)` applied; the checksums made anew (resum) so the
        structural check meets the problem, or left (the checksum must catch it)."""
        t = {k: list(v) for k, v in g.t.items()}
        m = json.loads(json.dumps(g.m))
        extra = change(t, m)
        data = pack(t, g.meta, (extra or {}).get("offsets") if isinstance(extra, dict) else None)
        if resum and "checksums" in m:
            m["checksums"]["tensors"] = {k: xxh(v[2]) for k, v in t.items()}
        return files(m, data)

    # ---- the control ----
    add("control", files())
    # ---- manifest truncated at several offsets, empty ----
    for cut in sorted({0, 1, len(g.manifest_bytes) // 3, len(g.manifest_bytes) // 2, len(g.manifest_bytes) - 2}
                      | {rng.randrange(len(g.manifest_bytes)) for _ in range(3)}):
        add("manifest_truncated_%d" % cut, files(manifest_raw=g.manifest_bytes[:cut]))
    # ---- format field variants ----
    for label, value in [("true", True), ("false", False), ("0", 0), ("6", 6), ("neg", -1), ("string", "5"),
                         ("float", 5.0), ("null", None), ("huge", 2**70), ("1", 1), ("2", 2), ("3", 3), ("4", 4),
                         ("5", 5)]:
        add("format_%s" % label, files(edit_m(lambda m, v=value: m.update(format=v))))
    add("format_missing", files(edit_m(lambda m: m.pop("format", None))))
    # format 2 / missing without the checksums: no bound fields either, so a consistent older golden
    def older(m, f):
        m.pop("checksums", None)
        for o in m["outputs"]:
            o.pop("bound", None), o.pop("nan_permitted", None)
        if f is None:
            m.pop("format", None)
        else:
            m["format"] = f
    add("format_3_without_bound_fields", files(edit_m(lambda m: older(m, 3) or m.update(checksums=g.m.get("checksums")))))
    add("format_2_without_checksums", files(edit_m(lambda m: older(m, 2))))
    # ---- checksums ----
    if "checksums" in g.m:
        names = sorted(g.m["checksums"]["tensors"])
        victim = rng.choice(names)
        def flip_hex(m, n=victim):
            h = m["checksums"]["tensors"][n]
            m["checksums"]["tensors"][n] = ("1" if h[0] == "0" else "0") + h[1:]
        add("checksum_tampered_" + victim, files(edit_m(flip_hex)))
        add("checksum_removed_" + victim, files(edit_m(lambda m, n=victim: m["checksums"]["tensors"].pop(n))))
        add("checksum_extra", files(edit_m(lambda m: m["checksums"]["tensors"].update(ghost="0" * 32))))
        add("checksum_uppercase", files(edit_m(lambda m, n=victim: m["checksums"]["tensors"].update(
            {n: m["checksums"]["tensors"][n].upper()}))))
        add("checksum_algorithm", files(edit_m(lambda m: m["checksums"].update(algorithm="SHA-256"))))
        add("checksums_not_object", files(edit_m(lambda m: m.update(checksums=[]))))
        add("checksums_empty", files(edit_m(lambda m: m["checksums"].update(tensors={}))))
        add("checksums_removed", files(edit_m(lambda m: m.pop("checksums"))))
        # tampered data under a manifest that drops its format: must not turn verification off
        def tamper(t, m, n=victim):
            raw = bytearray(t[n][2])
            if raw:
                raw[len(raw) // 2] ^= 0x10
            t[n][2] = bytes(raw)
        for label, f in [("missing", None), ("2", 2), ("1", 1)]:
            def make(d, f=f):
                tensors_edit(tamper, resum=False)(d)
                p = os.path.join(d, g.stem + ".json")
                m = json.load(open(p))
                if f is None:
                    m.pop("format", None)
                else:
                    m["format"] = f
                json.dump(m, open(p, "w"))
            add("tampered_data_format_" + label, make)
        add("tampered_data", tensors_edit(tamper, resum=False))
    # ---- safetensors path ----
    for label, value in [("parent", "../" + g.stem + ".safetensors"), ("absolute", os.path.abspath(g.data_path)),
                         ("empty", ""), ("dot", "."), ("dotdot", ".."), ("subfolder", "sub/" + g.stem + ".safetensors"),
                         ("missing", "nothing.safetensors"), ("number", 5)]:
        add("safetensors_path_" + label, files(edit_m(lambda m, v=value: m.update(safetensors=v))))
    # ---- manifest fields ----
    names = [t["name"] for t in g.m["tensors"]]
    for i, t in enumerate(g.m["tensors"]):
        if rng.random() < 0.5 and t["role"] != "output":
            continue
        scope = t["role"] == "input"
        other = rng.choice([d for d in ("f32", "f16", "bf16", "i8", "u8", "i32", "i64", "s4", "f8e4m3fn") if d != t["dtype"]])
        add("tensor_%s_dtype_%s" % (t["name"], other),
            files(edit_m(lambda m, i=i, o=other: m["tensors"][i].update(dtype=o))), scope)
        add("tensor_%s_dtype_unknown" % t["name"], files(edit_m(lambda m, i=i: m["tensors"][i].update(dtype="q7"))))
        shape = list(t["shape"])
        for label, new in [("plus1", shape[:-1] + [shape[-1] + 1] if shape else [2]),
                           ("negative", [-1] + shape[1:]), ("float", [1.5] + shape[1:]), ("bool", [True] + shape[1:]),
                           ("huge", [2**40, 2**40]), ("zero_then_2e62", [0, 2**62]), ("2e63", [0, 2**63]),
                           ("flat", [int(np.prod(shape))] if len(shape) > 1 else shape + [1])]:
            add("tensor_%s_shape_%s" % (t["name"], label),
                files(edit_m(lambda m, i=i, new=new: m["tensors"][i].update(shape=new))),
                scope and label in ("plus1", "flat", "zero_then_2e62"))
        add("tensor_%s_role_bad" % t["name"], files(edit_m(lambda m, i=i: m["tensors"][i].update(role="both"))))
    for i, o in enumerate(g.m["outputs"]):
        for key in ("name", "expected", "expected_f64", "tolerance"):
            add("output_%d_without_%s" % (i, key), files(edit_m(lambda m, i=i, k=key: m["outputs"][i].pop(k))))
        for label, tol in [("atol_string", {"atol": "0", "rtol": 0}), ("atol_negative", {"atol": -1, "rtol": 0}),
                           ("atol_bool", {"atol": True, "rtol": 0}), ("rtol_missing", {"atol": 0}),
                           ("huge", {"atol": 1e308, "rtol": 0})]:
            add("output_%d_tolerance_%s" % (i, label), files(edit_m(lambda m, i=i, t=tol: m["outputs"][i].update(tolerance=t))))
        add("output_%d_bound_empty" % i, files(edit_m(lambda m, i=i: m["outputs"][i].update(bound=""))))
        add("output_%d_bound_other_tensor" % i, files(edit_m(lambda m, i=i, o=o: m["outputs"][i].update(bound=o["expected"]))))
        add("output_%d_nan_permitted_other_tensor" % i,
            files(edit_m(lambda m, i=i, o=o: m["outputs"][i].update(nan_permitted=o["expected"]))))
        add("output_%d_bound_number" % i, files(edit_m(lambda m, i=i: m["outputs"][i].update(bound=3))))
        if "bound" in o or "nan_permitted" in o:
            for f in (3, 2, 1):
                add("output_%d_bound_in_format_%d" % (i, f), files(edit_m(lambda m, f=f: m.update(format=f))))
            add("output_%d_bound_named_missing" % i,
                files(edit_m(lambda m, i=i: m["outputs"][i].update(bound="bound.nothing"))))
        if o.get("touched"):
            add("output_%d_touched_removed" % i, files(edit_m(lambda m, i=i: m["outputs"][i].pop("touched"))))
        if o.get("alternate"):
            add("output_%d_alternate_index_removed" % i,
                files(edit_m(lambda m, i=i: m["outputs"][i].pop("alternate_index"))))
    add("outputs_empty", files(edit_m(lambda m: m.update(outputs=[]))))
    add("manifest_array", files(manifest_raw=b"[1,2,3]"))
    add("manifest_nan_literal", files(manifest_raw=json.dumps(g.m).replace('"describe": ', '"describe": NaN, "x": ', 1).encode()))
    add("manifest_number_1e999", files(edit_m(lambda m: m.update(extra=1)) and None,
                                       manifest_raw=json.dumps(edit_m(lambda m: m.update(extra="@@"))).replace('"@@"', "1e999").encode()))
    add("manifest_number_1e308", files(edit_m(lambda m: m.update(extra=1e308))))
    for depth in (31, 32):  # the root object is one level: 31 arrays inside it pass, 32 are refused
        add("manifest_nested_%d" % depth, files(manifest_raw=json.dumps(edit_m(lambda m: m.update(extra="@@"))).replace(
            '"@@"', "[" * depth + "]" * depth).encode()))
    add("manifest_not_utf8", files(manifest_raw=g.manifest_bytes.replace(b'"case"', b'"\xff\xfecase"', 1)))
    # ---- the data file: truncations, header length, header fields ----
    n = struct.unpack("<Q", g.data_bytes[:8])[0]
    for cut in sorted({0, 3, 7, 8, 8 + n // 2, 8 + n, len(g.data_bytes) - 1, len(g.data_bytes) // 2}
                      | {rng.randrange(len(g.data_bytes)) for _ in range(3)}):
        add("data_truncated_%d" % cut, files(data=g.data_bytes[:cut]))
    for label, length in [("2^63", 2**63), ("2^64-1", 2**64 - 1), ("past_end", len(g.data_bytes)), ("plus8", n + 8),
                          ("minus8", n - 8), ("zero", 0)]:
        add("header_length_" + label, files(data=struct.pack("<Q", length) + g.data_bytes[8:]))
    add("data_text_file", files(data=b"key,value\n1.0,2.0\n"))
    add("header_not_json", files(data=raw_file(b"\x00garbage", b"")))
    add("header_not_object", files(data=raw_file(b"[]", b"")))
    add("header_nested", files(data=raw_file(b'{"x": {"dtype": "U8", "shape": [[[1]]]}}', b"")))
    add("header_number_1e999", files(data=raw_file(b'{"x": {"dtype": "U8", "shape": [1e999], "data_offsets": [0, 0]}}', b"")))
    add("metadata_not_string", tensors_edit(lambda t, m: None) if False else
        files(data=pack({k: list(v) for k, v in g.t.items()}, {"case_hash": 5})))
    data_names = sorted(g.t)
    for name in data_names:
        if rng.random() < 0.5 and not name.startswith(("bound.", "nan_permitted.", "touched.", "alternate")):
            continue
        scope = g.roles.get(name) == "input"
        dtype, shape, raw = g.t[name]
        add("data_%s_missing" % name, tensors_edit(lambda t, m, n=name: (t.pop(n), m.get("checksums", {}).get("tensors", {}).pop(n, None)) and None),
            scope)
        for other in ("F64", "F16", "I32", "U8", "BF16", "I64", "BOOL"):
            if other == dtype:
                continue
            add("data_%s_header_dtype_%s" % (name, other),
                tensors_edit(lambda t, m, n=name, o=other: t[n].__setitem__(0, o)), scope)  # bytes kept: the size check
        add("data_%s_header_shape_flat" % name,
            tensors_edit(lambda t, m, n=name: t[n].__setitem__(1, [int(np.prod(t[n][1]))] if len(t[n][1]) != 1 else [1, t[n][1][0]])),
            scope)
        add("data_%s_offsets_reversed" % name, tensors_edit(lambda t, m, n=name: {"offsets": {n: [8, 0]}}))
        add("data_%s_offsets_float" % name, tensors_edit(lambda t, m, n=name: {"offsets": {n: [0.0, 8]}}))
        add("data_%s_offsets_outside" % name, tensors_edit(lambda t, m, n=name: {"offsets": {n: [0, 10**12]}}))
        add("data_%s_dtype_unknown" % name, tensors_edit(lambda t, m, n=name: t[n].__setitem__(0, "Q7")))
        if raw:
            def flip(t, m, n=name):
                r = bytearray(t[n][2])
                r[rng.randrange(len(r))] ^= 1 << rng.randrange(8)
                t[n][2] = bytes(r)
            add("data_%s_bit_flipped" % name, tensors_edit(flip, resum=False))
    add("data_extra_tensor", tensors_edit(lambda t, m: t.update(ghost=["U8", [1], b"\x00"]), resum=False))
    add("data_extra_tensor_summed", tensors_edit(lambda t, m: t.update(ghost=["U8", [1], b"\x00"])))
    # ---- formats 4 and 5: bound.* (F32 in 4, BF16 in 5) and nan_permitted.* ----
    for o in g.m["outputs"]:
        out_shape = next(t["shape"] for t in g.m["tensors"] if t["name"] == o["name"])
        count = int(np.prod(out_shape))
        if o.get("bound"):
            b = o["bound"]
            assert g.t[b][0] == "BF16" and g.m["format"] == 5, "kvbench writes format 5's BF16 bounds"
            bound = (np.frombuffer(g.t[b][2], np.uint16).astype(np.uint32) << 16).view(np.float32)
            def set_bound(t, m, values, dtype="BF16", shape=None, b=b):
                v = np.asarray(values)
                if dtype == "BF16":  # f32 values whose low 16 bits are 0 (or truncated: NaN, inf stay)
                    v = (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
                t[b] = [dtype, list(shape if shape is not None else out_shape), v.tobytes()]
            # Each format takes only its own bound dtype: F32 in format 5 and BF16 in format 4 are
            # refused; format 4 with the same bound as F32 is read (and passes).
            add("bound_f32_in_format_5", tensors_edit(lambda t, m: set_bound(t, m, bound, "F32")))
            add("bound_bf16_in_format_4", tensors_edit(lambda t, m: m.update(format=4)))
            add("bound_f32_in_format_4", tensors_edit(lambda t, m: set_bound(t, m, bound, "F32") or m.update(format=4)))
            add("bound_f64", tensors_edit(lambda t, m: set_bound(t, m, bound.astype(np.float64), "F64")))
            add("bound_f16", tensors_edit(lambda t, m: set_bound(t, m, bound.astype(np.float16), "F16")))
            add("bound_i32_1000", tensors_edit(lambda t, m: set_bound(t, m, np.full(count, 1000, np.int32), "I32")))
            add("bound_flat_shape", tensors_edit(lambda t, m: set_bound(t, m, bound, shape=[count])))
            add("bound_short", tensors_edit(lambda t, m: set_bound(t, m, bound[:-1], shape=[count - 1])))
            for label, value in [("negative", -1.0), ("nan", np.nan), ("negative_zero", -0.0), ("inf", np.inf), ("huge", 1e30)]:
                k = rng.randrange(count)
                add("bound_%s_at_%d" % (label, k),
                    tensors_edit(lambda t, m, v=value, k=k: set_bound(t, m, np.where(np.arange(count) == k, np.float32(v), bound).astype(np.float32))))
            add("bound_tampered_unsummed", tensors_edit(lambda t, m: set_bound(t, m, bound * 2), resum=False))
            # Infinite everywhere: vacuous (refused by both) unless some golden is not finite.
            add("bound_inf_everywhere", tensors_edit(lambda t, m: set_bound(t, m, np.full(count, np.inf, np.float32))))
        if o.get("nan_permitted"):
            p = o["nan_permitted"]
            idx = np.frombuffer(g.t[p][2], np.int64)
            def set_idx(t, m, values, dtype="I64", shape=None, np_dtype=np.int64, p=p):
                v = np.asarray(values).astype(np_dtype)
                t[p] = [dtype, list(shape if shape is not None else [v.size]), v.tobytes()]
            add("nan_permitted_minus_1", tensors_edit(lambda t, m: set_idx(t, m, np.r_[-1, idx[1:]])))
            add("nan_permitted_last_as_minus_1", tensors_edit(lambda t, m: set_idx(t, m, np.r_[idx[:-1], -1])))
            add("nan_permitted_unsorted", tensors_edit(lambda t, m: set_idx(t, m, idx[::-1])))
            add("nan_permitted_duplicate", tensors_edit(lambda t, m: set_idx(t, m, np.r_[idx[:1], idx])))
            add("nan_permitted_out_of_range", tensors_edit(lambda t, m: set_idx(t, m, np.r_[idx, count])))
            add("nan_permitted_2e40", tensors_edit(lambda t, m: set_idx(t, m, np.r_[idx, 2**40])))
            add("nan_permitted_i32", tensors_edit(lambda t, m: set_idx(t, m, idx, "I32", np_dtype=np.int32)))
            add("nan_permitted_u8", tensors_edit(lambda t, m: set_idx(t, m, idx % 256, "U8", np_dtype=np.uint8)))
            add("nan_permitted_bool", tensors_edit(lambda t, m: set_idx(t, m, np.ones(count), "BOOL", np_dtype=np.uint8)))
            add("nan_permitted_2d", tensors_edit(lambda t, m: set_idx(t, m, idx, shape=[1, idx.size])))
            add("nan_permitted_scalar", tensors_edit(lambda t, m: set_idx(t, m, idx[:1], shape=[])))
            add("nan_permitted_100k", tensors_edit(lambda t, m: set_idx(t, m, np.arange(100000) % count)))
            add("nan_permitted_empty", tensors_edit(lambda t, m: set_idx(t, m, idx[:0])))
            add("nan_permitted_every_element", tensors_edit(lambda t, m: set_idx(t, m, np.arange(count))))
        if o.get("touched"):
            tn = o["touched"]
            add("touched_bits_past_end", tensors_edit(lambda t, m, tn=tn: t[tn].__setitem__(2, t[tn][2][:-1] + b"\xff")))
            add("touched_i8", tensors_edit(lambda t, m, tn=tn: t[tn].__setitem__(0, "I8")))
        if o.get("alternate_index"):
            a = o["alternate_index"]
            ai = np.frombuffer(g.t[a][2], np.int64)
            add("alternate_index_negative", tensors_edit(lambda t, m, a=a: t[a].__setitem__(2, np.r_[-1, ai[1:]].astype(np.int64).tobytes())))
            add("alternate_index_unsorted", tensors_edit(lambda t, m, a=a: t[a].__setitem__(2, ai[::-1].astype(np.int64).tobytes())))
    return out


def place(make, d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    make(d)


def cpp_verdict(kvbench, manifest, actual, report):
    try:
        r = subprocess.run([kvbench, "check", "--golden", manifest, "--actual", actual, "--json", report],
                           capture_output=True, text=True, errors="replace", timeout=60)
    except subprocess.TimeoutExpired:
        return "hang", "timed out"
    text = r.stdout + r.stderr
    if r.returncode not in (0, 1, 2) or any(w in text for w in ("terminate called", "Sanitizer", "runtime error:")):
        return "crash", "exit %d: %s" % (r.returncode, text[-300:])
    if r.returncode == 0:
        return "pass", ""
    try:
        rep = json.load(open(report))
    except (OSError, ValueError):
        return "refuse", text.strip().splitlines()[-1] if text.strip() else ""
    if rep.get("invalid"):
        return "refuse", json.dumps(rep["invalid"][0])[:300]
    for c in rep.get("cases", []):
        if c.get("status") == "FAIL" and not c.get("outputs") and c.get("reason"):
            return "refuse", c["reason"][:300]
    if r.returncode == 2:
        return "refuse", text.strip().splitlines()[-1]
    return "fail", ""


def python_verdict(kvbench_py, manifest, outputs):
    signal.alarm(20)
    try:
        g = kvbench_py.load_golden(manifest)
        try:
            kvbench_py.assert_matches(g, outputs)
        except AssertionError as e:
            return "fail", str(e).splitlines()[0] if str(e) else ""
        return "pass", ""
    except kvbench_py.GoldenError as e:
        return "refuse", str(e)
    except Timeout:
        return "hang", "timed out"
    except Exception as e:  # noqa: BLE001 - what the test is about
        return "crash", "%s: %s" % (type(e).__name__, e)
    finally:
        signal.alarm(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kvbench")
    ap.add_argument("src")
    ap.add_argument("work")
    ap.add_argument("--seed", type=int, default=63)
    ap.add_argument("--rounds", type=int, default=1, help="more seeds: seed, seed+1, ...")
    args = ap.parse_args()
    kvbench, src, work = os.path.abspath(args.kvbench), os.path.abspath(args.src), os.path.abspath(args.work)
    sys.path.insert(0, os.path.join(src, "python"))
    import kvbench as kvbench_py
    signal.signal(signal.SIGALRM, _alarm)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    start = time.time()
    pristine = os.path.join(work, "golden")
    for case, filt in CASES:
        argv = [kvbench, "golden", os.path.join(src, case), "-o", pristine] + (["--filter", filt] if filt else [])
        r = subprocess.run(argv, capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: %s exited %d: %s" % (" ".join(argv), r.returncode, r.stderr[-500:]))
            return 1
    goldens = [Golden(p) for p in sorted(glob.glob(os.path.join(pristine, "*.json")))]
    actual_dir = os.path.join(work, "actual")
    os.makedirs(actual_dir)
    outputs = {}
    for g in goldens:
        loaded = kvbench_py.load_golden(g.manifest_path)
        outputs[g.stem] = dict(loaded.expected)
        kvbench_py.save_actual(os.path.join(actual_dir, g.stem + ".safetensors"), outputs[g.stem], loaded)
    disagreements, problems, scope, counts, total = [], [], [], {}, 0
    for round_ in range(args.rounds):
        rng = random.Random(args.seed + round_)
        for g in goldens:
            for label, scope_input, make in corruptions(g, rng):
                total += 1
                d = os.path.join(work, "c", "%05d" % total)
                place(make, d)
                manifest = os.path.join(d, g.stem + ".json")
                cv, cwhy = cpp_verdict(kvbench, manifest, os.path.join(actual_dir, g.stem + ".safetensors"), d + ".report.json")
                pv, pwhy = python_verdict(kvbench_py, manifest, outputs[g.stem])
                counts[(cv, pv)] = counts.get((cv, pv), 0) + 1
                line = "%s: C++ %s, Python %s\n    C++:    %s\n    Python: %s" % (label, cv, pv, cwhy, pwhy)
                if "crash" in (cv, pv) or "hang" in (cv, pv):
                    problems.append(line)
                elif cv != pv:
                    (scope if scope_input and cv == "pass" and pv == "refuse" else disagreements).append(line)
                elif label.endswith("/control") and cv != "pass":
                    problems.append("the control does not pass: " + line)
                elif pv == "refuse" and d not in pwhy:
                    problems.append("Python's refusal does not name the corrupt golden's file: " + line)
                else:
                    shutil.rmtree(d)
    # ---- non-regular files (made here: not storable) ----
    g = goldens[0]
    for label, setup in [("manifest_fifo", lambda d: (os.remove(os.path.join(d, g.stem + ".json")), os.mkfifo(os.path.join(d, g.stem + ".json")))),
                         ("data_fifo", lambda d: (os.remove(os.path.join(d, g.stem + ".safetensors")), os.mkfifo(os.path.join(d, g.stem + ".safetensors")))),
                         ("data_folder", lambda d: (os.remove(os.path.join(d, g.stem + ".safetensors")), os.mkdir(os.path.join(d, g.stem + ".safetensors")))),
                         ("data_device", lambda d: (os.remove(os.path.join(d, g.stem + ".safetensors")), os.symlink("/dev/zero", os.path.join(d, g.stem + ".safetensors")))),
                         ("data_link_loop", lambda d: (os.remove(os.path.join(d, g.stem + ".safetensors")), os.symlink(g.stem + ".safetensors", os.path.join(d, g.stem + ".safetensors"))))]:
        total += 1
        d = os.path.join(work, "c", "%05d" % total)
        place(lambda dd: (shutil.copy(g.manifest_path, dd), shutil.copy(g.data_path, dd)), d)
        setup(d)
        manifest = os.path.join(d, g.stem + ".json")
        cv, cwhy = cpp_verdict(kvbench, manifest, os.path.join(actual_dir, g.stem + ".safetensors"), d + ".report.json")
        pv, pwhy = python_verdict(kvbench_py, manifest, outputs[g.stem])
        counts[(cv, pv)] = counts.get((cv, pv), 0) + 1
        line = "%s/%s: C++ %s, Python %s\n    C++:    %s\n    Python: %s" % (g.stem, label, cv, pv, cwhy, pwhy)
        if cv != "refuse" or pv != "refuse":
            problems.append(line)
    # ---- the stored catalogue, through Python ----
    catalogue = os.path.join(src, "tests", "data", "bad_golden")
    stored = 0
    for problem_dir in sorted(glob.glob(os.path.join(catalogue, "*", ""))):
        name = os.path.basename(os.path.dirname(problem_dir))
        if name == "base" or name.startswith("actual_"):
            continue
        d = os.path.join(work, "catalogue", name)
        shutil.copytree(os.path.join(catalogue, "base"), d)
        for line in open(os.path.join(problem_dir, "expect")):
            verb, _, arg = line.strip().partition(" ")
            if verb == "rm":
                p = os.path.join(d, arg)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
        for root, _, files in os.walk(problem_dir):
            for f in files:
                if f != "expect":
                    rel = os.path.relpath(os.path.join(root, f), problem_dir)
                    os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                    shutil.copy(os.path.join(root, f), os.path.join(d, rel))
        stored += 1
        folder = os.path.join(d, "golden")
        try:
            signal.alarm(20)
            for manifest in sorted(glob.glob(os.path.join(folder, "*.json"))):
                kvbench_py.load_golden(manifest)
            kvbench_py.cases(folder)
            problems.append("catalogue %s: Python accepts it (kvbench check refuses it)" % name)
        except kvbench_py.GoldenError as e:
            if folder not in str(e):
                problems.append("catalogue %s: the error does not name the file: %s" % (name, e))
        except Exception as e:  # noqa: BLE001
            problems.append("catalogue %s: %s: %s" % (name, type(e).__name__, e))
        finally:
            signal.alarm(0)
    for line in disagreements:
        print("DISAGREE " + line)
    for line in problems:
        print("FAIL " + line)
    for line in scope:
        print("scope (check reads no inputs; the C++ library and Python do) " + line.splitlines()[0])
    print("verdicts (C++, Python): " + ", ".join("%s/%s %d" % (c, p, n) for (c, p), n in sorted(counts.items())))
    print("%d corruptions of %d goldens (seed %d, %d round(s)), %d stored catalogue problems: %d disagreements, "
          "%d crashes/hangs/other failures, %d input-scope differences (%.1f s)"
          % (total, len(goldens), args.seed, args.rounds, stored, len(disagreements), len(problems), len(scope),
             time.time() - start))
    return 1 if disagreements or problems else 0


if __name__ == "__main__":
    sys.exit(main())
