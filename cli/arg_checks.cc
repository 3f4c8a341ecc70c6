// The range validators of every command (see arg_checks.h).
#include "cli/arg_checks.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "sched/generators.h"
#include "sched/text_file.h"

namespace pipeworks::cli {

namespace {

// Decimal digits with an optional '-', and no leading zero: CLI11 converts integers with base 0,
// so "010" would be 8 and "0x10" 16.
bool is_decimal(const std::string& text) {
  const std::size_t digits = !text.empty() && text[0] == '-' ? 1 : 0;
  if (text.size() == digits) return false;
  for (std::size_t i = digits; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return text[digits] != '0' || text.size() == digits + 1;
}

// An integer as C reads it with base 0 ("010" octal, "0x10" hexadecimal).
bool is_other_base(const std::string& text) {
  char* end = nullptr;
  (void)std::strtoll(text.c_str(), &end, 0);
  return !text.empty() && end == text.c_str() + text.size();
}

// Two outputs naming one file, or '-': a usage error (see arg_checks.h), thrown as CLI11's.
void check_distinct_outputs(const std::vector<std::pair<std::string_view, std::string>>& outputs) {
  std::vector<std::pair<std::string_view, std::filesystem::path>> seen;  // (option, the file it names)
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    if (path == "-") {
      throw CLI::ValidationError(
          fmt::format("{}: '-' is not standard output here; give a file name (./- for a file named '-')", option));
    }
    std::error_code ec;
    std::filesystem::path file = std::filesystem::weakly_canonical(path, ec);
    if (ec) file = std::filesystem::absolute(path, ec).lexically_normal();
    for (const auto& [other, other_file] : seen) {
      if (other_file == file) {
        throw CLI::ValidationError(
            fmt::format("{} and {} name the same file '{}'; give each output its own", other, option, path));
      }
    }
    seen.emplace_back(option, file);
  }
}

}  // namespace

CLI::Validator integer_from(std::int64_t low, std::int64_t high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        std::int64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [at, error] = std::from_chars(text.data(), end, value);
        if (!is_decimal(text) && is_other_base(text)) {
          return fmt::format("must be written in decimal (no leading zero or 0x), got '{}'", text);
        }
        if (error == std::errc() && at == end && value >= low && value <= high) return {};
        return fmt::format("must be an integer from {} to {}, got '{}'", low, high, text);
      },
      fmt::format("{}..{}", low, high));
}

CLI::Validator unsigned_64() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [at, error] = std::from_chars(text.data(), end, value);
        if (is_decimal(text) && text[0] != '-' && error == std::errc() && at == end) return {};
        return fmt::format("must be a decimal integer from 0 to {}, got '{}'", UINT64_MAX, text);
      },
      fmt::format("0..{}", UINT64_MAX));
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

sched::Status check_no_empty_values(const CLI::App& app) {
  for (const CLI::App* command : app.get_subcommands()) {
    if (auto nested = check_no_empty_values(*command); !nested) return nested;
    for (const CLI::Option* option : command->get_options()) {
      // Not given, a flag, or a positional (a launched command may well hold an empty argument).
      if (option->count() == 0 || option->get_expected_min() == 0 || !option->nonpositional()) continue;
      for (const std::string& value : option->results()) {
        if (value.empty()) {
          return sched::Error{fmt::format("{}: an empty value; give one, or leave the option out for its default",
                                          option->get_name())};
        }
      }
    }
  }
  return sched::Ok{};
}

std::vector<std::string> schedule_kind_choices() {
  const auto names = sched::schedule_kind_names();
  return {names.begin(), names.end()};
}

sched::Status check_output_paths(const std::vector<std::pair<std::string_view, std::string>>& outputs) {
  check_distinct_outputs(outputs);
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    if (auto status = sched::check_output_path(path); !status) {
      return sched::Error{fmt::format("{}: {}", option, status.error().message)};
    }
  }
  return sched::Ok{};
}

}  // namespace pipeworks::cli
