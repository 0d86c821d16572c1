#!/usr/bin/env python3
"""Writes the catalogue of bad golden/actual inputs for `kvbench check` (python3 stdlib only).

Each problem is a folder named after it, holding only the files that differ from base/
(a golden case of tiny_case.json and the actual outputs of tools/example_backend.py) and
`expect`: the exit status and the texts the output must contain (the file and the tensor
or field at fault). tests/bad_golden.sh lays each problem over a copy of base/ and runs
`kvbench check --golden PROBLEM/golden --actual PROBLEM/actual`. Problems that cannot be
files in git (a FIFO, a 16 GB sparse file, a full disk) are made by that script.

Regenerate (from the repository root) after a change of the golden format:
    rm -rf tests/data/bad_golden/base
    build/kvbench golden tests/data/bad_golden/tiny_case.json -o tests/data/bad_golden/base/golden
    /usr/bin/python3 tools/example_backend.py tests/data/bad_golden/base/golden tests/data/bad_golden/base/actual
    python3 tests/data/bad_golden/make_catalogue.py
"""
import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "base")
GOLDEN_ST = "golden/tiny.safetensors"
ACTUAL_ST = "actual/tiny.safetensors"
MANIFEST = "golden/tiny.json"


def read_st(rel):
    """(header dict in file order, data bytes) of a base safetensors file."""
    with open(os.path.join(BASE, rel), "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        return header, f.read()


def tensors_of(rel):
    header, data = read_st(rel)
    meta = header.pop("__metadata__", None)
    out = {k: [v["dtype"], list(v["shape"]), data[v["data_offsets"][0]:v["data_offsets"][1]]] for k, v in header.items()}
    return out, meta


def pack(tensors, meta=None, offsets=None):
    """Safetensors bytes with offsets laid out in name order (or as given for some tensors)."""
    header, blobs, at = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(raw)]}
        at += len(raw)
        blobs.append(raw)
    for name, off in (offsets or {}).items():
        header[name]["data_offsets"] = off
    if meta is not None:
        header["__metadata__"] = meta
    return raw_file(json.dumps(header, separators=(",", ":")).encode(), b"".join(blobs))


def raw_file(header_bytes, data, length=None):
    header_bytes += b" " * ((8 - len(header_bytes) % 8) % 8)
    return struct.pack("<Q", len(header_bytes) if length is None else length) + header_bytes + data


def manifest():
    with open(os.path.join(BASE, MANIFEST)) as f:
        return json.load(f)


def tensor_index(m, name):
    return next(i for i, t in enumerate(m["tensors"]) if t["name"] == name)


PROBLEMS = {}


def problem(name, exit_code, *texts, rm=()):
    def register(make):
        PROBLEMS[name] = (exit_code, texts, rm, make)
        return make
    return register


def with_manifest(change):
    def make():
        m = manifest()
        change(m)
        return {MANIFEST: json.dumps(m, indent=1).encode()}
    return make


# ---- manifests: an invalid-file report naming the manifest and the field, exit 2 ----------
def manifest_problem(name, pointer_and_message, change):
    problem(name, 2, f"{name}/golden/tiny.json: ", pointer_and_message)(with_manifest(change))


manifest_problem("manifest_missing_case", "/case: required field is missing", lambda m: m.pop("case"))
manifest_problem("manifest_missing_op", "/op: required field is missing", lambda m: m.pop("op"))
manifest_problem("manifest_missing_safetensors", "/safetensors: required field is missing", lambda m: m.pop("safetensors"))
manifest_problem("manifest_case_is_number", "/case: must be a string, not number", lambda m: m.update(case=5))
manifest_problem("manifest_dtype_q7", "/tensors/{}/dtype: unknown dtype 'q7'".format(tensor_index(manifest(), "cache")),
                 lambda m: m["tensors"][tensor_index(m, "cache")].update(dtype="q7"))
