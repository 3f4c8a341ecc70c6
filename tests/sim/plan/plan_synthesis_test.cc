// The plan's synthesized family (sim/synth/plan_synthesis.h): searched from the fastest fitting
// row synthesis can express, on that row's own configuration and the plan's cap; labelled; the
// same for one seed; not searched, with the reason, when only rows it cannot express fit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/plan/planner.h"
#include "sim/report/plan_report.h"
#include "sim/spec/cluster_presets.h"
#include "sim/spec/model_presets.h"
#include "sim/synth/plan_synthesis.h"
#include "sim/synth/problem_from_specs.h"

namespace {

using namespace pipeworks;
using sim::SweepRow;
constexpr sim::Bytes kMiB = 1024LL * 1024;
constexpr sim::Bytes kGiB = 1024 * kMiB;

// 8 uniform layers, 1 GiB of parameters each: data-parallel replicas pay for their all-reduce, so
// a pipeline over every device can win; on 4 of dgx-h100's devices.
sim::PlanRequest uniform_request(int layers = 8) {
  sim::PlanRequest request;
  request.model = sim::uniform_model(layers, 1'000'000, 2'000'000, kMiB, 4 * kMiB, kGiB);
  request.cluster = sim::cluster_preset("dgx-h100").value();
  request.batch_size = 16;
  request.num_devices = 4;
  request.memory_cap_bytes = 40 * kGiB;
  return request;
}

constexpr sim::PlanSynthesisOptions kFixedWork{5, 1, 200};  // a fixed number of evaluations: one result

const sim::RunnerUp& synthesized_family(const sim::Plan& plan) {
  REQUIRE_FALSE(plan.runners_up.empty());
  const sim::RunnerUp& last = plan.runners_up.back();
  REQUIRE_THAT(last.family, Catch::StartsWith("synthesized"));
  return last;
}

}  // namespace

TEST_CASE("synthesis names why it cannot search rows of tp or dp, and searches recompute and virtual stages") {
  sim::SweepConfig c{16, 4, 8, sched::ScheduleKind::kOneFOneB, false, 1, 1, sim::ZeroStage::kNone, 1};
  CHECK(sim::synthesis_unsupported(c).empty());
  c.dp = 2;
  CHECK(sim::synthesis_unsupported(c) == "dp 2: synthesis models one pipeline without data parallelism");
  c.dp = 1;
  c.tp = 4;
  c.recompute = true;
  CHECK(sim::synthesis_unsupported(c) == "tp 4: synthesis does not model tensor parallelism");  // R is searched
  c.dp = 2;
  CHECK(sim::synthesis_unsupported(c) ==
        "tp 4: synthesis does not model tensor parallelism; dp 2: synthesis models one pipeline without data parallelism");
  c = {16, 8, 8, sched::ScheduleKind::kInterleaved1F1B, false, 2, 1, sim::ZeroStage::kNone, 1};
  CHECK(sim::synthesis_unsupported(c).empty());
}

TEST_CASE("the synthesized family is searched from the fastest fitting row synthesis can express") {
  const sim::PlanRequest request = uniform_request();
  const auto plan = sim::make_plan_with_synthesis(request, kFixedWork);
  REQUIRE(plan);
  REQUIRE(plan->best);
  REQUIRE(plan->synthesis);
  const sim::PlanSynthesis& s = *plan->synthesis;
  REQUIRE(s.found());
  const auto& rows = plan->sweep.rows;
  const SweepRow& source = rows[*s.source];
  CHECK(sim::synthesis_unsupported(source.config).empty());
  CHECK(source.fits);
  // Brute force: no expressible fitting row is faster than the source.
  for (const SweepRow& r : rows) {
    if (r.fits && sim::synthesis_unsupported(r.config).empty()) CHECK(r.samples_per_s <= source.samples_per_s);
  }
  const sim::RunnerUp& up = synthesized_family(*plan);
  CHECK(up.family == "synthesized (searched from " + sim::config_label(source.config) + ")");
  CHECK_FALSE(up.row);
  // Searched on the source's own costs: its family, evaluated by the search, has the row's step,
  // and the search's answer is no slower.
  const auto report = nlohmann::json::parse(s.report_json);
  CHECK(report["num_stages"] == source.config.num_stages);
  CHECK(report["num_microbatches"] == source.config.num_microbatches);
  CHECK(report["microbatch_size"] == source.config.microbatch_size());
  const std::string kind(sched::schedule_kind_name(source.config.schedule));
  const auto same = std::find_if(report["hand_written"].begin(), report["hand_written"].end(),
                                 [&](const nlohmann::json& h) { return h["schedule"] == kind; });
  REQUIRE(same != report["hand_written"].end());
  CHECK((*same)["step_ns"] == source.makespan_ns);
  CHECK(s.row.makespan_ns <= source.makespan_ns);
  for (const auto& d : report["devices"]) CHECK(d["cap_bytes"] == 40 * kGiB);
  CHECK(s.row.fits);
  CHECK(s.row.peak_bytes <= 40 * kGiB);
  CHECK(s.schedule.num_stages == source.config.num_stages);
  const SweepRow& best = rows[*plan->best];
  CHECK(s.beats_best == (s.row.makespan_ns < best.makespan_ns));
  if (s.beats_best) {
    CHECK_THAT(up.reason, Catch::StartsWith("the best: faster than the best row"));
  } else {
    CHECK_THAT(up.reason, Catch::StartsWith("ties with the best") || Catch::Contains("slower by"));
  }
  const std::string text = sim::plan_report(*plan);
  CHECK_THAT(text, Catch::Contains(up.family) && Catch::Contains(up.reason));
  CHECK_THAT(text, Catch::Contains("synthesized schedule: searched from " + sim::config_label(source.config)));
}

