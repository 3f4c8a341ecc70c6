// The cache sweep that puts a timed repetition in the run's cache state (hw/predict/cache_sweep.h):
// sysfs's size texts read exactly, bad ones refused, and this machine's last-level cache found.
#include <catch2/catch.hpp>

#include "hw/predict/cache_sweep.h"

namespace pipeworks::hw {
namespace {

TEST_CASE("cache sweep: sysfs's cache sizes in bytes") {
  CHECK(parse_cache_size("32768K").value() == 32 * 1024 * 1024);
  CHECK(parse_cache_size("1M").value() == 1024 * 1024);
  CHECK(parse_cache_size("2G").value() == sched::Bytes{2} << 30);
  CHECK(parse_cache_size("512").value() == 512);
  for (const char* bad : {"", "K", "0K", "-4K", "12Q", "1.5M", "99999999999999999999K"}) {
    CAPTURE(bad);
    const auto parsed = parse_cache_size(bad);
    REQUIRE_FALSE(parsed);
    CHECK_THAT(parsed.error().message, Catch::Contains("cache size"));
  }
}

TEST_CASE("cache sweep: the last-level cache is at least as large as any cache of cpu0, the fallback without sysfs") {
  const sched::Bytes llc = last_level_cache_bytes(7);
  CHECK(llc >= 7);
  CHECK((llc == 7 || llc >= 64 * 1024));  // a real last-level cache is tens of KiB or more
  CacheSweep sweep(2 * llc);
  CHECK(sweep.bytes() == 2 * llc);
  sweep.run();
  CHECK(CacheSweep(1).bytes() == 64);  // one line at least
}

}  // namespace
}  // namespace pipeworks::hw
