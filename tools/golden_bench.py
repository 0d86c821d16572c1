#!/usr/bin/env python3
"""What a golden costs, against what its bytes cost: for each case file, the wall time and
peak RSS of `kvbench golden` on it, the bytes it wrote, the time `cp -r` takes to copy
them (same run, so the ratio is fair on a noisy machine), and the reference's GFLOPS
(the manifest's `flops` over the golden time). With --run, also the wall time of
`kvbench run` on the case and the device time `kvbench bench --reps 1` reports, for the
ratio run / (golden + device).

    tools/golden_bench.py CASE.json... [--kvbench build/kvbench] [--run] [--threads N] [--per-case]
                          [--filter REGEX]

With --per-case, each expanded case of the files is measured on its own (`--filter
'^NAME$'`), so the peak RSS is one case's, not that of the cases `--jobs` computes at once.
With --check-memory, the exit status is 1 when a measurement's peak RSS is over the target
of issue 22: 1.5 x the bytes written + 100 MiB (CTest golden_memory).

Standard library only (no numpy): it runs anywhere kvbench does.
"""
import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def timed(cmd):
    """(seconds, peak RSS in bytes, exit status) of one child process."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: a failing case, still a measurement
        sys.exit("%s exited %d:\n%s" % (" ".join(cmd), code, err))
    return seconds, usage.ru_maxrss * 1024, code


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def flops_of(folder):
    total = 0
    for name in os.listdir(folder):
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                total += json.load(f).get("flops", 0)
    return total


# Issue 22's memory target: peak RSS <= 1.5 x the bytes a golden writes, plus a fixed amount
# (the program, the Vulkan-free runtime, buffers).
RSS_PER_BYTE_WRITTEN = 1.5
RSS_ALLOWANCE = 100 * 2**20


def ere_escape(text):
    """text as a POSIX extended regular expression matching it literally."""
    return "".join("\\" + c if c in ".[]()*+?{}|^$\\" else c for c in text)


def case_names(kvbench, case, extra):
    """The expanded case names of a case file, in kvbench's order."""
    out = subprocess.run([kvbench, "list", case, "--slow", "include"] + extra, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("kvbench list %s failed:\n%s" % (case, out.stderr))
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip() and not re.fullmatch(r"\d+ cases?", line)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="+", help="case files (each measured on its own)")
    ap.add_argument("--kvbench", default="build/kvbench")
    ap.add_argument("--run", action="store_true", help="also time `kvbench run` and `kvbench bench --reps 1`")
    ap.add_argument("--threads", type=int, help="passed to kvbench golden/run --threads")
    ap.add_argument("--tmp", help="scratch folder (default: a new one under $TMPDIR, removed after)")
    ap.add_argument("--per-case", action="store_true", help="measure each expanded case on its own")
    ap.add_argument("--filter", help="passed to kvbench --filter: only the cases it matches")
    ap.add_argument("--check-memory", action="store_true",
                    help="exit 1 when a peak RSS is over 1.5 x the bytes written + 100 MiB")
    args = ap.parse_args()
    over = []
    threads = ["--threads", str(args.threads)] if args.threads else []
    selection = ["--filter", args.filter] if args.filter else []
    width = 60 if args.per_case else 28
    print("%-*s %9s %9s %8s %7s %9s %7s %8s" % (width, "case" if args.per_case else "case file", "golden s", "MiB", "cp s",
                                                "g/cp", "RSS MiB", "RSS/B", "GFLOPS")
          + ("  %7s %9s %7s" % ("run s", "device s", "run/(g+d)") if args.run else ""))
    runs = []  # (label, case file, kvbench selection arguments)
    for case in args.cases:
        if args.per_case:
            runs += [(name, case, ["--filter", "^" + ere_escape(name) + "$"]) for name in case_names(args.kvbench, case, selection)]
        else:
            runs.append((os.path.basename(case), case, selection))
    for label, case, select in runs:
        scratch = tempfile.mkdtemp(dir=args.tmp)
        try:
            out, copy = os.path.join(scratch, "golden"), os.path.join(scratch, "copy")
            g_s, rss, _ = timed([args.kvbench, "golden", case, "-o", out, "--slow", "include"] + select + threads)
            written = folder_bytes(out)
            start = time.monotonic()
            subprocess.run(["cp", "-r", out, copy], check=True)
            subprocess.run(["sync", "-f", copy], check=False)
            cp_s = time.monotonic() - start
            flops = flops_of(out)
            line = "%-*s %9.2f %9.1f %8.2f %7.1f %9.1f %7.2f %8.2f" % (
                width, label[:width], g_s, written / 2**20, cp_s, g_s / cp_s, rss / 2**20, rss / written,
                flops / g_s / 1e9)
            if args.run:
                run_s, _, _ = timed([args.kvbench, "run", case, "--slow", "include"] + select + threads)
                report = os.path.join(scratch, "bench.json")
                timed([args.kvbench, "bench", case, "--slow", "include", "--warmup", "0", "--reps", "1", "--json", report] + select)
                with open(report) as f:
                    rows = json.load(f)["cases"]
                device_s = sum((r.get("median_ms") or 0) for r in rows) / 1e3
                line += "  %7.2f %9.2f %7.2f" % (run_s, device_s, run_s / (g_s + device_s))
            if rss > RSS_PER_BYTE_WRITTEN * written + RSS_ALLOWANCE:
                over.append(label)
                line += "  over the memory target"
            print(line, flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.check_memory and over:
        sys.exit("peak RSS over %.1f x the bytes written + %d MiB: %s" % (RSS_PER_BYTE_WRITTEN, RSS_ALLOWANCE // 2**20, ", ".join(over)))


if __name__ == "__main__":
    main()
