# Sourced by the test scripts: sets $python to a python3 that imports every module named
# (Debian's python3-numpy and python3-matplotlib serve /usr/bin/python3, which a pyenv or
# venv python3 earlier on PATH may lack), or to "" when there is none.
# Usage: . find_python.sh; find_python numpy [matplotlib ...]
find_python() {
  local imports
  imports=$(IFS=,; echo "$*")
  python=""
  for p in python3 /usr/bin/python3; do
    if command -v "$p" > /dev/null && "$p" -c "import $imports" 2> /dev/null; then python=$p; return; fi
  done
}

# The same, and the test fails (exit 1) naming the modules when there is none.
require_python() {
  find_python "$@"
  [ -n "$python" ] || { echo "FAIL: no python3 that imports $* (tools/setup.sh installs Debian's python3-$1)"; exit 1; }
}
