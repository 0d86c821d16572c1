#!/usr/bin/python3
"""kvbench's own ggml.FLASH_ATTN_EXT Vulkan kernel against ggml-vulkan's (llama.cpp's
released libraries, examples/ggml), on the same Vulkan device and the same bytes.

    tools/ggml_side_by_side.py CASES... [--filter REGEX]... [--rounds 3] [--repeat 5]
                               [--warmup 2] [--json OUT] [--golden-dir DIR]

CASES are ggml.FLASH_ATTN_EXT case files or folders (files marked slow are included). The
goldens are written once (`kvbench golden ... -o DIR`); ggml computes from their inputs, and
kvbench's bench generates the same inputs from the same case files and seeds. Then an untimed
warm round (kvbench's shaders and ggml-vulkan's pipelines are compiled on first use: minutes
on lavapipe when Mesa's cache is cold), then --rounds rounds, alternating the two (kvbench
first in even rounds, ggml first in odd ones, so that a drifting machine favours neither):

  kvbench   `kvbench bench CASES --op ggml.FLASH_ATTN_EXT --reps N --json ...`: N back-to-back
            runs of its dispatches in one submission, each timed with Vulkan timestamp
            queries (the sum of its dispatches' device times), after a warm-up of at least 2
            runs and 200 ms. kvbench bench reports no host wall time.
  ggml      `kvbench-ggml --device vulkan --repeat N --warmup W --vk-timestamps DIR`: the graph
            (one FLASH_ATTN_EXT node) built and uploaded once, then W + N calls of
            ggml_backend_graph_compute. Each is timed twice: the host wall time of the call
            (recording the command buffer, submitting, waiting for the fence) and
            ggml-vulkan's own timestamp queries around the graph's node (GGML_VK_PERF_LOGGER,
            every dispatch of the node, a split-k reduction included). With --ggml-wall-run,
            a second run without the perf logger gives the wall time as ggml normally runs:
            then ggml-vulkan spin-waits on its fence for the last fifth of a graph, here the
            whole of it, and on lavapipe that spinning thread takes a core from the device's
            worker threads (on 2 cores: 1.45-2.1x the timestamped time); the perf logger's
            path sleeps in vkWaitForFences, as kvbench does.

Like is compared with like as far as the two allow: the ratio ggml/kvbench divides ggml's
timestamp median by kvbench's, device time on both sides, neither holding a submission or a
fence wait. What still differs: kvbench sums its dispatches' own times (not the barriers
between them), while ggml's two timestamps span its node's dispatches and the barriers
between; kvbench's runs follow each other in one submission, ggml's each come from a
submission of their own. ggml's host wall time of the same calls is shown beside it: the
device time plus recording, submitting and waking up (on lavapipe, a CPU driver, the queue
runs on a thread of the calling process). Both read their inputs from the same
buffers run after run (no cache flush). Per case, each side's figure is the median over the
rounds of that round's median of N. Bytes are kvbench's traffic count for the case (what the
operator must read and write at least: q, K, V, mask, sinks, out), the same for both, so GB/s
= bytes / median time, and %copy = that as a share of the copy bandwidth kvbench bench
measures in each round (the median over rounds); GFLOPS likewise from kvbench's FLOP count
(2 (Dk + Dv) per query row, key and head: the figure for a prefill, which computes more than
it moves). Each run also records how many cores other processes kept busy meanwhile
(/proc/stat less this tool's children; per round the median): another process on the cores
slows both sides, since lavapipe runs on the CPU.

Output: a table on stdout; --json OUT writes every figure (per-round values included).
Exit 0 done, 1 a tool failed or a case did not run on one side, 2 bad arguments.
Standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

OP = "ggml.FLASH_ATTN_EXT"


def log(msg):
    print(f"ggml_side_by_side: {msg}", file=sys.stderr, flush=True)


def busy_seconds():
    """CPU seconds the whole machine has been busy (/proc/stat), None where unreadable."""
    try:
        with open("/proc/stat") as f:
            t = [int(x) for x in f.readline().split()[1:]]
        return (sum(t[:8]) - t[3] - t[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait
    except (OSError, ValueError, IndexError):
        return None


def children_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


OTHER_CORES = []  # per run(): cores busy with other processes meanwhile (the machine's noise)


def run(cmd, ok=(0,)):
    """stdout and stderr of cmd; stderr is shown as it was. Raises on an exit status not in ok."""
    log("$ " + " ".join(cmd))
    start, busy0, mine0 = time.monotonic(), busy_seconds(), children_seconds()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall, busy1 = time.monotonic() - start, busy_seconds()
    other = None
    if busy0 is not None and busy1 is not None and wall > 0:
        other = max(0.0, (busy1 - busy0 - (children_seconds() - mine0)) / wall)
    OTHER_CORES.append(other)
    sys.stderr.write(p.stderr)
    log(f"  exit {p.returncode} in {wall:.1f} s; other processes used {fmt(other, '.2f')} cores meanwhile")
    if p.returncode not in ok:
        raise RuntimeError(f"{cmd[0]} exited with {p.returncode}")
    return p.stdout, p.stderr


def selection(args):
    sel = ["--op", OP, "--slow", "include"]
    for f in args.filter:
        sel += ["--filter", f]
    return sel


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def kvbench_round(args, reps, tmp, tag):
    out = os.path.join(tmp, f"bench_{tag}.json")
    cmd = [args.kvbench, "bench", *args.cases, *selection(args), "--reps", str(reps), "--json", out]
    if args.kvbench_device is not None:
        cmd += ["--device", str(args.kvbench_device)]
    run(cmd, ok=(0, 1))  # 1: a case failed its check; its time is still a measurement
    with open(out) as f:
        return json.load(f)


def ggml_round(args, repeat, warmup, timestamps):
    cmd = [args.kvbench_ggml, "--device", args.ggml_device, "--repeat", str(repeat), "--warmup", str(warmup)]
    if timestamps:
        cmd.append("--vk-timestamps")
    stdout, stderr = run(cmd + [args.golden_dir], ok=(0, 77))
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    m = re.search(r"kvbench-ggml: ggml (\S+) \((\S+)\) on (.*), started", stderr)
    return {c["case"]: c for c in lines}, (f"ggml {m.group(1)} ({m.group(2)})" if m else "ggml ?")


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", help="ggml.FLASH_ATTN_EXT case files or folders")
    ap.add_argument("--filter", action="append", default=[], help="kvbench --filter (repeatable: any matches)")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds of both (default 3)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per case and round, both sides (default 5)")
    ap.add_argument("--warmup", type=int, default=2, help="ggml's untimed computes before them (default 2)")
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--golden-dir", help="write the goldens here (default: a temporary folder, removed)")
    ap.add_argument("--kvbench", default="build/kvbench")
    ap.add_argument("--kvbench-ggml", default="build/kvbench-ggml")
    ap.add_argument("--kvbench-device", type=int, help="kvbench's Vulkan device index (default: its own choice)")
    ap.add_argument("--ggml-device", default="vulkan", help="kvbench-ggml --device (default vulkan: Vulkan0)")
    ap.add_argument("--ggml-wall-run", action="store_true",
                    help="per round, also run ggml without the perf logger for its plain wall time")
    ap.add_argument("--no-warm-round", action="store_true", help="skip the untimed round that compiles")
    ap.add_argument("--table", metavar="JSON", help="only print the table of an earlier --json and exit")
    args = ap.parse_args()
    if args.table:
        with open(args.table) as f:
            rep = json.load(f)
        print_table(rep, any(c["ggml"].get("plain_wall_median_ms") is not None for c in rep["cases"]))
        return 0
    if not args.cases:
        ap.error("no case files or folders given")
    if args.rounds < 1 or args.repeat < 1 or args.warmup < 0:
        ap.error("--rounds and --repeat must be at least 1, --warmup at least 0")

    with tempfile.TemporaryDirectory(prefix="ggml_sbs_") as tmp:
        args.golden_dir = args.golden_dir or os.path.join(tmp, "golden")
        return side_by_side(args, tmp)


def side_by_side(args, tmp):
    start = time.monotonic()
    run([args.kvbench, "golden", *args.cases, *selection(args), "-o", args.golden_dir])

    if not args.no_warm_round:
        log("warm round (untimed): compiles kvbench's shaders and ggml-vulkan's pipelines")
        kvbench_round(args, 1, tmp, "warm")
        ggml_round(args, 1, 0, timestamps=False)

    rounds = []
    for r in range(args.rounds):
        log(f"round {r + 1} of {args.rounds}")
        rec = {"loadavg_before": loadavg()}
        OTHER_CORES.clear()
        order = ["kvbench", "ggml"] if r % 2 == 0 else ["ggml", "kvbench"]
        for side in order:
            if side == "kvbench":
                rec["kvbench"] = kvbench_round(args, args.repeat, tmp, f"round{r}")
            else:
                rec["ggml"], rec["ggml_version"] = ggml_round(args, args.repeat, args.warmup, timestamps=True)
                if args.ggml_wall_run:
                    rec["ggml_wall"], _ = ggml_round(args, args.repeat, args.warmup, timestamps=False)
        rec["loadavg_after"] = loadavg()
        rec["other_cores"] = med(OTHER_CORES)
        rounds.append(rec)

    first = rounds[0]["kvbench"]
    copy = [rd["kvbench"].get("copy_bandwidth_gbps") for rd in rounds]
    copy_med = med(copy)
    names = [c["name"] for c in first["cases"]]
    missing = False
    cases = []
    for name in names:
        kv = [next((c for c in rd["kvbench"]["cases"] if c["name"] == name), {}) for rd in rounds]
        gg = [rd["ggml"].get(name, {}) for rd in rounds]
        gw = [rd.get("ggml_wall", {}).get(name, {}) for rd in rounds]
        nbytes = kv[0].get("bytes")
        k_ms = med([c.get("median_ms") for c in kv])
        g_ts = med([c.get("vk_timestamp_median_ms") for c in gg])
        g_wall = med([c.get("median_ms") for c in gg])
        g_plain = med([c.get("median_ms") for c in gw]) if args.ggml_wall_run else None
        if k_ms is None or g_ts is None:
            missing = True

        def gbps(ms):
            return nbytes / (ms * 1e6) if ms and nbytes else None

        def pct(ms):
            g = gbps(ms)
            return 100 * g / copy_med if g and copy_med else None

        cases.append({
            "name": name,
            "describe": kv[0].get("resolved", {}),
            "bytes": nbytes,
            "flops": kv[0].get("flops"),
            "kvbench": {
                "status": [c.get("status") for c in kv],
                "median_ms_per_round": [c.get("median_ms") for c in kv],
                "min_ms_per_round": [c.get("min_ms") for c in kv],
                "max_ms_per_round": [c.get("max_ms") for c in kv],
                "kernels_round0": kv[0].get("kernels"),
                "median_ms": k_ms, "gbps": gbps(k_ms), "percent_of_copy": pct(k_ms),
            },
            "ggml": {
                "skip": gg[0].get("skip"),
                "timestamp_ms_per_round": [c.get("vk_timestamp_ms") for c in gg],
                "wall_ms_per_round": [c.get("compute_ms") for c in gg],
                "warmup_ms_per_round": [c.get("warmup_ms") for c in gg],
                "timestamp_median_ms": g_ts, "gbps": gbps(g_ts), "percent_of_copy": pct(g_ts),
                "wall_median_ms": g_wall, "wall_gbps": gbps(g_wall),
                "plain_wall_median_ms": g_plain,
                "plain_wall_ms_per_round": [c.get("compute_ms") for c in gw] if args.ggml_wall_run else None,
            },
            "ratio_ggml_over_kvbench": g_ts / k_ms if g_ts and k_ms else None,
            "ratio_ggml_wall_over_kvbench": g_wall / k_ms if g_wall and k_ms else None,
        })

    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpu": cpu_name(), "cores": os.cpu_count(), "kernel": platform.release()},
        "device": first.get("device"),
        "ggml_device": next((c.get("device") for rd in rounds for c in rd["ggml"].values()), None),
        "ggml_version": rounds[0].get("ggml_version"),
        "kvbench_version": first.get("kvbench_version"),
        "rounds": args.rounds, "repeat": args.repeat, "ggml_warmup": args.warmup,
        "copy_bandwidth_gbps_per_round": copy, "copy_bandwidth_gbps": copy_med,
        "loadavg_per_round": [[rd["loadavg_before"], rd["loadavg_after"]] for rd in rounds],
        "other_cores_per_round": [rd["other_cores"] for rd in rounds],
        "seconds": time.monotonic() - start,
        "cases": cases,
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    print_table(report, args.ggml_wall_run)
    return 1 if missing else 0


def gflops(case, ms):
    return case["flops"] / (ms * 1e6) if ms and case.get("flops") else None


def print_table(rep, plain):
    dev = rep["device"] or {}
    print(f"{rep['date']}  {rep['machine']['cpu']}, {rep['machine']['cores']} cores; kvbench on "
          f"{dev.get('name', '?')} ({dev.get('driver', '?')}); {rep['ggml_version']} on {rep['ggml_device']}")
    print(f"{rep['rounds']} rounds x {rep['repeat']} runs; copy bandwidth {fmt(rep['copy_bandwidth_gbps'], '.2f')} GB/s "
          f"(rounds: {', '.join(fmt(c, '.2f') for c in rep['copy_bandwidth_gbps_per_round'])}); cores used by other "
          f"processes per round: {', '.join(fmt(c, '.2f') for c in rep['other_cores_per_round'])}")
    width = max(len(c["name"]) for c in rep["cases"])
    head = (f"{'case':{width}}  {'MB':>7}  {'kvbench ms':>10}  {'ggml ms':>10}  {'ggml/kvb':>8}  "
            f"{'ggml wall':>10}{'  plain wall' if plain else ''}  {'kvb GB/s':>8}  {'ggml GB/s':>9}  "
            f"{'kvb %copy':>9}  {'ggml %copy':>10}  {'kvb GFLOPS':>10}  {'ggml GFLOPS':>11}")
    print(head)
    for c in rep["cases"]:
        k, g = c["kvbench"], c["ggml"]
        status = "" if set(k["status"]) == {"PASS"} else "  kvbench: " + "/".join(map(str, k["status"]))
        if g["skip"]:
            status += "  ggml: " + g["skip"]
        ratio = c["ratio_ggml_over_kvbench"]
        print(f"{c['name']:{width}}  {fmt(c['bytes'] / 1e6 if c['bytes'] else None, '7.2f')}  "
              f"{fmt(k['median_ms'], '10.3f')}  {fmt(g['timestamp_median_ms'], '10.3f')}  "
              f"{fmt(ratio, '8.2f')}  {fmt(g['wall_median_ms'], '10.3f')}"
              f"{'  ' + fmt(g['plain_wall_median_ms'], '10.3f') if plain else ''}  "
              f"{fmt(k['gbps'], '8.2f')}  {fmt(g['gbps'], '9.2f')}  {fmt(k['percent_of_copy'], '8.1f')}%  "
              f"{fmt(g['percent_of_copy'], '9.1f')}%  {fmt(gflops(c, k['median_ms']), '10.2f')}  "
              f"{fmt(gflops(c, g['timestamp_median_ms']), '11.2f')}{status}")
    print("kvbench ms, ggml ms: device time (Vulkan timestamp queries; ggml's by GGML_VK_PERF_LOGGER), the median "
          "over rounds of each round's median; ggml/kvb: their ratio (> 1: kvbench faster); ggml wall: host time of "
          "ggml_backend_graph_compute with the perf logger on" + ("; plain wall: without it" if plain else "") +
          "; GB/s and %copy from kvbench's byte count of the case, against kvbench's copy bandwidth; GFLOPS from "
          "kvbench's FLOP count of the case")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        log(f"error: {e}")
        sys.exit(1)
