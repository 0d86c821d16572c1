#!/usr/bin/env bash
# Faults around what kvbench writes and reads (specs/report-format.md "How files are
# written", specs/golden-format.md "Checksums"): a report target that is a FIFO, a full disk
# (a small `ulimit -f`), a run killed with SIGKILL, a signal while stdout is a full pipe, a
# signal during `golden`, two `golden` runs into one folder, a flipped bit in golden data,
# and golden folders with an entry that is not a regular file. Each must end in a clear error
# or a complete file, never a hang, a partial file or a silent success.
# Usage: robust_outputs.sh KVBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
kvbench=$(realpath "$1") src=$(realpath "$2") work=$(realpath -m "$3")
rm -rf "$work" && mkdir -p "$work"
. "$src/tests/find_python.sh"
require_python numpy xxhash
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# Runs kvbench (bounded in time: a hang is a failure, exit 124) with the output in $log.
run() {
  local log=$1
  shift
  set +e
  timeout 30 "$kvbench" "$@" > "$log" 2>&1
  status=$?
  set -e
}

expect() {  # expect NAME STATUS TEXT LOG
  [ "$status" -eq "$2" ] && grep -qF -- "$3" "$4" || fail "$1: exit $status (expected $2), $(tail -3 "$4")"
}

no_temporaries() {  # no_temporaries NAME DIR
  local left
  left=$(find "$2" -name '*.tmp')
  [ -z "$left" ] || fail "$1 left temporary files: $left"
}

json_field() {  # json_field FILE EXPR: prints EXPR of the JSON document `r`
  "$python" -c "import json, sys; r = json.load(open(sys.argv[1])); print($2)" "$1"
}

# One small golden case (KeyValueCache, in-place cache) and an actual file that passes.
tiny=$src/tests/data/bad_golden/tiny_case.json
run "$work/tiny.log" golden "$tiny" -o "$work/golden"
expect golden_tiny 0 "wrote 1 cases" "$work/tiny.log"
mkdir -p "$work/actual"
"$python" - "$work/golden/tiny.json" "$work/actual/tiny.safetensors" "$src/tools" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
import kvbench_golden as kg
case = kg.load_case(sys.argv[1])
kg.save_actual(sys.argv[2], dict(case.expected), case)
PY
check=(check --golden "$work/golden" --actual "$work/actual")

# ---- report targets --------------------------------------------------------------------
# A FIFO nobody reads: refused before anything runs (opening it to write would block).
mkfifo "$work/report.fifo"
run "$work/fifo_junit.log" run "$tiny" --junit "$work/report.fifo"
expect run_junit_fifo 2 "cannot write $work/report.fifo: not a regular file (a FIFO)" "$work/fifo_junit.log"
run "$work/fifo_json.log" "${check[@]}" --json "$work/report.fifo"
expect check_json_fifo 2 "cannot write $work/report.fifo: not a regular file (a FIFO)" "$work/fifo_json.log"

# A full disk (the file-size limit stands in for it: write() fails with EFBIG): exit 2 naming
# the report, nothing partial under its name. The incomplete report written at the start
# (smaller than the limit) stays: a reader sees "complete": false, never this run's success.
mkdir -p "$work/full"
echo '{"complete": true, "previous": "run"}' > "$work/full/report.json"
set +e
# (the log through a pipe: the limit would stop it too)
(ulimit -f 1 && exec timeout 30 "$kvbench" "${check[@]}" --json "$work/full/report.json") 2>&1 | cat > "$work/full.log"
status=${PIPESTATUS[0]}
set -e
expect full_disk_json 2 "cannot write $work/full/report.json: File too large" "$work/full.log"
[ "$(json_field "$work/full/report.json" 'r["complete"]')" = False ] || fail "full_disk_json: the report is not the incomplete one"
# The summary line is printed all the same.
grep -qF "1 passed, 0 failed, 0 skipped" "$work/full.log" || fail "full_disk_json: no closing line"
# JUnit: 12 failing cases (a golden folder checked as its own actual) make a report past 1 KiB.
run "$work/many.log" golden "$src/cases/kvbench.QuantizeGroup" -o "$work/many" --filter '^qg_scale_dtypes'
set +e
(ulimit -f 1 && exec timeout 30 "$kvbench" check --golden "$work/many" --actual "$work/many" --junit "$work/full/report.xml") \
  2>&1 | cat > "$work/full_junit.log"
