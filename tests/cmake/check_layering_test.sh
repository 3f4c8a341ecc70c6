#!/usr/bin/env bash
# The layering check must fail on an include that points up and pass on one that points down:
# builds small trees in a temporary folder and runs scripts/check_layering.sh on each.
set -euo pipefail
checker="$(cd "$(dirname "$0")/../.." && pwd)/scripts/check_layering.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

make_tree() {  # make_tree DIR INCLUDE: hw/exec/worker.h includes INCLUDE
  mkdir -p "$1/hw/exec" "$1/hw/run" "$1/sched"
  printf '#pragma once\n' > "$1/sched/schedule.h"
  printf '#pragma once\n' > "$1/hw/run/run.h"
  printf '#pragma once\n#include "%s"\n' "$2" > "$1/hw/exec/worker.h"
}

make_tree "$tmp/up" "hw/run/run.h"
if out="$(bash "$checker" "$tmp/up")"; then
  echo "FAIL: an include from hw/exec/ up to hw/run/ passed the check"
  exit 1
fi
grep -q 'hw/exec/worker.h:2: error: hw/exec/ includes "hw/run/run.h"' <<<"$out" || {
  echo "FAIL: the message does not name the file, line and include:"
  echo "$out"
  exit 1
}

# hw/exec/ reaches the GPUs through hw/run/, never by including hw/cuda/.
make_tree "$tmp/cuda_up" "hw/cuda/gpu_devices.h"
if bash "$checker" "$tmp/cuda_up" >/dev/null; then
  echo "FAIL: an include from hw/exec/ up to hw/cuda/ passed the check"
  exit 1
fi

# Inside sim/: the spec room may not include the engine room above it.
mkdir -p "$tmp/sim_up/sim/spec" "$tmp/sim_up/sim/engine"
printf '#pragma once\n' > "$tmp/sim_up/sim/engine/engine.h"
printf '#pragma once\n#include "sim/engine/engine.h"\n' > "$tmp/sim_up/sim/spec/units.h"
if out="$(bash "$checker" "$tmp/sim_up")"; then
  echo "FAIL: an include from sim/spec/ up to sim/engine/ passed the check"
  exit 1
fi
grep -q 'sim/spec/units.h:2: error: sim/spec/ includes "sim/engine/engine.h"' <<<"$out" || {
  echo "FAIL: the message does not name the sim room's file, line and include:"
  echo "$out"
  exit 1
}

# A source straight under sim/ belongs to no room.
mkdir -p "$tmp/stray/sim/spec"
printf '#pragma once\n' > "$tmp/stray/sim/spec/units.h"
printf '#pragma once\n' > "$tmp/stray/sim/loose.h"
if out="$(bash "$checker" "$tmp/stray")"; then
  echo "FAIL: a source straight under sim/ passed the check"
  exit 1
fi
grep -q 'sim/loose.h:1: error: sim/ keeps its sources in rooms' <<<"$out" || {
  echo "FAIL: the stray source is not named:"
  echo "$out"
  exit 1
}

make_tree "$tmp/down" "sched/schedule.h"
bash "$checker" "$tmp/down" >/dev/null || { echo "FAIL: an include pointing down was refused"; exit 1; }
echo "check_layering: refuses an upward include (hw rooms, sim rooms) and a source outside the rooms, accepts a downward one"
