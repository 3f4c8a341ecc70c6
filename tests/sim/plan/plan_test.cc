// The planner: what it sweeps, that its choice is the sweep's best fitting row, that it keeps
// to the memory cap, and the verdicts it gives the runners-up.
#include <catch2/catch.hpp>

#include <algorithm>

#include <fmt/format.h>

#include "sim/plan/planner.h"
#include "sim/report/plan_report.h"
#include "sim/spec/cluster_presets.h"
#include "sim/spec/model_presets.h"

namespace {

using namespace pipeworks;
using sim::SweepRow;
constexpr sim::Bytes kMiB = 1024LL * 1024;
constexpr sim::Bytes kGiB = 1024 * kMiB;

sim::PlanRequest gpt_request() {
  sim::PlanRequest request;
  request.model = sim::model_preset("gpt2-medium").value();
  request.cluster = sim::cluster_preset("dgx-h100").value();
  request.batch_size = 64;
  request.num_devices = 8;
  return request;
}

}  // namespace

TEST_CASE("the planner sweeps divisors of the devices and of the batch") {
  sim::PlanRequest request = gpt_request();
  request.num_devices = 6;
  request.batch_size = 12;
  const auto spec = sim::plan_sweep_spec(request);
  REQUIRE(spec);
  CHECK(spec->stage_counts == std::vector<int>{1, 2, 3, 6});
  CHECK(spec->microbatch_counts == std::vector<int>{1, 2, 3, 4, 6, 12});
  CHECK(spec->batch_sizes == std::vector<int>{12});
  CHECK(spec->schedules == sim::plan_schedules());
  CHECK(spec->schedules.size() == 4);  // gpipe, 1f1b, zb-h1, zb-h2
  request.schedules = {sched::ScheduleKind::kOneFOneB};
  CHECK(sim::plan_sweep_spec(request)->schedules == request.schedules);
  request.schedules.clear();
  CHECK(spec->recompute_modes == std::vector<bool>{false, true});
  // Tensor parallelism: the counts dividing both a node's 8 devices and the 6 asked for.
  CHECK(spec->tp_counts == std::vector<int>{1, 2});
  request.tp_counts = {2};
  CHECK(sim::plan_sweep_spec(request)->tp_counts == std::vector<int>{2});
  request.tp_counts.clear();

  request.model = sim::uniform_model(4, 1000, 2000, 0, 0, 0);
  CHECK(sim::plan_sweep_spec(request)->stage_counts == std::vector<int>{1, 2, 3});  // 6 > 4 layers
  CHECK(sim::plan_sweep_spec(request)->tp_counts == std::vector<int>{1});  // its layers do not split

  request.num_devices = 9;
  const auto too_many = sim::plan_sweep_spec(request);
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().message == "plan: 9 devices asked for, but cluster 'dgx-h100' has 8");
}

