"""The files under a golden: regular files opened without blocking, JSON read with the C++
reader's limits, and safetensors indexed, read and written with every header entry checked
before a byte of data is read (specs/golden-format.md "What a reader refuses"). Part of
kvbench.golden, which re-exports it."""
import errno
import json
import math
import os
import re
import stat
import struct
import numpy as np

_NUMPY = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
          "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}


class GoldenError(ValueError):
    """A golden file (manifest or data) that a reader must refuse: the message names the file
    and the field or tensor (specs/golden-format.md "What a reader refuses")."""


# The limits of kvbench's C++ reader (src/golden/manifest.hpp, safetensors.hpp).
MAX_MANIFEST_BYTES = 64 << 20
MAX_MANIFEST_DEPTH = 32
MAX_GOLDEN_ELEMENTS = 1 << 48
MAX_SAFETENSORS_HEADER = 100000000
MAX_SAFETENSORS_DEPTH = 3
_ELEMENT_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I64": 8, "I32": 4,
                  "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1}
_KIND = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def _kind(mode):
    return next((name for test, name in _KIND if test(mode)), "not a regular file")


def open_regular(path):
    """A binary file object of `path`, which must be a regular file: a FIFO, device or folder
    is refused (GoldenError naming it) before anything could block on it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.EISDIR:
            raise GoldenError("%s: not a regular file (a folder)" % path) from None
        raise GoldenError("%s: cannot open: %s" % (path, e.strerror)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise GoldenError("%s: not a regular file (%s)" % (path, _kind(st.st_mode)))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _json_prescan(text, max_depth, where):
    """kvbench's JSON limits (src/core/json_text.cpp): nesting at most max_depth, every number a
    double (1e999 or a 400-digit integer refused), checked before the parser recurses."""
    depth, i, n, line, line_start = 0, 0, len(text), 1, 0
    strings = re.compile(r'"(?:[^"\\]|\\.)*"?', re.S)
    number = re.compile(r"[-+.eE0-9]+")
    while i < n:
        c = text[i]
        if c == "\n":
            line, line_start = line + 1, i + 1
        if c == '"':
            m = strings.match(text, i)
            chunk = m.group(0)
            newlines = chunk.count("\n")
            if newlines:
                line, line_start = line + newlines, i + chunk.rindex("\n") + 1
            i = m.end()
            continue
        if c in "[{":
            depth += 1
            if depth > max_depth:
                raise GoldenError("%s: invalid JSON: arrays and objects nest deeper than %d levels, at line %d, column %d"
                                  % (where, max_depth, line, i - line_start + 1))
        elif c in "]}":
            depth -= 1
        elif c == "-" or c.isdigit():
            m = number.match(text, i)
            token = m.group(0)
            try:
                big = math.isinf(float(token))
            except ValueError:
                big = False  # not a number: the parser names it
            if big:
                raise GoldenError("%s: invalid JSON: the number %s is beyond the range of a double, at line %d, column %d"
                                  % (where, token[:40] + ("..." if len(token) > 40 else ""), line, i - line_start + 1))
            i = m.end()
            continue
        i += 1


def _no_constant(name):
    raise ValueError("%s is not JSON" % name)


def _parse_json(raw, where, max_depth):
    """JSON as kvbench's C++ reader parses it: UTF-8, no NaN/Infinity, no number beyond double
    range, nested at most max_depth; every error a GoldenError naming `where`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise GoldenError("%s: invalid JSON: not UTF-8 (byte %d)" % (where, e.start)) from None
    _json_prescan(text, max_depth, where)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        raise GoldenError("%s: invalid JSON: %s" % (where, e)) from None


