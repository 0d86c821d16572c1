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
dev_deb=$(ls "$work"/pkg/kvbench-dev_*.deb 2> /dev/null | head -1)
[ -n "$deb" ] || { echo "FAIL: cpack wrote no kvbench_*.deb"; exit 1; }
[ -n "$dev_deb" ] || { echo "FAIL: cpack wrote no kvbench-dev_*.deb"; exit 1; }
echo "ok: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB), $(basename "$dev_deb") ($(du -k "$dev_deb" | cut -f1) KiB) in $((SECONDS - start)) s"
dpkg-deb -f "$dev_deb" Depends | grep -q "libxxhash-dev" || bad "kvbench-dev's Depends lacks libxxhash-dev"

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

# kvbench-dev: examples/cpp (two plain C++ kernels in doctest) built against the unpacked
# packages with find_package(kvbench CONFIG), run on their operators' goldens; with the
# planted error (KVBENCH_PLANT=1) every case fails and the report names the worst element.
dpkg-deb -x "$dev_deb" "$work/root"
for f in include/kvbench/golden.hpp include/kvbench/check.hpp lib/libkvbench_golden.a \
  lib/cmake/kvbench/kvbench-config.cmake lib/pkgconfig/kvbench-golden.pc; do
  [ -f "$root/$f" ] || bad "kvbench-dev lacks /usr/$f"
done
start=$SECONDS
example=$root/share/doc/kvbench/examples/cpp
if cmake -S "$example" -B "$work/example" -DCMAKE_PREFIX_PATH="$root" > "$work/example.log" 2>&1 &&
  cmake --build "$work/example" -j2 >> "$work/example.log" 2>&1; then
  echo "ok: examples/cpp built against the unpacked kvbench-dev in $((SECONDS - start)) s"
else
  bad "examples/cpp against kvbench-dev:"; tail -20 "$work/example.log"
fi
# (KeyValueCache's Llama-shaped cases left out: 360 MB of goldens for no other code path.)
"$root/bin/kvbench" golden "$root/share/kvbench/cases/kvbench.DequantizeGroup" \
  "$root/share/kvbench/cases/pmx.KeyValueCache" --filter '^(dqg|kvc_(quant|odd_groups|scale_f32|fp|ranges))' \
  -o "$work/cpp_golden" --jobs 2 > "$work/cpp_golden.log" 2>&1 ||
  bad "kvbench golden for examples/cpp"
goldens=$(find "$work/cpp_golden" -name '*.json' | wc -l)
KVBENCH_GOLDEN=$work/cpp_golden "$work/example/kernel_tests" > "$work/example_run.log" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "test cases: *2 | *2 passed" "$work/example_run.log"; then
  echo "ok: examples/cpp passes on $goldens goldens of DequantizeGroup and KeyValueCache"
else
  bad "examples/cpp (exit $rc):"; tail -20 "$work/example_run.log"
fi
KVBENCH_PLANT=1 KVBENCH_GOLDEN=$work/cpp_golden "$work/example/kernel_tests" > "$work/example_plant.log" 2>&1
rc=$?
if [ $rc != 0 ] && grep -qE "assertions: *$((goldens + 4)) \| *4 passed \| *$goldens failed" "$work/example_plant.log" &&
  grep -q "worst: y\[0,0\] = " "$work/example_plant.log" && grep -q "worst: cache\[" "$work/example_plant.log" &&
  grep -q "repro: kvbench run " "$work/example_plant.log"; then
  echo "ok: examples/cpp with its planted errors fails every one of the $goldens cases, naming the worst elements"
else
  bad "examples/cpp with KVBENCH_PLANT=1 (exit $rc) did not fail as it must:"; grep -E "worst|test cases" "$work/example_plant.log" | head
fi
exit $fail
