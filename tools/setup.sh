#!/usr/bin/env bash
# Installs kvbench's build and test dependencies from Debian 12 packages.
# Safe to run twice: only missing packages are installed, and apt is not touched
# when everything is already present.
#   --torch   also Debian's python3-torch (1.13, CPU), for examples/torch and CTest
#             torch_backends (about 1 GB installed; the quick start does not need it)
set -euo pipefail
torch=0
for arg in "$@"; do
  case $arg in
    --torch) torch=1 ;;
    *) echo "usage: tools/setup.sh [--torch]" >&2; exit 2 ;;
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

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
