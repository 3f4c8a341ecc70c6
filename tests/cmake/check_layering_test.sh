#!/usr/bin/env bash
# The layering check must fail on an include that points up and pass on one that points down:
# builds two small trees in a temporary folder and runs scripts/check_layering.sh on each.
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

make_tree "$tmp/down" "sched/schedule.h"
bash "$checker" "$tmp/down" >/dev/null || { echo "FAIL: an include pointing down was refused"; exit 1; }
echo "check_layering: refuses an upward include, accepts a downward one"
