#!/usr/bin/env bash
# Installs kvbench's build and test dependencies from Debian 12 packages.
# Safe to run twice: only missing packages are installed, and apt is not touched
# when everything is already present.
#   --torch   also Debian's python3-torch (1.13, CPU), for examples/torch and CTest
#             torch_backends (about 1 GB installed; the quick start does not need it)
#   --ggml    also llama.cpp's released ggml libraries (node-llama-cpp 3.22.1's Linux x64
#             Vulkan build, llama.cpp release v0.5.0) and their headers, for examples/ggml
#             (kvbench-ggml); needs Debian's nodejs, npm and git, and the npm registry.
#             Into ${KVBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kvbench}/ggml-3.22.1
#             (about 130 MB): lib/, include/, release.json and the two tarballs
set -euo pipefail
torch=0
ggml=0
for arg in "$@"; do
  case $arg in
    --torch) torch=1 ;;
    --ggml) ggml=1 ;;
    *) echo "usage: tools/setup.sh [--torch] [--ggml]" >&2; exit 2 ;;
  esac
done

packages=(
  cmake g++ make
  libvulkan-dev glslang-tools spirv-tools
  mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  libcli11-dev nlohmann-json3-dev doctest-dev
  # XXH3-128 checksums of golden data (specs/golden-format.md "Checksums"), and the same
  # hash for tools/kvbench_golden.py.
  libxxhash-dev python3-xxhash
  # SHA-256 of the files a case takes inputs from, recorded in the golden's manifest
  # (specs/case-format.md "Inputs from files"): OpenSSL's libcrypto.
  libssl-dev
  python3 python3-numpy
  # Installing kvbench's Python package offline (specs/python-package.md): setuptools is its
  # build backend, pip and venv install it (CTest python_package).
  python3-setuptools python3-pip python3-venv
  # The pytest plugin (python/kvbench/pytest_plugin.py) and its example suite (examples/pytest).
  python3-pytest
  # tools/plot.py and its test (tests/plot.sh).
  python3-matplotlib
  # tests/junit_schema.sh validates the JUnit report with xmllint.
  libxml2-utils
  # tests/ci_recipes.sh parses the README's CI recipes (YAML).
  python3-yaml
  # The sanitizer and fuzzer build of .ci/run: clang, its ASan/UBSan and libFuzzer
  # runtimes, and llvm-symbolizer for readable sanitizer stacks.
  clang libclang-rt-14-dev llvm
  # .ci/run checks the C++ sources against .clang-format.
  clang-format
  # The Debian package (cpack -G DEB): dpkg-shlibdeps finds the libraries' packages.
  dpkg-dev
)
if [ $torch = 1 ]; then packages+=(python3-torch); fi
# npm fetches the released libraries, git unpacks llama.cpp's source bundle for the headers.
# Each only where its command is missing: NodeSource's nodejs package brings its own npm,
# which Debian's npm package would conflict with.
if [ $ggml = 1 ]; then
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
  command -v git >/dev/null || packages+=(git)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
else
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ $ggml = 0 ]; then exit 0; fi