status=${PIPESTATUS[0]}
set -e
expect full_disk_junit 2 "cannot write $work/full/report.xml: File too large" "$work/full_junit.log"
grep -qF 'name="incomplete-run"' "$work/full/report.xml" || fail "full_disk_junit: the report is not the incomplete one"
no_temporaries full_disk "$work/full"

# A run killed with SIGKILL (a CI timeout's last resort) leaves the incomplete reports, not the
# previous run's: here the backend kills kvbench, its parent, in the first case.
echo '{"complete": true}' > "$work/killed.json"
run "$work/killed.log" run "$tiny" --backend 'kill -KILL $PPID' --json "$work/killed.json" --junit "$work/killed.xml"
[ "$(json_field "$work/killed.json" 'r["complete"], r["summary"]["selected"]')" = "False 1" ] ||
  fail "sigkill: the JSON report is not the incomplete one: $(head -c 300 "$work/killed.json")"
grep -qF "the kvbench run did not finish" "$work/killed.xml" || fail "sigkill: the JUnit report does not say the run did not finish"

# SIGINT while stdout is a full pipe: with SA_RESTART the blocked write goes on once the pipe
# is read, so the log keeps every row the report has, and the closing lines.
"$python" - "$kvbench" "$src/cases/kvbench.QuantizeGroup" "$work/pipe.json" <<'PY' || fail "sigint_full_pipe"
import fcntl, json, os, signal, subprocess, sys, time
kvbench, cases, report = sys.argv[1:4]
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: one page, filled by a few failing rows
# The backend `true` writes nothing: every case fails quickly with long rows (repro lines).
p = subprocess.Popen([kvbench, "run", cases, "--backend", "true", "--json", report], stdout=w, stderr=subprocess.DEVNULL)
os.close(w)
for _ in range(200):  # until kvbench waits in write() on the full pipe
    time.sleep(0.05)
    wchan = open("/proc/%d/wchan" % p.pid).read()
    syscall = open("/proc/%d/syscall" % p.pid).read().split()
    if "pipe" in wchan or (syscall and syscall[0] == "1" and os.uname().machine == "x86_64"):  # 1: write
        break
p.send_signal(signal.SIGINT)
time.sleep(0.3)
out = b""
while chunk := os.read(r, 65536):
    out += chunk
status = p.wait(timeout=30)
text = out.decode(errors="replace")
rows = sum(1 for line in text.splitlines() if line[:6].strip().isdigit() and " FAIL " in line)
cases_in_report = len(json.load(open(report))["cases"])
ok = status == 130 and "interrupted by signal 2" in text and " failed, 0 skipped" in text and rows == cases_in_report
if not ok:
    print("exit %d, %d rows in the log, %d cases in the report; log ends: %s" % (status, rows, cases_in_report, text[-300:]))
sys.exit(0 if ok else 1)
PY

# ---- golden: signals and concurrent writers ---------------------------------------------
# SIGINT/SIGTERM during `golden`: the cases being written finish, no other starts, no
# temporary is left, every manifest has its data, and the exit status is 128 + the signal.
cases=$src/cases/pmx.KeyValueCache
for sig in INT TERM; do
  out="$work/golden_sig$sig"
  "$kvbench" golden "$cases" -o "$out" --jobs 2 > "$out.log" 2>&1 &
  pid=$!
  for _ in $(seq 500); do [ -n "$(ls "$out" 2> /dev/null)" ] && break; sleep 0.01; done  # writing has begun
  kill -s "$sig" "$pid"
  set +e
  wait "$pid"
  status=$?
  set -e
  code=$([ "$sig" = INT ] && echo 130 || echo 143)
  expect "golden_sig$sig" "$code" "interrupted by signal $((code - 128)) after" "$out.log"
  no_temporaries "golden_sig$sig" "$out"
  run "$out.verify.log" verify "$out"
  expect "golden_sig$sig: verify" 0 " verified, 0 bad" "$out.verify.log"
done

