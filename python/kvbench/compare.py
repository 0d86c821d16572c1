"""kvbench's comparator in numpy: src/check/compare.cpp (compare_output, Metrics) and the
failure text of `kvbench check` (src/check/output_text.cpp: violations_line, worst_line,
repro_command), element for element the same verdict, metrics and worst element (CTest
python_compare checks it against `kvbench check` on every default case).

    m = kvbench.compare_output(golden, "y", my_y)   # a Metrics
    kvbench.assert_matches(golden, {"y": my_y})     # AssertionError with kvbench's failure lines

Outputs are first converted to the manifest's dtype as save_actual writes them (bf16 rounded
to nearest even, s4/u4 wrapped to their nibble), so an array is judged as `kvbench check`
judges the file save_actual makes of it. specs/comparison.md and specs/python-package.md.
"""
import math

import numpy as np

from .backend import _numpy
from .golden import from_array, to_array


class Metrics:
    """One output's comparison: the fields of the C++ Metrics (src/check/compare.hpp)."""

    def __init__(self, tensor, shape):
        self.tensor, self.shape = tensor, tuple(shape)
        self.elements = self.violations = self.nonfinite_mismatches = 0
        self.untouched_changed = self.boundary = self.unwritten = 0
        self.max_abs = self.max_rel = self.scale = self.rel_l2 = self.max_over_tolerance = 0.0
        self.worst_index = -1
        self.worst_actual = self.worst_golden = self.worst_allowed = 0.0
        self.per_element_bound = self.worst_untouched = False
        self.tolerance = {"atol": 0.0, "rtol": 0.0}

    @property
    def passed(self):
        return self.violations == 0

    def __repr__(self):
        return "Metrics(%s: %d violations of %d, worst %d)" % (self.tensor, self.violations, self.elements,
                                                               self.worst_index)


def stored(array, dtype, shape):
    """`array` as kvbench reads it back from save_actual's file (bf16 as float32, s4 as int8)."""
    return to_array(from_array(array, dtype), dtype, shape)


# compare.cpp unwritten_nan_bits: the poison's signalling NaN (no arithmetic yields it), as
# stored() holds each dtype (bf16 widened to f32 by its top half).
_UNWRITTEN = {"f16": 0x7D5A, "bf16": 0x7FA50000, "f32": 0x7FA5A5A5}


def _bits(a):
    """The stored bits of each element: floats compared as bits (-0 is not +0, NaN payloads count)."""
    if a.dtype.kind == "f":
        return a.view("u%d" % a.dtype.itemsize)
    return a


def _within(a, g, allowed):
    """compare.cpp within(): NaN only with NaN, an infinity only with itself, else |a-g| <= allowed."""
    nan = np.isnan(a) | np.isnan(g)
    inf = np.isinf(a) | np.isinf(g)
    return np.where(nan, np.isnan(a) & np.isnan(g), np.where(inf, a == g, np.abs(a - g) <= allowed))


def _over_tolerance(a, g, allowed):
    """compare.cpp over_tolerance(), its tests applied last to first so that the first wins."""
    error = np.abs(a - g)
    over = np.where(allowed > 0, error / allowed, np.inf)
    over = np.where(error == 0, 0.0, over)
    over = np.where(np.isinf(a) | np.isinf(g), np.where(a == g, 0.0, np.inf), over)
    return np.where(np.isnan(a) | np.isnan(g), np.where(np.isnan(a) & np.isnan(g), 0.0, np.inf), over)


def _sequential_sum(x):
    """The sum in index order, as the C++ loop adds (numpy's sum is pairwise: other last bits)."""
    return float(np.add.accumulate(x)[-1]) if x.size else 0.0


def _magnitude(expected, touched, s, finite):
    """The scale (max |g| over the written finite pairs) and the sum of g^2 over the finite
    pairs, where the elements s, whose pairs are finite where `finite` says, are the only
    ones whose actual differs from the golden."""
    if expected.dtype.kind == "f":
        pairs = np.isfinite(expected)
        pairs[s] = finite
        scale = float(np.max(np.abs(expected[pairs & touched]), initial=0))  # exact in the dtype
        g = expected[pairs].astype(np.float64)
        return scale, _sequential_sum(g * g)
    g = expected.astype(np.int64)
    scale = float(np.max(np.abs(g[touched]), initial=0))
    if int(np.max(np.abs(g), initial=0)) ** 2 * g.size < 2 ** 53:
        return scale, float(np.sum(g * g))  # every partial sum exact: any order gives the same
    return scale, _sequential_sum(np.square(g.astype(np.float64)))