TEST_CASE("the planner's choice is the best fitting row of the same sweep") {
  for (const std::optional<sim::Bytes> cap : {std::optional<sim::Bytes>{}, std::optional<sim::Bytes>{12 * kGiB}}) {
    sim::PlanRequest request = gpt_request();
    request.memory_cap_bytes = cap;
    const auto plan = sim::make_plan(request);
    REQUIRE(plan);
    REQUIRE(plan->best);
    const auto sweep = sim::run_sweep(*sim::plan_sweep_spec(request), {1, {}});
    REQUIRE(sweep);
    CHECK(sweep->rows == plan->sweep.rows);
    // Brute force: the fastest fitting row (ties: less memory, then the first).
    std::optional<std::size_t> fastest;
    for (std::size_t i = 0; i < sweep->rows.size(); ++i) {
      const SweepRow& r = sweep->rows[i];
      if (!r.simulated || !r.fits) continue;
      if (!fastest || r.samples_per_s > sweep->rows[*fastest].samples_per_s ||
          (r.samples_per_s == sweep->rows[*fastest].samples_per_s && r.peak_bytes < sweep->rows[*fastest].peak_bytes)) {
        fastest = i;
      }
    }
    CHECK(plan->best == fastest);
    const SweepRow& best = plan->sweep.rows[*plan->best];
    if (cap) {
      CHECK(best.peak_bytes <= *cap);
      CHECK(best.capacity_bytes == *cap);
    }
    // One family per schedule x recompute pair, one per layout tp x pp x dp = 8 (tp 1, 2, 4, 8:
    // 4 + 3 + 2 + 1 layouts), one per sharding; the winner is in one of each (of a sharding family
    // only with dp > 1).
    CHECK(plan->spec.tp_counts == std::vector<int>{1, 2, 4, 8});
    REQUIRE(plan->runners_up.size() == 8 + 10 + 2);
    CHECK(plan->runners_up[0].family == "gpipe, recompute off");
    CHECK(plan->runners_up[7].family == "zb-h2, recompute on");
    CHECK(plan->runners_up[8].family == "tp 1 x pp 1 x dp 8");
    CHECK(plan->runners_up[11].family == "tp 1 x pp 8 x dp 1");
    CHECK(plan->runners_up[12].family == "tp 2 x pp 1 x dp 4");
    CHECK(plan->runners_up[17].family == "tp 8 x pp 1 x dp 1");
    CHECK(plan->runners_up[18].family == "no sharding (dp > 1)");
    CHECK(plan->runners_up[19].family == "ZeRO-1");
    int holding_best = 0;
    for (const auto& up : plan->runners_up) {
      holding_best += up.contains_best ? 1 : 0;
      CHECK_FALSE(up.reason.empty());
    }
    CHECK(holding_best == (best.config.dp > 1 ? 3 : 2));
    CHECK(best.config.total_devices() == 8);
  }
}

TEST_CASE("a layout family nothing could be built for says that none was possible") {
  sim::PlanRequest request = gpt_request();
  request.batch_size = 4;  // 8 replicas cannot split 4 samples
  request.tp_counts = {1};
  const auto plan = sim::make_plan(request);
  REQUIRE(plan);
  const auto dp8 = std::find_if(plan->runners_up.begin(), plan->runners_up.end(),
                                [](const sim::RunnerUp& up) { return up.family == "pp 1 x dp 8"; });
  REQUIRE(dp8 != plan->runners_up.end());
  CHECK_FALSE(dp8->row);
  CHECK_THAT(dp8->reason, Catch::StartsWith("none possible: every configuration was skipped as impossible"));
}

TEST_CASE("a plan under an impossible cap has no best and says by how much the closest overflows") {
  sim::PlanRequest request = gpt_request();
  request.memory_cap_bytes = 64LL * 1024 * 1024;
  const auto plan = sim::make_plan(request);
  REQUIRE(plan);
  CHECK_FALSE(plan->best);
  for (const auto& up : plan->runners_up) CHECK_THAT(up.reason, Catch::StartsWith("does not fit: device "));
  const auto closest = sim::least_overflowing_row(plan->sweep.rows);
  REQUIRE(closest);
  for (const SweepRow& r : plan->sweep.rows) CHECK(r.overflow_bytes >= plan->sweep.rows[*closest].overflow_bytes);
  const std::string report = sim::plan_report(*plan);
  CHECK_THAT(report, Catch::Contains("no configuration fits in memory"));
  CHECK_THAT(report, Catch::Contains("partitioner: under the memory caps: no partition into"));
}

namespace {
SweepRow row(int microbatches, sim::Nanoseconds stage_compute_ns, sim::Nanoseconds makespan_ns, double bubble) {
  SweepRow r;
  r.config = {64, 4, microbatches, sched::ScheduleKind::kGPipe, false};
  r.simulated = true;
  r.fits = true;
  r.stage_compute_ns = stage_compute_ns;
  r.makespan_ns = makespan_ns;
  r.samples_per_s = 64 * 1e9 / static_cast<double>(makespan_ns);
  r.bubble_fraction = bubble;
  r.peak_bytes = 1024;
  return r;
}
}  // namespace