# Two `golden` runs into one folder: both succeed, and the folder holds complete pairs
# identical to those one run writes alone.
filter='^kvc_(odd_groups|scale_f32)\['
run "$work/alone.log" golden "$cases" -o "$work/alone" --filter "$filter"
"$kvbench" golden "$cases" -o "$work/twice" --filter "$filter" --jobs 2 > "$work/twice1.log" 2>&1 &
first=$!
"$kvbench" golden "$cases" -o "$work/twice" --filter "$filter" --jobs 1 > "$work/twice2.log" 2>&1 &
second=$!
wait "$first" || fail "concurrent golden: the first run failed: $(tail -3 "$work/twice1.log")"
wait "$second" || fail "concurrent golden: the second run failed: $(tail -3 "$work/twice2.log")"
diff -r "$work/alone" "$work/twice" > /dev/null || fail "concurrent golden: the folder differs from one run's"
no_temporaries concurrent_golden "$work/twice"

# ---- verifiable goldens -----------------------------------------------------------------
# One flipped bit in an input tensor, then in expected_f64: `check` refuses the golden (exit
# 2) naming the file and the tensor, `verify` too, and so does tools/kvbench_golden.py.
flip() {  # flip DIR TENSOR: one bit of the tensor's first byte in DIR/tiny.safetensors
  "$python" - "$1/tiny.safetensors" "$2" <<'PY'
import json, struct, sys
path, name = sys.argv[1:3]
with open(path, "r+b") as f:
    (n,) = struct.unpack("<Q", f.read(8))
    begin = json.loads(f.read(n))[name]["data_offsets"][0]
    f.seek(8 + n + begin)
    byte = f.read(1)[0]
    f.seek(8 + n + begin)
    f.write(bytes([byte ^ 0x10]))
PY
}
run "$work/control.log" "${check[@]}"
expect flip_control 0 "1 passed, 0 failed" "$work/control.log"
for tensor in current_key expected_f64.key; do
  dir="$work/flip_$tensor"
  cp -r "$work/golden" "$dir"
  flip "$dir" "$tensor"
  run "$dir.check.log" check --golden "$dir" --actual "$work/actual"
  expect "flip $tensor: check" 2 "tiny.safetensors: tensor '$tensor' does not match its checksum" "$dir.check.log"
  run "$dir.verify.log" verify "$dir"
  expect "flip $tensor: verify" 2 "tiny.safetensors: tensor '$tensor' does not match its checksum" "$dir.verify.log"
  "$python" -c "import sys; sys.path.insert(0, '$src/tools'); import kvbench_golden as kg; kg.load_case('$dir/tiny.json')" \
    > "$dir.py.log" 2>&1 && fail "flip $tensor: kvbench_golden.py read the corrupt golden"
  grep -qF "tensor '$tensor' does not match its checksum" "$dir.py.log" || fail "flip $tensor: kvbench_golden.py: $(tail -1 "$dir.py.log")"
done

# verify names a case whose manifest or data is missing.
cp -r "$work/alone" "$work/missing"
first_case=$(ls "$work/missing" | head -1)
first_case=${first_case%.*}
rm "$work/missing/$first_case.json"
second_case=$(ls "$work/missing"/*.json | head -1)
rm "${second_case%.json}.safetensors"
run "$work/missing.log" verify "$work/missing"
expect verify_missing_manifest 2 "$first_case.safetensors: no manifest names this data file" "$work/missing.log"
expect verify_missing_data 2 "the golden data cannot be verified: ${second_case%.json}.safetensors: cannot open: No such file" "$work/missing.log"

# A golden folder with a FIFO or a looping link named *.json: an error, never skipped.
cp -r "$work/golden" "$work/odd"
mkfifo "$work/odd/fifo.json"
ln -s loop.json "$work/odd/loop.json"
run "$work/odd.log" check --golden "$work/odd" --actual "$work/actual"
expect golden_fifo 2 "odd/fifo.json: not a regular file (a FIFO)" "$work/odd.log"
expect golden_loop 2 "odd/loop.json: cannot read the file: Too many levels of symbolic links" "$work/odd.log"

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok: report targets, full disk, SIGKILL, full pipe, golden signals, concurrent goldens, checksums"
