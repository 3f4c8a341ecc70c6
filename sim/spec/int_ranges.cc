// Parser for the integer-list grammar of int_ranges.h: a small hand-written scanner, because
// the errors must point at the column where the text went wrong.
#include "sim/spec/int_ranges.h"

#include <algorithm>
#include <climits>
#include <string>

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool done() const { return pos_ >= text_.size(); }
  std::size_t pos() const { return pos_; }
  bool consume(std::string_view token) {
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  sched::Error error_at(std::size_t column, std::string_view reason) const {
    return sched::Error{fmt::format("\"{}\": column {}: {}", text_, column, reason), column};
  }
  sched::Result<int> number() {
    const std::size_t start = pos_;
    std::int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      value = value * 10 + (text_[pos_] - '0');
      if (value > INT_MAX) return error_at(start, "number too large");
      ++pos_;
    }
    if (pos_ == start) {
      if (done()) return error_at(start, "expected a number, found the end");
      return error_at(start, fmt::format("expected a number, found '{}'", text_[pos_]));
    }
    return static_cast<int>(value);
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

sched::Status append_item(Scanner& scan, int min_value, std::vector<int>& values) {
  const std::size_t item_start = scan.pos();
  const bool pow2 = scan.consume("pow2:");
  const std::size_t first_at = scan.pos();
  auto first = scan.number();
  if (!first) return first.error();
  if (!scan.consume("..")) {
    if (pow2) return scan.error_at(scan.pos(), "expected '..' (pow2: takes a range A..B)");
    if (*first < min_value) return scan.error_at(first_at, fmt::format("{} is below the minimum {}", *first, min_value));
    values.push_back(*first);
    return sched::Ok{};
  }
  const std::size_t last_at = scan.pos();
  auto last = scan.number();
  if (!last) return last.error();
  if (*first < min_value) return scan.error_at(first_at, fmt::format("{} is below the minimum {}", *first, min_value));
  if (*last < *first) return scan.error_at(last_at, fmt::format("empty range: {} > {}", *first, *last));
  if (pow2) {
    const std::size_t before = values.size();
    for (std::int64_t p = 1; p <= *last; p *= 2) {
      if (p >= *first) values.push_back(static_cast<int>(p));
    }
    if (values.size() == before) {
      return scan.error_at(item_start, fmt::format("no power of two in {}..{}", *first, *last));
    }
  } else {
    const std::int64_t count = std::int64_t{*last} - *first + 1;
    if (values.size() + static_cast<std::size_t>(count) > kMaxIntListValues) {
      return scan.error_at(item_start, fmt::format("list too long: more than {} values", kMaxIntListValues));
    }
    for (std::int64_t v = *first; v <= *last; ++v) values.push_back(static_cast<int>(v));
  }
  return sched::Ok{};
}

}  // namespace

sched::Result<std::vector<int>> parse_int_list(std::string_view text, int min_value) {
  Scanner scan(text);
  if (scan.done()) return scan.error_at(0, "empty list");
  std::vector<int> values;
  while (true) {
    auto item = append_item(scan, min_value, values);
    if (!item) return item.error();
    if (scan.done()) break;
    if (!scan.consume(",")) {
      return scan.error_at(scan.pos(), fmt::format("unexpected '{}' (expected ',' or the end)", text[scan.pos()]));
    }
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

sched::Result<int> parse_single_int(std::string_view text, int min_value) {
  auto values = parse_int_list(text, min_value);
  if (!values) return values.error();
  if (values->size() != 1) {
    return sched::Error{fmt::format("\"{}\": expected one number, not a list of {}", text, values->size())};
  }
  return values->front();
}

sched::Result<std::vector<std::string_view>> parse_name_list(
    std::string_view text, const std::vector<std::string_view>& allowed) {
  std::vector<std::string_view> names;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view name = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    const auto found = std::find(allowed.begin(), allowed.end(), name);
    if (found == allowed.end()) {
      std::string expected;
      for (const auto& a : allowed) expected += (expected.empty() ? "" : ", ") + std::string(a);
      const std::string shown = name.empty() ? "an empty name" : fmt::format("'{}'", name);
      return sched::Error{fmt::format("\"{}\": column {}: {} is not one of {}", text, start, shown, expected), start};
    }
    if (std::find(names.begin(), names.end(), *found) == names.end()) names.push_back(*found);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return names;
}

}  // namespace pipeworks::sim