TEST_CASE("a loss is put down to the bubble or to compute, whichever factor is larger") {
  // Best: 16 x 1 ms of work, step 20 ms (overhead 1.25).
  const SweepRow best = row(16, 1'000'000, 20'000'000, 0.2);
  // Same work, step 25 ms: overhead x1.25, compute x1.00 -> bubble.
  CHECK(sim::explain_loss(row(16, 1'000'000, 25'000'000, 0.36), best) ==
        "slower by 20.0% (2560.0 vs 3200.0 samples/s), mostly bubble: bubble 36.0% vs 20.0% (overhead x1.25); "
        "slowest stage computes 16 x 1.00 ms vs 16 x 1.00 ms per micro-batch (x1.00)");
  // 4 x 6 ms = 24 ms of work, step 25 ms: compute x1.50, overhead x0.83 -> compute.
  CHECK(sim::explain_loss(row(4, 6'000'000, 25'000'000, 0.04), best) ==
        "slower by 20.0% (2560.0 vs 3200.0 samples/s), mostly compute: bubble 4.0% vs 20.0% (overhead x0.83); "
        "slowest stage computes 4 x 6.00 ms vs 16 x 1.00 ms per micro-batch (x1.50)");
  SweepRow big = row(16, 1'000'000, 25'000'000, 0.36);
  big.fits = false;
  big.peak_device = 2;
  big.peak_bytes = 3 * kGiB;
  big.capacity_bytes = 2 * kGiB;
  big.overflow_bytes = kGiB;
  CHECK(sim::explain_loss(big, best) == "does not fit: device 2 needs 3.00 GiB, 1.00 GiB over its 2.00 GiB cap");
  SweepRow tie = row(16, 1'000'000, 20'000'000, 0.2);
  tie.peak_bytes = 2048;
  CHECK(sim::explain_loss(tie, best) == "as fast (3200.0 samples/s) but needs 1024 bytes more memory (2.00 KiB vs 1.00 KiB)");
  // Rounding must not hide the reason: 768 MiB + 1 byte prints as 768.00 MiB on both sides.
  SweepRow a_byte_more = tie;
  SweepRow best_768 = best;
  best_768.peak_bytes = 768 * kMiB;
  a_byte_more.peak_bytes = 768 * kMiB + 1;
  CHECK(sim::explain_loss(a_byte_more, best_768) ==
        "as fast (3200.0 samples/s) but needs 1 byte more memory (768.00 MiB vs 768.00 MiB)");
  a_byte_more.peak_bytes = best_768.peak_bytes;
  CHECK(sim::explain_loss(a_byte_more, best_768) ==
        "ties with the best (3200.0 samples/s, 768.00 MiB peak); the best comes first in sweep order");
}

TEST_CASE("a loss on fewer devices says so first, and a near-tie is called a tie") {
  const SweepRow best = row(16, 1'000'000, 20'000'000, 0.2);  // 4 stages, one a device
  SweepRow fewer = row(4, 6'000'000, 25'000'000, 0.04);
  fewer.config.num_stages = 2;
  CHECK(sim::explain_loss(fewer, best) ==
        "uses 2 of the best's 4 devices; slower by 20.0% (2560.0 vs 3200.0 samples/s), mostly compute: bubble 4.0% "
        "vs 20.0% (overhead x0.83); slowest stage computes 4 x 6.00 ms vs 16 x 1.00 ms per micro-batch (x1.50)");
  // 20.1 ms against 20 ms: 0.5% slower, within kTieFraction.
  CHECK_THAT(sim::explain_loss(row(16, 1'000'000, 20'100'000, 0.2), best),
             Catch::StartsWith("a tie within 1.0%: slower by 0.5% (3184.1 vs 3200.0 samples/s), mostly bubble"));
  // 1.5% slower is no tie.
  CHECK_THAT(sim::explain_loss(row(16, 1'000'000, 20'300'000, 0.2), best), Catch::StartsWith("slower by 1.5%"));
}

TEST_CASE("the plan report names the best configuration and every family") {
  const auto plan = sim::make_plan(gpt_request());
  REQUIRE(plan);
  const std::string report = sim::plan_report(*plan);
  const SweepRow& best = plan->sweep.rows[*plan->best];
  CHECK_THAT(report, Catch::StartsWith("plan: gpt2-medium on dgx-h100, batch 64: "));
  CHECK_THAT(report, Catch::Contains(fmt::format("best: pp {} x dp {} (8 devices, ", best.config.num_devices(),
                                                 best.config.dp)));
  CHECK_THAT(report, Catch::Contains(", MFU "));  // the preset knows its FLOPs and the H100's peak
  for (const auto& up : plan->runners_up) CHECK_THAT(report, Catch::Contains(up.family) && Catch::Contains(up.reason));
}
