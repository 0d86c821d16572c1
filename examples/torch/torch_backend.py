#!/usr/bin/env python3
"""A PyTorch backend for `kvbench run --backend`: the operators computed with torch's own CPU
kernels in the precision a device would use (f32 scores and softmax, P and outputs in the
tensors' dtypes, int8/int4 caches dequantized with torch ops, paged caches gathered through
the page table, GQA by head mapping), from a golden's inputs only (kvbench.backend never
reads the expected outputs). One module per operator family:

    dnnl.SDPACompressedKV                          sdpa_compressed_kv.py
    pmx.dynamic_batching.MultiHeadCacheAttention   multi_head_cache_attention.py
    pmx.KeyValueCache                              key_value_cache.py
    aclnn.FusedInferAttentionScoreV3               fused_infer_attention.py (f16/bf16/f32 and KV
                                                   antiquant; full int8 and post-quant: 77)

Any other operator is reported as not implemented (exit 77: kvbench shows the case as SKIP).

    kvbench run cases/pmx.KeyValueCache --backend '/usr/bin/python3 examples/torch/torch_backend.py {golden} {actual}'

--plant NAME plants a known error so that a test can show kvbench catches it:
    sdpa_zero_point_added   SDPA adds the zero point instead of subtracting it
    mhca_causal_top_left    MHCA aligns the causal mask top-left instead of bottom-right
    kvc_truncate            KeyValueCache truncates its codes toward zero instead of rounding
    fia_gqa_interleaved     FIA maps query head h to kv head h % Nkv instead of h // (N / Nkv)
--variant NAME computes as another permitted implementation does (specs/comparison.md); every
case must pass each:
    flash                   P is not rounded to the tensors' dtype before P @ V (a flash-style
                            kernel normalises in f32)
    unnormalized_exp        exp(S - max) rounded to the tensors' dtype before P @ V, the f32 sum
                            divided out at the end (oneDNN's GPU kernel, PMX's flash prefill)
    kv_query_dtype          SDPA's and FIA's dequantized K and V rounded to the query's dtype
                            (f16/bf16 tensor-core inputs: SDPA's fpmath_mode, Ascend's antiquant)
Needs Debian's python3-torch (tools/setup.sh --torch) and kvbench's Python package (python/,
used from the source tree when it is there).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
_SOURCE_PACKAGE = os.path.join(HERE, "..", "..", "python")
if os.path.isfile(os.path.join(_SOURCE_PACKAGE, "kvbench", "__init__.py")):
    sys.path.insert(0, _SOURCE_PACKAGE)  # the source tree's package before an installed one

import kvbench  # noqa: E402
import torch  # noqa: E402

from fused_infer_attention import fused_infer_attention  # noqa: E402
from key_value_cache import key_value_cache  # noqa: E402
from multi_head_cache_attention import multi_head_cache_attention  # noqa: E402
from sdpa_compressed_kv import sdpa_compressed_kv  # noqa: E402

OPERATORS = {
    "dnnl.SDPACompressedKV": sdpa_compressed_kv,
    "pmx.dynamic_batching.MultiHeadCacheAttention": multi_head_cache_attention,
    "pmx.KeyValueCache": key_value_cache,
    "aclnn.FusedInferAttentionScoreV3": fused_infer_attention,
}
PLANTS = ("sdpa_zero_point_added", "mhca_causal_top_left", "kvc_truncate", "fia_gqa_interleaved")
VARIANTS = ("flash", "unnormalized_exp", "kv_query_dtype")


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--plant", choices=PLANTS)
    ap.add_argument("--variant", choices=VARIANTS)
    args, rest = ap.parse_known_args()
    torch.set_num_threads(int(os.environ.get("KVBENCH_TORCH_THREADS", "1")))

    def compute(inputs, attrs, case):
        fn = OPERATORS.get(case.op)
        if fn is None:
            raise kvbench.NotImplementedCase("the torch backend implements %s, not %s" % (", ".join(OPERATORS), case.op))
        return fn(inputs, attrs, case, args.plant, args.variant)

    kvbench.backend(compute, rest, description=__doc__)


if __name__ == "__main__":
    main()
