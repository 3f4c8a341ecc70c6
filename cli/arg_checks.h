// Argument checks every command attaches to its options, with one wording and the shared
// limits (sched/limits.h, hw/run/run_limits.h): a value out of range is refused while the
// command line is parsed, before anything runs or prints, as
//   pipeworks: error: --stages: must be an integer from 1 to 65536, got '0'
// and exit 2. Cross-option checks (K x M, the batch against M) stay with each command.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "sched/result.h"

namespace pipeworks::cli {

// A whole number in [low, high]; for list options every element.
CLI::Validator integer_from(std::int64_t low, std::int64_t high);

// Which ends of a number's range it may take.
enum class Ends { kBoth, kAboveLow, kBelowHigh };  // [low, high], (low, high], [low, high)

// A finite number in the range.
CLI::Validator number_from(double low, double high, Ends ends = Ends::kBoth);

// The names --schedule accepts (sched::schedule_kind_names), for CLI::IsMember.
std::vector<std::string> schedule_kind_choices();

// Each (option, path) with a path given can be written (sched::check_output_path), so a long
// job does not fail at its end; the error names the option: "--json: /x/r.json: cannot ...".
sched::Status check_output_paths(const std::vector<std::pair<std::string_view, std::string>>& outputs);

}  // namespace pipeworks::cli
