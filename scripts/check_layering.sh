#!/usr/bin/env bash
# Checks that every project include points down the layers of docs/design.md's folder table:
#   sched <- sim <- hw/model <- hw/exec <- hw/run <- hw/dist, hw/predict;  sched <- viz;
#   python over sched, sim, viz;  cli, bench and tests over everything.
# hw/cuda/ holds the CUDA pieces of the rooms it serves (exec, dist): it may include those, and any hw room may
# include it. Prints each include that points up as FILE:LINE: error: ... and exits 1.
# Usage: check_layering.sh [ROOT]   (default: the source tree this script lives in)
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"

# The folders a folder's files may include from (besides itself).
allowed_for() {
  case "$1" in
    sched) echo "" ;;
    sim) echo "sched" ;;
    viz) echo "sched" ;;
    hw/model) echo "sched sim" ;;
    hw/cuda) echo "sched sim hw/model hw/exec hw/run hw/dist" ;;
    hw/exec) echo "sched sim hw/model hw/cuda" ;;
    hw/run) echo "sched sim hw/model hw/exec hw/cuda" ;;
    hw/dist | hw/predict) echo "sched sim hw/model hw/exec hw/run hw/cuda" ;;
    python) echo "sched sim viz" ;;
    *) echo "*" ;;
  esac
}

# The layer an included path belongs to: hw/ROOM for hw/, else its top folder.
layer_of() {
  local path="$1"
  if [[ "$path" == hw/*/* ]]; then
    local rest="${path#hw/}"
    echo "hw/${rest%%/*}"
  else
    echo "${path%%/*}"
  fi
}

status=0
checked=0
for folder in sched sim viz python hw/model hw/exec hw/run hw/dist hw/predict hw/cuda; do
  [[ -d "$root/$folder" ]] || continue
  allowed="$(allowed_for "$folder")"
  while IFS= read -r -d '' file; do
    checked=$((checked + 1))
    while IFS=: read -r line text; do
      included="$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"$text")"
      layer="$(layer_of "$included")"
      case "$layer" in sched | sim | viz | hw/* | cli | python) ;; *) continue ;; esac
      [[ "$layer" == "$folder" ]] && continue
      if [[ " $allowed " != *" $layer "* ]]; then
        echo "${file#$root/}:$line: error: $folder/ includes \"$included\" from $layer/ (may include: ${allowed:-nothing})"
        status=1
      fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" || true)
  done < <(find "$root/$folder" -maxdepth 1 -type f \( -name '*.h' -o -name '*.cc' \) -print0)
done
if [[ "$checked" -eq 0 ]]; then
  echo "check_layering: no sources under $root"
  exit 1
fi
[[ "$status" -eq 0 ]] && echo "check_layering: $checked files, every include points down"
exit "$status"
