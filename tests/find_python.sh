# Sourced by the test scripts: sets $python to a python3 that has every module named
# (Debian's python3-numpy and python3-matplotlib serve /usr/bin/python3, which a pyenv or
# venv python3 earlier on PATH may lack), or to "" when there is none. /usr/bin/python3 is
# tried first: a pyenv shim on PATH takes 0.8 s to start, and the tests start Python
# hundreds of times. The modules are found (importlib.util.find_spec), not imported: an
# import of numpy costs each probe 0.3 s.
# Usage: . find_python.sh; find_python numpy [matplotlib ...]   (or numpy,matplotlib)
find_python() {
  python=""
  for p in /usr/bin/python3 python3; do
    if command -v "$p" > /dev/null &&
      "$p" -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for a in sys.argv[1:] for m in a.split(",")))' \
        "$@" 2> /dev/null; then
      python=$p
      return
    fi
  done
}

# The same, and the test fails (exit 1) naming the modules when there is none.
require_python() {
  find_python "$@"
  [ -n "$python" ] || { echo "FAIL: no python3 that has $* (tools/setup.sh installs Debian's python3-$1)"; exit 1; }
}
