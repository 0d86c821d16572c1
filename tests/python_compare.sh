#!/usr/bin/env bash
# The Python comparator (python/kvbench/compare.py, behind kvbench.assert_matches and the
# pytest plugin) against `kvbench check` on every default case: the golden's own values
# (must pass), and per case one planted error, by turns: one element perturbed beyond its
# allowance, two NaNs (a tie: the first is the worst), an untouched in-place element changed
# (its sign flipped: -0 is not +0), a run of elements left unwritten (an in-place tensor's
# initial values, a plain output's zeros, the poison's signalling NaN where NaN is permitted),
# and every element moved within its allowance (to
# its alternate, a permitted NaN, half its allowance; rounding may push it out: the plant of
# the few goldens that permit a NaN). Per output, every metric of `check --json` (verdict,
# counts, max_abs, max_rel, rel_l2, scale, max_over_tolerance, the worst element's index,
# actual and golden) must be the same number, and the failure lines the same text; a plant
# that must fail must fail. About 115 s of CPU time (2 GB of goldens, read three times).
# Usage: python_compare.sh KVBENCH SOURCE_DIR WORK_DIR
set -uo pipefail
kvbench=$1 src=$2 work=$3
. "$src/tests/find_python.sh"
require_python numpy xxhash
rm -rf "$work" && mkdir -p "$work"
start=$SECONDS
"$kvbench" golden "$src/cases" -o "$work/golden" --jobs 2 > "$work/golden.log" 2>&1 ||
  { tail -5 "$work/golden.log"; echo "FAIL: kvbench golden $src/cases"; exit 1; }
echo "ok: $(tail -1 "$work/golden.log") in $((SECONDS - start)) s"
PYTHONPATH="$src/python" "$python" - "$kvbench" "$work" <<'PY'
import collections, json, math, os, subprocess, sys, time
import numpy as np
import kvbench
from kvbench.compare import compare, failure_lines, _UNWRITTEN as UNWRITTEN

program, work = sys.argv[1:3]
KINDS = ("perturb", "nan", "untouched", "unwritten", "within")
MUST_FAIL = ("perturb", "nan", "untouched")


def touched(g, name):
    return g.touched[name].reshape(-1).astype(bool) if name in g.touched else np.ones(g.expected[name].size, bool)


def allowance(g, name):
    e = g.expected[name].reshape(-1).astype(np.float64)
    if name in g.bounds:
        return g.bounds[name].reshape(-1).astype(np.float64)
    return g.tolerances[name]["atol"] + g.tolerances[name]["rtol"] * np.abs(e)


