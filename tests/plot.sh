#!/usr/bin/env bash
# tools/plot.py draws each of its three pictures from small reports kvbench writes here:
#   heatmap    from kvbench golden + kvbench run --save-actual of a failing attention case
#   bench      from kvbench bench --json of SDPA decode over two KV lengths
#   quant-err  from kvbench run --json of SDPA's group-size sweep
# Each must be a PNG of the expected size; a report of the wrong kind is refused.
# tools/bench_compare.py's table of the bench report is checked too.
# Usage: plot.sh KVBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
kvbench=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
. "$src/tests/find_python.sh"
find_python matplotlib numpy
[ -n "$python" ] || { echo "FAIL: no python3 with matplotlib and numpy (install python3-matplotlib: tools/setup.sh)"; exit 1; }
plot=("$python" "$src/tools/plot.py")
data="$src/tests/data/plot"

# A PNG (signature, IHDR) of 560 x 360 pixels: 7 x 4.5 inches at 80 dpi.
check_png() {
  "$python" - "$1" << 'PY'
import struct, sys
with open(sys.argv[1], "rb") as f:
    head = f.read(24)
assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", head[16:24])
assert (w, h) == (560, 360), "%d x %d pixels" % (w, h)
PY
}

"$kvbench" golden "$data/attention_tight.json" -o "$work/golden" > /dev/null
set +e
"$kvbench" run "$data/attention_tight.json" --save-actual "$work/actual" > "$work/run.log"
status=$?
set -e
[ $status -eq 1 ] || { cat "$work/run.log"; echo "FAIL: the attention case must fail its tightened tolerance"; exit 1; }
"${plot[@]}" heatmap "$work/golden/plot_attention_tight.json" "$work/actual/plot_attention_tight.safetensors" \
  -o "$work/heatmap.png" | tee "$work/heatmap.log"
grep -qE "attn_output, [1-9][0-9]* violations" "$work/heatmap.log" || { echo "FAIL: the heatmap counts no violation"; exit 1; }
check_png "$work/heatmap.png"
echo "ok: heatmap.png"

"$kvbench" bench "$data/sdpa_decode_sweep.json" --filter 'S_kv=(256|1024),' --warmup 0 --reps 1 --json "$work/bench.json" > /dev/null
"${plot[@]}" bench "$work/bench.json" -o "$work/bench.png" | grep -q "4 series" || { echo "FAIL: bench: 4 cache types expected"; exit 1; }
check_png "$work/bench.png"
echo "ok: bench.png"

# tools/bench_compare.py (tools/gpu_check.sh's summary): one row per case of the report, each
# report's column with its median and its time against the first's (the same report: x1.00);
# a report that cannot be read is named, not fatal.
"$python" "$src/tools/bench_compare.py" a="$work/bench.json" b="$work/bench.json" gone="$work/none.json" > "$work/compare.txt"
rows=$(grep -c ' x1.00 .* x1.00' "$work/compare.txt" || true)
cases=$("$python" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cases"]))' "$work/bench.json")
[ "$rows" = "$cases" ] && [ "$cases" -gt 0 ] || { echo "FAIL: bench_compare: $rows rows of $cases cases"; cat "$work/compare.txt"; exit 1; }
grep -q '^gone: not read' "$work/compare.txt" || { echo "FAIL: bench_compare did not name the missing report"; exit 1; }
echo "ok: bench_compare"

"$kvbench" run "$src/cases/dnnl.SDPACompressedKV/groups.json" --json "$work/groups.json" > /dev/null
"${plot[@]}" quant-err "$work/groups.json" -o "$work/quant_err.png" | grep -q "4 series" || { echo "FAIL: quant-err: 4 bit widths expected"; exit 1; }
check_png "$work/quant_err.png"
echo "ok: quant_err.png"

# A bench report has no quant_err: refused with a message, no picture.
if "${plot[@]}" quant-err "$work/bench.json" -o "$work/wrong.png" 2> "$work/wrong.log"; then
  echo "FAIL: quant-err drew a bench report"; exit 1
fi
grep -q "no case with a quant_err figure" "$work/wrong.log" && [ ! -e "$work/wrong.png" ] || { echo "FAIL: no clear refusal"; exit 1; }
echo "ok: a report of the wrong kind is refused"