def compare_output(golden, name, actual):
    """Output `name` of the kvbench.Golden against `actual` (any array of the output's shape)."""
    t = golden.tensors[name]
    shape, dtype = tuple(t["shape"]), t["dtype"]
    m = Metrics(name, shape)
    m.tolerance = golden.tolerances[name]
    actual = _numpy(actual)
    if actual.shape != shape:
        raise ValueError("%s has shape %s, the golden %s" % (name, actual.shape, shape))
    got = stored(actual, dtype, shape).reshape(-1)
    expected = golden.expected[name].reshape(-1)
    n = m.elements = got.size
    in_place = name in golden.touched
    touched = golden.touched[name].reshape(-1).astype(bool) if in_place else np.ones(n, bool)
    # Untouched elements of an in-place output must keep the bits they had before.
    changed = ~touched & (_bits(got) != _bits(golden.inputs[name].reshape(-1))) if in_place else np.zeros(n, bool)
    # An element with the golden's own bits passes with error 0 whatever its allowance: the
    # float work runs on the others only (a cache has millions of elements, few of them wrong).
    s = np.flatnonzero((_bits(got) != _bits(expected)) | changed)
    a, g = got[s].astype(np.float64), expected[s].astype(np.float64)
    on = touched[s]
    alt = golden.alternates[name].reshape(-1)[s] if name in golden.alternates else np.full(s.size, np.nan)
    nan_ok = golden.nan_permitted[name].reshape(-1)[s] if name in golden.nan_permitted else np.zeros(s.size, bool)
    # A permitted NaN is computed (quiet), never the poison left unwritten.
    unwritten = nan_ok & (_bits(got[s]) == _UNWRITTEN[dtype]) if dtype in _UNWRITTEN else np.zeros(s.size, bool)
    nan_ok = nan_ok & ~unwritten
    m.unwritten = int(np.count_nonzero(unwritten))
    # A bound in the golden decides (a case file's tolerance that replaces it leaves none there).
    m.per_element_bound = name in golden.bounds

    def allowance(index, g):
        if m.per_element_bound:
            return golden.bounds[name].reshape(-1)[index].astype(np.float64)
        return m.tolerance["atol"] + m.tolerance["rtol"] * abs(g)

    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        allowed = np.where(on, allowance(s, g), 0.0)
        has_alt = ~np.isnan(alt)
        over = _over_tolerance(a, g, allowed)
        over = np.where(has_alt, np.minimum(over, _over_tolerance(a, alt, allowed)), over)
        over = np.where(nan_ok & np.isnan(a), 0.0, over)
        ok = _within(a, g, allowed)
        accepted = (has_alt & _within(a, alt, allowed)) | (nan_ok & np.isnan(a))
        m.boundary = int(np.count_nonzero(on & ~ok & accepted))
        bad_touched = on & ~ok & ~accepted
        m.nonfinite_mismatches = int(np.count_nonzero(bad_touched & ~(np.isfinite(a) & np.isfinite(g))))
        m.untouched_changed = int(np.count_nonzero(changed))
        bad = bad_touched | changed[s]
        m.violations = int(np.count_nonzero(bad))
        m.max_over_tolerance = math.inf if m.untouched_changed else float(np.max(over[on], initial=0.0))
        finite = np.isfinite(a) & np.isfinite(g)
        error = np.where(finite, np.abs(a - g), np.where(bad, np.inf, 0.0))
        fe, fg = error[finite], g[finite]
        m.max_abs = float(np.max(fe, initial=0.0))
        nonzero = fg != 0
        m.max_rel = float(np.max(fe[nonzero] / np.abs(fg[nonzero]), initial=0.0))
        m.scale, ref2 = _magnitude(expected, touched, s, finite)
        err2 = _sequential_sum(fe * fe)
    m.rel_l2 = math.sqrt(err2 / ref2) if ref2 > 0 else (math.inf if err2 > 0 else 0.0)
    if n:
        # The first violation with the largest error, else the first element with the largest
        # error (index 0 when every error is 0).
        if m.violations:
            k = int(np.argmax(np.where(bad, error, -np.inf)))
        else:
            k = int(np.argmax(error)) if s.size and np.max(error) > 0 else -1
        i = int(s[k]) if k >= 0 else 0
        m.worst_index, m.worst_untouched = i, not touched[i]
        m.worst_actual, m.worst_golden = float(got[i]), float(expected[i])
        m.worst_allowed = float(allowance(i, m.worst_golden)) if touched[i] else 0.0
    return m


