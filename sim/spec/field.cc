// The spellings of field values shared by every record's writers (see field.h).
#include "sim/spec/field.h"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/spec/units.h"

namespace pipeworks::sim {

std::string_view unit_name(FieldUnit unit) {
  switch (unit) {
    case FieldUnit::kCount: return "count";
    case FieldUnit::kIndex: return "index";
    case FieldUnit::kSamples: return "samples";
    case FieldUnit::kNanoseconds: return "ns";
    case FieldUnit::kBytes: return "bytes";
    case FieldUnit::kFraction: return "fraction";
    case FieldUnit::kSamplesPerSecond: return "samples/s";
    case FieldUnit::kTokensPerSecond: return "tokens/s";
    case FieldUnit::kFlag: return "flag";
    case FieldUnit::kText: return "text";
    case FieldUnit::kLayers: return "layers";
    case FieldUnit::kNumber: return "number";
  }
  return "?";
}

std::string value_text(const FieldValue& value, FieldUnit unit) {
  struct Text {
    FieldUnit unit;
    std::string operator()(bool flag) const { return flag ? "yes" : "no"; }
    std::string operator()(int n) const { return fmt::to_string(n); }
    std::string operator()(std::int64_t n) const { return fmt::to_string(n); }
    std::string operator()(double x) const {
      return unit == FieldUnit::kFraction ? fmt::format("{:.6f}", x) : fmt::format("{:.6g}", x);
    }
    std::string operator()(const std::string& text) const { return text; }
    std::string operator()(const std::vector<int>& list) const { return fmt::format("{}", fmt::join(list, ",")); }
    std::string operator()(const std::vector<std::int64_t>& list) const {
      return fmt::format("{}", fmt::join(list, ","));
    }
  };
  return std::visit(Text{unit}, value);
}

std::string human_text(const FieldValue& value, FieldUnit unit, std::string text) {
  const auto* integer = std::get_if<std::int64_t>(&value);
  const auto* real = std::get_if<double>(&value);
  if (integer != nullptr && unit == FieldUnit::kNanoseconds) return format_duration(*integer);
  if (integer != nullptr && unit == FieldUnit::kBytes) return format_bytes(*integer);
  if (real != nullptr && unit == FieldUnit::kFraction) return format_percent(*real);
  if (real != nullptr && unit == FieldUnit::kSamplesPerSecond) return format_samples_per_s(*real);
  return text;
}

std::optional<FieldUnit> unit_named_by(std::string_view name) {
  constexpr std::pair<std::string_view, FieldUnit> kSuffixes[] = {{"_ns", FieldUnit::kNanoseconds},
                                                                  {"_tokens_per_s", FieldUnit::kTokensPerSecond},
                                                                  {"_bytes", FieldUnit::kBytes},
                                                                  {"_fraction", FieldUnit::kFraction},
                                                                  {"_per_s", FieldUnit::kSamplesPerSecond}};
  if (name == "tokens_per_s") return FieldUnit::kTokensPerSecond;
  for (const auto& [suffix, unit] : kSuffixes) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) return unit;
  }
  return std::nullopt;
}

bool right_aligned(FieldUnit unit) {
  return unit != FieldUnit::kFlag && unit != FieldUnit::kText && unit != FieldUnit::kLayers;
}

}  // namespace pipeworks::sim