manifest_problem("manifest_outputs_empty", "/outputs: must be a non-empty array", lambda m: m.update(outputs=[]))
manifest_problem("manifest_outputs_not_array", "/outputs: must be a non-empty array", lambda m: m.update(outputs={}))
manifest_problem("manifest_output_without_tensor_entry", "/outputs/0/name: output 'key' has no entry in tensors",
                 lambda m: m["tensors"].pop(tensor_index(m, "key")))
manifest_problem("manifest_output_listed_twice", "tensor 'key' is listed twice",
                 lambda m: m["tensors"].append(dict(m["tensors"][tensor_index(m, "key")])))
manifest_problem("manifest_negative_shape", "/tensors/{}/shape: must be an array of sizes".format(tensor_index(manifest(), "key")),
                 lambda m: m["tensors"][tensor_index(m, "key")].update(shape=[1, -2, 1, 4]))
manifest_problem("manifest_fractional_shape", "shape: must be an array of sizes",
                 lambda m: m["tensors"][tensor_index(m, "key")].update(shape=[1, 2.5, 1, 4]))
manifest_problem("manifest_shape_wraps_64_bits", "more than 2^48 elements",
                 lambda m: m["tensors"][tensor_index(m, "key")].update(shape=[2**32, 2**32, 2**32]))
manifest_problem("manifest_output_role_input", "role must be output or inplace, not 'input'",
                 lambda m: m["tensors"][tensor_index(m, "key")].update(role="input"))
manifest_problem("manifest_atol_is_string", "/outputs/0/tolerance/atol: must be a finite number >= 0",
                 lambda m: m["outputs"][0]["tolerance"].update(atol="0"))
manifest_problem("manifest_rtol_negative", "/outputs/0/tolerance/rtol: must be a finite number >= 0",
                 lambda m: m["outputs"][0]["tolerance"].update(rtol=-1))
manifest_problem("manifest_tolerance_missing", "/outputs/1/tolerance: required field is missing",
                 lambda m: m["outputs"][1].pop("tolerance"))
manifest_problem("manifest_expected_not_string", "/outputs/0/expected: must be a string",
                 lambda m: m["outputs"][0].update(expected=["expected.key"]))
manifest_problem("manifest_safetensors_outside_folder", "/safetensors: must be a file name beside the manifest",
                 lambda m: m.update(safetensors="../../base/golden/tiny.safetensors"))
manifest_problem("manifest_inplace_without_touched", "/outputs/2: in-place output 'cache' has no touched tensor",
                 lambda m: m["outputs"][2].pop("touched"))

# Checksums are verified whatever the format field says (or the combination refused): a
# manifest that records them but has no "format" (format 1) or format 2 must not turn
# verification off. The checksums here are wrong for every tensor: read as format 1 the
# case would pass unverified.
_ZERO_SUMS = {"algorithm": "XXH3-128", "tensors": {n: "0" * 32 for n in tensors_of(GOLDEN_ST)[0]}}
manifest_problem("manifest_checksums_without_format", "/format: the manifest records checksums, which only golden "
                 "format 3 and later have, but its format is missing (format 1)",
                 lambda m: m.update(checksums=_ZERO_SUMS))
manifest_problem("manifest_checksums_format_2", "/format: the manifest records checksums, which only golden "
                 "format 3 and later have, but its format is 2",
                 lambda m: m.update(checksums=_ZERO_SUMS, format=2))
# bound and nan_permitted belong to format 4: refused in older formats, not ignored.
manifest_problem("manifest_bound_in_format_1", "/outputs/0/bound: bound is a golden format 4 field, but the format is 1",
                 lambda m: m["outputs"][0].update(bound="expected.key"))

# An empty tensor name would read as no tensor ("bound": "" would drop the bound silently).
manifest_problem("manifest_alternate_empty", "/outputs/0/alternate: must name a tensor, not be empty",
                 lambda m: m["outputs"][0].update(alternate="", alternate_index=""))