TEST_CASE("the synthesized family is the same for one seed") {
  const auto a = sim::make_plan_with_synthesis(uniform_request(), kFixedWork);
  const auto b = sim::make_plan_with_synthesis(uniform_request(), kFixedWork);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(a->synthesis->found());
  CHECK(a->synthesis->schedule == b->synthesis->schedule);
  CHECK(a->synthesis->row == b->synthesis->row);
  CHECK(a->runners_up.back().reason == b->runners_up.back().reason);
  CHECK(sim::plan_report(*a) == sim::plan_report(*b));
}

TEST_CASE("a synthesized schedule shorter than the best row's is called the best and the report says so") {
  // One schedule family, 1F1B, and no replica cheap enough: the search's split backwards fill
  // 1F1B's bubble.
  sim::PlanRequest request = uniform_request();
  request.schedules = {sched::ScheduleKind::kOneFOneB};
  const auto plan = sim::make_plan_with_synthesis(request, kFixedWork);
  REQUIRE(plan);
  REQUIRE(plan->synthesis->found());
  REQUIRE(plan->synthesis->beats_best);
  CHECK_THAT(plan->runners_up.back().reason, Catch::StartsWith("the best: faster than the best row ("));
  CHECK_THAT(sim::plan_report(*plan), Catch::Contains("  faster than the best row: step "));
}

TEST_CASE("a row with virtual stages is searched on its own placement (the V or the loop)") {
  //   zb-v, K = 8 on 4 devices:               0 1 2 3 3 2 1 0
  //   interleaved-1f1b v = 2, K = 8 on 4:     0 1 2 3 0 1 2 3
  const std::pair<sched::ScheduleKind, std::vector<int>> cases[] = {
      {sched::ScheduleKind::kZbV, {0, 1, 2, 3, 3, 2, 1, 0}},
      {sched::ScheduleKind::kInterleaved1F1B, {0, 1, 2, 3, 0, 1, 2, 3}}};
  for (const auto& [kind, placement] : cases) {
    sim::PlanRequest request = uniform_request();
    request.schedules = {kind};
    const auto plan = sim::make_plan_with_synthesis(request, kFixedWork);
    REQUIRE(plan);
    REQUIRE(plan->synthesis);
    const sim::PlanSynthesis& s = *plan->synthesis;
    INFO(sched::schedule_kind_name(kind) << ": " << s.why_not);
    REQUIRE(s.found());
    const SweepRow& source = plan->sweep.rows[*s.source];
    CHECK(source.config.schedule == kind);
    CHECK(source.config.virtual_stages == 2);
    CHECK(s.schedule.num_stages == 8);
    CHECK(s.schedule.placement == placement);
    CHECK(s.row.makespan_ns <= source.makespan_ns);
    CHECK(nlohmann::json::parse(s.report_json)["placement"] == placement);
  }
}

