#!/usr/bin/env bash
# Fuzzes every harness of tests/fuzz/ for SECONDS each (default 30) under ASan+UBSan: builds the
# `fuzz` preset (clang, libFuzzer), runs FUZZ_JOBS harnesses at a time (default: all cores), each
# from its seed corpus tests/fuzz/corpus/<harness>/ (read only) into a scratch corpus, and prints
# the executions per harness and in total. Fails on any crash, sanitizer report, broken property,
# hang (-timeout) or memory blow-up (-rss_limit_mb); the offending input is kept under
# build/fuzz/work/<harness>/artifacts/ (once fixed, add it to the seed corpus as a regression).
#
#   scripts/fuzz.sh [SECONDS]
#   scripts/fuzz.sh minimize          instead: minimize each seed corpus with libFuzzer -merge=1
#                                     (drops inputs that add no coverage; keeps every regress-*)
#   FUZZ_HARNESSES="units simulate"   only these harnesses
#   FUZZ_JOBS=2                       harnesses run in parallel
#   FUZZ_SUMMARY=FILE                 also write the table to FILE
set -euo pipefail
cd "$(dirname "$0")/.."
mode=fuzz
if [[ "${1:-}" == minimize ]]; then mode=minimize; shift; fi
seconds="${1:-30}"
jobs="${FUZZ_JOBS:-$(nproc)}"
root="$PWD"
bin="$root/build/fuzz/tests/fuzz"
work="$root/build/fuzz/work"

mkdir -p "$work"
if ! { cmake --preset fuzz && cmake --build --preset fuzz -j"$(nproc)"; } >"$work/build.log" 2>&1; then
  tail -n 60 "$work/build.log"
  echo "pipeworks: building the fuzz preset failed (log: $work/build.log)"
  exit 1
fi

if [[ -n "${FUZZ_HARNESSES:-}" ]]; then
  read -r -a harnesses <<<"$FUZZ_HARNESSES"
else
  harnesses=()
  for exe in "$bin"/pipeworks_fuzz_*; do harnesses+=("${exe##*/pipeworks_fuzz_}"); done
fi

run_one() {  # harness -> build/fuzz/work/<harness>/{corpus,artifacts,log}
  local name="$1" dir="$work/$1"
  rm -rf "$dir/artifacts"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  local dict=()
  [[ -f "$root/tests/fuzz/dict/$name.dict" ]] && dict=(-dict="$root/tests/fuzz/dict/$name.dict")
  "$bin/pipeworks_fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/" "${dict[@]}" \
    "$dir/corpus" "$root/tests/fuzz/corpus/$name" >"$dir/log" 2>&1
}

minimize_one() {  # harness: tests/fuzz/corpus/<harness>/ minimized in place, file names kept
  local name="$1" seeds="$root/tests/fuzz/corpus/$1" kept="$work/$1/minimized"
  rm -rf "$kept" && mkdir -p "$kept"
  "$bin/pipeworks_fuzz_$name" -merge=1 -timeout=10 -rss_limit_mb=2048 "$kept" "$seeds" >"$work/$name/merge.log" 2>&1
  local before f
  before=$(find "$seeds" -type f | wc -l)
  for f in "$seeds"/*; do  # -merge=1 names what it keeps by the SHA-1 of its content
    [[ "${f##*/}" == regress-* || -e "$kept/$(sha1sum "$f" | cut -d' ' -f1)" ]] || rm -f "$f"
  done
  echo "pipeworks: tests/fuzz/corpus/$name: $before -> $(find "$seeds" -type f | wc -l) inputs"
}

if [[ "$mode" == minimize ]]; then
  for name in "${harnesses[@]}"; do mkdir -p "$work/$name" && minimize_one "$name"; done
  exit 0
fi

export -f run_one
export seconds root bin work
echo "pipeworks: fuzzing ${#harnesses[@]} harnesses for ${seconds}s each, $jobs at a time (ASan+UBSan)"
failed=0
rm -f "$work/failed" "$work/failed.seen"
printf '%s\n' "${harnesses[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {} || echo {} >>"$work/failed"' \
  || failed=1
[[ -f "$work/failed" ]] && { mv "$work/failed" "$work/failed.seen"; failed=1; }

total=0
table=$(printf '| harness | executions | exec/s | corpus | result |\n|---|---:|---:|---:|---|\n')
for name in "${harnesses[@]}"; do
  log="$work/$name/log"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  corpus=$(find "$work/$name/corpus" -type f | wc -l)
  result=ok
  if [[ -f "$work/failed.seen" ]] && grep -qx "$name" "$work/failed.seen"; then
    result="FAILED (see $log)"
  elif grep -q "run interrupted" "$log"; then
    result="interrupted (killed from outside before its time was up)"
  fi
  total=$((total + ${execs:-0}))
  table+=$(printf '\n| %s | %s | %s | %s | %s |' "$name" "${execs:-?}" "${rate:-?}" "$corpus" "$result")
done
table+=$(printf '\n| **total** | **%s** | | | |' "$total")
echo "$table"
[[ -n "${FUZZ_SUMMARY:-}" ]] && echo "$table" >"$FUZZ_SUMMARY"

if ((failed)); then
  for name in $(cat "$work/failed.seen"); do
    echo "--- $name: last lines of $work/$name/log"
    tail -n 40 "$work/$name/log"
  done
  exit 1
fi
