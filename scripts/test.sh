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
ctest --preset tsan -j"$(nproc)"
bash scripts/fuzz.sh 30
