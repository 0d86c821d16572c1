#!/usr/bin/env bash
# The Debian package (cmake/packaging.cmake): `cpack -G DEB` from the build folder makes a
# .deb that declares its Debian dependencies; unpacked with `dpkg-deb -x` into a temporary
# root, its kvbench runs an installed case from another folder (no file of the source tree or
# the build folder needed: SPIR-V and schema are embedded), its man page is kvbench's help,
# its Python package reads and verifies a golden, and the examples are there.
# Usage: package.sh KVBENCH SOURCE_DIR WORK_DIR BUILD_DIR
set -uo pipefail
kvbench=$1 src=$2 work=$3 build=$4
rm -rf "$work" && mkdir -p "$work/elsewhere"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

start=$SECONDS
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" > "$work/cpack.log" 2>&1 || {
  tail -20 "$work/cpack.log"; echo "FAIL: cpack -G DEB"; exit 1; }
deb=$(ls "$work"/pkg/kvbench_*.deb 2> /dev/null | head -1)
[ -n "$deb" ] || { echo "FAIL: cpack wrote no kvbench_*.deb"; exit 1; }
echo "ok: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB) in $((SECONDS - start)) s"

# The control file: the shared libraries' packages, lavapipe recommended.
dpkg-deb -f "$deb" Depends > "$work/depends"
for p in libvulkan1 libxxhash0 libssl3 libstdc++6; do
  grep -q "\b$p\b" "$work/depends" || bad "Depends lacks $p: $(cat "$work/depends")"
done
dpkg-deb -f "$deb" Recommends | grep -q "mesa-vulkan-drivers" || bad "Recommends lacks mesa-vulkan-drivers"

dpkg-deb -x "$deb" "$work/root"
root=$work/root/usr
for f in bin/kvbench share/man/man1/kvbench.1 share/kvbench/cases/pmx.KeyValueCache/quantized.json \
  share/doc/kvbench/examples/torch/torch_backend.py share/doc/kvbench/examples/numpy/dequantize_backend.py \
  share/doc/kvbench/specs/golden-format.md lib/python3/dist-packages/kvbench/golden.py; do
  [ -f "$root/$f" ] || bad "the package lacks /usr/$f"
done
# Every case file of the suite is installed.
want=$(cd "$src/cases" && find . -name '*.json' | sort | md5sum)
got=$(cd "$root/share/kvbench/cases" && find . -name '*.json' | sort | md5sum)
[ "$want" = "$got" ] || bad "the installed cases differ from cases/"
# No path of this machine's source or build folder inside the binary: it reads nothing there.
if grep -qaF -e "$src/" -e "$build/" "$root/bin/kvbench"; then bad "the installed kvbench holds a source or build path"; fi
grep -q "kvbench run" "$root/share/man/man1/kvbench.1" || bad "the man page lacks kvbench run's help"

# The installed kvbench on an installed case, from a folder that is neither the source nor the build.
cd "$work/elsewhere"
case_file=$root/share/kvbench/cases/pmx.KeyValueCache/quantized.json
filter='kvc_quant.cache_layout=0,current_key=f16,layer_idx=0,num_repeat=1,quant_bit=4,quant_group=8,start_pos=[07]'
"$root/bin/kvbench" run "$case_file" --filter "$filter" > run.log 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "^2 passed, 0 failed" run.log; then echo "ok: the installed kvbench runs an installed case"
else bad "installed kvbench run (exit $rc):"; tail -5 run.log; fi

# Its golden, read and verified by the installed Python package (Debian's python3 path layout).
"$root/bin/kvbench" golden "$case_file" --filter "$filter" -o golden > golden.log 2>&1 || bad "installed kvbench golden"
if command -v /usr/bin/python3 > /dev/null && /usr/bin/python3 -c "import numpy, xxhash" 2> /dev/null; then
  PYTHONPATH=$root/lib/python3/dist-packages /usr/bin/python3 - golden "$root/lib/python3/dist-packages" <<'PY' || bad "the installed Python package"
import sys, kvbench
assert kvbench.__file__.startswith(sys.argv[2]), kvbench.__file__
cases = kvbench.cases(sys.argv[1])
assert len(cases) == 2, cases
g = kvbench.load_golden(cases[0])
assert g.dtypes["cache"] == "s4" and g.inputs["cache"].dtype.name == "int8", g.dtypes
print("ok: the installed Python package read and verified", len(cases), "goldens")
PY
else
  echo "note: no /usr/bin/python3 with numpy and xxhash; the Python package's check is left out"
fi
exit $fail
