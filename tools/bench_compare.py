#!/usr/bin/env python3
"""One table from several `kvbench bench --json` reports of the same cases (tools/gpu_check.sh's
runs): per case, each report's median time, its percent of that report's copy bandwidth and
the shader clock it ran at, then the ratio of each report's median to the first's.
Usage: tools/bench_compare.py NAME=REPORT.json [NAME=REPORT.json ...]; a report that is
missing or unreadable is named and left out. Exit 0 printed, 2 a bad argument."""
import json
import sys


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__, file=sys.stderr)
        return 2
    reports = []
    for arg in argv[1:]:
        name, path = arg.split("=", 1)
        try:
            with open(path) as f:
                reports.append((name, json.load(f)))
        except (OSError, ValueError) as e:
            print(f"{name}: not read ({e})")
    if not reports:
        return 0
    for name, r in reports:
        clock = r.get("copy_timing", {}).get("shader_clock_mhz", "unknown")
        clock = f"{clock:.0f} MHz" if isinstance(clock, (int, float)) else clock
        print(f"{name}: copy {r.get('copy_bandwidth_gbps', 0):.1f} GB/s at {clock}, {r.get('device', {}).get('name', '?')}")
    cases = []
    for _, r in reports:
        for c in r.get("cases", []):
            if c["name"] not in cases:
                cases.append(c["name"])
    print(f"{'case':60} " + " ".join(f"{n[:24]:>24}" for n, _ in reports))
    for case in cases:
        cells, first = [], None
        for _, r in reports:
            c = next((c for c in r.get("cases", []) if c["name"] == case), None)
            if c is None or c.get("status") != "PASS" or "median_ms" not in c:
                cells.append(f"{(c or {}).get('status', '-'):>24}")
                continue
            ms = c["median_ms"]
            first = first or ms
            mhz = c.get("timing", {}).get("shader_clock_mhz")
            clock = f"{mhz:.0f}" if isinstance(mhz, (int, float)) else "?"
            cells.append(f"{ms:8.3f} {c.get('percent_of_copy', 0):5.1f}% {clock:>4} x{ms / first:4.2f}")
        print(f"{case[:60]:60} " + " ".join(cells))
    print("cells: median ms, percent of the report's copy, shader clock MHz, time against the first report's")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
