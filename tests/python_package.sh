#!/usr/bin/env bash
# The Python package (specs/python-package.md) installed offline as the README says, into a
# venv that sees Debian's numpy and xxhash, and used from outside the source tree: it reads
# kvbench's goldens (s4 codes, in-place outputs, bf16), whose arrays written back as a
# backend's outputs pass `kvbench check`; it verifies checksums (a flipped byte is named by
# tensor), reads format 2 without checksums, refuses format 6 (newer than it knows), and its backend helper reads no
# expected tensor.
# Usage: python_package.sh KVBENCH SOURCE_DIR WORK_DIR
set -uo pipefail
kvbench=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail=0
# A copy: pip's build writes build/ and *.egg-info beside the sources.
cp -r "$src/python" "$work/python-src"
/usr/bin/python3 -m venv --system-site-packages "$work/venv" > "$work/venv.log" 2>&1 || {
  cat "$work/venv.log"; echo "FAIL: python3 -m venv (tools/setup.sh installs python3-venv)"; exit 1; }
"$work/venv/bin/pip" install --no-index --no-deps --no-build-isolation "$work/python-src" > "$work/pip.log" 2>&1 || {
  tail -20 "$work/pip.log"; echo "FAIL: pip install --no-index --no-deps --no-build-isolation ./python"; exit 1; }
echo "ok: installed offline into a venv"
rm -rf "$work/python-src"  # what follows uses the installed package only
cd "$work"
"$kvbench" golden "$src/cases/pmx.KeyValueCache/quantized.json" "$src/cases/dnnl.SDPACompressedKV/scale_dtypes.json" \
  --filter 'kvc_quant.cache_layout=1,current_key=f16,layer_idx=2,num_repeat=4,quant_bit=4,quant_group=8,start_pos=7|query=bf16' \
  -o golden > golden.log 2>&1 || { cat golden.log; echo "FAIL: kvbench golden"; exit 1; }
"$work/venv/bin/python" - golden actual "$work/venv" <<'PY' || fail=1
import os, sys
import numpy as np
import kvbench
golden, actual, venv = sys.argv[1:4]
assert kvbench.__file__.startswith(venv), "not the installed package: " + kvbench.__file__
os.makedirs(actual)
paths = kvbench.cases(golden)
assert len(paths) >= 2, paths
ops = set()
for path in paths:
    g = kvbench.load_golden(path)
    ops.add(g.op)
    for t in g.manifest["tensors"]:  # every tensor in its logical shape
        arrays = g.inputs if t["role"] != "output" else g.expected
        assert list(arrays[t["name"]].shape) == t["shape"], (t["name"], arrays[t["name"]].shape)
    for name in g.outputs:
        assert g.expected_f64[name].dtype == np.float64 and g.expected_f64[name].shape == g.expected[name].shape
        assert set(g.tolerances[name]) >= {"atol", "rtol"}
    if g.op == "pmx.KeyValueCache":
        assert g.dtypes["cache"] == "s4" and g.inputs["cache"].dtype == np.int8
        assert g.inputs["cache"].min() >= -8 and g.inputs["cache"].max() <= 7
        assert g.touched["cache"].sum() > 0 and set(g.alternates) <= set(g.outputs)
    kvbench.save_actual(os.path.join(actual, g.stem + ".safetensors"), dict(g.expected), g)
    # A backend's view: the inputs only, no expected array read.
    b = kvbench.load_golden(path, expected=False)
    assert not b.expected and not b.expected_f64 and set(b.inputs) == set(g.inputs)
assert ops == {"pmx.KeyValueCache", "dnnl.SDPACompressedKV"}, ops
print("ok: read %d goldens of %s" % (len(paths), sorted(ops)))
PY
"$kvbench" check --golden golden --actual actual > check.log 2>&1 && grep -q " 0 failed" check.log ||
  { tail -5 check.log; echo "FAIL: the package's arrays, written back, do not pass kvbench check"; fail=1; }

# Checksums, format 2, format 6.
"$work/venv/bin/python" - golden <<'PY' || fail=1
import glob, json, os, shutil, sys
import kvbench
src = sorted(glob.glob(os.path.join(sys.argv[1], "kvc_quant*.json")))[0]
stem = src[:-5]
def copy(tag, edit_manifest=None, flip=None):
    out = "%s.%s" % (stem, tag)
    shutil.copy(stem + ".safetensors", out + ".safetensors")
    m = json.load(open(src))
    m["safetensors"] = os.path.basename(out + ".safetensors")
    if edit_manifest:
        edit_manifest(m)
    json.dump(m, open(out + ".json", "w"))
    if flip:
        data, _ = kvbench.read_safetensors(out + ".safetensors")
        with open(out + ".safetensors", "r+b") as f:
            n = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(n))
            f.seek(8 + n + header[flip]["data_offsets"][0])
            b = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([b[0] ^ 0x10]))
    return out + ".json"
def raises(path, words, **kw):
    try:
        kvbench.load_golden(path, **kw)
    except ValueError as e:
        assert words in str(e), str(e)
        return
    raise AssertionError("%s: no error (wanted %r)" % (path, words))
raises(copy("flip", flip="expected.cache"), "tensor 'expected.cache' does not match its checksum")
raises(copy("flipin", flip="current_key"), "tensor 'current_key' does not match its checksum", expected=False)
def format2(m):
    m["format"] = 2
    del m["checksums"]
kvbench.load_golden(copy("f2", format2))
raises(copy("f6", lambda m: m.update(format=6)), "golden format 6 is not one this reader knows")
print("ok: checksums verified, format 2 read, format 6 refused")
PY
# Outputs of code formats stored by their nearest code, saturating past the ends (huge values
# and infinities once all went to code 0: every distance rounded to the same double).
"$work/venv/bin/python" - <<'PY' || fail=1
import numpy as np
from kvbench.storage import from_array, to_array
def back(values, dtype):
    st, shape, raw = from_array(np.array(values, np.float64), dtype)
    return to_array((st, shape, raw), dtype, (len(values),)).tolist()
assert back([1e300, -np.inf, 5.1, -0.0], "f4e2m1") == [6, -6, 6, -0.0], back([1e300, -np.inf, 5.1, -0.0], "f4e2m1")
assert back([1e300, -1e300, np.inf, 20480.0], "hifloat8") == [32768, -32768, np.inf, 16384]
assert back([1e300, 0.0, 1.4], "f8e8m0")[:3] == [2.0 ** 127, 2.0 ** -127, 1.0]
assert back([7.3, -1e9], "f6e2m3") == [7.5, -7.5]
print("ok: FP4, HiF8, E8M0 and FP6 outputs stored by their nearest code, saturating")
PY
exit $fail
