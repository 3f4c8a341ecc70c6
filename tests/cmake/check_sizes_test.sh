#!/usr/bin/env bash
# The size check must fail on a function over 60 lines and on a cli/ file over 200 lines, naming
# each, and pass on a tree with neither: builds small trees in a temporary folder.
# Usage: check_sizes_test.sh PYTHON
set -euo pipefail
python="${1:?usage: check_sizes_test.sh PYTHON}"
checker="$(cd "$(dirname "$0")/../.." && pwd)/scripts/check_sizes.sh"
if ! "$python" -c "import lizard" 2>/dev/null; then
  echo "SKIPPED: $python has no lizard"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

body() { for ((i = 0; i < $1; ++i)); do echo "  x += $i;"; done; }  # body N: N statement lines

mkdir -p "$tmp/big/sim" "$tmp/big/cli" "$tmp/fine/sim" "$tmp/fine/cli"
{ echo "int long_one(int x) {"; body 58; echo "  return x;"; echo "}"; } >"$tmp/big/sim/a.cc"   # 61 lines
{ for ((f = 0; f < 30; ++f)); do echo "int f$f(int x) {"; body 5; echo "  return x;"; echo "}"; done; } >"$tmp/big/cli/b.cc"
{ echo "int short_one(int x) {"; body 57; echo "  return x;"; echo "}"; } >"$tmp/fine/sim/a.cc"  # 60 lines
printf 'int g() { return 1; }\n' >"$tmp/fine/cli/b.cc"

if out="$(bash "$checker" "$python" "$tmp/big")"; then
  echo "FAIL: a 61-line function and a 240-line cli/ file passed the check"
  exit 1
fi
grep -q '^sim/a.cc:1: error: long_one is 61 lines long (at most 60)' <<<"$out" || { echo "FAIL: not named:"; echo "$out"; exit 1; }
grep -q '^cli/b.cc:1: error: 240 lines' <<<"$out" || { echo "FAIL: the cli/ file is not named:"; echo "$out"; exit 1; }
bash "$checker" "$python" "$tmp/fine" >/dev/null || { echo "FAIL: a 60-line function was refused"; exit 1; }
echo "check_sizes: refuses a long function and a long cli/ file, accepts the limits"
