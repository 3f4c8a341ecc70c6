#!/usr/bin/env bash
# The test-name check must refuse a name holding ';' or a square bracket and accept one without.
set -euo pipefail
checker="$(cd "$(dirname "$0")/../.." && pwd)/scripts/check_test_names.py"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bad" "$tmp/good"
printf 'TEST_CASE("one thing; another") {}\n' > "$tmp/bad/a_test.cc"
printf 'TEST_CASE("cores [a, b)") {}\n' > "$tmp/bad/b_test.cc"
printf 'TEST_CASE("one thing, another") {}\n' > "$tmp/good/a_test.cc"
if out="$(python3 "$checker" "$tmp/bad")"; then
  echo "FAIL: a name with ';' passed"; exit 1
fi
grep -q 'a_test.cc:1: error: test name holds' <<<"$out" || { echo "FAIL: no FILE:LINE in: $out"; exit 1; }
grep -q 'b_test.cc:1: error: test name holds' <<<"$out" || { echo "FAIL: a '[' passed: $out"; exit 1; }
python3 "$checker" "$tmp/good" >/dev/null || { echo "FAIL: a name without ';' was refused"; exit 1; }
echo "check_test_names: refuses ';' and '[', accepts ','"
