// What every validation diagnostic must satisfy whatever the schedule, shared by the harnesses
// that validate: its cell and related cells lie inside the programs, it has a message, and it
// renders and formats without failing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sched/diagnostic.h"
#include "sched/schedule.h"

namespace pipeworks::fuzz {

// Validation is linear in K x M (a table per stage and micro-batch, up to validate's guard of
// 4M cells: "0F0,0F4194303" takes most of a second) and reports every stage that lacks actions
// ("0F0,65535F0": 200,000 diagnostics). The text harnesses validate shapes up to this size, so
// that they search at speed; tests/sched covers the guard and large shapes.
inline constexpr std::int64_t kMaxValidatedCells = std::int64_t{1} << 12;
// Of the diagnostics, the first ones are checked one by one.
inline constexpr std::size_t kMaxCheckedDiagnostics = 256;

inline bool worth_validating(const sched::Schedule& s) {
  return std::int64_t{s.num_stages} * s.num_microbatches <= kMaxValidatedCells;
}

void check_diagnostic(const sched::Schedule& schedule, const sched::Diagnostic& diagnostic);

}  // namespace pipeworks::fuzz
