#!/usr/bin/env bash
# kvbench check/golden against the catalogue of bad inputs in tests/data/bad_golden/: for
# each problem, the exit status and the messages (naming the file and the tensor or field)
# its `expect` file lists; never a crash, a hang or a sanitizer report. Then the problems
# that cannot be stored in git: a FIFO, a 16 GB sparse file, an output folder that cannot be
# made, a write that fails (the file-size limit stands in for a full disk), a symlink loop.
# Usage: bad_golden.sh KVBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
kvbench=$(realpath "$1") src=$(realpath "$2") work=$(realpath -m "$3")
catalogue="$src/tests/data/bad_golden"
rm -rf "$work" && mkdir -p "$work"
failures=0 checked=0
. "$src/tests/find_python.sh"

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# Runs kvbench (bounded in time) with the output in $log; sets $status.
run() {
  local log=$1
  shift
  set +e
  timeout 60 "$kvbench" "$@" > "$log" 2>&1
  status=$?
  set -e
}

# The output must show no crash: no abort, no uncaught exception, no sanitizer report.
no_crash() {
  local name=$1 log=$2
  if [ "$status" -ge 124 ] || grep -qE "terminate called|Sanitizer|runtime error:|Segmentation|Aborted" "$log"; then
    fail "$name crashed or hung (exit $status)"
    sed 's/^/    /' "$log" | head -20
    return 1
  fi
}