# --- --ggml: llama.cpp's released ggml libraries (examples/ggml/README.md) -----
# Two npm packages, pinned by version and SHA-256: the Vulkan build's shared libraries
# (bins/linux-x64-vulkan/: libggml-base.so, libggml.vulkan.v0.5.0.so (libggml, the backend
# loader), libggml-vulkan.so, libggml-cpu-*.so) and node-llama-cpp itself, whose
# llama/gitRelease.bundle is the llama.cpp source they were built from (ggml/include/*.h).
ggml_version=3.22.1
ggml_dir=${KVBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kvbench}/ggml-$ggml_version
ggml_packages=(@node-llama-cpp/linux-x64-vulkan node-llama-cpp)
declare -A ggml_sha256=(
  [@node-llama-cpp/linux-x64-vulkan]=e10577190fc4bd1649d3b655588e5c7a85fc6b6dbf7136fee596cbe9e25521e7
  [node-llama-cpp]=a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f
)
# npm's tarball name: @scope/name -> scope-name-version.tgz
ggml_tarball() { local n=${1#@}; echo "$ggml_dir/${n//\//-}-$ggml_version.tgz"; }

# release.json is written last: with it, lib/ and include/ are complete.
if [ -f "$ggml_dir/release.json" ] && [ -f "$ggml_dir/lib/libggml-base.so" ] && [ -f "$ggml_dir/include/ggml.h" ]; then
  echo "setup: ggml (node-llama-cpp $ggml_version) already in $ggml_dir"
  exit 0
fi
for tool in npm git tar sha256sum python3; do
  if ! command -v $tool >/dev/null; then
    echo "setup: --ggml needs $tool (Debian packages: nodejs npm git)" >&2
    exit 1
  fi
done

mkdir -p "$ggml_dir"
tmp=$(mktemp -d "$ggml_dir/.setup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for p in "${ggml_packages[@]}"; do
  tgz=$(ggml_tarball "$p")
  if [ -f "$tgz" ]; then
    if [ "$(sha256sum "$tgz" | cut -d' ' -f1)" = "${ggml_sha256[$p]}" ]; then continue; fi
    echo "setup: $tgz does not have the pinned SHA-256: removed, fetching it again" >&2
    rm -f "$tgz"
  fi
  echo "setup: npm pack $p@$ggml_version"
  (cd "$tmp" && npm pack --silent "$p@$ggml_version" >/dev/null)
  got=$tmp/$(basename "$tgz")
  if [ ! -f "$got" ]; then
    echo "setup: npm pack $p@$ggml_version wrote no $(basename "$tgz")" >&2
    exit 1
  fi
  sum=$(sha256sum "$got" | cut -d' ' -f1)
  if [ "$sum" != "${ggml_sha256[$p]}" ]; then
    rm -f "$got"
    echo "setup: $p@$ggml_version has SHA-256 $sum, not the pinned ${ggml_sha256[$p]}: refused (removed)" >&2
    exit 1
  fi
  mv "$got" "$tgz"
done

vk_tgz=$(ggml_tarball @node-llama-cpp/linux-x64-vulkan)
src_tgz=$(ggml_tarball node-llama-cpp)
mkdir "$tmp/vk" "$tmp/src" "$tmp/lib" "$tmp/include"
tar -xzf "$vk_tgz" -C "$tmp/vk" package/bins/linux-x64-vulkan
rmdir "$tmp/lib"
mv "$tmp/vk/package/bins/linux-x64-vulkan" "$tmp/lib"
tar -xzf "$src_tgz" -C "$tmp/src" package/llama/gitRelease.bundle package/llama/llama.cpp.info.json
git clone -q --no-checkout "$tmp/src/package/llama/gitRelease.bundle" "$tmp/llama.cpp"
git -C "$tmp/llama.cpp" checkout -q HEAD -- ggml/include
cp "$tmp/llama.cpp"/ggml/include/*.h "$tmp/include/"
commit=$(git -C "$tmp/llama.cpp" rev-parse HEAD)
python3 - "$tmp/src/package/llama/llama.cpp.info.json" "$tmp/release.json" "$ggml_version" \
  "${ggml_sha256[@node-llama-cpp/linux-x64-vulkan]}" "${ggml_sha256[node-llama-cpp]}" "$commit" <<'PY'
import json, sys
info_path, out, version, vk_sha, src_sha, commit = sys.argv[1:]
info = json.load(open(info_path))
json.dump({
    "node_llama_cpp": version,
    "packages": {
        "@node-llama-cpp/linux-x64-vulkan": {"version": version, "sha256": vk_sha},
        "node-llama-cpp": {"version": version, "sha256": src_sha},
    },
    "llama_cpp": {"repo": info.get("llamaCppGithubRepo"), "tag": info["tag"], "bundle_commit": commit},
    "lib": "bins/linux-x64-vulkan of @node-llama-cpp/linux-x64-vulkan",
    "include": "ggml/include/*.h of llama/gitRelease.bundle",
}, open(out, "w"), indent=2)
open(out, "a").write("\n")
PY

# Each rename is atomic; a leftover of an interrupted run is replaced.
rm -rf "$ggml_dir/lib" "$ggml_dir/include"
mv "$tmp/lib" "$ggml_dir/lib"
mv "$tmp/include" "$ggml_dir/include"
mv "$tmp/release.json" "$ggml_dir/release.json"
echo "setup: ggml (node-llama-cpp $ggml_version, llama.cpp $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["llama_cpp"]["tag"])' "$ggml_dir/release.json")) in $ggml_dir"
