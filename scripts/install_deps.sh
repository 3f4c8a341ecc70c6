#!/usr/bin/env bash
# Installs exactly the Debian packages pipeworks needs; idempotent, and quick (no apt-get update)
# when everything is already installed. Run as root on Debian 12.
set -euo pipefail

packages=(
  # toolchain
  cmake g++ ninja-build
  # the fuzz preset (scripts/fuzz.sh): clang with libFuzzer and the sanitizer runtimes
  clang libclang-rt-14-dev
  # libraries (see DESIGN.md: libraries over hand-written code)
  libfmt-dev nlohmann-json3-dev libboost-graph-dev libcli11-dev catch2 libbenchmark-dev
  # LibTorch (CPU, with c10d) and the Gloo header its process group needs
  libtorch-dev libgloo-dev
  # an optimized BLAS: with Debian's reference BLAS LibTorch's CPU matmuls run about 7x slower
  libopenblas0-openmp
  # the Python module and the notebooks
  pybind11-dev python3-dev python3-numpy python3-nbconvert python3-nbformat python3-ipykernel python3-matplotlib python3-pandas
  # users' own models: PyTorch saves the TorchScript files `--model FILE.pt` loads (the tests'
  # models, pipeworks.torch_models, torchvision's ResNets)
  python3-torch python3-torchvision
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
  echo "pipeworks: all ${#packages[@]} packages already installed"
fi
