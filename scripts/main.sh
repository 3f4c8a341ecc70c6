#!/usr/bin/env bash
# The main job: installs what is needed, builds, then shows one GPipe schedule end to end --
# print and validate it, simulate it (trace + SVG), and run it on this machine's CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh release
pw=build/release/cli/pipeworks
out=out
mkdir -p "$out"

echo "== 1. a GPipe schedule: 4 stages, 8 micro-batches, re-materialization, lowered comm"
"$pw" schedule --kind gpipe --stages 4 --microbatches 8 --format grid
"$pw" schedule --kind gpipe --stages 4 --microbatches 8 --recompute --comm --format csv -o "$out/gpipe_k4_m8.csv"
"$pw" validate "$out/gpipe_k4_m8.csv"
