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
    g.bounds["output"]             # format 4: each element's bound |actual - golden| <= bound
    g.nan_permitted["output"]      # format 4: True where a NaN is accepted though the golden is finite
    kvbench.save_actual("actual/<stem>.safetensors", {"key": my_key, ...}, g)

Every array is writable and owns its memory. Golden formats 1 to 4 are read (format 2
stores alternates sparsely, an in-place output's expected_f64 at its touched elements only,
touched as one bit per element, and side arrays in the narrowest float type that holds
them bit for bit; format 3 adds the XXH3-128 checksum of every tensor, which load_golden
verifies before anything is read, raising ValueError naming the file and the tensor on a
mismatch; format 4 adds each float output's per-element bound, which replaces atol + rtol
|golden| where it is given, and the elements where a NaN is permitted); every side array
comes back dense, float64 (bounds float32), either way. bf16 arrays are returned
as float32 (exact); s4/u4 as int8/uint8 unpacked from their two-per-byte packing (even flat
index in the low nibble); f4e2m1/f4e1m2 (packed the same way) and f8e8m0 as their float32
values (inputs only: save_actual writes outputs). save_actual converts back.
See specs/golden-format.md and specs/python-package.md.
"""
import json
import os
import struct

import numpy as np

_NUMPY = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
          "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}


def read_safetensors(path, names=None):
    """{name: (safetensors dtype, shape, raw bytes)} and the metadata dict; with `names`, the
    bytes of those tensors only (the others map to None)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        meta = header.pop("__metadata__", {})
        base = 8 + n
        out = {}
        for name, info in sorted(header.items(), key=lambda item: item[1]["data_offsets"][0]):
            begin, end = info["data_offsets"]
            raw = None
            if names is None or name in names:
                f.seek(base + begin)
                raw = f.read(end - begin)
                if len(raw) != end - begin:
                    raise ValueError("%s: tensor %r runs past the end of the file" % (path, name))
            out[name] = (info["dtype"], tuple(info["shape"]), raw)
    return out, meta


def write_safetensors(path, tensors, metadata=None):
    """tensors: {name: (safetensors dtype, shape, raw bytes)}; written in name order."""
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def _unpack4(raw, count, signed):
    b = np.frombuffer(raw, dtype=np.uint8)
    nib = np.empty(b.size * 2, dtype=np.uint8)
    nib[0::2] = b & 0x0F
    nib[1::2] = b >> 4
    nib = nib[:count]
    if signed:
        return (nib.astype(np.int16) - ((nib & 8).astype(np.int16) << 1)).astype(np.int8)
    return nib


def _pack4(values):
    v = (np.asarray(values).astype(np.int16).reshape(-1) & 0x0F).astype(np.uint8)
    if v.size % 2:
        v = np.append(v, np.uint8(0))
    return (v[0::2] | (v[1::2] << 4)).tobytes()


# 4-bit floats (sign << 3 | magnitude code, bias 1) and the E8M0 power of two, as float32.
_FP4 = {"f4e2m1": np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32),
        "f4e1m2": np.array([0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75], np.float32)}


def _fp8_values(dtype):
    """The 256 values of an OCP FP8 format (OFP8 rev 1.0 table 1) as float32, by code."""
    mbits, bias = (3, 7) if dtype == "f8e4m3fn" else (2, 15)
    code = np.arange(256)
    e, m = (code & 0x7F) >> mbits, code & ((1 << mbits) - 1)
    mag = np.where(e == 0, np.ldexp(m.astype(np.float64), 1 - bias - mbits),
                   np.ldexp((m + (1 << mbits)).astype(np.float64), e - bias - mbits))
    if dtype == "f8e4m3fn":
        mag = np.where((code & 0x7F) == 0x7F, np.nan, mag)
    else:
        mag = np.where(e == 31, np.where(m == 0, np.inf, np.nan), mag)
    return np.where(code & 0x80, -mag, mag).astype(np.float32)


_FP8 = {"f8e4m3fn": ("F8_E4M3", _fp8_values("f8e4m3fn")), "f8e5m2": ("F8_E5M2", _fp8_values("f8e5m2"))}


