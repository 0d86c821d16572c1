#!/usr/bin/env bash
# The prepared check for a lent GPU machine (specs/attention-kernels.md "tools/gpu_check.sh"),
# at most 8 minutes: build (where a compiler is there; else the carried build/kvbench),
# `kvbench devices`, the conformance suite (`kvbench run cases`; its attention cases again with
# the decode kernel forced; the head-size sweep and Phi's heads at model shape), then `kvbench bench` of the
# model pack's decode shapes at 32k and 128k and a prefill, with the warm-up and the shader
# clock `bench` records, nvidia-smi's clocks sampled beside it where it exists. Writes under
# OUT_DIR (default $OUT, else build/gpu_check): log.txt, devices.txt, run.json, run_decode.json,
# head_sizes.json, bench.json
# and bench.txt (the table), clocks.csv; with --baseline BIN also bench_baseline.json/.txt
# from an earlier kvbench binary, run before and after the new one (alternated); without it
# bench_tiles.json/.txt and bench_tiles2.*: the same binary with KVBENCH_KERNEL=gpu (the
# tiles kernel) before and after the default kernels, and bench_f32_dequant.*: the default
# with KVBENCH_F16_DEQUANT=0 (MHCA's decode dequantizing in f32, not f16); summary.txt, all
# of them side by side (tools/bench_compare.py).
# --quick: small shapes (4k decodes) and a part of the suite, to test the script on lavapipe.
# GPU_CHECK_SECONDS (default 480) is the budget; GPU_CHECK_JOBS the build's -j (default nproc).
# Exit: 0 every step passed; 1 a step failed or ran out of time (each step's status in log.txt).
# Usage: tools/gpu_check.sh [--quick] [--baseline BIN] [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
quick=0 baseline=""
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --quick) quick=1 ;;
    --baseline) baseline=$2; shift ;;
    *) echo "usage: tools/gpu_check.sh [--quick] [--baseline BIN] [OUT_DIR]" >&2; exit 2 ;;
  esac
  shift
done
out=${1:-${OUT:-build/gpu_check}}
mkdir -p "$out"
budget=${GPU_CHECK_SECONDS:-480}
status=0
log() { echo "[$SECONDS s] $*" | tee -a "$out/log.txt"; }
# Runs a step with the time left (less `reserve` seconds for the steps after it).
step() {
  local name=$1 reserve=$2
  shift 2
  local left=$((budget - SECONDS - reserve))
  if ((left < 10)); then
    log "SKIP $name: no time left"
    status=1
    return
  fi
  log "start $name (limit ${left} s): $*"
  timeout "$left" "$@"
  local rc=$?
  log "$( ((rc == 0)) && echo ok || echo "FAIL (exit $rc)") $name"
  ((rc == 0)) || status=1
}

if command -v cmake >/dev/null && command -v c++ >/dev/null; then
  step build 300 bash -c 'cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j"${GPU_CHECK_JOBS:-$(nproc)}" --target kvbench' \
    >"$out/build.txt" 2>&1
else
  log "no cmake or compiler here: using the carried build/kvbench"
fi
kvbench=./build/kvbench
[[ -x $kvbench ]] || { log "FAIL: no $kvbench"; exit 1; }
step devices 280 "$kvbench" devices >"$out/devices.txt" 2>&1
cat "$out/devices.txt"

if ((quick)); then
  suite=(cases/pmx.KeyValueCache cases/pmx.dynamic_batching.MultiHeadCacheAttention/decode_4096.json)
  benches=(cases/pmx.dynamic_batching.MultiHeadCacheAttention/decode_4096.json
           cases/models/llama-3-8b/mhca_decode.json --filter 'decode_4096\[quant_bit=8|quant_bit=8,start_pos=\[4095\]')
else
  suite=(cases)
  # Decodes at 32k and 128k (Llama-3-8B MHCA int8 and FIA, Llama-3-70B TP8 FIA and SDPA,
  # DeepSeek-V3 MLA) and Llama-3-8B's 8k FIA prefill.
  benches=(cases/models/llama-3-8b/mhca_decode.json cases/models/llama-3-8b/fia_decode.json
           cases/models/llama-3-8b/fia_prefill_8k.json cases/models/llama-3-70b-tp8/fia_decode.json
           cases/models/llama-3-70b-tp8/sdpa_decode.json cases/models/deepseek-v3-tp8/fia_mla_decode.json
           --filter 'quant_bit=8,start_pos=\[(32767|131071)\]|Kv=\[(32768|131072)\]|S_kv=(32768|131072),key=s4|prefill')
fi
# The suite gets what the benches leave: about half of the time left.
step suite $(((budget - SECONDS) / 2)) "$kvbench" run "${suite[@]}" --json "$out/run.json" >"$out/run.txt" 2>&1
tail -3 "$out/run.txt"
# The decode kernel forced on every attention case (prefills too), and the head-size sweep
# (cases/head_sizes: every model head size and every multiple of 8 that changes a kernel's
# lane arithmetic, issue 49) with it, beside the non-power-of-two heads at model shape
# (Phi-2's 80, Phi-3-mini's 96, 2k and 4k contexts) by the default rule.
if ((quick)); then
  attention=(cases/dnnl.SDPACompressedKV/head_sizes_odd.json)
  heads=(cases/head_sizes --slow include --filter 'D=(24|40|80),H=4,S_q=1')
