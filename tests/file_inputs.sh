#!/usr/bin/env bash
# Inputs from files (specs/case-format.md "Inputs from files"): a FusedInferAttentionScoreV3
# decode over 4096 slots whose mask ("the first L slots visible") comes from a .npy and whose
# int8 K/V cache and scales come from a dumped safetensors file, swept over numHeads. The
# goldens' inputs must be bit-identical to the files, their manifests must record each file's
# SHA-256, and their outputs must agree with the independent numpy reference
# (tools/fia_reference.py), as a check and as a backend in the loop, and the Vulkan kernel's.
# Usage: file_inputs.sh KVBENCH SOURCE_DIR WORK_DIR
set -uo pipefail
kvbench=$1 src=$2 work=$3
. "$src/tests/find_python.sh"
require_python numpy
rm -rf "$work" && mkdir -p "$work/cases/dump"
cd "$work"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# The dump: a mask of 4096 slots of which the first 3000 are visible (1 = masked), and a
# layer's int8 cache (1 kv head of 64) with per-channel f16 scales, as a model would have it.
$python - <<'PY' || bad "could not write the input files"
import json, struct
import numpy as np
rng = np.random.default_rng(25)
mask = np.zeros((1, 1, 1, 4096), bool)
mask[..., 3000:] = True
np.save("cases/dump/mask.npy", mask)
k = rng.integers(-128, 128, (1, 1, 4096, 64), dtype=np.int8)
v = rng.integers(-128, 128, (1, 1, 4096, 64), dtype=np.int8)
ks = rng.uniform(0.002, 0.02, (1, 1, 64)).astype(np.float16)
vs = rng.uniform(0.002, 0.02, (1, 1, 64)).astype(np.float16)
header, blobs, at = {}, [], 0
for name, dtype, a in (("k_cache", "I8", k), ("k_scale", "F16", ks), ("v_cache", "I8", v), ("v_scale", "F16", vs)):
    header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [at, at + a.nbytes]}
    at += a.nbytes
    blobs.append(a.tobytes())
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
open("cases/dump/layer3.safetensors", "wb").write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
PY
cat > cases/decode.json <<'JSON'
{"op": "aclnn.FusedInferAttentionScoreV3", "name": "file_decode", "seed": 25,
 "attributes": {"numHeads": 4, "numKeyValueHeads": 1, "inputLayout": "BNSD", "attenMask_shape": "B,1,1,S2", "scaleValue": 0.125},
 "shapes": {"B": 1, "S1": 1, "S2": 4096, "D": 64},
 "dtypes": {"key": "i8", "value": "i8"},
 "inputs": {"attenMask": {"file": "dump/mask.npy"},
            "key": {"file": "dump/layer3.safetensors", "tensor": "k_cache"},
            "value": {"file": "dump/layer3.safetensors", "tensor": "v_cache"},
            "keyAntiquantScale": {"file": "dump/layer3.safetensors", "tensor": "k_scale"},
            "valueAntiquantScale": {"file": "dump/layer3.safetensors", "tensor": "v_scale"}},
 "sweep": {"numHeads": [4, 8]}}
JSON

"$kvbench" list cases > list.log 2>&1 || bad "list: $(cat list.log)"
grep -q "from files: attenMask=dump/mask.npy, key=dump/layer3.safetensors:k_cache" list.log ||
  bad "list does not name the input files: $(cat list.log)"
"$kvbench" golden cases -o golden > golden.log 2>&1 || bad "golden: $(cat golden.log)"

# The goldens hold the files' bytes and say which bytes they were made from.
$python - "$src/tools" <<'PY' || bad "golden inputs differ from the files"
import hashlib, json, os, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import kvbench_golden as kg
files = {"attenMask": ("cases/dump/mask.npy", None), "key": ("cases/dump/layer3.safetensors", "k_cache"),
         "value": ("cases/dump/layer3.safetensors", "v_cache"), "keyAntiquantScale": ("cases/dump/layer3.safetensors", "k_scale"),
         "valueAntiquantScale": ("cases/dump/layer3.safetensors", "v_scale")}
dump, _ = kg.read_safetensors("cases/dump/layer3.safetensors")
cases = kg.cases("golden")
assert len(cases) == 2, cases
for path in cases:
    case = kg.load_case(path)
    recorded = case.manifest["input_files"]
    for name, (file, tensor) in files.items():
        want = np.load(file).tobytes() if tensor is None else dump[tensor][2]
        got = np.ascontiguousarray(case.inputs[name]).tobytes()
        assert got == want, (path, name, "not bit-identical")
        sha = hashlib.sha256(open(file, "rb").read()).hexdigest()
        assert recorded[name]["sha256"] == sha, (path, name, recorded[name], sha)
    assert "quant_err" not in json.dumps(case.manifest)
print("ok: the inputs of", len(cases), "goldens are the files' bytes, with their SHA-256")
PY
$python "$src/tools/fia_reference.py" golden > reference.log 2>&1 || bad "the independent reference disagrees: $(cat reference.log)"
grep -q "2 of 2 FusedInferAttentionScoreV3 goldens match" reference.log || bad "$(cat reference.log)"
# The same through run --backend: the numpy reference as another implementation, on the files.
"$kvbench" run cases --backend "$python $src/tools/fia_reference.py {golden} {actual}" > backend.log 2>&1 ||
  bad "run --backend: $(tail -20 backend.log)"
grep -q "2 passed, 0 failed" backend.log || bad "$(tail -5 backend.log)"

# And the Vulkan kernel on the same bytes.
"$kvbench" run cases > vulkan.log 2>&1 || bad "run on Vulkan: $(tail -20 vulkan.log)"

# Other bytes in a file make another golden: its case_hash follows the files' SHA-256.
cp golden/file_decode.numHeads-4.json before.json
$python -c "import numpy as np; m = np.zeros((1, 1, 1, 4096), bool); m[..., 2000:] = True; np.save('cases/dump/mask.npy', m)"
"$kvbench" golden cases -o golden --filter numHeads=4 > golden2.log 2>&1 || bad "golden: $(cat golden2.log)"
$python - <<'PY' || bad "a changed file did not change the manifest's hash and SHA-256"
import json
a, b = json.load(open("before.json")), json.load(open("golden/file_decode.numHeads-4.json"))
assert a["case_hash"] != b["case_hash"]
assert a["input_files"]["attenMask"]["sha256"] != b["input_files"]["attenMask"]["sha256"]
assert a["input_files"]["key"] == b["input_files"]["key"]
PY
[ $fail = 0 ] && echo "ok: inputs from files"
exit $fail
