#!/usr/bin/env bash
# Goldens are byte-identical to those kvbench wrote before the bulk data paths and golden
# format 2: tests/data/golden_digests.json holds, per case, a digest of every array as
# tools/kvbench_golden.py reads it back dense (so a format-1 file and a format-2 file of
# the same numbers digest alike), recorded with kvbench e1cf955 (format 1) over the case
# files below (652 cases: KeyValueCache, MHCA, FIA post-quant ties, antiquant with page
# attention, shared prefix, MLA, SDPA, Omni, Quantize/DequantizeGroup). Re-recorded since,
# each with the one array added (every other array identical): antiquant_paged's 12 cases
# gained alternate.softmaxLse (the IFA kernel's lse of a batch without keys).
# MHCA quant_groups' 10 int4 cases were re-recorded when int4 cache scales widened by 127/7
# (specs/multi_head_cache_attention.md, "Case file": a decode's output must depend on its scores).
# Usage: golden_identical.sh KVBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
kvbench=$1 src=$2 work=$3
. "$src/tests/find_python.sh"
require_python numpy
rm -rf "$work" && mkdir -p "$work"
cd "$src"
files="cases/pmx.KeyValueCache/quantized.json cases/pmx.dynamic_batching.MultiHeadCacheAttention/quant_groups.json
  cases/aclnn.FusedInferAttentionScoreV3/post_quant_ties.json cases/aclnn.FusedInferAttentionScoreV3/antiquant_paged.json
  cases/aclnn.FusedInferAttentionScoreV3/shared_prefix.json cases/aclnn.FusedInferAttentionScoreV3/mla_128.json
  cases/dnnl.SDPACompressedKV/k_only.json cases/atb.ReshapeAndCacheOmni/decisions.json
  cases/kvbench.QuantizeGroup/asymmetric.json cases/kvbench.DequantizeGroup/ppl.json"
# shellcheck disable=SC2086
"$kvbench" golden $files -o "$work/golden" --jobs 2 > /dev/null
"$python" tests/golden_digest.py "$work/golden" --per-case > "$work/digests.json"
"$python" - "$src/tests/data/golden_digests.json" "$work/digests.json" <<'PY'
import json, sys
want, got = (json.load(open(p)) for p in sys.argv[1:3])
missing = sorted(set(want) - set(got))
differ = sorted(c for c in want if c in got and got[c] != want[c])
for c in missing[:10]: print("FAIL: no golden written for", c)
for c in differ[:10]: print("FAIL: golden differs from the recorded one:", c)
if missing or differ:
    sys.exit("%d of %d cases missing, %d differ" % (len(missing), len(want), len(differ)))
print("ok: %d cases, every array identical to the recorded goldens" % len(want))
PY
