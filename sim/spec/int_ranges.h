// Integer lists as people type them on a command line: "8", "1..64", "1,2,4", "pow2:1..512",
// "1,2,8..16". Used wherever a sweep or a plan takes a count, so one grammar serves everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sched/result.h"

namespace pipeworks::sim {

// A list expands to at most this many values ("1..2000000000" is an error, not 8 GB).
inline constexpr std::size_t kMaxIntListValues = 1'000'000;

// Grammar (the whole text, no spaces):
//   LIST  := ITEM ( "," ITEM )*
//   ITEM  := INT | INT ".." INT | "pow2:" INT ".." INT
//   INT   := DIGITS                  (decimal, no sign, fits an int)
// "A..B" is every integer from A to B inclusive (A <= B); "pow2:A..B" every power of two in
// [A, B] (at least one). Every value must be >= min_value. The result is sorted ascending
// without duplicates: "8,1..3,2" -> {1, 2, 3, 8}.
// Errors quote the text and give the 0-based column of the problem:
//   "1..x": column 3: expected a number
sched::Result<std::vector<int>> parse_int_list(std::string_view text, int min_value = 1);

// A list that must be exactly one value ("--batch 512"); lists and ranges are errors.
sched::Result<int> parse_single_int(std::string_view text, int min_value = 1);

// Comma-separated names, each one of `allowed` ("gpipe,1f1b"); order kept, duplicates removed.
sched::Result<std::vector<std::string_view>> parse_name_list(
    std::string_view text, const std::vector<std::string_view>& allowed);

}  // namespace pipeworks::sim
