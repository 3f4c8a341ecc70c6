#!/usr/bin/env bash
# Checks that every project include points down the layers of docs/design.md's folder table:
#   sched <- sim <- hw/model <- hw/exec <- hw/run <- hw/dist, hw/predict;  sched <- viz;
#   inside sim: sim/spec <- sim/engine <- sim/plan <- sim/synth, sim/report;
#   python over sched, sim, viz;  cli, bench and tests over everything.
# hw/cuda/ holds the CUDA pieces of the rooms it serves (exec, dist): it may include those, and the rooms
# above hw/exec/ may include it (hw/exec/ reaches the GPUs through hw/run/device_choice.h, never upward).
# Prints each include that points up as FILE:LINE: error: ... and exits 1.
# Usage: check_layering.sh [ROOT]   (default: the source tree this script lives in)
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"

# The folders a folder's files may include from (besides itself).
sim="sim/spec sim/engine sim/plan sim/synth sim/report"
allowed_for() {
  case "$1" in
    sched) echo "" ;;
    sim/spec) echo "sched" ;;
    sim/engine) echo "sched sim/spec" ;;
    sim/plan) echo "sched sim/spec sim/engine" ;;
    sim/synth) echo "sched sim/spec sim/engine sim/plan" ;;
    sim/report) echo "sched sim/spec sim/engine sim/plan" ;;
    viz) echo "sched" ;;
    hw/model) echo "sched $sim" ;;
    hw/cuda) echo "sched $sim hw/model hw/exec hw/run hw/dist" ;;
    hw/exec) echo "sched $sim hw/model" ;;
    hw/run) echo "sched $sim hw/model hw/exec hw/cuda" ;;
    hw/predict) echo "sched $sim hw/model hw/exec hw/run hw/cuda" ;;
    hw/dist) echo "sched $sim hw/model hw/exec hw/run hw/cuda hw/predict" ;;
    python) echo "sched $sim viz" ;;
    *) echo "*" ;;
  esac
}

# The layer an included path belongs to: ROOM's path for hw/ and sim/ (hw/exec, sim/plan), else
# its top folder. A file straight under sim/ belongs to no room: the check reports it.
layer_of() {
  local path="$1"
  local top="${path%%/*}"
  if [[ ( "$top" == hw || "$top" == sim ) && "$path" == */*/* ]]; then
    local rest="${path#*/}"
    echo "$top/${rest%%/*}"
  else
    echo "$top"
  fi
}

status=0
checked=0
for folder in sched $sim viz python hw/model hw/exec hw/run hw/dist hw/predict hw/cuda; do
  [[ -d "$root/$folder" ]] || continue
  allowed="$(allowed_for "$folder")"
  while IFS= read -r -d '' file; do
    checked=$((checked + 1))
    while IFS=: read -r line text; do
      included="$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"$text")"
      layer="$(layer_of "$included")"
      case "$layer" in sched | sim | sim/* | viz | hw/* | cli | python) ;; *) continue ;; esac
      [[ "$layer" == "$folder" ]] && continue
      if [[ " $allowed " != *" $layer "* ]]; then
        echo "${file#$root/}:$line: error: $folder/ includes \"$included\" from $layer/ (may include: ${allowed:-nothing})"
        status=1
      fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" || true)
  done < <(find "$root/$folder" -maxdepth 1 -type f \( -name '*.h' -o -name '*.cc' \) -print0)
done
# sim/ and hw/ keep their sources in rooms: a source straight under either belongs to no layer.
for top in sim hw; do
  [[ -d "$root/$top" ]] || continue
  while IFS= read -r -d '' file; do
    echo "${file#$root/}:1: error: $top/ keeps its sources in rooms ($top/ROOM/), not at its top"
    status=1
  done < <(find "$root/$top" -maxdepth 1 -type f \( -name '*.h' -o -name '*.cc' \) -print0)
done
if [[ "$checked" -eq 0 ]]; then
  echo "check_layering: no sources under $root"
  exit 1
fi
[[ "$status" -eq 0 ]] && echo "check_layering: $checked files, every include points down"
exit "$status"