TEST_CASE("the synthesized family is not searched when only rows it cannot express fit, and says why") {
  SECTION("one layer: every row is one stage with 4 data-parallel replicas") {
    const auto plan = sim::make_plan_with_synthesis(uniform_request(1), kFixedWork);
    REQUIRE(plan);
    REQUIRE(plan->best);
    const sim::PlanSynthesis& s = *plan->synthesis;
    CHECK_FALSE(s.source);
    CHECK(s.why_not == "no fitting row has tp 1 and dp 1");
    CHECK_THAT(s.unsearchable, Catch::Contains("dp=4 z") &&
                                   Catch::Contains("(dp 4: synthesis models one pipeline without data parallelism)"));
    CHECK(synthesized_family(*plan).reason == "not searched: " + s.why_not);
    CHECK_THAT(sim::plan_report(*plan), Catch::Contains("synthesized schedule: not searched: no fitting row has") &&
                                            Catch::Contains("  fitting rows it cannot search: "));
  }
  SECTION("no cap and devices of unknown memory") {
    sim::PlanRequest request = uniform_request();
    request.memory_cap_bytes.reset();
    for (auto& device : request.cluster.devices) device.memory_bytes = 0;
    const auto plan = sim::make_plan_with_synthesis(request, kFixedWork);
    REQUIRE(plan);
    REQUIRE(plan->best);
    CHECK_FALSE(plan->synthesis->source);
    CHECK(synthesized_family(*plan).reason ==
          "not searched: no memory cap: the plan has none and the devices' memory is unknown");
  }
  SECTION("a cap nothing fits") {
    sim::PlanRequest request = uniform_request();
    request.memory_cap_bytes = 64 * kMiB;
    const auto plan = sim::make_plan_with_synthesis(request, kFixedWork);
    REQUIRE(plan);
    CHECK_FALSE(plan->best);
    CHECK(synthesized_family(*plan).reason == "not searched: no configuration fits");
  }
}

TEST_CASE("the synthesized family's search options are checked before the sweep") {
  const sim::PlanRequest request = uniform_request();
  for (const double limit : {0.0, -1.0, 1e9}) {
    const auto plan = sim::make_plan_with_synthesis(request, {limit, 1, -1});
    REQUIRE_FALSE(plan);
    CHECK_THAT(plan.error().message, Catch::StartsWith("the time limit must be above 0 and at most 3600 s"));
  }
  const auto plan = sim::make_plan_with_synthesis(request, {5, 1, -2});
  REQUIRE_FALSE(plan);
  CHECK(plan.error().message == "the evaluations must be at least 0, got -2");
  // Without --synthesize nothing is searched and nothing said.
  const auto plain = sim::make_plan(request);
  REQUIRE(plain);
  CHECK_FALSE(plain->synthesis);
  CHECK_THAT(sim::plan_report(*plain), !Catch::Contains("synthesized"));
}

TEST_CASE("the synthesis problem takes the partition it is given, else a uniform one") {
  const sim::PlanRequest request = uniform_request();
  sim::SynthesisSetup setup;
  setup.memory_cap_bytes = 40 * kGiB;
  const auto uniform = sim::problem_from_specs(request.model, request.cluster, setup, {});
  REQUIRE(uniform);
  CHECK(uniform->inputs.microbatch_size == sim::kDefaultSamplesPerMicrobatch);
  CHECK(uniform->problem.costs.stages.size() == 4);
  setup.partition = sim::Partition{{0, 5, 6, 7, 8}};
  setup.batch = 8;
  const auto uneven = sim::problem_from_specs(request.model, request.cluster, setup, {});
  REQUIRE(uneven);
  CHECK(uneven->inputs.microbatch_size == 1);
  // Five layers against two, at a quarter of the samples: 5/2 x 1/4 of the uniform stage's forward.
  CHECK(uneven->problem.costs.stages[0].forward_ns * 8 == uniform->problem.costs.stages[0].forward_ns * 5);
  setup.partition = sim::Partition{{0, 4, 8}};
  const auto two = sim::problem_from_specs(request.model, request.cluster, setup, {});
  REQUIRE_FALSE(two);
  CHECK(two.error().message == "the partition has 2 stages, the problem 4");
  setup.partition.reset();
  setup.batch = 12;
  const auto split = sim::problem_from_specs(request.model, request.cluster, setup, {});
  REQUIRE_FALSE(split);
  CHECK_THAT(split.error().message, Catch::StartsWith("batch 12 and 8 micro-batches: "));
}
