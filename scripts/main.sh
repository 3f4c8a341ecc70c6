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
"$pw" schedule --schedule gpipe --stages 4 --microbatches 8 --format grid
"$pw" schedule --schedule gpipe --stages 4 --microbatches 8 --recompute --comm --format csv -o "$out/gpipe_k4_m8.csv"
"$pw" validate "$out/gpipe_k4_m8.csv"

echo
echo "== 2. simulate it: gpt2-medium on an 8x H100 NVLink node (sim/ presets), trace + SVG"
"$pw" simulate --model gpt2-medium --cluster dgx-h100 --stages 4 --microbatches 8 --schedule gpipe \
  --recompute --trace "$out/simulated_trace.json" --svg "$out/simulated.svg"
"$pw" simulate --model uniform --cluster dgx-h100 --stages 4 --microbatches 8 --schedule gpipe --grid | tail -n 8

echo
echo "== 3. plan: the fastest configuration that fits for gpt2-medium, batch 64, on 8 GPUs"
"$pw" plan --model gpt2-medium --cluster dgx-h100 --batch 64 --devices 8 --memory-cap 12GiB

echo
echo "== 4. run the same kind of schedule on this CPU (2 worker threads), checked against the"
echo "      non-pipelined reference, with the simulator's prediction beside the measurement"
"$pw" run --model transformer --stages 2 --microbatches 8 --batch 32 --schedule gpipe --recompute \
  --steps 4 --check --intra-op-threads 1
"$pw" run --model transformer --stages 2 --microbatches 8 --batch 32 --schedule gpipe --recompute \
  --steps 4 --intra-op-threads 1 --predict --trace "$out/predicted_vs_measured_trace.json" \
  --svg "$out/predicted_vs_measured.svg" --json "$out/predicted_vs_measured.json"

echo
echo "Pictures and traces are in $out/:"
echo "  - *.svg: open in any browser (predicted above measured in predicted_vs_measured.svg)"
echo "  - *_trace.json: open https://ui.perfetto.dev and drop the file on it (or chrome://tracing)"
