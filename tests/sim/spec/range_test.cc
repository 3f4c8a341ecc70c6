// The integer-list grammar of sim/spec/int_ranges.h: what it accepts, what it expands to, and the
// column and reason it reports for what it rejects.
#include <catch2/catch.hpp>

#include "sim/spec/int_ranges.h"

using pipeworks::sim::kMaxIntListValues;
using pipeworks::sim::parse_int_list;
using pipeworks::sim::parse_name_list;
using pipeworks::sim::parse_single_int;

TEST_CASE("int lists expand numbers, ranges and powers of two") {
  CHECK(parse_int_list("8").value() == std::vector<int>{8});
  CHECK(parse_int_list("1..5").value() == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(parse_int_list("1,2,4").value() == std::vector<int>{1, 2, 4});
  CHECK(parse_int_list("pow2:1..512").value() == std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512});
  CHECK(parse_int_list("pow2:3..20").value() == std::vector<int>{4, 8, 16});
  CHECK(parse_int_list("1,2,8..11").value() == std::vector<int>{1, 2, 8, 9, 10, 11});
  CHECK(parse_int_list("5..5").value() == std::vector<int>{5});
  CHECK(parse_int_list("1..64").value().size() == 64);
}

TEST_CASE("int lists are sorted and free of duplicates") {
  CHECK(parse_int_list("8,1..3,2").value() == std::vector<int>{1, 2, 3, 8});
  CHECK(parse_int_list("4,pow2:1..8,3").value() == std::vector<int>{1, 2, 3, 4, 8});
}

TEST_CASE("int lists honour the minimum") {
  CHECK(parse_int_list("0..3", 0).value() == std::vector<int>{0, 1, 2, 3});
  const auto below = parse_int_list("0..3");
  REQUIRE_FALSE(below);
  CHECK(below.error().message == "\"0..3\": column 0: 0 is below the minimum 1");
  CHECK(below.error().column == 0u);
}

namespace {
void check_error(std::string_view text, std::size_t column, const std::string& message) {
  INFO(text);
  const auto result = parse_int_list(text);
  REQUIRE_FALSE(result);
  CHECK(result.error().message == message);
  CHECK(result.error().column == column);
}
}  // namespace

TEST_CASE("bad int lists report the column and the reason") {
  check_error("", 0, "\"\": column 0: empty list");
  check_error("x", 0, "\"x\": column 0: expected a number, found 'x'");
  check_error("1..", 3, "\"1..\": column 3: expected a number, found the end");
  check_error("1..x", 3, "\"1..x\": column 3: expected a number, found 'x'");
  check_error("1,,2", 2, "\"1,,2\": column 2: expected a number, found ','");
  check_error("1,2,", 4, "\"1,2,\": column 4: expected a number, found the end");
  check_error("8..1", 3, "\"8..1\": column 3: empty range: 8 > 1");
  check_error("1-4", 1, "\"1-4\": column 1: unexpected '-' (expected ',' or the end)");
  check_error("1, 2", 2, "\"1, 2\": column 2: expected a number, found ' '");
  check_error("-1", 0, "\"-1\": column 0: expected a number, found '-'");
  check_error("99999999999", 0, "\"99999999999\": column 0: number too large");
  check_error("pow2:8", 6, "\"pow2:8\": column 6: expected '..' (pow2: takes a range A..B)");
  check_error("pow2:5..7", 0, "\"pow2:5..7\": column 0: no power of two in 5..7");
  check_error("1...3", 3, "\"1...3\": column 3: expected a number, found '.'");
  check_error("1..2000000000", 0, "\"1..2000000000\": column 0: list too long: more than 1000000 values");
  CHECK(kMaxIntListValues == 1'000'000);
}

TEST_CASE("single ints reject lists") {
  CHECK(parse_single_int("512").value() == 512);
  const auto list = parse_single_int("1,2");
  REQUIRE_FALSE(list);
  CHECK(list.error().message == "\"1,2\": expected one number, not a list of 2");
  CHECK_FALSE(parse_single_int("0"));
}

TEST_CASE("name lists accept only the allowed names") {
  const std::vector<std::string_view> allowed{"gpipe", "1f1b"};
  CHECK(parse_name_list("1f1b,gpipe,1f1b", allowed).value() == std::vector<std::string_view>{"1f1b", "gpipe"});
  const auto bad = parse_name_list("gpipe,zb", allowed);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "\"gpipe,zb\": column 6: 'zb' is not one of gpipe, 1f1b");
  const auto empty = parse_name_list("gpipe,", allowed);
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message == "\"gpipe,\": column 6: an empty name is not one of gpipe, 1f1b");
}