@problem("manifest_truncated", 2, "manifest_truncated/golden/tiny.json: invalid JSON")
def _():
    text = json.dumps(manifest(), indent=1).encode()
    return {MANIFEST: text[: len(text) // 2]}


@problem("manifest_empty_file", 2, "manifest_empty_file/golden/tiny.json: invalid JSON")
def _():
    return {MANIFEST: b""}


@problem("manifest_not_an_object", 2, "manifest_not_an_object/golden/tiny.json: not a kvbench golden manifest")
def _():
    return {MANIFEST: b"[1, 2, 3]\n"}


@problem("manifest_nested_too_deep", 2, "manifest_nested_too_deep/golden/tiny.json: invalid JSON: arrays and objects nest deeper than 32 levels, at line")
def _():
    m = manifest()
    m["describe"] = "DEEP"
    return {MANIFEST: json.dumps(m, indent=1).replace('"DEEP"', "[" * 5000 + "]" * 5000).encode()}


@problem("one_corrupt_manifest_of_two", 2, "one_corrupt_manifest_of_two/golden/tiny2.json: invalid JSON",
         "PASS  tiny", "1 passed, 0 failed")
def _():
    return {"golden/tiny2.json": b'{"case": "tiny2", "case_hash": "0", "outputs": ['}


# ---- golden data: the case FAILs, naming the golden file and the tensor, exit 1 ----------
def golden_problem(name, *texts, rm=()):
    return problem(name, 1, f"{name}/golden/tiny.safetensors", *texts, rm=rm)


def with_golden(change):
    def make():
        t, meta = tensors_of(GOLDEN_ST)
        extra = change(t)  # a dict {"offsets": ...} places some tensors by hand
        extra = extra if isinstance(extra, dict) else {}
        return {GOLDEN_ST: pack(t, meta, extra.get("offsets"))}
    return make


golden_problem("golden_touched_shorter_than_output", "tensor 'touched.cache' has shape [4], expected [1,1,2,2,1,4]")(
    with_golden(lambda t: t.update({"touched.cache": ["U8", [4], t["touched.cache"][2][:4]]})))
golden_problem("golden_touched_empty", "tensor 'touched.cache' has shape [0], expected [1,1,2,2,1,4]")(
    with_golden(lambda t: t.update({"touched.cache": ["U8", [0], b""]})))
golden_problem("golden_touched_value_not_0_or_1", "tensor 'touched.cache' holds 2 at [0,0,0,0,0,0] (must be 0 or 1)")(
    with_golden(lambda t: t["touched.cache"].__setitem__(2, b"\x02" + t["touched.cache"][2][1:])))
golden_problem("golden_touched_wrong_dtype", "tensor 'touched.cache' has dtype I8, expected U8")(
    with_golden(lambda t: t["touched.cache"].__setitem__(0, "I8")))
golden_problem("golden_missing_expected", "has no tensor 'expected.key'")(with_golden(lambda t: t.pop("expected.key")))
golden_problem("golden_missing_expected_f64", "has no tensor 'expected_f64.value'")(
    with_golden(lambda t: t.pop("expected_f64.value")))
golden_problem("golden_missing_initial_inplace", "has no tensor 'cache'")(with_golden(lambda t: t.pop("cache")))
golden_problem("golden_expected_wrong_dtype", "tensor 'expected.key' has dtype I16, expected F16")(
    with_golden(lambda t: t["expected.key"].__setitem__(0, "I16")))
golden_problem("golden_expected_f64_wrong_shape", "tensor 'expected_f64.key' has shape [8], expected [1,2,1,4]")(
    with_golden(lambda t: t["expected_f64.key"].__setitem__(1, [8])))
golden_problem("golden_unknown_dtype", "tensor 'expected.key': unknown dtype 'Q7'")(
    with_golden(lambda t: t["expected.key"].__setitem__(0, "Q7")))
golden_problem("golden_negative_shape", "tensor 'expected.key': shape [-1,2,1,4] is not a list of sizes")(
    with_golden(lambda t: t["expected.key"].__setitem__(1, [-1, 2, 1, 4])))
golden_problem("golden_bytes_not_dtype_times_shape", "tensor 'expected.key': holds 16 bytes, but F16 of shape [1,2,1,5] needs 20")(
    with_golden(lambda t: t["expected.key"].__setitem__(1, [1, 2, 1, 5])))
golden_problem("golden_shape_product_wraps", "tensor 'expected.key': holds 16 bytes, but F16 of shape",
               "needs more than 2^64")(
    with_golden(lambda t: t["expected.key"].__setitem__(1, [2**32, 2**32, 2**31, 2])))
golden_problem("golden_offsets_out_of_bounds", "tensor 'expected.value': data_offsets [0, 1000000000000] lie outside the data section")(
    with_golden(lambda t: {"offsets": {"expected.value": [0, 10**12]}}))
golden_problem("golden_offsets_reversed", "tensor 'cache': data_offsets [8, 0] are reversed")(
    with_golden(lambda t: {"offsets": {"cache": [8, 0]}}))
golden_problem("golden_offsets_overlap", "tensors 'cache' and 'current_key' overlap in the data section")(
    with_golden(lambda t: {"offsets": {"current_key": [4, 12]}}))
golden_problem("golden_offsets_not_numbers", "tensor 'cache': data_offsets must be two byte offsets [begin, end]")(
    with_golden(lambda t: {"offsets": {"cache": ["0", 8]}}))
golden_problem("golden_metadata_not_string", "__metadata__ value 'case_hash' is not a string")(
    lambda: {GOLDEN_ST: pack(tensors_of(GOLDEN_ST)[0], {"case_hash": 5})})


@golden_problem("golden_truncated_data", "lie outside the data section", "truncated or corrupt file")
def _():
    with open(os.path.join(BASE, GOLDEN_ST), "rb") as f:
        return {GOLDEN_ST: f.read()[:-40]}


@golden_problem("golden_header_length_huge", "header length 9223372036854775808 exceeds the limit of 100000000 bytes")
def _():
    header, data = read_st(GOLDEN_ST)
    return {GOLDEN_ST: raw_file(json.dumps(header).encode(), data, length=2**63)}


@golden_problem("golden_header_length_past_end", "truncated: the header needs 1000000 bytes")
def _():
    header, data = read_st(GOLDEN_ST)
    return {GOLDEN_ST: raw_file(json.dumps(header).encode(), data, length=1000000)}


@golden_problem("golden_header_not_json", "invalid safetensors header")
def _():
    header, data = read_st(GOLDEN_ST)
    text = json.dumps(header).encode()
    return {GOLDEN_ST: raw_file(b"\x00garbage" + text[8:], data)}


@golden_problem("golden_header_not_object", "invalid safetensors header: not a JSON object")
def _():
    return {GOLDEN_ST: raw_file(b"[]", b"")}


@golden_problem("golden_header_nested_too_deep", "invalid safetensors header: nested deeper than 3 levels")
def _():
    return {GOLDEN_ST: raw_file(b'{"x": {"dtype": "U8", "shape": ' + b"[" * 4000 + b"]" * 4000 + b"}}", b"")}


@golden_problem("golden_too_short", "not a safetensors file (3 bytes)")
def _():
    return {GOLDEN_ST: b"abc"}


@golden_problem("golden_empty_file", "not a safetensors file (0 bytes)")
def _():
    return {GOLDEN_ST: b""}


@golden_problem("golden_file_missing", "cannot open: No such file or directory", rm=(GOLDEN_ST,))
def _():
    return {}


@golden_problem("golden_file_is_folder", "not a regular file (a folder)", rm=(GOLDEN_ST,))
def _():
    return {GOLDEN_ST + "/keep": b"a folder where the golden data file should be\n"}


# ---- actual outputs: the case FAILs, naming the actual file and the tensor, exit 1 -------
def actual_problem(name, *texts, rm=()):
    return problem(name, 1, f"{name}/actual/tiny.safetensors", *texts, rm=rm)


def with_actual(change):
    def make():
        t, meta = tensors_of(ACTUAL_ST)
        extra = change(t)  # a dict {"offsets": ...} places some tensors by hand
        extra = extra if isinstance(extra, dict) else {}
        return {ACTUAL_ST: pack(t, meta, extra.get("offsets"))}
    return make


actual_problem("actual_missing_tensor", "has no tensor 'value'")(with_actual(lambda t: t.pop("value")))
actual_problem("actual_wrong_dtype", "tensor 'key' has dtype BF16, expected F16")(
    with_actual(lambda t: t["key"].__setitem__(0, "BF16")))
actual_problem("actual_wrong_shape", "tensor 'key' has shape [2,4], expected [1,2,1,4]")(
    with_actual(lambda t: t["key"].__setitem__(1, [2, 4])))
actual_problem("actual_int8_cache_as_f16", "tensor 'cache' has dtype F16, expected I8")(
    with_actual(lambda t: t.update(cache=["F16", [1, 1, 2, 2, 1, 2], t["cache"][2]])))
actual_problem("actual_offsets_out_of_bounds", "tensor 'value': data_offsets [16, 17179869184] lie outside the data section")(
    with_actual(lambda t: {"offsets": {"value": [16, 2**34]}}))
actual_problem("actual_offsets_overlap", "tensors 'key' and 'scale' overlap in the data section")(
    with_actual(lambda t: {"offsets": {"scale": [20, 28]}}))
actual_problem("actual_claims_16_gib_tensor", "tensor 'key': data_offsets [0, 17179869184] lie outside the data section")(
    with_actual(lambda t: t.update(key=["F16", [2**33], t["key"][2]]) or {"offsets": {"key": [0, 2**34]}}))


@actual_problem("actual_missing_file", "no actual output file", rm=(ACTUAL_ST,))
def _():
    return {}


@actual_problem("actual_truncated_data", "lie outside the data section")
def _():
    with open(os.path.join(BASE, ACTUAL_ST), "rb") as f:
        return {ACTUAL_ST: f.read()[:-3]}


@actual_problem("actual_header_length_huge", "header length 18446744073709551615 exceeds the limit")
def _():
    header, data = read_st(ACTUAL_ST)
    return {ACTUAL_ST: raw_file(json.dumps(header).encode(), data, length=2**64 - 1)}


@actual_problem("actual_empty_file", "not a safetensors file (0 bytes)")
def _():
    return {ACTUAL_ST: b""}


@actual_problem("actual_text_file", "not a safetensors file (header length")
def _():
    return {ACTUAL_ST: b"key,value\n1.0,2.0\n"}


@actual_problem("actual_file_is_folder", "not a regular file (a folder)", rm=(ACTUAL_ST,))
def _():
    return {ACTUAL_ST + "/keep": b"a folder where the actual file should be\n"}


def main():
    for name in sorted(os.listdir(HERE)):
        if os.path.isdir(os.path.join(HERE, name)) and name != "base":
            shutil.rmtree(os.path.join(HERE, name))
    for name, (exit_code, texts, rm, make) in sorted(PROBLEMS.items()):
        folder = os.path.join(HERE, name)
        os.makedirs(folder)
        for rel, content in make().items():
            os.makedirs(os.path.dirname(os.path.join(folder, rel)), exist_ok=True)
            with open(os.path.join(folder, rel), "wb") as f:
                f.write(content)
        with open(os.path.join(folder, "expect"), "w") as f:
            f.write(f"exit {exit_code}\n")
            for r in rm:
                f.write(f"rm {r}\n")
            for t in texts:
                f.write(f"has {t}\n")
    print(f"{len(PROBLEMS)} problems written to {HERE}")


if __name__ == "__main__":
    main()