def read_manifest_json(path):
    """The JSON document of a manifest file (a regular file of at most 64 MiB, nested at most 32
    deep), or GoldenError naming the file."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_MANIFEST_BYTES:
            raise GoldenError("%s: %d bytes, more than the limit of %d" % (path, size, MAX_MANIFEST_BYTES))
        raw = f.read(MAX_MANIFEST_BYTES + 1)
    return _parse_json(raw, path, MAX_MANIFEST_DEPTH)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _container_depth(value):
    depth, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            depth = max(depth, d)
            if d > MAX_SAFETENSORS_DEPTH:
                return depth
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return depth


def _shape_text(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def index_safetensors(f, path):
    """The checked header of an open safetensors file: (data start, {name: (dtype, shape, begin,
    end)}, metadata). The rules of kvbench's C++ reader (src/golden/safetensors.cpp): the length
    and every entry checked against the file's size (a known dtype, bytes = elements x element
    size, offsets inside the data section, no two tensors overlapping) before any tensor is read."""
    size = os.fstat(f.fileno()).st_size
    if size < 8:
        raise GoldenError("%s: not a safetensors file (%d bytes)" % (path, size))
    f.seek(0)
    n = int.from_bytes(f.read(8), "little")
    if n > MAX_SAFETENSORS_HEADER:
        raise GoldenError("%s: not a safetensors file (header length %d exceeds the limit of %d bytes)"
                          % (path, n, MAX_SAFETENSORS_HEADER))
    if n > size - 8:
        raise GoldenError("%s: truncated: the header needs %d bytes, the file has %d after the length" % (path, n, size - 8))
    raw = f.read(n)
    if len(raw) != n:
        raise GoldenError("%s: truncated: the header needs %d bytes" % (path, n))
    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=_no_constant,
                            parse_float=_finite_float, parse_int=_finite_int)
    except (ValueError, RecursionError) as e:
        raise GoldenError("%s: invalid safetensors header: %s" % (path, e)) from None
    if _container_depth(header) > MAX_SAFETENSORS_DEPTH:
        raise GoldenError("%s: invalid safetensors header: nested deeper than %d levels" % (path, MAX_SAFETENSORS_DEPTH))
    if not isinstance(header, dict):
        raise GoldenError("%s: invalid safetensors header: not a JSON object" % path)
    data_start, data_bytes = 8 + n, size - 8 - n
    entries, meta = {}, {}
    for name in sorted(header):
        v = header[name]
        if name == "__metadata__":
            if not isinstance(v, dict):
                raise GoldenError("%s: __metadata__ is not an object" % path)
            for key, value in v.items():
                if not isinstance(value, str):
                    raise GoldenError("%s: __metadata__ value '%s' is not a string" % (path, key))
            meta = dict(v)
            continue
        at = "%s: tensor '%s': " % (path, name)
        if not isinstance(v, dict):
            raise GoldenError(at + "header entry is not an object")
        dtype = v.get("dtype")
        if not isinstance(dtype, str):
            raise GoldenError(at + "dtype is missing or not a string")
        if dtype not in _ELEMENT_BYTES:
            raise GoldenError(at + "unknown dtype '%s'" % dtype)
        shape = v.get("shape")
        if not isinstance(shape, list):
            raise GoldenError(at + "shape is missing or not an array")
        if not all(_is_int(d) and 0 <= d < 2**63 for d in shape):
            raise GoldenError(at + "shape %s is not a list of sizes" % json.dumps(shape, separators=(",", ":")))
        need = _ELEMENT_BYTES[dtype]
        for d in shape:
            need *= d
        offsets = v.get("data_offsets")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_int(o) and 0 <= o < 2**64 for o in offsets)):
            raise GoldenError(at + "data_offsets must be two byte offsets [begin, end]")
        begin, end = offsets
        if begin > end:
            raise GoldenError(at + "data_offsets [%d, %d] are reversed" % (begin, end))
        if end > data_bytes:
            raise GoldenError(at + "data_offsets [%d, %d] lie outside the data section (%d bytes): truncated or corrupt file"
                              % (begin, end, data_bytes))
        if need != end - begin:
            raise GoldenError(at + "holds %d bytes, but %s of shape %s needs %s" % (
                end - begin, dtype, _shape_text(shape), "more than 2^64" if need >= 2**64 else need))
        entries[name] = (dtype, tuple(shape), begin, end)
    by_offset = sorted((e[2], e[3], name) for name, e in entries.items() if e[3] > e[2])
    for (b0, e0, n0), (b1, e1, n1) in zip(by_offset, by_offset[1:]):
        if b1 < e0:
            raise GoldenError("%s: tensors '%s' and '%s' overlap in the data section" % (path, n0, n1))
    return data_start, entries, meta


def _finite_float(token):
    value = float(token)
    if math.isinf(value):
        raise ValueError("the number %s is beyond the range of a double" % token[:40])
    return value


def _finite_int(token):
    value = int(token)
    try:
        float(value)
    except OverflowError:
        raise ValueError("the number %s... is beyond the range of a double" % token[:40]) from None
    return value


def read_safetensors(path, names=None):
    """{name: (safetensors dtype, shape, raw bytes)} and the metadata dict; with `names`, the
    bytes of those tensors only (the others map to None). The file must be a regular file and
    its header pass index_safetensors; any other file is refused with GoldenError naming it."""
    with open_regular(path) as f:
        data_start, entries, meta = index_safetensors(f, path)
        out = {}
        for name, (dtype, shape, begin, end) in sorted(entries.items(), key=lambda item: item[1][2]):
            raw = None
            if names is None or name in names:
                f.seek(data_start + begin)
                raw = f.read(end - begin)
                if len(raw) != end - begin:
                    raise GoldenError("%s: tensor '%s' runs past the end of the file" % (path, name))
            out[name] = (dtype, shape, raw)
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


def _hif8_values():
    """The 256 values of HiFloat8 (specs/hifloat8.md) as float32, by code, from the definition:
    a sign bit and a payload p; p = 0 zero, 0 < p < 8 the denormal 2^(p - 23), 0x6F infinity,
    0x80 (the code) the only NaN; otherwise p's dot field (0001, 001, 01, 10, 11) sets w = 0..4
    exponent bits (the exponent's sign, then its magnitude's low w - 1 bits under an implicit
    leading one) and leaves 3, 3, 3, 2, 1 mantissa bits."""
    out = np.zeros(256, np.float64)
    for code in range(256):
        p = code & 0x7F
        if p == 0:
            mag = 0.0
        elif p < 8:
            mag = math.ldexp(1.0, p - 23)
        elif p == 0x6F:
            mag = math.inf
        else:
            lead = p.bit_length() - 1  # 3 .. 6
            w = (3 + ((p >> 5) & 1)) if lead == 6 else lead - 3
            mbits = (2 - ((p >> 5) & 1)) if lead == 6 else 3
            field = (p >> mbits) & ((1 << w) - 1)
            magnitude = (1 << (w - 1)) | (field & ((1 << (w - 1)) - 1)) if w else 0
            e = -magnitude if w and field >> (w - 1) else magnitude
            mag = math.ldexp(1.0 + (p & ((1 << mbits) - 1)) / (1 << mbits), e)
        out[code] = math.nan if code == 0x80 else (-mag if code & 0x80 else mag)
    return out.astype(np.float32)


_HIF8 = _hif8_values()


def _fp6_values(ebits, mbits, bias):
    """The 256 bytes of an OCP MX 6-bit float (E2M3 bias 1, E3M2 bias 3) as float32: a code in
    the low 6 bits (sign, exponent, mantissa; subnormals at exponent 0, no specials); a byte with
    bit 6 or 7 set holds no code: NaN."""
    out = np.full(256, np.nan)
    for code in range(64):
        e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
        mag = math.ldexp(m, 1 - bias - mbits) if e == 0 else math.ldexp((1 << mbits) + m, e - bias - mbits)
        out[code] = -mag if code & 0x20 else mag
    return out.astype(np.float32)


_FP6 = {"f6e2m3": _fp6_values(2, 3, 1), "f6e3m2": _fp6_values(3, 2, 3)}


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
    (f4e2m1/f4e1m2/f8e8m0/hifloat8/f6e2m3/f6e3m2: their values as float32)."""
    st_dtype, st_shape, raw = stored
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if dtype in ("s4", "u4"):
        return _unpack4(raw, count, dtype == "s4").reshape(shape)
    if dtype in _FP4:
        code = _unpack4(raw, count, False)
        return np.where(code & 8, -_FP4[dtype][code & 7], _FP4[dtype][code & 7]).astype(np.float32).reshape(shape)
    if dtype in _FP8:
        return _FP8[dtype][1][np.frombuffer(raw, dtype=np.uint8)].reshape(shape)
    if dtype == "hifloat8":
        return _HIF8[np.frombuffer(raw, dtype=np.uint8)].reshape(shape)
    if dtype in _FP6:
        return _FP6[dtype][np.frombuffer(raw, dtype=np.uint8)].reshape(shape)
    if dtype == "f8e8m0":
        b = np.frombuffer(raw, dtype=np.uint8).astype(np.int32)
        value = np.ldexp(np.float32(1), np.where(b == 255, 0, b - 127)).astype(np.float32)
        return np.where(b == 255, np.float32(np.nan), value).reshape(shape)
    if st_dtype == "BF16":
        bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).reshape(shape)
    # A bytearray, not the bytes object: frombuffer over bytes gives a read-only array.
    return np.frombuffer(bytearray(raw), dtype=_NUMPY[st_dtype]).reshape(shape)


