#!/usr/bin/env bash
# Configures and builds one CMake preset (default: release) with all cores.
set -euo pipefail
preset="${1:-release}"
cd "$(dirname "$0")/.."
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j"$(nproc)"