# ---- the stored catalogue -----------------------------------------------------------------
for problem_dir in "$catalogue"/*/; do
  problem=$(basename "$problem_dir")
  [ "$problem" = base ] && continue
  dir="$work/$problem"
  cp -r "$catalogue/base" "$dir"
  while read -r verb arg; do
    [ "$verb" = rm ] && rm -rf "${dir:?}/$arg"
  done < "$problem_dir/expect"
  (cd "$problem_dir" && find . -type f ! -name expect -exec cp --parents {} "$dir" \;)
  run "$dir.log" check --golden "$dir/golden" --actual "$dir/actual"
  checked=$((checked + 1))
  no_crash "$problem" "$dir.log" || continue
  while read -r verb arg; do
    case $verb in
      exit) [ "$status" -eq "$arg" ] || fail "$problem: exit $status, expected $arg" ;;
      has) grep -qF -- "$arg" "$dir.log" || fail "$problem: the output does not contain: $arg" ;;
    esac
  done < "$problem_dir/expect"
done
# The control: the untouched base passes, so each problem above fails for its own reason.
run "$work/base.log" check --golden "$catalogue/base/golden" --actual "$catalogue/base/actual"
[ "$status" -eq 0 ] || fail "the base case does not pass (exit $status)"
echo "ok: $checked stored problems checked"

# ---- generated here ----------------------------------------------------------------------
base() {  # a fresh copy of the base case in $work/$1
  cp -r "$catalogue/base" "$work/$1"
}

# An actual file that is a FIFO: refused at once (opening it for reading would block).
base actual_fifo
rm "$work/actual_fifo/actual/tiny.safetensors" && mkfifo "$work/actual_fifo/actual/tiny.safetensors"
run "$work/actual_fifo.log" check --golden "$work/actual_fifo/golden" --actual "$work/actual_fifo/actual"
if no_crash actual_fifo "$work/actual_fifo.log"; then
  [ "$status" -eq 1 ] && grep -qF "actual_fifo/actual/tiny.safetensors: not a regular file (a FIFO)" "$work/actual_fifo.log" ||
    fail "actual_fifo: exit $status, $(tail -3 "$work/actual_fifo.log")"
fi

# A manifest named on the command line that is a FIFO.
mkfifo "$work/manifest_fifo.json"
run "$work/manifest_fifo.log" check --golden "$work/manifest_fifo.json" --actual "$work/actual_fifo/actual"
if no_crash manifest_fifo "$work/manifest_fifo.log"; then
  [ "$status" -eq 2 ] && grep -qF "manifest_fifo.json: not a regular file (a FIFO)" "$work/manifest_fifo.log" ||
    fail "manifest_fifo: exit $status, $(tail -3 "$work/manifest_fifo.log")"
fi

# 16 GB sparse actual files: only the header and the tensors named are read, so both finish
# in well under the time limit. (a) valid tensors followed by 16 GB of holes: passes;
# (b) a header placing a 16 GB 'key' inside the file: its shape is refused before any read.
base actual_sparse
sparse="$work/actual_sparse/actual/tiny.safetensors"
truncate -s 16G "$sparse"
if [ "$(du -k "$sparse" | cut -f1)" -gt 1024 ]; then
  fail "$work does not keep sparse files sparse: cannot test a 16 GB actual file here"
else
  run "$work/actual_sparse.log" check --golden "$work/actual_sparse/golden" --actual "$work/actual_sparse/actual"
  no_crash actual_sparse_trailing "$work/actual_sparse.log" && { [ "$status" -eq 0 ] || fail "actual_sparse_trailing: exit $status"; }
  find_python json
  "${python:-python3}" - "$sparse" <<'PY'
import json, os, struct, sys
path = sys.argv[1]
with open(path, "rb") as f:
    (n,) = struct.unpack("<Q", f.read(8))
    header = json.loads(f.read(n))
    data = f.read(max(v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"))
elements = 2**33 - 1024  # 16 GiB of F16 less 2 KiB, from byte 64 of the data section
header["key"] = {"dtype": "F16", "shape": [elements], "data_offsets": [64, 64 + 2 * elements]}
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data)
os.truncate(path, 16 << 30)
PY
  run "$work/actual_sparse_claim.log" check --golden "$work/actual_sparse/golden" --actual "$work/actual_sparse/actual"
  if no_crash actual_sparse_claim "$work/actual_sparse_claim.log"; then
    [ "$status" -eq 1 ] && grep -qF "actual_sparse/actual/tiny.safetensors: tensor 'key' has shape [8589933568], expected [1,2,1,4]" "$work/actual_sparse_claim.log" ||
      fail "actual_sparse_claim: exit $status, $(tail -3 "$work/actual_sparse_claim.log")"
  fi
fi
rm -rf "$work/actual_sparse"

# A 4 GiB sparse expected tensor in the golden, its manifest and header agreeing (output
# 'key' of shape [2^31] f16): checking it would take far more than the memory budget (half
# the physical memory, or the address-space limit), so it is refused naming the tensor before
# anything is allocated, never a bare std::bad_alloc. Run under `ulimit -v 4 GiB` where kvbench
# starts so (not under the sanitizers' shadow memory), which holds the budget below the ~24 GiB
# the check needs on any machine; without it, only where half the physical memory is below that.
base golden_sparse_expected
"${python:-python3}" - "$work/golden_sparse_expected/golden" <<'PY'
import json, os, struct, sys
folder = sys.argv[1]
manifest, data_file = os.path.join(folder, "tiny.json"), os.path.join(folder, "tiny.safetensors")
elements = 2**31  # 4 GiB of F16
m = json.load(open(manifest))
for t in m["tensors"]:
    if t["name"] == "key":
        t["shape"] = t["stored_shape"] = [elements]
json.dump(m, open(manifest, "w"))
with open(data_file, "rb") as f:
    (n,) = struct.unpack("<Q", f.read(8))
    header = json.loads(f.read(n))
    data = f.read()
end = len(data) + (-len(data)) % 8
header["expected.key"] = {"dtype": "F16", "shape": [elements], "data_offsets": [end, end + 2 * elements]}
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(data_file, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data)
os.truncate(data_file, 8 + len(text) + end + 2 * elements)
PY
limit=0
if (ulimit -v 4194304 && exec "$kvbench" --help > /dev/null 2>&1); then
  limit=4194304
fi
half_memory_kib=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 2))
if [ "$limit" -eq 0 ] && [ "$half_memory_kib" -gt $((24 << 20)) ]; then
  echo "note: golden_sparse_expected skipped: kvbench does not start under ulimit -v (sanitizers) and half the memory holds the check"
else
  set +e
  (if [ "$limit" -gt 0 ]; then ulimit -v "$limit"; fi && exec timeout 60 "$kvbench" check --golden "$work/golden_sparse_expected/golden" \
    --actual "$work/golden_sparse_expected/actual") > "$work/golden_sparse_expected.log" 2>&1
  status=$?
  set -e
  if no_crash golden_sparse_expected "$work/golden_sparse_expected.log"; then
    [ "$status" -eq 1 ] &&
      grep -qF "golden_sparse_expected/golden/tiny.safetensors: tensor 'expected.key' (f16 [2147483648]): checking output 'key' needs about" "$work/golden_sparse_expected.log" &&
      grep -qF "over the memory budget of" "$work/golden_sparse_expected.log" &&
      ! grep -q "bad_alloc" "$work/golden_sparse_expected.log" ||
      fail "golden_sparse_expected: exit $status, $(tail -3 "$work/golden_sparse_expected.log")"
  fi
fi
rm -rf "$work/golden_sparse_expected"

# A golden folder holding a symlink loop: not followed, the case still checks.
base symlink_loop
ln -s . "$work/symlink_loop/golden/loop"
run "$work/symlink_loop.log" check --golden "$work/symlink_loop/golden" --actual "$work/symlink_loop/actual"
no_crash symlink_loop "$work/symlink_loop.log" && { [ "$status" -eq 0 ] || fail "symlink_loop: exit $status"; }

# golden -o where a folder cannot be made (its parent is a file): a clear error, exit 2.
touch "$work/a_file"
run "$work/golden_out.log" golden "$catalogue/tiny_case.json" -o "$work/a_file/golden"
if no_crash golden_out_not_creatable "$work/golden_out.log"; then
  [ "$status" -eq 2 ] && grep -qF "cannot create the output folder $work/a_file/golden" "$work/golden_out.log" ||
    fail "golden_out_not_creatable: exit $status, $(tail -3 "$work/golden_out.log")"
fi

# A write that fails part way (as on a full disk): exit 2 naming the file, and nothing left
# behind: no .tmp, no empty or partial .safetensors, no data file without its manifest.
# The file-size limit (in KiB) makes write() fail with EFBIG: 1 KiB stops the 1.6 KB data
# file, 2 KiB the 3.6 KB manifest after the data file was written.
for limit in 1 2; do
  out="$work/golden_write_fails_$limit"
  mkdir -p "$out"
  set +e
  (ulimit -f "$limit" && trap '' XFSZ && exec timeout 60 "$kvbench" golden "$catalogue/tiny_case.json" -o "$out") > "$out.log" 2>&1
  status=$?
  set -e
  if no_crash "golden_write_fails_$limit" "$out.log"; then
    [ "$status" -eq 2 ] && grep -qF "cannot write $out/tiny." "$out.log" ||
      fail "golden_write_fails_$limit: exit $status, $(tail -3 "$out.log")"
    [ -z "$(ls -A "$out")" ] || fail "golden_write_fails_$limit left files behind: $(ls -A "$out")"
  fi
done

# Golden format 2 (specs/golden-format.md "Format versions"): a golden written now (format 3),
# with an in-place cache, its touched bits and sparse alternates, saved as format 2 and
# checked against its own expected outputs (the control), then broken one way at a time.
find_python numpy
if [ -n "$python" ]; then
  f2="$work/format2"
  run "$f2.log" golden "$src/cases/pmx.KeyValueCache/quantized.json" -o "$f2/golden" \
    --filter '^kvc_quant\[cache_layout=0,current_key=f16,layer_idx=0,num_repeat=1,quant_bit=8,quant_group=8,start_pos=7\]$'
  [ "$status" -eq 0 ] || fail "format2: golden exit $status"
  # golden_problem NAME GOLDEN BEFORE EDIT AFTER EXIT MESSAGE: the golden folder GOLDEN copied
  # beside it as NAME, its expected outputs saved as the actual ones, then its manifest `m` and
  # tensors `t` changed by the python BEFORE, EDIT (the problem) and AFTER; `kvbench check`
  # must exit EXIT with MESSAGE.
  golden_problem() {
    local dir label
    dir="$(dirname "$2")/$1" label="$(basename "$(dirname "$2")")_$1"
    rm -rf "$dir" && cp -r "$2" "$dir" && mkdir -p "$dir.actual"
    "$python" - "$dir" "$dir.actual" "$src/tools" <<PY
import glob, json, os, struct, sys
import xxhash
sys.path.insert(0, sys.argv[3])
import kvbench_golden as kg
folder, actual = sys.argv[1], sys.argv[2]
manifest = glob.glob(os.path.join(folder, "*.json"))[0]
case = kg.load_case(manifest)
kg.save_actual(os.path.join(actual, case.stem + ".safetensors"), dict(case.expected), case)
m = json.load(open(manifest))
data = os.path.join(folder, m["safetensors"])
t, meta = kg.read_safetensors(data)
$3
$4
$5
json.dump(m, open(manifest, "w"))
kg.write_safetensors(data, t, meta)
PY
    run "$dir.log" check --golden "$dir" --actual "$dir.actual"
    no_crash "$label" "$dir.log" || return 0
    [ "$status" -eq "$6" ] && grep -qF -- "$7" "$dir.log" || fail "$label: exit $status, $(tail -3 "$dir.log")"
  }
  # $1: the problem; $2: python that edits `m` (the manifest) and `t` (the tensors); $3: exit; $4: message.
  # Written as format 2 (no checksums), which kvbench still reads: each problem then meets the
  # structural check it is about, not the checksum that format 3 adds.
  format2_problem() {
    golden_problem "$1" "$f2/golden" 'assert "alternate_index.cache" in t and "touched.cache" in t and m["format"] == 5
m["format"] = 2
del m["checksums"]' "$2" "" "$3" "$4"
  }
  format2_problem control "pass" 0 "1 passed, 0 failed"
  format2_problem format_6 'm["format"] = 6' 2 "golden format 6 is not one this kvbench reads (1 to 5)"
  format2_problem alternate_without_index 'del m["outputs"][2]["alternate_index"]' 2 \
    "must name both alternate and alternate_index, or neither"
  format2_problem touched_short 'd, s, r = t["touched.cache"]
t["touched.cache"] = (d, (s[0] - 1,), r[:-1])' 1 "has shape"
  format2_problem alternate_index_negative \
    'import struct
d, s, r = t["alternate_index.cache"]
idx = list(struct.unpack("<%dq" % s[0], r)); idx[0] = -1
t["alternate_index.cache"] = (d, s, struct.pack("<%dq" % s[0], *idx))' 1 "indices must ascend within [0,"
  format2_problem alternate_index_outside \
    'import struct
d, s, r = t["alternate_index.cache"]
idx = list(struct.unpack("<%dq" % s[0], r)); idx[-1] = 1 << 40
t["alternate_index.cache"] = (d, s, struct.pack("<%dq" % s[0], *idx))' 1 "indices must ascend within [0,"
  format2_problem touched_f64_short \
    'd, s, r = t["expected_f64.cache"]
t["expected_f64.cache"] = (d, (s[0] - 1,), r[:-(len(r) // s[0])])' 1 "has shape"
  echo "ok: golden format 2 problems checked"

  # Format 5's BF16 bound and NaN permissions (an SDPA golden that has both; format 4's F32
  # bound too), each problem with its tensor's checksum made anew, so that the structural
  # check meets it.
  f4="$work/format4"
  run "$f4.log" golden "$src/cases/dnnl.SDPACompressedKV/sdpa_masked_nonfinite_v_causal.json" -o "$f4/golden"
  [ "$status" -eq 0 ] || fail "format4: golden exit $status"
  format4_problem() {
    golden_problem "$1" "$f4/golden" 'assert "bound.output" in t and "nan_permitted.output" in t and m["format"] == 5
assert t["bound.output"][0] == "BF16"' \
      "$2" 'for name, (d, s, r) in t.items():
    m["checksums"]["tensors"][name] = xxhash.xxh3_128(r).hexdigest()' "$3" "$4"
  }
  format4_problem control "pass" 0 "1 passed, 0 failed"
  format4_problem bound_negative 'd, s, r = t["bound.output"]
t["bound.output"] = (d, s, struct.pack("<H", 0xBF80) + r[2:])' 1 "a bound is a non-negative number"
  format4_problem bound_nan 'd, s, r = t["bound.output"]
t["bound.output"] = (d, s, struct.pack("<H", 0x7FC0) + r[2:])' 1 "a bound is a non-negative number"
  # Format 4 (F32 bounds) is still read; each format takes only its own bound dtype.
  widen='import struct
d, s, r = t["bound.output"]
n = len(r) // 2
t["bound.output"] = ("F32", s, struct.pack("<%dI" % n, *[b << 16 for b in struct.unpack("<%dH" % n, r)]))'
  format4_problem format4_f32_bound "$widen
m[\"format\"] = 4" 0 "1 passed, 0 failed"
  format4_problem format4_bf16_bound 'm["format"] = 4' 1 \
    "tensor 'bound.output' has dtype BF16, expected F32 (golden format 4)"
  format4_problem format5_f32_bound "$widen" 1 "tensor 'bound.output' has dtype F32, expected BF16 (golden format 5)"
  format4_problem bound_short 'd, s, r = t["bound.output"]
t["bound.output"] = (d, (s[0] - 1,) + tuple(s[1:]), r[:-(len(r) // s[0])])' 1 "has shape"
  format4_problem nan_permitted_outside 'd, s, r = t["nan_permitted.output"]
idx = list(struct.unpack("<%dq" % s[0], r)); idx[-1] = 1 << 40
t["nan_permitted.output"] = (d, s, struct.pack("<%dq" % s[0], *idx))' 1 "indices must ascend within [0,"
  # A golden that accepts any output (what `kvbench golden` refuses to write): refused when
  # read. From an SDPA golden whose expected values are all finite (a non-finite one must be
  # matched exactly, so a golden holding one is not vacuous): every bound +inf; or a finite
  # bound and a NaN permitted at every element.
  f4v="$work/format4_finite"
  run "$f4v.log" golden "$src/cases/dnnl.SDPACompressedKV/field_gqa.json" --filter 'H=12,S_q=1\]' -o "$f4v/golden"
  [ "$status" -eq 0 ] || fail "format4_finite: golden exit $status"
  vacuous_problem() {
    golden_problem "$1" "$f4v/golden" 'assert "bound.output" in t and m["format"] == 5' "$2" \
      'for name, (d, s, r) in t.items():
    m["checksums"]["tensors"][name] = xxhash.xxh3_128(r).hexdigest()' "$3" "$4"
  }
  vacuous_problem control "pass" 0 "1 passed, 0 failed"
  vacuous_problem bound_infinite_everywhere 'd, s, r = t["bound.output"]
t["bound.output"] = (d, s, struct.pack("<H", 0x7F80) * (len(r) // 2))' 1 \
    "tensors 'bound.output': output: the golden accepts any output (768 of 768 elements with an infinite bound"
  vacuous_problem nan_permitted_everywhere 'd, s, r = t["bound.output"]
n = len(r) // 2
t["nan_permitted.output"] = ("I64", (n,), struct.pack("<%dq" % n, *range(n)))
m["outputs"][0]["nan_permitted"] = "nan_permitted.output"' 1 \
    "tensors 'bound.output' and 'nan_permitted.output': output: the golden accepts any output (0 of 768 elements"
  echo "ok: golden format 4 and 5 problems checked"
else
  fail "no python3 with numpy for the golden format 2 problems (tools/setup.sh installs python3-numpy)"
fi

echo "ok: generated problems checked (FIFO, sparse 16 GB, sparse 4 GiB expected, symlink loop, unmakeable folder, failed writes)"
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
