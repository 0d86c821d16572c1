#!/usr/bin/env bash
# Renders the README's pictures (docs/img/) with tools/plot.py from real kvbench output on
# the default device. Usage: tools/make_readme_images.sh [KVBENCH] (default ./build/kvbench)
set -euo pipefail
cd "$(dirname "$0")/.."
kvbench=${1:-./build/kvbench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=/usr/bin/python3
mkdir -p docs/img

"$kvbench" golden tests/data/plot/attention_tight.json -o "$work/golden" > /dev/null
"$kvbench" run tests/data/plot/attention_tight.json --save-actual "$work/actual" || true  # it fails by design
"$python" tools/plot.py heatmap "$work/golden/plot_attention_tight.json" "$work/actual/plot_attention_tight.safetensors" \
  -o docs/img/error_heatmap.png

"$kvbench" bench tests/data/plot/sdpa_decode_sweep.json --warmup 2 --reps 5 --json "$work/bench.json"
"$python" tools/plot.py bench "$work/bench.json" -o docs/img/bench_bandwidth.png

"$kvbench" run cases/dnnl.SDPACompressedKV/groups.json --json "$work/groups.json" > /dev/null
"$python" tools/plot.py quant-err "$work/groups.json" -o docs/img/quant_err.png
ls -l docs/img
