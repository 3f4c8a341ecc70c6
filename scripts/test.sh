#!/usr/bin/env bash
# The whole test suite: installs what is needed, builds the release preset and runs every test
# (sched, sim, viz, cli, hw, python, notebooks), then runs the sched tests again under ASan+UBSan
# and the hw/exec tests under ThreadSanitizer, and fuzzes every harness of tests/fuzz/ for 30 s
# under ASan+UBSan (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh release
ctest --preset release -j"$(nproc)"
bash scripts/build.sh asan
ctest --preset asan -j"$(nproc)"
bash scripts/build.sh tsan
# GCC 12's ThreadSanitizer cannot place its shadow memory under the stronger address randomization
# some kernels use (vm.mmap_rnd_bits = 32: "unexpected memory mapping"); its tests run without
# randomization where the kernel lets a process ask for that.
no_aslr=()
if setarch "$(uname -m)" -R true 2>/dev/null; then no_aslr=(setarch "$(uname -m)" -R); fi
"${no_aslr[@]}" ctest --preset tsan -j"$(nproc)"
bash scripts/fuzz.sh 30
