"""Read kvbench golden files and write actual-output files, with numpy (and python3-xxhash
for the checksums of format 3).

kvbench golden writes, per case, <stem>.safetensors and <stem>.json (the manifest).
This module needs neither kvbench nor the safetensors package:

    import kvbench
    g = kvbench.load_golden("golden/kvc_quant.cache_layout-0....json")
    g.inputs["current_key"]        # numpy array, logical shape and dtype
    g.expected["key"]              # expected output in its own dtype
    g.expected_f64["key"]          # the reference's float64 result before the final rounding
    g.alternates["cache"]          # the second value accepted at a rounding boundary (NaN: none)
    g.tolerances["key"]            # {"atol": ..., "rtol": ...}
    g.bounds["output"]             # format 4 (F32) / 5 (BF16): each element's bound |actual - golden| <= bound
    g.nan_permitted["output"]      # format 4 and 5: True where a NaN is accepted though the golden is finite
    kvbench.save_actual("actual/<stem>.safetensors", {"key": my_key, ...}, g)

Every array is writable and owns its memory. Golden formats 1 to 5 are read (format 2
stores alternates sparsely, an in-place output's expected_f64 at its touched elements only,
touched as one bit per element, and side arrays in the narrowest float type that holds
them bit for bit; format 3 adds the XXH3-128 checksum of every tensor, which load_golden
verifies before anything is read, raising ValueError naming the file and the tensor on a
mismatch; format 4 adds each float output's per-element bound, which replaces atol + rtol
|golden| where it is given, and the elements where a NaN is permitted; format 5 stores that
bound as BF16 rounded up instead of F32); every side array
comes back dense, float64 (bounds float32), either way. bf16 arrays are returned
as float32 (exact); s4/u4 as int8/uint8 unpacked from their two-per-byte packing (even flat
index in the low nibble); f4e2m1/f4e1m2 (packed the same way), f8e8m0, hifloat8, f6e2m3 and f6e3m2 as their float32
values (inputs only: save_actual writes outputs). save_actual converts back.
See specs/golden-format.md and specs/python-package.md.
"""
import json
import math
import os
import re
import stat

import numpy as np

from .storage import *  # noqa: F401,F403  (re-exported: kvbench.golden is the public module)
from .storage import (MAX_GOLDEN_ELEMENTS, GoldenError, _is_int, _kind, _shape_text, from_array,
                      read_manifest_json, read_safetensors, to_array, write_safetensors)

READABLE_FORMATS = (1, 2, 3, 4, 5)
CHECKSUM_ALGORITHM = "XXH3-128"
# kvbench dtype -> safetensors dtype as stored (src/golden/safetensors.cpp safetensors_dtype).
_STORED = {"f32": "F32", "f16": "F16", "bf16": "BF16", "i8": "I8", "u8": "U8", "s4": "U8", "u4": "U8",
           "i32": "I32", "i64": "I64", "bool": "BOOL", "f4e2m1": "U8", "f4e1m2": "U8", "f8e8m0": "U8",
           "hifloat8": "U8", "f6e2m3": "U8", "f6e3m2": "U8", "f8e4m3fn": "F8_E4M3", "f8e5m2": "F8_E5M2"}
