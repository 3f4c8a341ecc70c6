// The one byte formatter every report, picture and command prints with.
#include <catch2/catch.hpp>

#include "sched/units_text.h"

using pipeworks::sched::format_bytes;

TEST_CASE("bytes print in binary units with two decimals from 1 KiB", "[units]") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(1024) == "1.00 KiB");
  CHECK(format_bytes(3 << 20) == "3.00 MiB");
  CHECK(format_bytes(1342177280) == "1.25 GiB");
  CHECK(format_bytes(-1536) == "-1.50 KiB");
  CHECK(format_bytes(std::int64_t{5} << 40) == "5.00 TiB");
  CHECK(format_bytes(std::int64_t{3} << 50) == "3072.00 TiB");
}