def plant(g, kind, rng):
    """The case's golden values with one error of `kind` in one output: (outputs, kind done)."""
    out = {name: g.expected[name].copy() for name in g.outputs}

    def nan_targets(name):  # touched float elements where a NaN is neither golden nor permitted
        e = g.expected[name].reshape(-1).astype(np.float64)
        ok = g.nan_permitted[name].reshape(-1) if name in g.nan_permitted else False
        return np.flatnonzero(touched(g, name) & np.isfinite(e) & ~ok)

    nan = [n for n in g.outputs if out[n].dtype.kind == "f" and nan_targets(n).size >= 2
           and g.dtypes[n] not in ("f4e2m1", "f4e1m2", "f6e2m3", "f6e3m2")]  # formats without a NaN
    untouched = [n for n in g.touched if not touched(g, n).all()]
    if (kind == "nan" and not nan) or (kind == "untouched" and not untouched):
        kind = "perturb"
    name = str(rng.choice(untouched if kind == "untouched" else nan if kind == "nan" else g.outputs))
    a, on = out[name].reshape(-1), touched(g, name)
    finite = np.isfinite(a.astype(np.float64))
    nan_ok = g.nan_permitted[name].reshape(-1) if name in g.nan_permitted else np.zeros(a.size, bool)
    with np.errstate(invalid="ignore", over="ignore"):
        allowed = allowance(g, name)
        if kind == "perturb":  # beyond the allowance
            candidates = np.flatnonzero(on & finite & np.isfinite(allowed))
            i = rng.choice(candidates if candidates.size else np.flatnonzero(on))
            if g.dtypes[name] == "f8e8m0":  # powers of two only: the next one
                a[i] = a[i] * 2 if a[i] < 2.0 ** 126 else a[i] / 2
            elif g.dtypes[name] in ("f4e2m1", "f4e1m2", "f6e2m3", "f6e3m2", "hifloat8"):  # another code's value
                a[i] = -a[i] if a[i] != 0 else 1
            elif a.dtype.kind == "f":
                a[i] = a[i] + 2 * allowed[i] + 0.25 * max(abs(float(a[i])), 1.0)
            else:  # the top bit: past any alternate and any tolerance of the dtype
                top = 1 << ((4 if g.dtypes[name] in ("s4", "u4") else 8 * a.dtype.itemsize) - 1)
                a[i] ^= a.dtype.type(-top if a.dtype.kind == "i" else top)
        elif kind == "nan":
            i = np.sort(rng.choice(nan_targets(name), 2, replace=False))
            a[i] = np.nan
        elif kind == "untouched":
            i = rng.choice(np.flatnonzero(~on))
            a[i] = -a[i] if a.dtype.kind == "f" else a[i] ^ 1
        elif kind == "unwritten":
            i = np.flatnonzero(on)[rng.integers(on.sum()):][:5]
            a[i] = g.inputs[name].reshape(-1)[i] if name in g.touched else 0
            if nan_ok.any() and g.dtypes[name] in UNWRITTEN:  # still kvbench's poison where NaN is permitted
                j = np.flatnonzero(nan_ok)[:5]
                a.view("u%d" % a.dtype.itemsize)[j] = UNWRITTEN[g.dtypes[name]]
        else:  # within
            if name in g.alternates:
                alt = g.alternates[name].reshape(-1)
                a[~np.isnan(alt)] = alt[~np.isnan(alt)]
            if nan_ok.any():
                a[nan_ok] = np.nan
            nudge = on & finite & np.isfinite(allowed) & ~nan_ok & (a.dtype.kind == "f")
            a[nudge] = a[nudge] + 0.5 * allowed[nudge] * rng.choice([-1, 1], nudge.sum())
    return out, kind


def number(obj, key):
    return obj[key] if obj.get(key) is not None else float(obj[key + "_text"])


def same(x, y):
    return x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))


def check_both():
    """kvbench check of both actual folders, at once (two cores): per folder, its JSON report's
    cases by name and its log's lines."""
    procs = {}
    for folder in ("clean", "planted"):
        with open("%s/%s.log" % (work, folder), "w") as log:
            procs[folder] = subprocess.Popen([program, "check", "--golden", work + "/golden", "--actual",
                                              work + "/" + folder, "--json", work + "/" + folder + ".json"],
                                             stdout=log, stderr=subprocess.STDOUT)
    reports = {}
    for folder, proc in procs.items():
        proc.wait()
        with open("%s/%s.json" % (work, folder)) as f, open("%s/%s.log" % (work, folder)) as log:
            reports[folder] = {c["name"]: c for c in json.load(f)["cases"]}, log.read().splitlines()
    return reports


def text_lines(lines):
    return collections.Counter(l.strip() for l in lines if " elements out of tolerance " in l
                               or l.strip().startswith(("worst: ", "reason: ")))


start = time.time()
python, kinds, py_lines = {"clean": {}, "planted": {}}, {}, collections.Counter()
for folder in python:
    os.makedirs(os.path.join(work, folder))
