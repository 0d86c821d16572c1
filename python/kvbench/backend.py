"""kvbench.backend(fn): the `{golden} {actual}` protocol of `kvbench run --backend`, so that a
backend is one function of a case's inputs and attributes.

    import kvbench

    def my_kernel(inputs, attrs, case):
        if case.op != "dnnl.SDPACompressedKV":
            raise kvbench.NotImplementedCase("only SDPA")
        q = inputs["query"]                    # numpy, logical shape; s4/u4 unpacked; bf16 as float32
        ...
        return {"output": out}                 # numpy arrays (or torch tensors), any float/int dtype

    if __name__ == "__main__":
        kvbench.backend(my_kernel)             # reads sys.argv: GOLDEN_DIR ACTUAL_DIR

For every golden case in GOLDEN_DIR, fn gets
  inputs  {name: numpy array} every input and every in-place tensor's initial contents (a
          tensorlist's elements also as one Python list under the list's name), never the
          expected outputs (they are not even read);
  attrs   the manifest's "shapes", "inputs" (scalars and lists the case file gave) and
          "attributes" merged into one dict (attributes win a name clash);
  case    the kvbench.Golden (op, name, stem, dtypes, manifest) without expected arrays.
It returns {output name: array}: every output of the case, an in-place tensor whole. Each is
converted to the dtype the manifest gives that output (bf16 rounded to nearest even, s4/u4
packed two per byte) and written to ACTUAL_DIR/<stem>.safetensors.

A case fn does not implement raises kvbench.NotImplementedCase(reason): nothing is written
for it, the reason is printed, and the process exits with status 77 (NOT_IMPLEMENTED) once
every case was tried; `kvbench run --backend` reports such a case as SKIP "not implemented
by the backend" (specs/golden-format.md "Another backend in the loop").
"""
import argparse
import os
import sys

import numpy as np

from .golden import cases, load_golden, save_actual

NOT_IMPLEMENTED = 77


class NotImplementedCase(Exception):
    """Raised by a backend function for a case it does not implement."""


def _numpy(value):
    """A numpy array of a backend's output: numpy, or a torch tensor (bf16 widened to f32)."""
    if hasattr(value, "detach"):  # a torch tensor, without importing torch here
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    return np.asarray(value)


def attributes_of(case):
    """shapes, inputs and attributes of the manifest in one dict."""
    m = case.manifest
    merged = {}
    for section in ("shapes", "inputs", "attributes"):
        merged.update(m.get(section, {}))
    return merged


def run_case(fn, manifest_path, actual_dir):
    """Runs fn on one golden case and writes its outputs; the NotImplementedCase passes up."""
    case = load_golden(manifest_path, expected=False)
    inputs = dict(case.inputs)
    for name, items in case.lists.items():
        inputs.setdefault(name, items)
    outputs = fn(inputs, attributes_of(case), case)
    missing = [name for name in case.outputs if name not in outputs]
    unknown = [name for name in outputs if name not in case.outputs]
    if missing or unknown:
        raise ValueError("%s: the backend returned %s; the case's outputs are %s"
                         % (case.stem, sorted(outputs), case.outputs))
    arrays = {}
    for name, value in outputs.items():
        a = _numpy(value)
        want = tuple(case.tensors[name]["shape"])
        if a.shape != want:
            raise ValueError("%s: output %r has shape %s, the manifest says %s" % (case.stem, name, a.shape, want))
        arrays[name] = a
    save_actual(os.path.join(actual_dir, case.stem + ".safetensors"), arrays, case)
    return case


def backend(fn, argv=None, description=None):
    """The main of a backend script: `SCRIPT GOLDEN_DIR ACTUAL_DIR` (see the module's text).
    Exits 0 when every case was written, 77 when some case is not implemented (the others
    written), and with the exception's traceback (status 1) on any other error."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("golden_dir", help="a folder of golden cases (<stem>.json + <stem>.safetensors)")
    ap.add_argument("actual_dir", help="where <stem>.safetensors of each case is written")
    args = ap.parse_args(argv)
    os.makedirs(args.actual_dir, exist_ok=True)
    manifests = cases(args.golden_dir)
    if not manifests:
        sys.exit("no golden cases in " + args.golden_dir)
    skipped = 0
    for path in manifests:
        try:
            run_case(fn, path, args.actual_dir)
        except NotImplementedCase as e:
            skipped += 1
            print("not implemented: %s: %s" % (os.path.basename(path)[:-5], e), flush=True)
    if skipped:
        sys.exit(NOT_IMPLEMENTED)