def poison(golden):
    """Overwrites, in golden.inputs, every element an in-place output must write with a value
    that cannot pass, as kvbench does before each dispatch (compare.cpp poison_output): the
    signalling NaN of _UNWRITTEN (1234.5 where the golden is NaN), an integer code with its top
    bit flipped. A kernel that leaves such an element unwritten then fails, though the initial
    value may equal the golden."""
    for name, touched in golden.touched.items():
        a, mask = golden.inputs[name], touched.astype(bool)
        g = golden.expected[name][mask]
        if a.dtype.kind == "f" and golden.dtypes[name] in _UNWRITTEN:
            # Set as bits: a float cast would quiet the signalling NaN (and raise "invalid").
            bits = a.view("u%d" % a.dtype.itemsize)
            finite = np.array(1234.5, a.dtype).view(bits.dtype)
            bits[mask] = np.where(np.isnan(g), finite, bits.dtype.type(_UNWRITTEN[golden.dtypes[name]]))
        elif a.dtype.kind == "f":
            a[mask] = np.where(np.isnan(g), 1234.5, np.nan)
        else:
            top = 1 << ((4 if golden.dtypes[name] in ("s4", "u4") else 8 * a.dtype.itemsize) - 1)
            a[mask] = g ^ a.dtype.type(-top if a.dtype.kind == "i" else top)
    return golden


def _g(v, digits):
    """printf's %.<digits>g as glibc writes it (a NaN with its sign bit set is "-nan")."""
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return "%.*g" % (digits, v)


def g3(v):
    return _g(v, 3)


def index_string(shape, flat):
    """The multi-index of a flat index, as "[i,j,k]"."""
    idx = []
    for d in reversed(shape):
        idx.append(flat % d)
        flat //= d
    return "[" + ",".join(str(i) for i in reversed(idx)) + "]"


def tolerance_text(tolerance):
    atol, rtol = tolerance["atol"], tolerance["rtol"]
    if atol == 0 and rtol == 0:
        return "exact (atol = rtol = 0)"
    return "|a-g| <= atol %s + rtol %s * |golden|" % (g3(atol), g3(rtol))


def violations_line(m):
    line = "%s: %d of %d elements out of tolerance %s; %d NaN/Inf mismatches" % (
        m.tensor, m.violations - m.untouched_changed, m.elements,
        "|a-g| <= the golden's per-element bound" if m.per_element_bound else tolerance_text(m.tolerance),
        m.nonfinite_mismatches)
    if m.untouched_changed:
        line += "; %d elements outside the written region changed" % m.untouched_changed
    if m.unwritten:
        line += "; %d never written (still the poison, where NaN is permitted)" % m.unwritten
    return line


def worst_line(m):
    a, g = m.worst_actual, m.worst_golden
    line = "worst: %s%s = %s" % (m.tensor, index_string(m.shape, m.worst_index), _g(a, 9))
    if m.worst_untouched:
        return line + ", was %s: outside the written region, its bits must not change" % _g(g, 9)
    line += ", golden " + _g(g, 9)
    if not (math.isfinite(a) and math.isfinite(g)):
        return line + ": NaN/Inf mismatch"
    abs_err = abs(a - g)
    line += ": abs err %s, rel err %s" % (g3(abs_err), g3(abs_err / abs(g)) if g != 0 else "-")
    return line + (" > allowed " if abs_err > m.worst_allowed else " <= allowed ") + g3(m.worst_allowed)


def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def repro_line(golden, program="kvbench"):
    """The `kvbench run` command that reruns the case (repro_command in src/check/output_text.cpp):
    the case file this session listed (the pytest plugin sets golden.case_file), else the one
    the golden was written from."""
    regex = "^" + "".join("\\" + c if c in "\\^$.|?*+()[]{}" else c for c in golden.name) + "$"
    case_file = getattr(golden, "case_file", golden.manifest["source"])
    return "%s run %s --filter %s" % (program, shell_quote(case_file), shell_quote(regex))


def compare(golden, outputs):
    """Every output of the case against `outputs` {name: array}: [Metrics], and the reasons the
    case fails before any element is compared (a missing, unknown or misshapen output)."""
    reasons = ["no output %r" % name for name in golden.outputs if name not in outputs]
    reasons += ["%r is not an output of the case (its outputs: %s)" % (name, ", ".join(golden.outputs))
                for name in outputs if name not in golden.outputs]
    results = []
    for name in golden.outputs:
        if name in outputs:
            try:
                results.append(compare_output(golden, name, outputs[name]))
            except ValueError as e:
                reasons.append(str(e))
    return results, reasons


def failure_lines(golden, results, reasons, program="kvbench"):
    """The lines `kvbench check` prints under a failing case's row, and its repro line."""
    lines = []
    for m in results:
        if m.violations:
            lines += [violations_line(m), worst_line(m)]
    lines += ["reason: " + r for r in reasons]
    return lines + ["repro: " + repro_line(golden, program)]


def assert_matches(golden, outputs):
    """Raises AssertionError, with kvbench's failure lines, unless every output of the case
    (in-place tensors whole) passes kvbench's comparator."""
    __tracebackhide__ = True  # pytest shows the test's line and this message, not this frame
    results, reasons = compare(golden, outputs)
    if reasons or any(not m.passed for m in results):
        program = getattr(golden, "kvbench_binary", "kvbench")
        raise AssertionError("\n".join(["kvbench: %s FAIL" % golden.name] +
                                       failure_lines(golden, results, reasons, program)))
    return results
