"""kvbench's Python package: read golden files, write actual files, kvbench's comparator, the
backend protocol and a pytest plugin.

    kvbench.load_golden(manifest_path)   inputs, expected, expected_f64, alternates, tolerances
    kvbench.save_actual(path, outputs, golden)
    kvbench.backend(fn)                  `SCRIPT {golden} {actual}` for `kvbench run --backend`
    kvbench.assert_matches(golden, outputs)   kvbench check's verdict, in numpy
    @kvbench.parametrize(cases_path)     one pytest test per case (the plugin kvbench.pytest_plugin)

numpy only, and python3-xxhash for the checksums of golden format 3 (pytest for the plugin).
See specs/python-package.md.
"""
from .backend import NOT_IMPLEMENTED, NotImplementedCase, attributes_of, backend, run_case
from .compare import Metrics, assert_matches, compare, compare_output, failure_lines, poison
from .golden import (READABLE_FORMATS, Golden, GoldenCase, GoldenError, cases, from_array, load_case, load_golden,
                     read_safetensors, save_actual, to_array, verify_checksums, write_safetensors)

__version__ = "0.1.0"


def parametrize(path, filter=None):
    """@kvbench.parametrize(path, filter=None): one test per case of `path` whose name matches
    `filter`, each given its golden as the argument `golden` (kvbench.pytest_plugin)."""
    from .pytest_plugin import parametrize as mark  # pytest only where a test suite uses it
    return mark(path, filter)


__all__ = ["NOT_IMPLEMENTED", "NotImplementedCase", "attributes_of", "backend", "run_case", "Metrics",
           "assert_matches", "compare", "compare_output", "failure_lines", "parametrize", "poison",
           "READABLE_FORMATS", "Golden", "GoldenCase", "GoldenError", "cases", "from_array", "load_case", "load_golden",
           "read_safetensors", "save_actual", "to_array", "verify_checksums", "write_safetensors"]
