#!/usr/bin/env bash
# Compiles hw/cuda/*.cc (and the CUDA branches of the files that include it) with -fsyntax-only
# against the installed CUDA toolkit's headers and LibTorch's CUDA headers, warnings as errors.
# On machines with a CUDA toolkit but a CPU-only LibTorch (CI) this is the check that the CUDA
# path still compiles; a GPU machine builds it for real (bench/gpu_check). Exits 0 with a note
# when no toolkit is found.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cuda_include=""
for dir in /usr/local/cuda/targets/x86_64-linux/include /usr/local/cuda-*/targets/x86_64-linux/include /usr/local/cuda/include; do
  if [[ -f "$dir/cuda_runtime.h" && -f "$dir/nccl.h" ]]; then cuda_include="$dir"; break; fi
done
torch_include=/usr/include
if [[ -z "$cuda_include" || ! -f "$torch_include/c10/cuda/CUDAStream.h" ]]; then
  echo "check_cuda_syntax: no CUDA toolkit with NCCL or no LibTorch CUDA headers; nothing to check"
  exit 0
fi
# The one header LibTorch generates at build time for its CUDA library; CPU packages lack it.
stub="$(mktemp -d)"
trap 'rm -rf "$stub"' EXIT
mkdir -p "$stub/c10/cuda/impl"
if [[ ! -f "$torch_include/c10/cuda/impl/cuda_cmake_macros.h" ]]; then
  printf '#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n' > "$stub/c10/cuda/impl/cuda_cmake_macros.h"
fi
status=0
# hw/cuda/ itself, and the files that include it when PIPEWORKS_HAVE_CUDA is 1.
for source in "$root"/hw/cuda/*.cc "$root"/hw/exec/compute_devices.cc "$root"/hw/exec/device_support.cc \
              "$root"/hw/dist/rank_backend.cc "$root"/tests/hw/cuda/cuda_test.cc; do
  if g++ -fsyntax-only -std=c++20 -DPIPEWORKS_HAVE_TORCH=1 -DPIPEWORKS_HAVE_CUDA=1 -DUSE_C10D_GLOO -DUSE_C10D_NCCL -DUSE_DISTRIBUTED \
       -DUSE_CUDA -I"$root" -I"$root/tests" -isystem "$stub" -isystem "$torch_include/torch/csrc/api/include" \
       -isystem "$cuda_include" -Wall -Wextra -Wpedantic -Wshadow -Wold-style-cast -Wno-null-dereference \
       -Werror "$source"; then
    echo "ok   ${source#$root/}"
  else
    echo "FAIL ${source#$root/}"
    status=1
  fi
done
exit "$status"
