#!/usr/bin/env bash
# Installs what pipeworks needs on Debian 12, as root: Debian's packages for the toolchain and the
# libraries, and one PyTorch from its own wheel in a virtual environment inside the checkout
# (.venv, gitignored) that the C++ build (LibTorch, its CUDA toolkit and NCCL), the Python module,
# the notebooks and the tests all use (cmake/torch_from_python.cmake). Idempotent, and quick when
# everything is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

packages=(
  # toolchain
  cmake g++ ninja-build
  # the fuzz preset (scripts/fuzz.sh): clang with libFuzzer and the sanitizer runtimes
  clang libclang-rt-14-dev
  # libraries (see docs/design.md: libraries over hand-written code)
  libfmt-dev nlohmann-json3-dev libboost-graph-dev libcli11-dev catch2 libbenchmark-dev
  # the Gloo headers c10d's ProcessGroupGloo.hpp includes (the wheel ships LibTorch without them)
  libgloo-dev
  # the Python module: Debian's Python 3.11 (the venv is made from it) and its headers; pybind11
  # itself comes with the venv (scripts/requirements.txt)
  python3-dev python3-venv
  # the test that renders the SVG charts in a browser, as a user opens them
  chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} > 0)); then
  echo "pipeworks: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}"
else
  echo "pipeworks: all ${#packages[@]} Debian packages already installed"
fi

# The virtual environment: Debian's Python 3.11 (the interpreter pybind11 builds the module for),
# the pinned packages of scripts/requirements.txt.
venv="$root/.venv"
requirements="$root/scripts/requirements.txt"
stamp="$venv/.pipeworks-requirements"
if [[ ! -x $venv/bin/python ]]; then
  echo "pipeworks: making $venv"
  /usr/bin/python3 -m venv "$venv"
fi
if ! cmp -s "$requirements" "$stamp"; then
  echo "pipeworks: installing scripts/requirements.txt into .venv (torch's CUDA wheels: a few minutes)"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$stamp"
else
  echo "pipeworks: .venv already has scripts/requirements.txt"
fi

# The wheels' CUDA toolkit (nvidia/cu13: the runtime torch loads, plus nvcc from requirements.txt)
# as CMake's CUDA modules look for a toolkit: lib64 beside lib and an unversioned name per library.
cuda_root=$("$venv/bin/python" -c "import nvidia, os; print(os.path.join(nvidia.__path__[0], 'cu13'))")
if [[ -x $cuda_root/bin/nvcc ]]; then
  (
    cd "$cuda_root/lib"
    for lib in *.so.*; do
      plain="${lib%%.so*}.so"
      [[ -e $plain ]] || ln -s "$lib" "$plain"
    done
    cd ..
    [[ -e lib64 ]] || ln -s lib lib64
  )
else
  echo "pipeworks: error: $cuda_root/bin/nvcc is missing (scripts/requirements.txt pins nvidia-cuda-nvcc)" >&2
  exit 1
fi
