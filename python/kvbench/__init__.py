"""kvbench's Python package: read golden files, write actual files, and the backend protocol.

    kvbench.load_golden(manifest_path)   inputs, expected, expected_f64, alternates, tolerances
    kvbench.save_actual(path, outputs, golden)
    kvbench.backend(fn)                  `SCRIPT {golden} {actual}` for `kvbench run --backend`

numpy only, and python3-xxhash for the checksums of golden format 3. See
specs/python-package.md.
"""
from .backend import NOT_IMPLEMENTED, NotImplementedCase, attributes_of, backend, run_case
from .golden import (READABLE_FORMATS, Golden, GoldenCase, cases, from_array, load_case, load_golden,
                     read_safetensors, save_actual, to_array, verify_checksums, write_safetensors)

__version__ = "0.1.0"

__all__ = ["NOT_IMPLEMENTED", "NotImplementedCase", "attributes_of", "backend", "run_case", "READABLE_FORMATS",
           "Golden", "GoldenCase", "cases", "from_array", "load_case", "load_golden", "read_safetensors",
           "save_actual", "to_array", "verify_checksums", "write_safetensors"]