for k, path in enumerate(kvbench.cases(work + "/golden")):
    g = kvbench.load_golden(path)
    clean = dict(g.expected)
    # The few goldens that permit a NaN get the one plant that puts NaNs there.
    kind = "within" if g.nan_permitted else KINDS[k % len(KINDS)]
    planted, kinds[g.name] = plant(g, kind, np.random.default_rng(k))
    for folder, outputs in (("clean", clean), ("planted", planted)):
        kvbench.save_actual(os.path.join(work, folder, g.stem + ".safetensors"), outputs, g)
        results, reasons = compare(g, outputs)
        python[folder][g.name] = results, reasons
        if folder == "planted" and (reasons or not all(m.passed for m in results)):
            py_lines += text_lines(failure_lines(g, results, reasons))
print("ok: %d goldens read, planted and compared in Python in %.0f s" % (len(kinds), time.time() - start))

start = time.time()
reports = check_both()
print("ok: kvbench check of both folders in %.0f s" % (time.time() - start))
fail = 0
for folder in ("clean", "planted"):
    cpp, log = reports[folder]
    differ, failed = [], collections.Counter()
    for name, (results, reasons) in python[folder].items():
        c = cpp.get(name)
        py_pass = not reasons and all(m.passed for m in results)
        if c is None or (c["status"] == "PASS") != py_pass:
            differ.append("%s: kvbench check %s, Python %s %s" % (name, c and c["status"], py_pass, reasons))
            continue
        failed[kinds[name]] += not py_pass
        for m, o in zip(results, c["outputs"]):
            w = o.get("worst", {})
            counts = ("elements", "violations", "boundary", "untouched_changed", "unwritten",
                      "nonfinite_mismatches", "per_element_bound")
            pairs = [(f, getattr(m, f), o[f]) for f in counts]
            pairs += [(f, getattr(m, f), number(o, f)) for f in ("max_abs", "max_rel", "rel_l2", "scale",
                                                                "max_over_tolerance")]
            pairs += [("worst_index", m.worst_index, w.get("flat_index", -1))]
            if w:
                pairs += [("worst_actual", m.worst_actual, number(w, "actual")),
                          ("worst_golden", m.worst_golden, number(w, "golden")),
                          ("worst_untouched", m.worst_untouched, w["outside_written_region"])]
            bad = ["%s %r != %r" % (f, x, y) for f, x, y in pairs if not same(x, y)]
            if bad:
                differ.append("%s %s (%s): Python vs kvbench check: %s"
                              % (name, m.tensor, kinds[name], "; ".join(bad)))
    for d in differ[:10]:
        print("FAIL: %s: %s" % (folder, d))
    fail |= bool(differ)
    if folder == "clean":
        if sum(failed.values()) or len(cpp) != len(kinds):
            print("FAIL: clean: the golden's own values fail %d cases; kvbench check saw %d of %d"
                  % (sum(failed.values()), len(cpp), len(kinds)))
            fail = 1
        elif not differ:
            print("ok: clean: all %d cases pass in both, every metric and worst element the same" % len(kinds))
        continue
    done = collections.Counter(kinds.values())
    missed = ["%s %d of %d" % (k, done[k] - failed[k], done[k]) for k in MUST_FAIL if failed[k] != done[k]]
    if missed:
        print("FAIL: planted errors that did not fail: " + ", ".join(missed))
        fail = 1
    cpp_lines = text_lines(log)
    if cpp_lines != py_lines:
        for line in list((cpp_lines - py_lines).elements())[:5]:
            print("FAIL: kvbench check printed, Python did not: " + line)
        for line in list((py_lines - cpp_lines).elements())[:5]:
            print("FAIL: Python printed, kvbench check did not: " + line)
        fail = 1
    if not differ and not missed and cpp_lines == py_lines:
        print("ok: planted: %s; the same verdict, metrics, worst element and %d failure lines"
              % (", ".join("%s %d/%d failed" % (k, failed[k], done[k]) for k in KINDS), sum(cpp_lines.values())))
sys.exit(fail)
PY
rc=$?
# 3 GB: kept for a look after a failure only.
[ $rc = 0 ] && rm -rf "$work/golden" "$work/clean" "$work/planted"
exit $rc