def fp8_codes(values, dtype, saturate=False):
    """The FP8 codes (uint8) of float values: rounded to nearest, ties to the even code; past
    the largest value NaN (f8e4m3fn) or infinity (f8e5m2), or with `saturate` the largest."""
    table = _FP8[dtype][1].astype(np.float64)
    finite = np.arange(128)[np.isfinite(table[:128])]  # non-negative codes, ascending values
    v = np.asarray(values, np.float64).reshape(-1)
    a = np.abs(v)
    upper = np.clip(np.searchsorted(table[finite], a), 1, len(finite) - 1)
    lo, hi = finite[upper - 1], finite[upper]
    d_lo, d_hi = a - table[lo], table[hi] - a
    code = np.where((d_lo < d_hi) | ((d_lo == d_hi) & (lo % 2 == 0)), lo, hi)
    largest = finite[-1]
    # Past the largest: a value halfway to the next binade step or more overflows (the
    # step above the largest is the largest's own spacing).
    step = table[largest] - table[largest - 1]
    over = a >= table[largest] + step / 2 if dtype == "f8e5m2" else a > table[largest] + step / 2
    code = np.where(over, largest if saturate else (0x7C if dtype == "f8e5m2" else 0x7F), code)
    code = np.where(np.isnan(v), 0x7F if dtype == "f8e4m3fn" else 0x7E, code)
    return (code | np.where(np.signbit(v), 0x80, 0)).astype(np.uint8)


def to_array(stored, dtype, shape):
    """The numpy array of a stored tensor with kvbench dtype `dtype` and logical `shape`
    (f4e2m1/f4e1m2/f8e8m0: their values as float32)."""
    st_dtype, st_shape, raw = stored
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if dtype in ("s4", "u4"):
        return _unpack4(raw, count, dtype == "s4").reshape(shape)
    if dtype in _FP4:
        code = _unpack4(raw, count, False)
        return np.where(code & 8, -_FP4[dtype][code & 7], _FP4[dtype][code & 7]).astype(np.float32).reshape(shape)
    if dtype in _FP8:
        return _FP8[dtype][1][np.frombuffer(raw, dtype=np.uint8)].reshape(shape)
    if dtype == "f8e8m0":
        b = np.frombuffer(raw, dtype=np.uint8).astype(np.int32)
        value = np.ldexp(np.float32(1), np.where(b == 255, 0, b - 127)).astype(np.float32)
        return np.where(b == 255, np.float32(np.nan), value).reshape(shape)
    if st_dtype == "BF16":
        bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).reshape(shape)
    # A bytearray, not the bytes object: frombuffer over bytes gives a read-only array.
    return np.frombuffer(bytearray(raw), dtype=_NUMPY[st_dtype]).reshape(shape)


def from_array(array, dtype):
    """(safetensors dtype, stored shape, raw bytes) of `array` stored as kvbench dtype `dtype`."""
    a = np.asarray(array)
    if dtype in ("s4", "u4"):
        raw = _pack4(a)
        return "U8", (len(raw),), raw
    if dtype in _FP8:
        return _FP8[dtype][0], a.shape, fp8_codes(a, dtype).tobytes()
    if dtype == "bf16":
        f = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
        # Round to nearest even; NaN stays NaN.
        rounded = ((f + 0x7FFF + ((f >> 16) & 1)) >> 16).astype(np.uint16)
        rounded = np.where(np.isnan(a.astype(np.float32)), (f >> 16).astype(np.uint16) | 0x40, rounded)
        return "BF16", a.shape, rounded.astype(np.uint16).tobytes()
    names = {"f32": ("F32", np.float32), "f16": ("F16", np.float16), "i8": ("I8", np.int8), "u8": ("U8", np.uint8),
             "i32": ("I32", np.int32), "i64": ("I64", np.int64), "bool": ("BOOL", np.bool_)}
    st, npt = names[dtype]
    return st, a.shape, np.ascontiguousarray(a, dtype=npt).tobytes()


READABLE_FORMATS = (1, 2, 3, 4)


