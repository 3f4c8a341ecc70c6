#!/usr/bin/env bash
# Checks the size rules of docs/design.md: no function longer than 60 lines anywhere (lizard counts
# from the signature to the closing brace) and no cli/ file longer than 200 lines (cli/ parses,
# wires and prints; a longer file is doing a lower folder's work). Prints FILE:LINE: error: ... per
# breach and exits 1 if any.
# Usage: check_sizes.sh PYTHON [ROOT]   (PYTHON: an interpreter with lizard, the checkout's .venv;
# exit 77, skipped, where it has none)
set -euo pipefail
python="${1:?usage: check_sizes.sh PYTHON [ROOT]}"
root="${2:-$(cd "$(dirname "$0")/.." && pwd)}"
if ! "$python" -c "import lizard" 2>/dev/null; then
  echo "SKIPPED: $python has no lizard (scripts/requirements.txt installs it into .venv)"
  exit 77
fi
max_function_lines=60
max_cli_lines=200

mapfile -d '' sources < <(find "$root" \( -path "$root/build" -o -path "$root/.venv" -o -path "$root/.git" \
  -o -path "$root/tests/fuzz/corpus" \) -prune -o -type f \( -name '*.cc' -o -name '*.h' \) -print0)
if ((${#sources[@]} == 0)); then
  echo "check_sizes: no sources under $root"
  exit 1
fi
status=0
shopt -s nullglob
# -C: a cyclomatic bound no function reaches, so only the length rule can warn.
if ! out="$("$python" -m lizard -L "$max_function_lines" -C 100000 -a 1000 -w "${sources[@]}")"; then
  while IFS= read -r line; do
    [[ -n "$line" ]] || continue
    echo "${line#$root/}" | sed -E "s/: warning: (.*) has .* ([0-9]+) length.*/: error: \1 is \2 lines long (at most $max_function_lines)/"
  done <<<"$out"
  status=1
fi
for file in "$root"/cli/*.cc "$root"/cli/*.h; do
  lines=$(wc -l <"$file")
  if ((lines > max_cli_lines)); then
    echo "${file#$root/}:1: error: $lines lines (a cli/ file holds at most $max_cli_lines)"
    status=1
  fi
done
[[ "$status" -eq 0 ]] && echo "check_sizes: ${#sources[@]} files, no function over $max_function_lines lines, no cli/ file over $max_cli_lines"
exit "$status"
