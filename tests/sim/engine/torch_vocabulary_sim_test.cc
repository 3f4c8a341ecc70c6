// The simulator over torch's whole vocabulary: UNSHARD, RESHARD and REDUCE_GRAD without
// data-parallel costs take no time (the same times as without them, whatever the comm mode,
// overheads and resume costs; their timed form is data_parallel_sim_test.cc), a composite
// runs as its sub-actions back to back (the same times as the two written apart), the report
// notes both, and every file torch writes (tests/data/torch_emitted/) simulates.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include "golden_file.h"
#include "sched/csv_io.h"
#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/engine/simulator.h"
#include "sim/report/sim_report.h"
#include "sim/spec/cluster_spec.h"

using namespace pipeworks;
using sched::Action;
using sched::ActionKind;

namespace {

sim::CostModel costs(int stages, sim::CommMode mode) {
  sim::CostModel model = sim::uniform_cost_model(stages, 3, 5, 2, mode);
  model.per_action_overhead_ns = 1;
  for (sim::StageCost& c : model.stages) {
    c.resume_forward_ns = 7;
    c.resume_backward_ns = 11;
  }
  return model;
}

sim::SimResult run(const sched::Schedule& schedule, const sim::CostModel& model) {
  auto result = sim::simulate(schedule, model);
  if (!result) FAIL(result.error().message);
  return *result;
}

// Every span but the stage-level ones, in program order.
std::vector<sched::Span> spans_without_stage_level(const sim::SimResult& r) {
  std::vector<sched::Span> out;
  for (const sched::Span& s : r.timeline.spans) {
    if (!sched::is_stage_level(s.action.kind)) out.push_back(s);
  }
  return out;
}

// `schedule` with a REDUCE_GRAD of the device's first stage before and after each of its actions.
sched::Schedule with_no_ops(sched::Schedule schedule) {
  for (sched::Program& program : schedule.programs) {
    const Action no_op{program.front().stage, ActionKind::kReduceGrad, 0};
    sched::Program out{no_op};
    for (const Action& a : program) {
      out.push_back(a);
      out.push_back(no_op);
    }
    program = std::move(out);
  }
  return schedule;
}

sched::Schedule from_csv(const std::string& text) {
  auto loaded = sched::parse_csv(text, "t.csv");
  REQUIRE(loaded.ok());
  return loaded->schedule;
}

}  // namespace

TEST_CASE("stage-level actions cost nothing and change no other action's time", "[simulator][torch]") {
  for (const sim::CommMode mode : {sim::CommMode::kOverlap, sim::CommMode::kBlocking, sim::CommMode::kEager}) {
    auto plain = sched::lower_comm(*sched::one_f_one_b(sched::ScheduleShape{3, 4, {}}));
    REQUIRE(plain.ok());
    const sched::Schedule padded = with_no_ops(*plain);
    const sim::CostModel model = costs(3, mode);
    const sim::SimResult a = run(*plain, model);
    const sim::SimResult b = run(padded, model);
    INFO(sim::comm_mode_name(mode));
    CHECK(b.makespan_ns == a.makespan_ns);
    CHECK(spans_without_stage_level(b) == a.timeline.spans);
    for (std::size_t d = 0; d < a.devices.size(); ++d) {
      CHECK(b.devices[d].busy_ns == a.devices[d].busy_ns);
      CHECK(b.devices[d].memory.peak_bytes == a.devices[d].memory.peak_bytes);
    }
    CHECK(b.num_stage_level_actions == 3 + static_cast<std::int64_t>(plain->num_actions()));
    CHECK(b.num_actions == static_cast<std::int64_t>(padded.num_actions()));
    for (const sched::Span& s : b.timeline.spans) {
      if (sched::is_stage_level(s.action.kind)) CHECK(s.duration_ns() == 0);
    }
  }
}

