// The search bounds what a run would hold, not the simulator's stashes alone: what an I keeps
// for its W, temporaries and input gradients count against the cap (device_memory.h,
// evaluation.h), by exact limits and by the walked peak of every result.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "sched/generators.h"
#include "sim/engine/executor_peak.h"
#include "sim/synth/in_flight_limits.h"
#include "sim/synth/synthesize.h"
#include "sim/synth/synth_test_costs.h"

namespace pipeworks::sim {
namespace {

// synth_costs with one byte kept from I to W, a two-byte forward temporary and a one-byte stage
// output (its gradient is held until the stage before consumes it).
CostModel costs_with_extra(int k, Nanoseconds f, Nanoseconds i, Nanoseconds w) {
  CostModel costs = test::synth_costs(k, f, i, w);
  for (StageCost& c : costs.stages) {
    c.extra.split_held = 1;
    c.extra.forward = 2;
    c.output_bytes = 1;
  }
  return costs;
}

// The largest walked peak of `schedule` (compute only) on `costs`.
Bytes walked_peak(const sched::Schedule& schedule, const CostModel& costs) {
  auto lowered = sched::lower_comm(schedule);
  REQUIRE(lowered.ok());
  auto simulated = simulate(*lowered, costs);
  REQUIRE(simulated.ok());
  const std::vector<Bytes> peaks = executor_peak_bytes(simulated->timeline, *lowered, costs);
  return *std::max_element(peaks.begin(), peaks.end());
}

TEST_CASE("in-flight limits keep room for the executor's temporaries and what I keeps for W", "[synth]") {
  // hold = stash 1 + split_held 1 = 2; headroom = forward 2 (+ input gradient 1 past stage 0)
  //   stage 0: floor((10 - 2) / 2) = 4     stages 1..3: floor((10 - 3) / 2) = 3
  const CostModel costs = costs_with_extra(4, 1, 1, 1);
  auto limits = in_flight_limits(costs, std::vector<Bytes>(4, 10), 8);
  REQUIRE(limits.ok());
  CHECK(*limits == std::vector<int>{4, 3, 3, 3});
  // Under 3 bytes stage 0 has room 1 < 2: the simulator's rule alone then (stash 1 each), and the
  // walked peak judges what the list rule builds.
  auto plain = in_flight_limits(costs, std::vector<Bytes>(4, 3), 8);
  REQUIRE(plain.ok());
  CHECK(*plain == std::vector<int>{3, 3, 3, 3});
  auto none = in_flight_limits(costs, std::vector<Bytes>(4, 0), 8);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message ==
        "no schedule fits a memory cap of 0 B on device 0: its stage holds 0 B of parameters, gradients and optimizer "
        "state, and one micro-batch's activations take 1 B more");
}

TEST_CASE("synthesize keeps the walked peak, temporaries included, within 1F1B's", "[synth]") {
  for (const auto& [f, i, w] : {std::tuple{4, 4, 2}, std::tuple{2, 3, 4}}) {
    const CostModel costs = costs_with_extra(4, f, i, w);
    const auto one_f_one_b = sched::generate(sched::ScheduleKind::kOneFOneB, sched::ScheduleShape{4, 12, {}}).value();
    const Bytes cap = walked_peak(one_f_one_b, costs);
    auto r = synthesize(SynthesisProblem{4, 12, costs, cap}, SearchOptions{60, 1, 300});
    REQUIRE(r.ok());
    INFO("F " << f << " I " << i << " W " << w << ", cap " << cap);
    CHECK(r->best.fits);
    CHECK(*std::max_element(r->best.peak_bytes.begin(), r->best.peak_bytes.end()) <= cap);
    CHECK(walked_peak(r->best.schedule, costs) == *std::max_element(r->best.peak_bytes.begin(), r->best.peak_bytes.end()));
    // Without the executor's bytes the search fills the cap with stashes, and a run would not fit.
    CostModel stashes_only = costs;
    for (StageCost& c : stashes_only.stages) c.extra = StageExtraBytes{};
    auto blind = synthesize(SynthesisProblem{4, 12, stashes_only, cap}, SearchOptions{60, 1, 300});
    REQUIRE(blind.ok());
    CHECK(walked_peak(blind->best.schedule, costs) > cap);
  }
}

}  // namespace
}  // namespace pipeworks::sim
