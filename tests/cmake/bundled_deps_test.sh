#!/usr/bin/env bash
# ctest "cmake: bundled header deps": proves a scripts/bundle_header_deps bundle is enough to build
# pipeworks (what bench/gpu_check relies on where the packages are missing). It makes a bundle,
# configures with -DPIPEWORKS_BUNDLED_DEPS and find_package disabled for every bundled library,
# builds the sched library with the bundle probe's two sched test files (fmt, nlohmann_json,
# Boost.Graph, Catch2 and its CMake modules; tests/CMakeLists.txt) and the CLI's main (CLI11), runs
# the Boost/fmt/JSON tests, and then checks where each header came from. It compiles on 2 cores,
# as its ctest PROCESSORS says.
# Honest limit: this machine also has the headers in /usr/include, which no flag can hide short of
# a container; so the check reads the compiler's dependency lists (ninja -t deps) and fails when any
# fmt/nlohmann/CLI/catch2/boost header was read from outside the bundle (a header missing from it
# would silently come from /usr/include otherwise). The link must not name libfmt or libboost.
# Usage: bundled_deps_test.sh WORK_DIR (emptied first; removed on success)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:?usage: $0 WORK_DIR}
command -v ninja >/dev/null || { echo "bundled_deps_test: no ninja, skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && work=$(cd "$work" && pwd)
bundle=$work/header_deps build=$work/build
fail() { printf 'bundled_deps_test: FAIL: %s (kept %s)\n' "$*" "$work" >&2; exit 1; }
step() { printf '== %s (%d s)\n' "$*" "$SECONDS"; }

step "bundle"
"$repo/scripts/bundle_header_deps" "$bundle"
step "configure"
disable=()
for pkg in fmt nlohmann_json CLI11 Catch2 Boost; do disable+=("-DCMAKE_DISABLE_FIND_PACKAGE_$pkg=ON"); done
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DPIPEWORKS_BUNDLED_DEPS="$bundle" "${disable[@]}" \
  -DPIPEWORKS_WITH_TORCH=OFF -DPIPEWORKS_BUILD_BENCH=OFF -DPIPEWORKS_BUILD_PYTHON=OFF >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "configure"; }
grep -q "from $bundle" "$work/configure.log" || fail "configure did not take the bundle"

step "build"
# The probe's POST_BUILD step runs the bundle's CatchAddTests.cmake (catch_discover_tests).
cmake --build "$build" -j 2 --target pipeworks_bundle_probe_tests \
  cli/CMakeFiles/pipeworks.dir/main/pipeworks_main.cc.o >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; fail "build"; }

step "run"
"$build/tests/pipeworks_bundle_probe_tests" "[io],[deadlock]" >"$work/run.log" 2>&1 || { cat "$work/run.log"; fail "sched tests"; }
ctest --test-dir "$build" -N >"$work/ctest.txt"
grep -Eq "bundle probe: ?deadlock_cycle" "$work/ctest.txt" || fail "catch_discover_tests found no tests"

step "check"
ninja -C "$build" -t deps >"$work/deps.txt"
outside=$(grep -E '/(fmt|nlohmann|CLI|catch2|boost)/' "$work/deps.txt" | grep -vF "$bundle/include/" | sort -u || true)
[[ -z $outside ]] || fail "headers read from outside the bundle:$(printf '\n  %s' $outside | head -20)"
for header in fmt/format-inl.h nlohmann/json.hpp CLI/CLI.hpp catch2/catch.hpp boost/graph/depth_first_search.hpp; do
  grep -qF "$bundle/include/$header" "$work/deps.txt" || fail "nothing read $header from the bundle"
done
! grep -Eq 'libfmt|-lfmt|libboost|-lboost|/usr/lib/cmake/Catch2' "$build/build.ninja" ||
  fail "build.ninja still names a system fmt/Boost library or Catch2's system CMake modules"
grep -q "$bundle/cmake/CatchAddTests.cmake" "$build/build.ninja" || fail "catch_discover_tests not from the bundle"
rm -rf "$work"
step "ok"