TEST_CASE("a composite runs as its two sub-actions back to back", "[simulator][torch]") {
  const sched::Schedule marked = from_csv("0F0,0F1,(0F2;0B0)OVERLAP_F_B,0B1,0B2\r\n1F0,1B0,1F1,1B1,1F2,1B2\r\n");
  sched::Schedule unmarked = marked;
  unmarked.composites.clear();
  for (const sim::CommMode mode : {sim::CommMode::kOverlap, sim::CommMode::kBlocking}) {
    auto lowered_marked = sched::lower_comm(marked);
    REQUIRE(lowered_marked.ok());
    sched::Schedule lowered_unmarked = *lowered_marked;
    lowered_unmarked.composites.clear();
    const sim::CostModel model = costs(2, mode);
    const sim::SimResult a = run(*lowered_marked, model);
    const sim::SimResult b = run(lowered_unmarked, model);
    CHECK(a.timeline == b.timeline);
    CHECK(a.makespan_ns == b.makespan_ns);
    CHECK(a.num_composites == 1);
    CHECK(b.num_composites == 0);
    // 0B0 starts once 0F2 has ended on d0 and its gradient has arrived, as if written apart.
    const auto& spans = a.timeline.spans;
    const auto at = [&](const Action& x) {
      return *std::find_if(spans.begin(), spans.end(), [&](const sched::Span& s) { return s.action == x; });
    };
    CHECK(at({0, ActionKind::kBackward, 0}).start_ns ==
          std::max(at({0, ActionKind::kForward, 2}).end_ns, at({0, ActionKind::kRecvB, 0}).end_ns));
  }
  CHECK(run(marked, costs(2, sim::CommMode::kOverlap)).timeline == run(unmarked, costs(2, sim::CommMode::kOverlap)).timeline);
}

TEST_CASE("the report notes the no-ops and the composites, and only where they appear", "[simulator][torch][report]") {
  const sched::Schedule s = from_csv("0UNSHARD,0F0,0F1,(0F2;0B0)OVERLAP_F_B,0B1,0B2,0REDUCE_GRAD,0RESHARD\r\n"
                                     "1F0,1B0,1F1,1B1,1F2,1B2,1REDUCE_GRAD\r\n");
  const sim::SimResult r = run(s, costs(2, sim::CommMode::kOverlap));
  CHECK(r.num_stage_level_actions == 4);
  CHECK(r.num_composites == 1);
  CHECK(sim::simulation_notes(r) ==
        std::vector<std::string>{"4 stage-level actions (UNSHARD, RESHARD, REDUCE_GRAD) cost nothing: the cost model "
                                 "gives them no time (no data-parallel group)",
                                 "1 OVERLAP_F_B action runs as its forward then its backward: overlap is not modelled"});
  const sim::ReportInputs inputs{"uniform", "uniform", "t.csv", 2, 3, 1, false, false, {}, std::nullopt, std::nullopt, {}};
  const std::string table = sim::summary_table(r, inputs);
  CHECK_THAT(table, Catch::Contains("\nnote         4 stage-level actions (UNSHARD, RESHARD, REDUCE_GRAD) cost nothing"));
  CHECK_THAT(table, Catch::Contains("\nnote         1 OVERLAP_F_B action runs as its forward then its backward"));
  const std::string json = sim::report_json(r, inputs);
  CHECK_THAT(json, Catch::Contains("\"num_stage_level_actions\": 4,\n  \"num_composites\": 1,\n  \"notes\": [\n"));
  // A schedule without either: no note.
  const sim::SimResult plain = run(*sched::gpipe(sched::ScheduleShape{2, 3, {}}), costs(2, sim::CommMode::kOverlap));
  CHECK(sim::simulation_notes(plain).empty());
  CHECK_THAT(sim::summary_table(plain, inputs), !Catch::Contains("note"));
  CHECK_THAT(sim::report_json(plain, inputs), Catch::Contains("\"notes\": []"));
  // A schedule file has no kind: GPipe's closed form is its reference.
  CHECK_THAT(sim::summary_table(plain, inputs),
             Catch::Contains("simulated, 25.0% GPipe closed form (K-1)/(M+K-1) = 1/4 (for reference: the file's kind is "
                             "unknown)\n"));
}

