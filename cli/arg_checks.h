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

// A whole number in [low, high], written in decimal (no leading zero, no 0x); for list options
// every element.
CLI::Validator integer_from(std::int64_t low, std::int64_t high);

// A decimal number from 0 to 2^64 - 1 (a seed): no sign, no leading zero, nothing past the range.
CLI::Validator unsigned_64();

// Which ends of a number's range it may take.
enum class Ends { kBoth, kAboveLow, kBelowHigh };  // [low, high], (low, high], [low, high)

// A finite number in the range.
CLI::Validator number_from(double low, double high, Ends ends = Ends::kBoth);

// The names --schedule accepts (sched::schedule_kind_names), for CLI::IsMember.
std::vector<std::string> schedule_kind_choices();

// Each (option, path) with a path given can be written (sched::check_output_path), so a long
// job does not fail at its end; the error names the option: "--json: /x/r.json: cannot ...".
// Two options naming the same file (one would silently replace the other) and '-' (not standard
// output for these options) are usage errors: thrown as CLI::ValidationError, which the command's
// callback passes to main like every usage error (one line, exit 2).
sched::Status check_output_paths(const std::vector<std::pair<std::string_view, std::string>>& outputs);

// Every option given to the parsed (sub)commands of `app` with an empty value ('--json ""'),
// which would otherwise count as not given: the first is the error. Flags take no value.
sched::Status check_no_empty_values(const CLI::App& app);

}  // namespace pipeworks::cli