_FOUR_BIT = ("s4", "u4", "f4e2m1", "f4e1m2")
_HEX32 = re.compile(r"[0-9a-f]{32}\Z")


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def stored_shape(dtype, shape):
    """The shape a tensor of kvbench dtype `dtype` and logical `shape` is stored with."""
    return ((_numel(shape) + 1) // 2,) if dtype in _FOUR_BIT else tuple(shape)


def _pointer_token(key):
    return key.replace("~", "~0").replace("/", "~1")


def check_manifest(doc, path):
    """The checks of kvbench's C++ reader (src/golden/manifest.cpp parse_manifest) on a
    manifest's JSON `doc`: GoldenError "PATH: /json/pointer: reason" on the first problem.
    Returns the golden format (1 when there is no "format" field)."""
    def fail(pointer, reason):
        raise GoldenError("%s: %s%s" % (path, pointer + ": " if pointer else "", reason))

    def require(obj, at, key):
        if key not in obj:
            fail(at + "/" + _pointer_token(key), "required field is missing")
        return obj[key]

    def text(obj, at, key, optional=False, tensor=False):
        if optional and key not in obj:
            return ""
        v = require(obj, at, key)
        if not isinstance(v, str):
            fail(at + "/" + key, "must be a string, not %s" % _json_type(v))
        if tensor and not v:  # "" would read as absent: a "bound": "" would drop the bound
            fail(at + "/" + key, "must name a tensor, not be empty (leave the field out for none)")
        return v

    def number(obj, at, key):
        v = require(obj, at, key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            fail(at + "/" + key, "must be a finite number >= 0, not %s" % json.dumps(v))
        return v

    if not isinstance(doc, dict):
        fail("", "a manifest must be a JSON object")
    fmt = 1
    if "format" in doc:
        f = doc["format"]
        if not _is_int(f) or f not in READABLE_FORMATS:
            fail("/format", "golden format %s is not one this reader knows %r: write the golden again with "
                            "this kvbench, or use the kvbench that wrote it" % (json.dumps(f), READABLE_FORMATS))
        fmt = f
    text(doc, "", "case")
    text(doc, "", "op")
    if "source" in doc:
        text(doc, "", "source")
    data = text(doc, "", "safetensors")
    if data in ("", ".", "..") or "/" in data:
        fail("/safetensors", "must be a file name beside the manifest, not '%s'" % data)
    if fmt < 3 and "checksums" in doc:
        fail("/format", "the manifest records checksums, which only golden format 3 and later have, but its "
                        "format is %s: refused rather than read unverified"
                        % (json.dumps(doc["format"]) if "format" in doc else "missing (format 1)"))
    if fmt >= 3:
        sums = require(doc, "", "checksums")
        if not isinstance(sums, dict):
            fail("/checksums", "must be an object")
        if text(sums, "/checksums", "algorithm") != CHECKSUM_ALGORITHM:
            fail("/checksums/algorithm", 'must be "%s", not %s' % (CHECKSUM_ALGORITHM, json.dumps(sums["algorithm"])))
        by_name = require(sums, "/checksums", "tensors")
        if not isinstance(by_name, dict) or not by_name:
            fail("/checksums/tensors", "must be a non-empty object")
        for key in sorted(by_name):
            v = by_name[key]
            if not isinstance(v, str) or not _HEX32.match(v):
                fail("/checksums/tensors/" + _pointer_token(key), "must be 32 lowercase hex digits, not %s" % json.dumps(v))
    tensors = require(doc, "", "tensors")
    if not isinstance(tensors, list):
        fail("/tensors", "must be an array")
    for i, t in enumerate(tensors):
        at = "/tensors/%d" % i
        if not isinstance(t, dict):
            fail(at, "must be an object")
        name = text(t, at, "name")
        dtype = text(t, at, "dtype")
        if dtype not in _STORED:
            fail(at + "/dtype", "unknown dtype '%s' of tensor '%s'" % (dtype, name))
        shape = require(t, at, "shape")
        if not isinstance(shape, list):
            fail(at + "/shape", "must be an array of sizes")
        numel = 1
        for d in shape:
            if not _is_int(d) or d < 0 or d >= 2**63:
                fail(at + "/shape", "must be an array of sizes, not %s" % json.dumps(shape, separators=(",", ":")))
            if d != 0 and numel > MAX_GOLDEN_ELEMENTS // d:
                fail(at + "/shape", "more than 2^48 elements: %s" % json.dumps(shape, separators=(",", ":")))
            numel *= d
        role = text(t, at, "role")
        if role not in ("input", "output", "inplace"):
            fail(at + "/role", "tensor '%s' has role '%s' (one of input, output, inplace)" % (name, role))
    outputs = require(doc, "", "outputs")
    if not isinstance(outputs, list) or not outputs:
        fail("/outputs", "must be a non-empty array")
    for i, o in enumerate(outputs):
        at = "/outputs/%d" % i
        if not isinstance(o, dict):
            fail(at, "must be an object")
        name = text(o, at, "name")
        for key in ("expected", "expected_f64"):
            text(o, at, key)
        for key in ("alternate", "touched", "alternate_index"):
            text(o, at, key, optional=True, tensor=True)
        if fmt >= 4:
            text(o, at, "bound", optional=True, tensor=True)
            text(o, at, "nan_permitted", optional=True, tensor=True)
        else:
            for key in ("bound", "nan_permitted"):
                if key in o:
                    fail(at + "/" + key, "%s is a golden format 4 field, but the format is %d" % (key, fmt))
        if fmt >= 2 and bool(o.get("alternate")) != bool(o.get("alternate_index")):
            fail(at, "output '%s' must name both alternate and alternate_index, or neither" % name)
        tol = require(o, at, "tolerance")
        if not isinstance(tol, dict):
            fail(at + "/tolerance", "must be an object")
        number(tol, at + "/tolerance", "atol")
        number(tol, at + "/tolerance", "rtol")
        text(tol, at + "/tolerance", "reason", optional=True)
        found = [k for k, t in enumerate(tensors) if t["name"] == name]
        if len(found) > 1:
            fail("/tensors/%d" % found[1], "tensor '%s' is listed twice" % name)
        if not found:
            fail(at + "/name", "output '%s' has no entry in tensors" % name)
        if tensors[found[0]]["role"] == "input":
            fail("/tensors/%d/role" % found[0], "tensor '%s' is listed in outputs, so its role must be output or "
                                                "inplace, not 'input'" % name)
        if tensors[found[0]]["role"] == "inplace" and not o.get("touched"):
            fail(at, "in-place output '%s' has no touched tensor" % name)
    return fmt


def _json_type(v):
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number")


def verify_checksums(manifest, data_path, stored):
    """Format 3 and later: every tensor of the data file against the manifest's XXH3-128
    checksums (the manifest checked by check_manifest first)."""
    import xxhash  # Debian's python3-xxhash (tools/setup.sh)
    sums = manifest.get("checksums")
    if not isinstance(sums, dict) or not isinstance(sums.get("tensors"), dict):
        raise GoldenError("%s: the manifest has no checksums object" % data_path)
    if sums.get("algorithm") != CHECKSUM_ALGORITHM:
        raise GoldenError("%s: unknown checksum algorithm %r" % (data_path, sums.get("algorithm")))
    recorded = sums["tensors"]
    for name in sorted(recorded):
        if name not in stored:
            raise GoldenError("%s: tensor '%s' listed in the manifest's checksums is missing from the file" % (data_path, name))
    for name in sorted(stored):
        if name not in recorded:
            raise GoldenError("%s: tensor '%s' has no checksum in the manifest" % (data_path, name))
        if stored[name][2] is None:  # not read (a backend reads its inputs only)
            continue
        if xxhash.xxh3_128(stored[name][2]).hexdigest() != recorded[name]:
            raise GoldenError("%s: tensor '%s' does not match its checksum: the golden data is corrupt" % (data_path, name))


class _Data:
    """The tensors of a golden's data file, each fetched with the checks of kvbench's C++
    reader (src/golden/expected_arrays.cpp): present, of the dtype and shape expected."""

    def __init__(self, path, stored):
        self.path, self.stored = path, stored

    def entry(self, key):
        if key not in self.stored:
            raise GoldenError("%s has no tensor '%s'" % (self.path, key))
        return self.stored[key]

    def checked(self, key, dtypes, shape, note=""):
        dtype, st_shape, raw = self.entry(key)
        if dtype not in dtypes:
            raise GoldenError("%s: tensor '%s' has dtype %s, expected %s%s" % (self.path, key, dtype, dtypes[0], note))
        if tuple(st_shape) != tuple(shape):
            raise GoldenError("%s: tensor '%s' has shape %s, expected %s" % (self.path, key, _shape_text(st_shape),
                                                                              _shape_text(shape)))
        return self.stored[key]

    def tensor(self, key, t):
        """A manifest tensor `t` stored under `key`, as its numpy array."""
        note = " (%s packed two per byte)" % t["dtype"] if t["dtype"] in _FOUR_BIT else ""
        stored = self.checked(key, (_STORED[t["dtype"]],), stored_shape(t["dtype"], t["shape"]), note)
        return to_array(stored, t["dtype"], t["shape"])

    def doubles(self, key, shape, fmt):
        """Side arrays: F64; from format 2 also F32, F16 or BF16 (widened, bit for bit)."""
        dtypes = ("F64", "F32", "F16", "BF16") if fmt >= 2 else ("F64",)
        stored = self.checked(key, dtypes, shape, " (or F32, F16, BF16)" if fmt >= 2 else "")
        return _doubles(stored)

    def indices(self, key, n):
        """A one-dimensional I64 tensor of strictly ascending flat indices within [0, n)."""
        dtype, shape, raw = self.entry(key)
        if len(shape) != 1:
            raise GoldenError("%s: tensor '%s' must be one-dimensional" % (self.path, key))
        index = to_array(self.checked(key, ("I64",), shape), "i64", shape)
        bad = np.flatnonzero((index < 0) | (index >= n) | np.r_[False, index[1:] <= index[:-1]])
        if bad.size:
            k = int(bad[0])
            raise GoldenError("%s: tensor '%s' holds %d at %d: indices must ascend within [0, %d)"
                              % (self.path, key, int(index[k]), k, n))
        return index


def _doubles(stored):
    """A side array as float64: F64, or (format 2) F32/F16/BF16 holding every value exactly."""
    return to_array(stored, "bf16" if stored[0] == "BF16" else "f64", stored[1]).astype(np.float64)


class Golden:
    """One golden case (its manifest and data file), its arrays read as numpy arrays.

    inputs:       {name: array} every input and every in-place tensor's initial contents,
                  logical shape and dtype (the elements of a tensorlist under their own
                  names, `key.0`, `key.1`, ...; `lists` groups them)
    lists:        {list name: [array, ...]} the tensorlists, in index order
    expected:     {output: array} the golden output in its own dtype
    expected_f64: {output: float64 array} the reference's value before the final rounding
    alternates:   {output: float64 array} the second accepted value at a rounding boundary,
                  NaN where there is none (outputs that have any)
    touched:      {output: uint8 array} in-place outputs: 1 where the operator writes
    tolerances:   {output: {"atol": ..., "rtol": ...}}
    bounds:       {output: float32 array} format 4 (F32) or 5 (BF16, widened): each element passes when |actual - golden|
                  <= its bound, which replaces the tolerance (outputs that have one)
    nan_permitted: {output: bool array} format 4: True where a NaN passes though the golden
                  is finite (outputs that have any)
    dtypes:       {tensor: kvbench dtype} (the manifest's, e.g. "s4", "bf16")

    With expected=False only the inputs are read (and verified): what a backend needs, and
    it cannot read what it is judged by.

    A golden that kvbench's C++ reader refuses is refused here too, with a GoldenError (a
    ValueError) naming the file and the field or tensor (specs/golden-format.md "What a
    reader refuses").
    """

    def __init__(self, manifest_path, expected=True):
        self.path = manifest_path
        self.manifest = read_manifest_json(manifest_path)
        self.format = check_manifest(self.manifest, manifest_path)
        self.stem = os.path.splitext(os.path.basename(manifest_path))[0]
        folder = os.path.dirname(manifest_path)
        data_path = os.path.join(folder, self.manifest["safetensors"])
        self.tensors = {}
        for t in self.manifest["tensors"]:
            self.tensors.setdefault(t["name"], t)
        self.dtypes = {name: t["dtype"] for name, t in self.tensors.items()}
        wanted = None if expected else {t["name"] for t in self.manifest["tensors"] if t["role"] != "output"}
        stored, _ = read_safetensors(data_path, wanted)
        if self.format >= 3:
            verify_checksums(self.manifest, data_path, stored)
        data = _Data(data_path, stored)
        self.inputs, self.expected, self.expected_f64, self.alternates, self.touched, self.tolerances = {}, {}, {}, {}, {}, {}
        self.bounds, self.nan_permitted = {}, {}
        lists = {}
        for t in self.manifest["tensors"]:
            if t["role"] != "output" and t["name"] not in self.inputs:
                self.inputs[t["name"]] = data.tensor(t["name"], t)
            group = t.get("list")  # not read by kvbench check: used when well formed, else ignored
            if isinstance(group, dict) and isinstance(group.get("of"), str) and _is_int(group.get("index")):
                lists.setdefault(group["of"], {})[group["index"]] = t["name"]
        self.lists = {of: [self.inputs[named[i]] for i in sorted(named)] for of, named in lists.items()
                      if all(n in self.inputs for n in named.values())}
        for o in self.manifest["outputs"]:
            self.tolerances[o["name"]] = o["tolerance"]
            if expected:
                self._read_output(o, data)

    def _read_output(self, o, data):
        # The order of kvbench check (src/golden/golden_check.cpp, expected_arrays.cpp load_expected).
        name, t = o["name"], self.tensors[o["name"]]
        shape, count = tuple(t["shape"]), _numel(t["shape"])
        self.expected[name] = data.tensor(o["expected"], t)
        touched = o.get("touched") or ""  # "" is no tensor, as in kvbench check
        if touched:
            if self.format >= 2:  # one bit per element, little-endian within a byte
                bits = to_array(data.checked(touched, ("U8",), ((count + 7) // 8,), " (one bit per element)"), "u8",
                                ((count + 7) // 8,))
                if count % 8 and bits[-1] >> (count % 8):
                    raise GoldenError("%s: tensor '%s' has bits set past its %d elements" % (data.path, touched, count))
                self.touched[name] = np.unpackbits(bits, bitorder="little")[:count].reshape(shape).copy()
            else:
                mask = to_array(data.checked(touched, ("U8",), shape), "u8", shape)
                bad = np.flatnonzero(mask.reshape(-1) > 1)
                if bad.size:
                    raise GoldenError("%s: tensor '%s' holds %d at %s (must be 0 or 1)" % (
                        data.path, touched, int(mask.reshape(-1)[bad[0]]),
                        _shape_text(np.unravel_index(int(bad[0]), shape))))
                self.touched[name] = mask
        if self.format >= 2 and touched:  # the touched elements only; the rest keep their value
            on = self.touched[name].astype(bool)
            f64 = data.doubles(o["expected_f64"], (int(on.sum()),), 2)
            if name not in self.inputs:
                raise GoldenError("%s has no tensor '%s'" % (data.path, name))
            dense = self.inputs[name].astype(np.float64)
            dense[on] = f64
            f64 = dense
        else:
            f64 = data.doubles(o["expected_f64"], shape, self.format)
        self.expected_f64[name] = f64.reshape(shape)
        if o.get("alternate"):
            if self.format >= 2:  # values at ascending flat indices
                index = data.indices(o["alternate_index"], count)
                values = data.doubles(o["alternate"], (index.size,), 2)
                dense = np.full(count, np.nan)
                dense[index] = values
                values = dense
            else:
                values = data.doubles(o["alternate"], shape, 1)
            self.alternates[name] = values.reshape(shape)
        if o.get("bound"):  # format 4: F32; format 5: BF16 rounded up (widened); the other refused
            bf16 = self.format >= 5
            stored = data.checked(o["bound"], ("BF16",) if bf16 else ("F32",), shape,
                                  " (golden format %d)" % (5 if bf16 else 4))
            bound = to_array(stored, "bf16" if bf16 else "f32", shape)
            if bf16:
                bound = bound.copy()  # writable and owning its memory, as every array here
            bad = np.flatnonzero(~(bound.reshape(-1) >= 0))
            if bad.size:
                raise GoldenError("%s: tensor '%s' holds %r at %s (a bound is a non-negative number)" % (
                    data.path, o["bound"], float(bound.reshape(-1)[bad[0]]),
                    _shape_text(np.unravel_index(int(bad[0]), shape))))
            self.bounds[name] = bound
        if o.get("nan_permitted"):
            index = data.indices(o["nan_permitted"], count)
            flags = np.zeros(count, dtype=bool)
            flags[index] = True
            self.nan_permitted[name] = flags.reshape(shape)
        self._refuse_vacuous(name, o, data.path)

    def _refuse_vacuous(self, name, o, path):
        """expected.cpp accepts_any_output: a golden no output can fail (every element's golden
        finite, and its bound infinite or a NaN permitted) is no test: refused, as C++ does."""
        if name not in self.bounds or self.bounds[name].size == 0:
            return
        golden = self.expected_f64.get(name, self.expected.get(name))
        if golden is None or not np.isfinite(np.asarray(golden, np.float64)).all():
            return
        nan_ok = self.nan_permitted.get(name, np.zeros(self.bounds[name].shape, bool))
        infinite = np.isinf(self.bounds[name])
        if (infinite | nan_ok).all():
            raise GoldenError("%s: tensors '%s'%s: %s: the golden accepts any output (%d of %d elements with an "
                              "infinite bound, the others NaN-permitted): no output could fail" % (
                                  path, o["bound"], " and '%s'" % o["nan_permitted"] if o.get("nan_permitted") else "",
                                  name, int(infinite.sum()), infinite.size))

    @property
    def outputs(self):
        return [o["name"] for o in self.manifest["outputs"]]

    @property
    def op(self):
        return self.manifest["op"]

    @property
    def name(self):
        return self.manifest["case"]

    # The names tools/kvbench_golden.py gave them first.
    @property
    def alternate(self):
        return self.alternates

    @property
    def tolerance(self):
        return self.tolerances


GoldenCase = Golden


def load_golden(manifest_path, expected=True):
    """The golden case of `manifest_path` (<stem>.json): see Golden."""
    return Golden(manifest_path, expected)


def load_case(manifest_path):
    return Golden(manifest_path)


def _looks_like_manifest(doc):
    return isinstance(doc, dict) and ("case_hash" in doc or "outputs" in doc)


def scan(folder):
    """(manifests, problems) of a golden folder as `kvbench check` scans it (src/golden/
    golden_folder.cpp): every *.json under it (recursively, links to folders not followed) is a
    manifest unless it is valid JSON that does not claim to be one and has no <stem>.safetensors
    beside it; an entry named *.json or *.safetensors that is not a regular file, and a manifest
    that does not pass check_manifest, is a problem: "PATH: reason"."""
    manifests, problems, found = [], [], []
    if not os.path.isdir(folder):
        return [], ["%s: not a folder" % folder]

    def walk_error(e):
        problems.append("%s: cannot list the golden folder completely: %s" % (folder, e))

    for root, dirs, files in os.walk(folder, onerror=walk_error):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = os.path.join(root, name)
            if not name.endswith((".json", ".safetensors")):
                continue
            try:
                mode = os.stat(path).st_mode
            except OSError as e:
                problems.append("%s: cannot read the file: %s" % (path, e.strerror))
                continue
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                problems.append("%s: not a regular file (%s)" % (path, _kind(mode)))
            elif name.endswith(".json"):
                found.append(path)
    for path in sorted(found, key=lambda p: p.split(os.sep)):
        try:
            doc = read_manifest_json(path)
            if not _looks_like_manifest(doc):
                if not os.path.exists(path[:-5] + ".safetensors"):
                    continue
                raise GoldenError("%s: not a kvbench golden manifest (no case_hash or outputs)" % path)
            check_manifest(doc, path)
            manifests.append(path)
        except GoldenError as e:
            problems.append(str(e))
    return manifests, problems


def cases(folder):
    """Every golden case manifest under a folder, sorted. A manifest that kvbench check would
    report as invalid (corrupt, truncated, not a regular file) is not skipped: GoldenError
    names it (the first; `scan` gives them all)."""
    manifests, problems = scan(folder)
    if problems:
        raise GoldenError(problems[0] + ("" if len(problems) == 1 else " (and %d more problems)" % (len(problems) - 1)))
    return manifests


def save_actual(path, outputs, case):
    """Writes a backend's outputs {name: array} in the dtypes the golden case expects."""
    tensors = {name: from_array(a, case.tensors[name]["dtype"]) for name, a in outputs.items()}
    write_safetensors(path, tensors)
