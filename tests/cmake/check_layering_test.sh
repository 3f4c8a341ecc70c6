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

# header ROOT PATH [INCLUDE]: a header at ROOT/PATH, including INCLUDE when given.
header() {
  mkdir -p "$(dirname "$1/$2")"
  printf '#pragma once\n%s' "${3:+#include \"$3\"$'\n'}" > "$1/$2"
}

# refused TREE WHAT EXPECTED: the check fails on TREE (WHAT says what it holds) and prints EXPECTED.
refused() {
  local out
  if out="$(bash "$checker" "$1")"; then
    echo "FAIL: $2 passed the check"
    exit 1
  fi
  grep -qF "$3" <<<"$out" || {
    echo "FAIL: for $2 the check does not say '$3':"
    echo "$out"
    exit 1
  }
}

make_tree "$tmp/up" "hw/run/run.h"
refused "$tmp/up" "an include from hw/exec/ up to hw/run/" 'hw/exec/worker.h:2: error: hw/exec/ includes "hw/run/run.h"'

# hw/exec/ reaches the GPUs through hw/run/, never by including hw/cuda/.
make_tree "$tmp/cuda_up" "hw/cuda/gpu_devices.h"
refused "$tmp/cuda_up" "an include from hw/exec/ up to hw/cuda/" 'hw/exec/worker.h:2: error: hw/exec/ includes "hw/cuda/gpu_devices.h"'

# Inside sim/: the spec room may not include the engine room above it.
header "$tmp/sim_up" sim/engine/engine.h
header "$tmp/sim_up" sim/spec/units.h sim/engine/engine.h
refused "$tmp/sim_up" "an include from sim/spec/ up to sim/engine/" 'sim/spec/units.h:2: error: sim/spec/ includes "sim/engine/engine.h"'

# A source straight under sim/ belongs to no room.
header "$tmp/stray" sim/spec/units.h
header "$tmp/stray" sim/loose.h
refused "$tmp/stray" "a source straight under sim/" 'sim/loose.h:1: error: sim/ keeps its sources in rooms'

make_tree "$tmp/down" "sched/schedule.h"
bash "$checker" "$tmp/down" >/dev/null || { echo "FAIL: an include pointing down was refused"; exit 1; }
echo "check_layering: refuses an upward include (hw rooms, sim rooms) and a source outside the rooms, accepts a downward one"