def verify_checksums(manifest, data_path, stored):
    """Format 3: every tensor of the data file against the manifest's XXH3-128 checksums."""
    import xxhash  # Debian's python3-xxhash (tools/setup.sh)
    sums = manifest["checksums"]
    if sums.get("algorithm") != "XXH3-128":
        raise ValueError("%s: unknown checksum algorithm %r" % (data_path, sums.get("algorithm")))
    recorded = sums["tensors"]
    for name in sorted(set(recorded) | set(stored)):
        if name not in stored:
            raise ValueError("%s: tensor %r listed in the manifest's checksums is missing from the file" % (data_path, name))
        if name not in recorded:
            raise ValueError("%s: tensor %r has no checksum in the manifest" % (data_path, name))
        if stored[name][2] is None:  # not read (a backend reads its inputs only)
            continue
        if xxhash.xxh3_128(stored[name][2]).hexdigest() != recorded[name]:
            raise ValueError("%s: tensor %r does not match its checksum: the golden data is corrupt" % (data_path, name))


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
    bounds:       {output: float32 array} format 4: each element passes when |actual - golden|
                  <= its bound, which replaces the tolerance (outputs that have one)
    nan_permitted: {output: bool array} format 4: True where a NaN passes though the golden
                  is finite (outputs that have any)
    dtypes:       {tensor: kvbench dtype} (the manifest's, e.g. "s4", "bf16")

    With expected=False only the inputs are read (and verified): what a backend needs, and
    it cannot read what it is judged by.
    """

    def __init__(self, manifest_path, expected=True):
        with open(manifest_path) as f:
            self.manifest = json.load(f)
        self.path = manifest_path
        self.format = self.manifest.get("format", 1)
        if self.format not in READABLE_FORMATS:
            raise ValueError("%s: golden format %r is not one this reader knows %r" % (manifest_path, self.format, READABLE_FORMATS))
        self.stem = os.path.splitext(os.path.basename(manifest_path))[0]
        folder = os.path.dirname(manifest_path)
        data_path = os.path.join(folder, self.manifest["safetensors"])
        self.tensors = {t["name"]: t for t in self.manifest["tensors"]}
        self.dtypes = {name: t["dtype"] for name, t in self.tensors.items()}
        wanted = None if expected else {t["name"] for t in self.manifest["tensors"] if t["role"] != "output"}
        stored, _ = read_safetensors(data_path, wanted)
        if self.format >= 3:
            verify_checksums(self.manifest, data_path, stored)
        self.inputs, self.expected, self.expected_f64, self.alternates, self.touched, self.tolerances = {}, {}, {}, {}, {}, {}
        self.bounds, self.nan_permitted = {}, {}
        self.lists = {}
        for t in self.manifest["tensors"]:
            if t["role"] != "output":
                self.inputs[t["name"]] = to_array(stored[t["name"]], t["dtype"], t["shape"])
            if "list" in t:
                self.lists.setdefault(t["list"]["of"], {})[t["list"]["index"]] = t["name"]
        self.lists = {of: [self.inputs[named[i]] for i in sorted(named)] for of, named in self.lists.items()
                      if all(n in self.inputs for n in named.values())}
        for o in self.manifest["outputs"]:
            self.tolerances[o["name"]] = o["tolerance"]
            if expected:
                self._read_output(o, stored)

    def _read_output(self, o, stored):
        name, t = o["name"], self.tensors[o["name"]]
        shape, count = t["shape"], int(np.prod(t["shape"], dtype=np.int64))
        self.expected[name] = to_array(stored[o["expected"]], t["dtype"], shape)
        if "touched" in o:
            if self.format >= 2:  # one bit per element, little-endian within a byte
                bits = np.frombuffer(stored[o["touched"]][2], dtype=np.uint8)
                self.touched[name] = np.unpackbits(bits, bitorder="little")[:count].reshape(shape).copy()
            else:
                self.touched[name] = to_array(stored[o["touched"]], "u8", shape)
        f64 = _doubles(stored[o["expected_f64"]])
        if self.format >= 2 and "touched" in o:  # the touched elements only; the rest keep their value
            dense = self.inputs[name].astype(np.float64)
            dense[self.touched[name].astype(bool)] = f64
            f64 = dense
        self.expected_f64[name] = f64.reshape(shape)
        if "alternate" in o:
            values = _doubles(stored[o["alternate"]])
            if self.format >= 2:  # values at ascending flat indices
                index = to_array(stored[o["alternate_index"]], "i64", stored[o["alternate_index"]][1])
                dense = np.full(count, np.nan)
                dense[index] = values
                values = dense
            self.alternates[name] = values.reshape(shape)
        if "bound" in o:  # format 4
            bound = to_array(stored[o["bound"]], "f32", shape)
            if not np.all(bound >= 0):
                raise ValueError("%s: tensor %r holds a negative or NaN bound" % (self.path, o["bound"]))
            self.bounds[name] = bound
        if "nan_permitted" in o:
            index = to_array(stored[o["nan_permitted"]], "i64", stored[o["nan_permitted"]][1])
            flags = np.zeros(count, dtype=bool)
            flags[index] = True
            self.nan_permitted[name] = flags.reshape(shape)

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


def cases(folder):
    """Every golden case manifest in a folder, sorted."""
    out = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                try:
                    m = json.load(f)
                except ValueError:
                    continue
            if isinstance(m, dict) and "case_hash" in m:
                out.append(os.path.join(folder, name))
    return out


def save_actual(path, outputs, case):
    """Writes a backend's outputs {name: array} in the dtypes the golden case expects."""
    tensors = {name: from_array(a, case.tensors[name]["dtype"]) for name, a in outputs.items()}
    write_safetensors(path, tensors)
