"""The golden reader and actual writer of kvbench's Python package (python/kvbench/golden.py),
for the scripts in tools/ and tests/ that run from the source tree without installing it:

    import kvbench_golden as kg
    case = kg.load_case("golden/<stem>.json")

One reader: this file only puts the source tree's python/ first on the path and re-exports it.
"""
import os
import sys

_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")
if _PACKAGE not in sys.path:
    sys.path.insert(0, _PACKAGE)

from kvbench.golden import *  # noqa: E402,F401,F403
from kvbench.golden import Golden, GoldenCase, READABLE_FORMATS  # noqa: E402,F401