def _code_table(dtype):
    """The float32 value of every code of a dtype stored by value table (by code)."""
    if dtype in _FP4:
        return np.concatenate([_FP4[dtype], -_FP4[dtype]]).astype(np.float32)
    if dtype in _FP6:
        return _FP6[dtype][:64]
    if dtype == "hifloat8":
        return _HIF8
    b = np.arange(255)  # f8e8m0; 0xFF is NaN
    return np.append(np.ldexp(np.float32(1), b - 127).astype(np.float32), np.float32(np.nan))


def _codes_by_value(a, dtype):
    """The codes of `a` rounded to the nearest value the dtype holds (a value of the dtype maps
    to its own code, -0 to the negative zero where the format has one; NaN to the NaN code),
    as a cast does, like fp8_codes for FP8. A NaN where the format has none raises ValueError."""
    table = _code_table(dtype).astype(np.float64)
    v = np.asarray(a, np.float64).reshape(-1)
    # The finite codes by value (a stable sort: among equal values the lower code, +0, is kept),
    # then each value's neighbours there: the nearer, at a tie the lower code.
    finite = np.flatnonzero(np.isfinite(table))
    finite = finite[np.argsort(table[finite], kind="stable")]
    finite = finite[np.concatenate([[True], table[finite][1:] != table[finite][:-1]])]  # -0 after +0: dropped
    values = table[finite]
    with np.errstate(invalid="ignore"):
        upper = np.clip(np.searchsorted(values, v), 1, values.size - 1)
        lo, hi = finite[upper - 1], finite[upper]
        d_lo, d_hi = np.abs(v - table[lo]), np.abs(table[hi] - v)
        codes = np.where((d_lo < d_hi) | ((d_lo == d_hi) & (lo < hi)), lo, hi)
        # Past either end the end itself (saturating; differences there round to ties).
        codes = np.where(v >= values[-1], finite[-1], np.where(v <= values[0], finite[0], codes)).astype(np.uint8)
    for special in np.flatnonzero(np.isinf(table) | ((table == 0) & np.signbit(table))):  # +-inf, -0
        codes[(v == table[special]) & (np.signbit(v) == np.signbit(table[special]))] = special
    nan = np.isnan(v)
    if nan.any():
        nan_codes = np.flatnonzero(np.isnan(table))
        if nan_codes.size == 0:
            raise ValueError(f"element {int(np.flatnonzero(nan)[0])} is NaN, which {dtype} cannot hold")
        codes[nan] = nan_codes[0]
    return codes


def from_array(array, dtype):
    """(safetensors dtype, stored shape, raw bytes) of `array` stored as kvbench dtype `dtype`
    (f4e2m1/f4e1m2/f6e2m3/f6e3m2/f8e8m0/hifloat8: values, each to the nearest value a code holds)."""
    a = np.asarray(array)
    if dtype in ("s4", "u4"):
        raw = _pack4(a)
        return "U8", (len(raw),), raw
    if dtype in _FP4:
        raw = _pack4(_codes_by_value(a, dtype))
        return "U8", (len(raw),), raw
    if dtype in _FP6 or dtype in ("hifloat8", "f8e8m0"):
        return "U8", a.shape, _codes_by_value(a, dtype).tobytes()
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
