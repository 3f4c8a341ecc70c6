// Harness: the passes of sched/passes.h over valid compute-only schedules decoded from the bytes
// (schedule_from_bytes.h), some of them edited. Properties: on anything, lower_comm and
// add_recompute return (a value or an error); for a schedule that validates, lower_comm
// succeeds, its output validates (no rendezvous deadlock per sched/deadlock.h), executes to the
// end under the independent rendezvous executor (rendezvous.h) and under unit timing, pairs
// exactly the cross-device dependencies, and strip_comm gives the input back; lowering it again
// is refused when it has SEND/RECV; add_recompute validates, is idempotent and lowers validly.
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "sched/action_index.h"
#include "sched/dependencies.h"
#include "sched/json_io.h"
#include "sched/passes.h"
#include "sched/unit_timing.h"
#include "sched/validate.h"
#include "tests/fuzz/diagnostic_checks.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/rendezvous.h"
#include "tests/fuzz/schedule_from_bytes.h"

namespace {

using namespace pipeworks;
using fuzz::require;

std::string first_problem(const sched::Schedule& s, const std::vector<sched::Diagnostic>& diagnostics) {
  return fmt::format("{}\n{}", diagnostics.empty() ? std::string() : diagnostics.front().message, sched::to_json(s));
}

// Cross-device data dependencies of a compute-only schedule: one SEND/RECV pair each.
std::size_t cross_device_edges(const sched::Schedule& s) {
  auto index = sched::ActionIndex::build(s);
  require(index.ok(), "a valid schedule indexes");
  std::size_t edges = 0;
  for (std::size_t d = 0; d < s.programs.size(); ++d) {
    for (const sched::Action& a : s.programs[d]) {
      for (const sched::Action& dep : sched::data_dependencies(a, *index, s.num_stages)) {
        const bool adjacent_stage = dep.stage != a.stage;  // F <- F(s-1) and B/I <- B/I(s+1)
        if (adjacent_stage && s.device_of(dep.stage) != static_cast<int>(d)) ++edges;
      }
    }
  }
  return edges;
}

void check_lowered(const sched::Schedule& input, const sched::Schedule& lowered, std::string_view what) {
  const auto diagnostics = sched::validate(lowered);
  require(diagnostics.empty(), fmt::format("{}: lower_comm's output validates", what),
          [&] { return first_problem(lowered, diagnostics); });
  require(sched::strip_comm(lowered) == input, fmt::format("{}: strip_comm(lower_comm(s)) == s", what),
          [&] { return sched::to_json(lowered); });
  const auto rendezvous = fuzz::run_rendezvous(lowered);
  require(rendezvous.ok(), fmt::format("{}: the lowered schedule runs to the end with rendezvous sends", what),
          [&] { return fmt::format("{}\n{}", rendezvous.error().message, sched::to_json(lowered)); });
  require(sched::unit_timing(lowered).ok(), fmt::format("{}: the lowered schedule runs under unit timing", what));
  std::size_t sends = 0;
  for (const sched::Program& p : lowered.programs) {
    for (const sched::Action& a : p) sends += sched::is_send(a.kind) ? 1 : 0;
  }
  require(sends == cross_device_edges(input), fmt::format("{}: one SEND/RECV pair per cross-device dependency", what),
          [&] { return sched::to_json(lowered); });
  require(!lowered.has_comm() || !sched::lower_comm(lowered).ok(),
          fmt::format("{}: lowering a schedule with SEND/RECV again is refused", what));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::ByteSource bytes(data, size);
  sched::Schedule schedule = fuzz::valid_schedule_from_bytes(bytes, fuzz::ScheduleLimits{8, 8});
  if (bytes.flag()) fuzz::mutate_schedule(schedule, bytes);
  const auto diagnostics = sched::validate(schedule);
  for (const sched::Diagnostic& d : diagnostics) fuzz::check_diagnostic(schedule, d);
  auto lowered = sched::lower_comm(schedule);
  auto recomputed = sched::add_recompute(schedule);
  if (!diagnostics.empty() || schedule.has_comm()) return 0;

  require(lowered.ok(), "a valid compute-only schedule lowers",
          [&] { return fmt::format("{}\n{}", lowered.error().message, sched::to_json(schedule)); });
  check_lowered(schedule, *lowered, "lowered");

  require(recomputed.ok(), "a valid schedule re-materializes");
  const auto recompute_diagnostics = sched::validate(*recomputed);
  require(recompute_diagnostics.empty(), "add_recompute's output validates",
          [&] { return first_problem(*recomputed, recompute_diagnostics); });
  auto twice = sched::add_recompute(*recomputed);
  require(twice && *twice == *recomputed, "add_recompute is idempotent");
  auto lowered_recomputed = sched::lower_comm(*recomputed);
  require(lowered_recomputed.ok(), "a re-materialized schedule lowers");
  check_lowered(*recomputed, *lowered_recomputed, "re-materialized and lowered");
  return 0;
}