TEST_CASE("an overlapped F and B pair takes the longer pass and a share of the shorter", "[simulator][torch]") {
  // F = 3, B = 5: with share s the pair's B loses (1 - s) x 3 of its 5: 5, 3 (1.5 rounds to 2), 2.
  const sched::Schedule s = from_csv("0F0,0F1,(0F2;0B0)OVERLAP_F_B,0B1,0B2\r\n1F0,1B0,1F1,1B1,1F2,1B2\r\n");
  for (const auto& [share, b] : {std::pair{1.0, 5}, std::pair{0.5, 3}, std::pair{0.0, 2}}) {
    sim::CostModel model = sim::uniform_cost_model(2, 3, 5, 0, sim::CommMode::kOverlap);
    model.overlapped_pass_share = share;
    const sim::SimResult r = run(s, model);
    const auto span = [&](const Action& x) {
      return *std::find_if(r.timeline.spans.begin(), r.timeline.spans.end(),
                           [&](const sched::Span& sp) { return sp.action == x; });
    };
    INFO("share " << share);
    CHECK(span({0, ActionKind::kForward, 2}).end_ns - span({0, ActionKind::kForward, 2}).start_ns == 3);
    CHECK(span({0, ActionKind::kBackward, 0}).end_ns - span({0, ActionKind::kBackward, 0}).start_ns == b);
    // Only the pair's B is shortened: 0B1 and 0B2 take their 5.
    CHECK(span({0, ActionKind::kBackward, 1}).end_ns - span({0, ActionKind::kBackward, 1}).start_ns == 5);
    CHECK(r.overlapped_pass_share == share);
  }
  sim::CostModel half = costs(2, sim::CommMode::kOverlap);
  half.overlapped_pass_share = 0.5;
  CHECK(sim::simulation_notes(run(s, half)) ==
        std::vector<std::string>{"1 OVERLAP_F_B action runs overlapped: the longer pass and 50% of the shorter, both "
                                 "ending together (the cluster's overlapped_pass_share)"});
  half.overlapped_pass_share = 1.5;
  CHECK_THAT(sim::simulate(s, half).error().message, Catch::Contains("overlapped_pass_share is 1.5, must be in [0, 1]"));
}

TEST_CASE("a stage-level action off its stage's device or out of range is an error", "[simulator][torch][errors]") {
  // Stage 0 is placed on the row holding most of its actions, d0.
  sched::Schedule s = from_csv("0F0,0B0\n0UNSHARD,1F0,1B0\n");
  auto misplaced = sim::simulate(s, costs(2, sim::CommMode::kOverlap));
  REQUIRE_FALSE(misplaced.ok());
  CHECK(misplaced.error().message == "device 1 position 0 (0UNSHARD): stage 0 is placed on device 0");
  s = from_csv("0F0,0B0,5RESHARD\n1F0,1B0\n");
  s.num_stages = 2;
  s.placement = {0, 1};
  auto beyond = sim::simulate(s, costs(2, sim::CommMode::kOverlap));
  REQUIRE_FALSE(beyond.ok());
  CHECK(beyond.error().message == "device 0 position 2 (5RESHARD): out of range (2 stages, 1 micro-batches)");
}

TEST_CASE("every file torch writes simulates", "[simulator][torch]") {
  const std::string dir = std::string(PIPEWORKS_TEST_DATA_DIR) + "/torch_emitted/";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".csv") continue;
    INFO(entry.path().string());
    ++files;
    sched::Schedule s = from_csv(test::read_text_file(entry.path().string()));
    if (!s.has_comm()) s = *sched::lower_comm(s);
    const sim::SimResult r = run(s, costs(s.num_stages, sim::CommMode::kBlocking));
    CHECK(r.makespan_ns > 0);
    CHECK(r.num_composites == static_cast<std::int64_t>(s.composites.size()));
  }
  CHECK(files == 13);
}
