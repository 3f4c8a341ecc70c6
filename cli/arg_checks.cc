// The range validators of every command (see arg_checks.h).
#include "cli/arg_checks.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "sched/generators.h"
#include "sched/text_file.h"

namespace pipeworks::cli {

CLI::Validator integer_from(std::int64_t low, std::int64_t high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        std::int64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [at, error] = std::from_chars(text.data(), end, value);
        if (error == std::errc() && at == end && value >= low && value <= high) return {};
        return fmt::format("must be an integer from {} to {}, got '{}'", low, high, text);
      },
      fmt::format("{}..{}", low, high));
}

CLI::Validator number_from(double low, double high, Ends ends) {
  const char* open = ends == Ends::kAboveLow ? "(" : "[";
  const char* close = ends == Ends::kBelowHigh ? ")" : "]";
  const std::string range = fmt::format("{}{:g}, {:g}{}", open, low, high, close);
  return CLI::Validator(
      [low, high, ends, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool parsed = !text.empty() && end == text.c_str() + text.size() && std::isfinite(value);
        const bool above = ends == Ends::kAboveLow ? value > low : value >= low;
        const bool below = ends == Ends::kBelowHigh ? value < high : value <= high;
        if (parsed && above && below) return {};
        return fmt::format("must be a number in {}, got '{}'", range, text);
      },
      range);
}

std::vector<std::string> schedule_kind_choices() {
  const auto names = sched::schedule_kind_names();
  return {names.begin(), names.end()};
}

sched::Status check_output_paths(const std::vector<std::pair<std::string_view, std::string>>& outputs) {
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    if (auto status = sched::check_output_path(path); !status) {
      return sched::Error{fmt::format("{}: {}", option, status.error().message)};
    }
  }
  return sched::Ok{};
}

}  // namespace pipeworks::cli
