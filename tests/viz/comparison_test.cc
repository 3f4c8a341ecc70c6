// Predicted-vs-measured arithmetic on hand-built GPipe timelines with closed-form times.
#include "viz/comparison.h"

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "gpipe_timeline.h"
#include "viz/comparison_table.h"

namespace pipeworks::viz {
namespace {

using sched::Action;
using sched::ActionKind;
using testing::GpipeCosts;
using testing::make_gpipe_timeline;

constexpr sched::Nanoseconds kMs = 1'000'000;

// K=2, M=2. Predicted F=B=1 ms; measured F=1 ms, B=2 ms:
//   predicted   d0 F0 F1 .  .  B0 B1          makespan (M+K-1)(F+B) = 6 ms
//               d1 .  F0 F1 B0 B1 .
//   measured    d0 F0 F1 .  .  .  .  B0-- B1--  makespan 3 * 3 = 9 ms
Comparison slow_backward_comparison(const ComparisonOptions& options = {}) {
  const sched::Timeline predicted = make_gpipe_timeline(2, 2, GpipeCosts{kMs, kMs, 0, 100, 0}, "predicted");
  const sched::Timeline measured = make_gpipe_timeline(2, 2, GpipeCosts{kMs, 2 * kMs, 0, 120, 5 * kMs}, "measured");
  auto c = compare_timelines(predicted, measured, options);
  REQUIRE(c.ok());
  return *c;
}

TEST_CASE("relative error is (predicted - measured) / measured with defined edge cases") {
  CHECK(relative_error(9, 10) == Approx(-0.1));
  CHECK(relative_error(12, 10) == Approx(0.2));
  CHECK(relative_error(0, 0) == 0);
  CHECK(relative_error(1, 0) == std::numeric_limits<double>::infinity());
  CHECK(relative_error(-1, 0) == -std::numeric_limits<double>::infinity());
  CHECK(format_relative(-0.0525) == "-5.2%");
  CHECK(format_relative(-0.0004) == "0.0%");
  CHECK(format_relative(0.0004) == "0.0%");
  CHECK(format_relative(0.0006) == "+0.1%");
  CHECK(format_relative(std::numeric_limits<double>::infinity()) == "+inf%");
}

TEST_CASE("step time, busy time and bubble follow the GPipe closed forms") {
  const Comparison c = slow_backward_comparison();
  CHECK(c.predicted_step_ns == 6 * kMs);
  CHECK(c.measured_step_ns == 9 * kMs);  // rebased: the measured shift of 5 ms does not count
  CHECK(c.step_error() == Approx(-1.0 / 3.0));
  REQUIRE(c.devices.size() == 2);
  for (const DeviceComparison& d : c.devices) {
    CHECK(d.predicted_busy_ns == 4 * kMs);  // M (F + B)
    CHECK(d.measured_busy_ns == 6 * kMs);
    CHECK(d.predicted_bubble == Approx(1.0 / 3.0));  // (K-1)/(M+K-1) in both
    CHECK(d.measured_bubble == Approx(1.0 / 3.0));
    CHECK(d.predicted_peak_bytes == 200);  // M activations held, from the memory samples
    CHECK(d.measured_peak_bytes == 240);
  }
  CHECK(c.predicted_bubble == Approx(1.0 / 3.0));
}

TEST_CASE("actions are matched by identity and their errors ranked by magnitude") {
  const Comparison c = slow_backward_comparison();
  CHECK(c.same_actions());
  REQUIRE(c.actions.size() == 8);
  for (const ActionDeviation& a : c.actions) {
    if (a.action.kind == ActionKind::kForward) {
      CHECK(a.error_ns() == 0);
    } else {
      CHECK(a.error_ns() == -kMs);
      CHECK(a.relative() == Approx(-0.5));
    }
  }
  const auto top = largest_deviations(c, 3);
  REQUIRE(top.size() == 3);
  // Ties keep the predicted span order: stage 0's backwards come first.
  CHECK(top[0].action == Action{0, ActionKind::kBackward, 0});
  CHECK(top[1].action == Action{0, ActionKind::kBackward, 1});
  CHECK(top[2].action == Action{1, ActionKind::kBackward, 0});
  CHECK(largest_deviations(c, 100).size() == 8);
  CHECK(largest_deviations(c, 100, true).size() == 8);
  // Four exact forwards and four backwards off by 50%: the median of |error| is 25%.
  CHECK(median_abs_action_error(c) == Approx(0.25));
}

TEST_CASE("explicit peaks replace the memory samples") {
  ComparisonOptions options;
  options.predicted_peak_bytes = {1000, 2000};
  options.measured_peak_bytes = {1100, 1900};
  const Comparison c = slow_backward_comparison(options);
  CHECK(c.devices[0].predicted_peak_bytes == 1000);
  CHECK(c.devices[1].measured_peak_bytes == 1900);
  const nlohmann::json j = comparison_json(c);
  CHECK(j["summary"]["predicted_peak_activation_bytes"] == 2000);
  CHECK(j["summary"]["measured_peak_activation_bytes"] == 1900);
  CHECK(j["errors"]["peak_activation"].get<double>() == Approx(100.0 / 1900.0));
  CHECK(j["errors"]["step_time"].get<double>() == Approx(-1.0 / 3.0));
  CHECK(j["actions"].size() == 8);
  CHECK(j["summary"]["devices"][0]["busy_error"].get<double>() == Approx(-1.0 / 3.0));
}

TEST_CASE("missing, extra and duplicate actions are reported") {
  sched::Timeline predicted = make_gpipe_timeline(2, 2);
  sched::Timeline measured = make_gpipe_timeline(2, 2, GpipeCosts{}, "measured");
  measured.spans.pop_back();  // drop 1B1
  measured.spans.push_back(sched::Span{1, sched::Lane::kCompute, Action{1, ActionKind::kRecompute, 1}, 0, 1});
  auto c = compare_timelines(predicted, measured);
  REQUIRE(c.ok());
  CHECK_FALSE(c->same_actions());
  REQUIRE(c->only_predicted.size() == 1);
  CHECK(c->only_predicted[0] == Action{1, ActionKind::kBackward, 1});
  REQUIRE(c->only_measured.size() == 1);
  CHECK(c->only_measured[0] == Action{1, ActionKind::kRecompute, 1});

  // A measured RECV that the prediction lacks, and comm spans left out of the compute ranking.
  const sched::Timeline with_comm = make_gpipe_timeline(2, 1, GpipeCosts{1, 1, 5}, "with comm");
  auto comm = compare_timelines(with_comm, with_comm);
  REQUIRE(comm.ok());
  CHECK(comm->actions.size() == 8);  // F and B of two stages, SEND_F/RECV_F and SEND_B/RECV_B of one hop
  CHECK(largest_deviations(*comm, 100, true).size() == 4);

  // A repeated action pairs occurrence by occurrence: a second 0F0 only measured is one extra,
  // and the same repetition in both timelines pairs (as a file's repeated UNSHARDs do).
  measured.spans.push_back(measured.spans.front());
  auto repeated = compare_timelines(predicted, measured);
  REQUIRE(repeated.ok());
  REQUIRE(repeated->only_measured.size() == 2);
  CHECK(repeated->only_measured[1] == Action{0, ActionKind::kForward, 0});
  sched::Timeline twice = predicted;
  twice.spans.push_back(sched::Span{0, sched::Lane::kCompute, Action{0, ActionKind::kUnshard, 0}, 0, 1});
  twice.spans.push_back(sched::Span{0, sched::Lane::kCompute, Action{0, ActionKind::kUnshard, 0}, 5, 9});
  sched::Timeline twice_measured = twice;
  twice_measured.spans.back().end_ns = 11;
  auto paired = compare_timelines(twice, twice_measured);
  REQUIRE(paired.ok());
  CHECK(paired->same_actions());
  CHECK(paired->actions.size() == predicted.spans.size() + 2);
  CHECK(paired->actions.back().predicted_ns == 4);
  CHECK(paired->actions.back().measured_ns == 6);

  auto devices = compare_timelines(predicted, make_gpipe_timeline(3, 2));
  REQUIRE_FALSE(devices.ok());
  CHECK(devices.error().message == "the predicted timeline has 2 devices, the measured one 3");

  ComparisonOptions bad;
  bad.measured_peak_bytes = {1};
  auto peaks = compare_timelines(predicted, predicted, bad);
  REQUIRE_FALSE(peaks.ok());
  CHECK(peaks.error().message == "measured peaks: 1 entries for 2 devices");
}

TEST_CASE("spread is min, lower median and max") {
  auto s = spread_of({5, 1, 4, 2});
  REQUIRE(s.ok());
  CHECK(s->min == 1);
  CHECK(s->median == 2);
  CHECK(s->max == 5);
  auto odd = spread_of({3, 9, 7});
  REQUIRE(odd.ok());
  CHECK(odd->median == 7);
  CHECK_FALSE(spread_of({}).ok());
}

TEST_CASE("the table lines up predicted, measured and error columns") {
  MeasuredSpreads spreads;
  spreads.steps = 4;
  spreads.step_ns = Spread{8 * kMs, 9 * kMs, 10 * kMs};
  const std::string table = comparison_table(slow_backward_comparison(), spreads, 2);
  INFO(table);
  CHECK(table.find("step time                      6 ms         9 ms     -33.3%   [8 ms .. 10 ms]\n") !=
        std::string::npos);
  CHECK(table.find("device 1 busy                  4 ms         6 ms     -33.3%\n") != std::string::npos);
  CHECK(table.find("device 0 peak act.            200 B        240 B     -16.7%\n") != std::string::npos);
  CHECK(table.find("(measured: median of 4 steps)") != std::string::npos);
  CHECK(table.find("compute actions deviating most (top 2 by |predicted - measured|)") != std::string::npos);
  CHECK(table.find("0B0             0  compute         1 ms        2 ms       -1 ms   -50.0%\n") != std::string::npos);
  CHECK(table.find("median |action error| 25.0% over 8 actions") != std::string::npos);
}

TEST_CASE("timeline records carry every span field") {
  const sched::Timeline t = make_gpipe_timeline(2, 1);
  const nlohmann::json r = timeline_records(t);
  REQUIRE(r.size() == t.spans.size());
  CHECK(r[0] == nlohmann::json{{"device", 0}, {"lane", "compute"}, {"stage", 0}, {"microbatch", 0},
                               {"kind", "F"}, {"start_ns", 0}, {"end_ns", kMs}});
}

}  // namespace
}  // namespace pipeworks::viz
