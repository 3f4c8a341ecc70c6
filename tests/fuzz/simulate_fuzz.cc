// Harness: validator + simulator over schedules and cost models decoded from the bytes
// (schedule_from_bytes.h, cost_from_bytes.h): a valid schedule, optionally re-materialized and
// lowered, optionally edited, and any cost model. Properties: validate and simulate always
// return (the size limits keep one input fast, so a hang is a libFuzzer timeout); a schedule
// that validates simulates under a checked cost model (unless huge costs overflow or a link is
// missing, which the error must say); its makespan is at least the critical path of its compute
// (critical_path.h), and equal to it without transfers or resume costs; every device's bubble
// lies in [0, 1], its busy time in [0, makespan]; its memory peak is at least its static part;
// every span lies in [0, makespan], a device's compute spans do not overlap nor do its
// collectives (REDUCE_GRAD, UNSHARD: the schedule takes torch's stage-level actions on some
// inputs), and the step holds the makespan.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "sched/json_io.h"
#include "sched/passes.h"
#include "sched/stage_level_passes.h"
#include "sched/validate.h"
#include "sim/engine/contention.h"
#include "sim/engine/memory_model.h"
#include "sim/engine/simulator.h"
#include "tests/fuzz/cost_from_bytes.h"
#include "tests/fuzz/critical_path.h"
#include "tests/fuzz/diagnostic_checks.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/schedule_from_bytes.h"