else
  attention=(cases/aclnn.FusedInferAttentionScoreV3 cases/pmx.dynamic_batching.MultiHeadCacheAttention cases/dnnl.SDPACompressedKV)
  heads=(cases/head_sizes cases/models/phi-2 cases/models/phi-3-mini --slow include
         --filter 'head_sizes|S_kv=(2048|4096)|Kv=\[(2048|4096)\]|start_pos=\[(2047|4095)\]')
fi
KVBENCH_KERNEL=decode step suite_decode $(((budget - SECONDS) * 3 / 5)) "$kvbench" run "${attention[@]}" \
  --json "$out/run_decode.json" >"$out/run_decode.txt" 2>&1
tail -3 "$out/run_decode.txt"
step head_sizes $(((budget - SECONDS) / 2)) "$kvbench" run "${heads[@]}" --json "$out/head_sizes.json" \
  >"$out/head_sizes.txt" 2>&1
tail -3 "$out/head_sizes.txt"

sampler=""
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 >"$out/clocks.csv" 2>&1 &
  sampler=$!
fi
bench() {  # BIN NAME RESERVE: one bench run of the shapes into NAME.json and NAME.txt
  local bin=$1 name=$2 reserve=$3 flush=()
  # K/V from memory, not from the L2 the previous repetition filled (a 70B TP8 decode's
  # 16 MB at 32k fits an H100's 50 MB): where the binary has the option (a baseline may not).
  "$bin" bench --help 2>/dev/null | grep -q -- --flush-cache && flush=(--flush-cache)
  step "bench $name" "$reserve" "$bin" bench "${benches[@]}" --slow include --reps 10 "${flush[@]}" \
    --json "$out/$name.json" >"$out/$name.txt" 2>&1
}
if [[ -n $baseline ]]; then
  left=$((budget - SECONDS))
  bench "$baseline" bench_baseline $((left * 2 / 3))
  bench "$kvbench" bench $((left / 3))
  bench "$baseline" bench_baseline2 0
else
  # The previous kernel (tiles: KVBENCH_KERNEL=gpu) and the default (on a GPU's decodes the
  # decode kernel, shaders/attention_decode.glsl), alternated; between them the default with
  # MHCA's f32 dequantization (KVBENCH_F16_DEQUANT=0), against the f16 one where the GPU has it.
  left=$((budget - SECONDS))
  KVBENCH_KERNEL=gpu bench "$kvbench" bench_tiles $((left * 3 / 4))
  bench "$kvbench" bench $((left / 2))
  KVBENCH_F16_DEQUANT=0 bench "$kvbench" bench_f32_dequant $((left / 4))
  KVBENCH_KERNEL=gpu bench "$kvbench" bench_tiles2 0
fi
[[ -n $sampler ]] && kill "$sampler"
cat "$out/bench.txt" 2>/dev/null
# One table of every bench run's medians, copy fractions and clocks (python3 where there is one).
if command -v python3 >/dev/null; then
  runs=()
  for name in bench_baseline bench_tiles bench bench_f32_dequant bench_baseline2 bench_tiles2; do
    [[ -f $out/$name.json ]] && runs+=("$name=$out/$name.json")
  done
  ((${#runs[@]})) && python3 tools/bench_compare.py "${runs[@]}" | tee "$out/summary.txt"
fi
# llama.cpp's ggml-vulkan beside kvbench's kernel on the same GPU and bytes
# (tools/ggml_side_by_side.py; specs/ggml-findings.md "Side by side"), where build/kvbench-ggml
# was carried with the ggml libraries its RUNPATH names (cmake -DKVBENCH_GGML_DIR=<a folder
# inside the tree> before building, and carry that folder) and its self-test passes there.
if ((budget - SECONDS > 60)) && [[ -x build/kvbench-ggml ]] && command -v python3 >/dev/null &&
  timeout 60 build/kvbench-ggml --self-test --device vulkan >"$out/ggml_self_test.txt" 2>&1; then
  step ggml_side_by_side 0 python3 tools/ggml_side_by_side.py cases/models/ggml_llama3_8b.json \
    --filter 'n_batch=1,n_kv=(4096|32768),type_k=q[48]_0' --rounds 3 --repeat 5 \
    --kvbench "$kvbench" --kvbench-ggml build/kvbench-ggml --json "$out/ggml_side_by_side.json" \
    >"$out/ggml_side_by_side.txt" 2>&1
  cat "$out/ggml_side_by_side.txt"
else
  log "no ggml side by side: under a minute left, or build/kvbench-ggml absent or its self-test failed"
fi
log "done in $SECONDS s, status $status"
exit $status
