#!/usr/bin/env python3
"""Pictures of kvbench results, with Debian's python3-matplotlib and python3-numpy.

  plot.py heatmap GOLDEN.json ACTUAL.safetensors -o error.png [--output NAME]
      the error of one attention output over (token, head), as a multiple of the tolerance,
      from a golden case (kvbench golden) and an actual file (kvbench run --save-actual, or
      another backend's)
  plot.py bench BENCH.json -o bandwidth.png [--x KEY]
      effective GB/s against KV length, one line per cache type and operator, with the
      device's copy bandwidth as the roof (kvbench bench --json)
  plot.py quant-err REPORT.json -o quant_err.png [--metric rel_l2|max_abs]
      quant_err (the compressed attention against the unquantized one) against group size,
      one line per K/V bit width (kvbench run --json of SDPA cases)

Report fields: specs/report-format.md.
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display is needed or wanted
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import matplotlib.ticker  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kvbench_golden as kg  # noqa: E402

# Shape keys that give a case's KV length, tried in order (specs of each operator).
KV_LENGTH_KEYS = ("S_kv", "kv_len", "max_seqlen", "num_tokens")
# Tensors whose dtype names the cache type, tried in order.
CACHE_TENSORS = ("cache", "key_cache")
BITS = {"s4": 4, "u4": 4, "i8": 8, "u8": 8, "f16": 16, "bf16": 16, "f32": 32}


def load_json(path):
    with open(path) as f:
        return json.load(f)


# ---- (a) error heatmap ---------------------------------------------------------------------

def token_head_axes(shape, token_axis, head_axis):
    """The axes folded into tokens and the head axis of an attention output."""
    if token_axis is not None and head_axis is not None:
        return [token_axis], head_axis
    if len(shape) == 3:  # [tokens, heads, head_dim] (MHCA)
        return [0], 1
    if len(shape) == 4:  # [N, H, S_q, D] (SDPA): batches one after another along tokens
        return [0, 2], 1
    sys.exit("plot.py heatmap: output of shape %s: give --token-axis and --head-axis" % (list(shape),))


def tolerance_ratio(actual, golden, tol):
    """|a - g| / (atol + rtol |g|) per element: > 1 is out of tolerance; a NaN/Inf mismatch is inf."""
    a, g = actual.astype(np.float64), golden.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - g)
        allowed = tol["atol"] + tol["rtol"] * np.abs(g)
        ratio = np.divide(diff, allowed, out=np.where(diff > 0, np.inf, 0.0), where=allowed > 0)
    finite = np.isfinite(a) & np.isfinite(g)
    same_nonfinite = (np.isnan(a) & np.isnan(g)) | (np.isinf(a) & (a == g))
    return np.where(finite, ratio, np.where(same_nonfinite, 0.0, np.inf))


def heatmap(args):
    case = kg.load_case(args.golden)
    stored, _ = kg.read_safetensors(args.actual)
    name = args.output
    ratios = {}
    for out in case.outputs:
        if out not in stored:
            sys.exit("plot.py heatmap: %s has no tensor '%s'" % (args.actual, out))
        t = case.tensors[out]
        ratios[out] = tolerance_ratio(kg.to_array(stored[out], t["dtype"], t["shape"]), case.expected[out],
                                      case.tolerance[out])
    if name is None:  # the first output with a violation, else the first
        name = next((o for o in case.outputs if (ratios[o] > 1).any()), case.outputs[0])
    ratio = ratios[name]
    tokens, head = token_head_axes(ratio.shape, args.token_axis, args.head_axis)
    rest = [ax for ax in range(ratio.ndim) if ax not in tokens and ax != head]
    grid = np.transpose(ratio, tokens + [head] + rest)
    grid = grid.reshape(-1, ratio.shape[head], int(np.prod([ratio.shape[a] for a in rest], dtype=np.int64)))
    worst = grid.max(axis=2)  # the worst element of each (token, head) row
    violations = int((ratio > 1).sum())

    finite = worst[np.isfinite(worst) & (worst > 0)]
    lo = max(finite.min(), 1e-6) if finite.size else 1e-3
    hi = max(finite.max() if finite.size else 1.0, 1.0) * 1.01
    shown = np.where(np.isfinite(worst), np.clip(worst, lo, hi), hi)
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=80)
    im = ax.imshow(shown.T, aspect="auto", cmap="viridis", norm=LogNorm(vmin=lo, vmax=hi), origin="lower",
                   interpolation="nearest")
    bad_t, bad_h = np.nonzero(worst > 1)
    ax.scatter(bad_t, bad_h, marker="x", s=14, c="red", linewidths=0.8, label="out of tolerance")
    cbar = fig.colorbar(im, ax=ax)
    cbar.set_label("max |a - g| / (atol + rtol |g|) over head_dim\n(red line: the tolerance, 1)", fontsize=8)
    if lo < 1 < hi:
        cbar.ax.axhline(1.0, color="red", linewidth=2)
    tol = case.tolerance[name]
    ax.set_xlabel("token" + (" (batches one after another)" if len(tokens) > 1 else ""))
    ax.set_ylabel("head")
    ax.set_title("%s: %s\n%d of %d elements out of tolerance (atol %.3g, rtol %.3g)"
                 % (case.manifest["case"], name, violations, ratio.size, tol["atol"], tol["rtol"]), fontsize=9)
    if bad_t.size:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(args.o)
    print("wrote %s: %s, %d violations" % (args.o, name, violations))


# ---- (b) bandwidth against KV length -------------------------------------------------------

def kv_length(case, key):
    shapes = dict(case["resolved"].get("shapes", {}))
    shapes.update(case["resolved"].get("inputs", {}))
    for k in ([key] if key else KV_LENGTH_KEYS):
        if isinstance(shapes.get(k), (int, float)):
            return k, shapes[k]
    return None, None


def cache_type(case):
    dtypes = case["resolved"].get("dtypes", {})
    for t in CACHE_TENSORS:
        if t in dtypes:
            return "%s %s" % (t, dtypes[t])
    if "key" in dtypes and "value" in dtypes:
        return "K %s, V %s" % (dtypes["key"], dtypes["value"])
    return "-"


def bench(args):
    report = load_json(args.report)
    series, x_key = {}, None
    for c in report["cases"]:
        if c.get("gbps") is None:
            continue  # skipped or not timed
        key, x = kv_length(c, args.x)
        if key is None:
            continue
        x_key = x_key or key
        series.setdefault((c["op"], cache_type(c)), {}).setdefault(x, []).append(c["gbps"])
    if not series:
        sys.exit("plot.py bench: no timed case with a KV length (%s) in %s" % (args.x or "/".join(KV_LENGTH_KEYS),
                                                                              args.report))
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=80)
    for (op, ctype), points in sorted(series.items()):
        xs = sorted(points)
        ax.plot(xs, [max(points[x]) for x in xs], marker="o", label="%s, %s" % (op, ctype))
    roof = report.get("copy_bandwidth_gbps")
    if roof:
        ax.axhline(roof, color="black", linestyle="--", label="copy bandwidth %.3g GB/s (roof)" % roof)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")  # kernels far below the roof stay readable
    ax.set_xlabel("KV length (%s)" % x_key)
    ax.set_ylabel("effective GB/s (bytes moved / median time)")
    ax.set_title("%s: best case per KV length" % report["device"]["name"], fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.o)
    print("wrote %s: %d series" % (args.o, len(series)))


# ---- (c) quant_err against group size and bit width ----------------------------------------

def bit_width(dtypes):
    k, v = dtypes.get("key"), dtypes.get("value")
    return "K %d-bit, V %d-bit" % (BITS.get(k, 0), BITS.get(v, 0)) if k and v else "-"


def quant_err(args):
    report = load_json(args.report)
    series = {}
    for c in report["cases"]:
        q = c.get("figures", {}).get("quant_err")
        group = c["resolved"].get("attributes", {}).get("group_size")
        if not q or q.get(args.metric) is None or group is None:
            continue
        series.setdefault(bit_width(c["resolved"].get("dtypes", {})), {}).setdefault(group, []).append(q[args.metric])
    if not series:
        sys.exit("plot.py quant-err: no case with a quant_err figure and a group_size in %s" % args.report)
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=80)
    for label, points in sorted(series.items()):
        xs = sorted(points)
        ax.plot(xs, [float(np.median(points[x])) for x in xs], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    for axis in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
        axis(matplotlib.ticker.FormatStrFormatter("%.2g"))  # a label on every tick of a short log axis
    ax.set_xlabel("group size (elements per scale)")
    ax.set_ylabel("quant_err %s (median over cases)" % args.metric)
    ax.set_title("error of compressed K/V attention against unquantized K/V", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.o)
    print("wrote %s: %d series" % (args.o, len(series)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="kind", required=True)
    h = sub.add_parser("heatmap", help="error over (token, head) of one output, as a multiple of the tolerance")
    h.add_argument("golden", help="the case's golden manifest (<stem>.json from kvbench golden)")
    h.add_argument("actual", help="the actual outputs (<stem>.safetensors from kvbench run --save-actual)")
    h.add_argument("--output", help="the output tensor (default: the first with a violation)")
    h.add_argument("--token-axis", type=int, help="axis of tokens (default: by the output's rank)")
    h.add_argument("--head-axis", type=int, help="axis of heads (default: by the output's rank)")
    h.add_argument("-o", required=True, help="PNG file to write")
    h.set_defaults(run=heatmap)
    b = sub.add_parser("bench", help="effective GB/s against KV length, copy bandwidth as the roof")
    b.add_argument("report", help="kvbench bench --json FILE")
    b.add_argument("--x", help="shape or input key of the KV length (default: the first of %s)" % ", ".join(KV_LENGTH_KEYS))
    b.add_argument("-o", required=True, help="PNG file to write")
    b.set_defaults(run=bench)
    q = sub.add_parser("quant-err", help="quant_err against group size and bit width")
    q.add_argument("report", help="kvbench run --json FILE of cases with a quant_err figure")
    q.add_argument("--metric", choices=("rel_l2", "max_abs"), default="rel_l2")
    q.add_argument("-o", required=True, help="PNG file to write")
    q.set_defaults(run=quant_err)
    args = ap.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