namespace {

using namespace pipeworks;
using fuzz::require;

bool has_resume_costs(const sim::CostModel& costs) {
  for (const sim::StageCost& c : costs.stages) {
    if (c.resume_forward_ns != 0 || c.resume_recompute_ns != 0 || c.resume_backward_ns != 0) return true;
  }
  return false;
}

void check_devices(const sched::Schedule& schedule, const sim::CostModel& costs, const sim::SimResult& r) {
  require(r.devices.size() == static_cast<std::size_t>(schedule.num_devices()), "one device result per device");
  const std::vector<sim::StaticMemory> fixed = sim::static_memory(schedule, costs);
  for (const sim::DeviceResult& d : r.devices) {
    const auto describe = [&] {
      return fmt::format("device {}: busy {} idle {} bubble {} makespan {} peak {} static {}", d.device, d.busy_ns,
                         d.idle_ns, d.bubble_fraction, r.makespan_ns, d.memory.peak_bytes,
                         fixed[static_cast<std::size_t>(d.device)].total_bytes());
    };
    require(d.bubble_fraction >= 0 && d.bubble_fraction <= 1, "every device's bubble lies in [0, 1]", describe);
    require(d.busy_ns >= 0 && d.busy_ns <= r.makespan_ns && d.idle_ns == r.makespan_ns - d.busy_ns,
            "a device's busy time lies in [0, makespan] and idle is the rest", describe);
    require(d.memory.peak_activation_bytes >= 0 &&
                d.memory.peak_bytes >= fixed[static_cast<std::size_t>(d.device)].total_bytes(),
            "a device's memory peak is at least its static part", describe);
    require(d.memory.fits == (d.memory.capacity_bytes == 0 || d.memory.peak_bytes <= d.memory.capacity_bytes),
            "a device fits exactly when its peak is within its capacity", describe);
  }
  require(r.bubble_fraction >= 0 && r.bubble_fraction <= 1, "the overall bubble lies in [0, 1]", [&] {
    std::string idle;
    for (const sim::DeviceResult& d : r.devices) idle += fmt::format(" {}", d.idle_ns);
    return fmt::format("bubble {:.17g}, makespan {}, idle per device:{}", r.bubble_fraction, r.makespan_ns, idle);
  });
}

void check_timeline(const sched::Schedule& schedule, const sim::SimResult& r) {
  require(r.timeline.spans.size() == schedule.num_actions(), "one span per action");
  std::vector<std::int64_t> compute_free(static_cast<std::size_t>(schedule.num_devices()), 0);
  std::vector<std::int64_t> collective_free(compute_free.size(), 0);
  for (const sched::Span& span : r.timeline.spans) {
    const auto describe = [&] {
      return fmt::format("{} on d{}: [{}, {}], makespan {}", sched::to_string(span.action), span.device,
                         span.start_ns, span.end_ns, r.makespan_ns);
    };
    require(span.start_ns >= 0 && span.start_ns <= span.end_ns && span.end_ns <= r.makespan_ns,
            "every span lies in [0, makespan]", describe);
    if (span.lane == sched::Lane::kCollective && span.action.kind != sched::ActionKind::kReshard) {
      std::int64_t& lane_free = collective_free[static_cast<std::size_t>(span.device)];
      require(span.start_ns >= lane_free, "a device's collectives run one at a time, in program order", describe);
      lane_free = span.end_ns;
    }
    if (span.lane != sched::Lane::kCompute) continue;
    std::int64_t& free_at = compute_free[static_cast<std::size_t>(span.device)];
    require(span.start_ns >= free_at, "a device's compute spans run in program order without overlap", describe);
    free_at = span.end_ns;
  }
}

void check_simulation(const sched::Schedule& schedule, const sim::CostModel& costs, const fuzz::CostShape& shape) {
  auto result = sim::simulate(schedule, costs);
  if (!result) {
    const std::string& message = result.error().message;
    const bool overflow =
        message.find("overflow") != std::string::npos || message.find("too long") != std::string::npos;
    const bool no_link = message.find("has no link from device") != std::string::npos;
    require((shape.huge && overflow) || (shape.missing_links && no_link),
            "a schedule that validates simulates (or reports an overflow of huge costs, or a missing link)",
            [&] { return fmt::format("{}\n{}", message, sched::to_json(schedule)); });
    return;
  }
  const sim::SimResult& r = *result;
  const auto path = fuzz::critical_path_ns(schedule, costs);
  require(path.has_value(), "the compute of a valid schedule can run");
  const auto describe = [&] {
    return fmt::format("makespan {}, critical path {}\n{}", r.makespan_ns, *path, sched::to_json(schedule));
  };
  require(r.makespan_ns >= *path, "makespan >= the critical path of the compute", describe);
  require(r.step_ns >= r.makespan_ns, "the step holds the makespan", describe);
  if (!schedule.has_comm() && !has_resume_costs(costs) && !sim::has_contention(costs) && !schedule.has_stage_level()) {
    require(r.makespan_ns == *path, "without transfers, resume costs or contention the makespan is the critical path",
            describe);
  }
  check_devices(schedule, costs, r);
  check_timeline(schedule, r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::ByteSource bytes(data, size);
  sched::Schedule schedule = fuzz::valid_schedule_from_bytes(bytes);
  const int mode = bytes.byte();
  if ((mode & 1) != 0) schedule = *sched::add_recompute(schedule);
  if ((mode & 64) != 0) {  // data parallelism: torch's stage-level actions, before the sends and receives
    if ((mode & 128) != 0) {
      auto unsharded = sched::add_unshard_reshard(schedule);
      require(unsharded.ok(), "a generated schedule takes UNSHARD/RESHARD", [&] { return unsharded.error().message; });
      schedule = std::move(*unsharded);
    }
    auto reduced = sched::add_reduce_grad(schedule);
    require(reduced.ok(), "a generated schedule takes its REDUCE_GRAD actions", [&] { return reduced.error().message; });
    schedule = std::move(*reduced);
  }
  if ((mode & 2) != 0) {
    auto lowered = sched::lower_comm(schedule);
    require(lowered.ok(), "a generated schedule lowers", [&] { return lowered.error().message; });
    schedule = std::move(*lowered);
  }
  if ((mode & 4) != 0) fuzz::mutate_schedule(schedule, bytes);
  fuzz::CostShape shape;
  shape.num_stages = std::clamp(schedule.num_stages, 1, 16);
  shape.num_devices = std::max(1, schedule.num_devices()) + ((mode & 16) != 0 ? 1 : 0);
  shape.huge = (mode & 8) != 0;
  shape.missing_links = (mode & 32) != 0;
  const sim::CostModel costs = fuzz::cost_model_from_bytes(bytes, shape);

  const auto diagnostics = sched::validate(schedule);
  for (const sched::Diagnostic& d : diagnostics) fuzz::check_diagnostic(schedule, d);
  if (!diagnostics.empty() || !sim::check_cost_model(costs)) {
    (void)sim::simulate(schedule, costs);  // an error value, never a crash
    return 0;
  }
  check_simulation(schedule, costs, shape);
  return 0;
}
