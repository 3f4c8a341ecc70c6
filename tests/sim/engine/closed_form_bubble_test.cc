// Every closed form `simulate` prints (sim/engine/closed_form_bubble.h) equals the simulator's bubble
// under the costs the form assumes: uniform stages, free communication, F = I = W where the
// backward splits (B = I + W = 2F where it does not).
#include <catch2/catch.hpp>

#include <algorithm>

#include "sched/generators.h"
#include "sim/engine/closed_form_bubble.h"
#include "sim/engine/simulator.h"

using namespace pipeworks;
using sched::ScheduleKind;

namespace {

double simulated_bubble(ScheduleKind kind, int k, int m, int v) {
  auto schedule = sched::generate(kind, sched::ScheduleShape{k, m, {}}, v);
  REQUIRE(schedule.ok());
  constexpr sim::Nanoseconds f = 1000;
  sim::CostModel costs = sim::uniform_cost_model(k, f, 2 * f);
  for (sim::StageCost& c : costs.stages) c.backward_input_ns = c.backward_weight_ns = f;
  auto result = sim::simulate(*schedule, costs, sim::SimOptions{});
  REQUIRE(result.ok());
  return result->bubble_fraction;
}

}  // namespace

TEST_CASE("closed-form bubbles equal the simulated ones where the form holds", "[closed_form]") {
  for (int p = 1; p <= 5; ++p) {
    for (int m = 1; m <= 3 * p + 2; ++m) {
      for (const ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kZbH1,
                                      ScheduleKind::kZbH2, ScheduleKind::kZbV, ScheduleKind::kInterleaved1F1B,
                                      ScheduleKind::kInterleavedZb}) {
        const bool two_per_device = kind == ScheduleKind::kZbV || kind == ScheduleKind::kInterleaved1F1B ||
                                    kind == ScheduleKind::kInterleavedZb;
        const int k = two_per_device ? 2 * p : p;
        if (kind == ScheduleKind::kInterleaved1F1B && (p < 2 || m % p != 0)) continue;  // M a multiple of D
        if (kind == ScheduleKind::kInterleavedZb && m % std::max(1, m / p) != 0) continue;  // torch's rounds
        const auto form = sim::closed_form_bubble(kind, k, m, p);
        INFO(sched::schedule_kind_name(kind) << " K=" << k << " M=" << m << " D=" << p);
        if (!form) {
          CHECK(((kind == ScheduleKind::kZbH1 && m < p) || (kind == ScheduleKind::kZbH2 && m < 2 * p) ||
                 (kind == ScheduleKind::kZbV && m < 2 * p) || (kind == ScheduleKind::kInterleavedZb && m < p)));
          continue;
        }
        CHECK(simulated_bubble(kind, k, m, two_per_device ? 2 : 1) == Approx(form->fraction()).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("closed-form text: the fraction in lowest terms, or none", "[closed_form]") {
  CHECK(sim::closed_form_text(ScheduleKind::kGPipe, 4, 8, 4) == "27.3% GPipe closed form (K-1)/(M+K-1) = 3/11");
  CHECK(sim::closed_form_text(ScheduleKind::kInterleaved1F1B, 8, 8, 4) ==
        "15.8% closed form (D-1)/(vM+D-1) with D = 4 devices, v = 2 = 3/19");
  CHECK(sim::closed_form_text(ScheduleKind::kZbH1, 4, 8, 4) ==
        "11.1% ZB-H1 closed form (K-1)(F+I-W) idle, with F = I = W, M >= K: (K-1)/(3M+K-1) = 1/9");
  CHECK(sim::closed_form_text(ScheduleKind::kZbH1, 4, 3, 4) == "no closed form for zb-h1 at K = 4, M = 3");
  CHECK(sim::closed_form_text(ScheduleKind::kZbH2, 4, 8, 4) == "11.1% ZB-H2 closed form with F = I = W, M >= 2K: (K-1)/(3M+K-1) = 1/9");
  CHECK(sim::closed_form_text(ScheduleKind::kZbH2, 4, 7, 4) == "no closed form for zb-h2 at K = 4, M = 7");
  CHECK(sim::closed_form_text(ScheduleKind::kZbV, 8, 8, 4) == "5.9% ZB-V closed form with F = I = W, M >= 2D: (D-1)/(6M+D-1), D = 4 = 1/17");
  CHECK(sim::closed_form_text(ScheduleKind::kDualPipeV, 8, 8, 4) == "no closed form for dualpipe-v at K = 8, M = 8");
  CHECK(sim::closed_form_text(ScheduleKind::kInterleavedZb, 8, 8, 4) ==
        "5.9% interleaved ZB closed form with F = I = W, M >= D: (D-1)/(3vM+D-1), D = 4, v = 2 = 1/17");
  CHECK(sim::closed_form_text(ScheduleKind::kInterleavedZb, 8, 3, 4) == "no closed form for interleaved-zb at K = 8, M = 3");
  CHECK_FALSE(sim::closed_form_bubble(ScheduleKind::kGPipe, 0, 8, 1).has_value());
}
