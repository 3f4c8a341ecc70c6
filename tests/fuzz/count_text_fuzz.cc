// Harness: the count texts people type on a command line: per-stage layer counts and
// `--partition` (sim/plan/partition_text.h: "7,6,6,7", "uniform"), integer lists and ranges
// (sim/spec/int_ranges.h: "8", "1..64", "pow2:1..512", "1,2,8..16") and name lists ("gpipe,1f1b").
// Properties: an error's column lies inside the text; layer counts are positive and, written
// back with commas, parse the same; the partition they name has those counts (and a layer
// total that differs is refused); an integer list is sorted, unique, at least its minimum and
// at most kMaxIntListValues long, and written back as a plain list parses the same; a name
// list holds allowed names once each.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "sim/plan/partition_text.h"
#include "sim/spec/int_ranges.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace pipeworks;
using fuzz::require;

template <class T>
void check_error_column(const sched::Result<T>& result, std::string_view text, std::string_view what) {
  if (result || !result.error().column) return;
  require(*result.error().column <= text.size(), what, [&] { return result.error().message; });
}

void check_layer_counts(std::string_view text) {
  auto counts = sim::parse_layer_counts(text);
  check_error_column(counts, text, "a layer-count error's column lies inside the text");
  (void)sim::parse_partition(text, 12, 4);
  if (!counts) return;
  std::int64_t total = 0;
  for (const int c : *counts) {
    require(c >= 1, "layer counts are positive", [&] { return std::string(text); });
    total += c;
  }
  const std::string written = fmt::format("{}", fmt::join(*counts, ","));
  auto again = sim::parse_layer_counts(written);
  require(again && *again == *counts, "layer counts parse -> write -> parse", [&] { return written; });
  if (total > std::numeric_limits<int>::max() - 1 || counts->size() > 100'000) return;
  const int stages = static_cast<int>(counts->size());
  auto partition = sim::parse_partition(text, static_cast<int>(total), stages);
  require(partition.ok(), "layer counts name a partition of their own total",
          [&] { return partition ? std::string() : partition.error().message; });
  for (int s = 0; s < stages; ++s) {
    require(partition->end(s) - partition->begin(s) == (*counts)[static_cast<std::size_t>(s)],
            "the partition has the counts' layers per stage", [&] { return std::string(text); });
  }
  require(!sim::parse_partition(text, static_cast<int>(total) + 1, stages).ok(),
          "layer counts that do not sum to the model's layers are refused", [&] { return std::string(text); });
}

void check_int_list(std::string_view text, int min_value) {
  auto values = sim::parse_int_list(text, min_value);
  check_error_column(values, text, "an integer-list error's column lies inside the text");
  // (A range may expand to a million values: parse_single_int, which expands it again, and the
  // write-back run only on short lists, so that the search stays fast.)
  constexpr std::size_t kShort = 10'000;
  if (!values || values->size() <= kShort) {
    auto single = sim::parse_single_int(text, min_value);
    require(single.ok() == (values && values->size() == 1) && (!single || *single == values->front()),
            "parse_single_int is the one-value case of parse_int_list", [&] { return std::string(text); });
  }
  if (!values) return;
  require(!values->empty() && values->size() <= sim::kMaxIntListValues,
          "an integer list has 1 to kMaxIntListValues values", [&] { return std::string(text); });
  require(std::is_sorted(values->begin(), values->end()) &&
              std::adjacent_find(values->begin(), values->end()) == values->end(),
          "an integer list is sorted without duplicates", [&] { return std::string(text); });
  require(values->front() >= min_value, "an integer list respects its minimum", [&] { return std::string(text); });
  if (values->size() > kShort) return;
  const std::string written = fmt::format("{}", fmt::join(*values, ","));
  auto again = sim::parse_int_list(written, min_value);
  require(again && *again == *values, "an integer list parse -> write -> parse", [&] { return written; });
}

void check_name_list(std::string_view text) {
  const std::vector<std::string_view> allowed = {"gpipe", "1f1b", "uniform"};
  auto names = sim::parse_name_list(text, allowed);
  check_error_column(names, text, "a name-list error's column lies inside the text");
  if (!names) return;
  for (std::size_t i = 0; i < names->size(); ++i) {
    require(std::find(allowed.begin(), allowed.end(), (*names)[i]) != allowed.end() &&
                std::find(names->begin(), names->begin() + static_cast<std::ptrdiff_t>(i), (*names)[i]) ==
                    names->begin() + static_cast<std::ptrdiff_t>(i),
            "a name list holds allowed names once each", [&] { return std::string(text); });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_layer_counts(text);
  check_int_list(text, std::array<int, 3>{1, 0, 64}[size % 3]);  // the minimum varies with the input
  check_name_list(text);
  return 0;
}
