// Closed forms of the simulator under uniform costs: ideal and zero-cost communication, overlapped
// transfers, and the lowered GPipe schedule with blocking (rendezvous) transfers.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/simulator.h"

using namespace pipeworks;
using sched::ScheduleKind;
using sim::CommMode;

namespace {

sched::Schedule make(ScheduleKind kind, int k, int m, bool lowered) {
  auto schedule = sched::generate(kind, sched::ScheduleShape{k, m, {}});
  REQUIRE(schedule.ok());
  if (!lowered) return *schedule;
  auto out = sched::lower_comm(*schedule);
  REQUIRE(out.ok());
  return *out;
}

sim::SimResult run(const sched::Schedule& schedule, const sim::CostModel& model, bool timeline = false) {
  auto result = sim::simulate(schedule, model, sim::SimOptions{timeline});
  if (!result) FAIL(result.error().message);
  return *result;
}

// makespan == (M+K-1)(F+B) and, per device, idle/makespan == (K-1)/(M+K-1) as exact rationals.
void check_ideal(const sim::SimResult& r, int k, int m, sim::Nanoseconds f, sim::Nanoseconds b) {
  CHECK(r.makespan_ns == (m + k - 1) * (f + b));
  sim::Nanoseconds total_idle = 0;
  for (const auto& d : r.devices) {
    CHECK(d.busy_ns == m * (f + b));
    CHECK(d.idle_ns * (m + k - 1) == r.makespan_ns * (k - 1));
    total_idle += d.idle_ns;
  }
  CHECK(total_idle * (m + k - 1) == r.makespan_ns * (k - 1) * k);
}

}  // namespace

TEST_CASE("uniform costs, ideal and zero-cost communication: makespan (M+K-1)(F+B), bubble (K-1)/(M+K-1)",
          "[simulator]") {
  const std::pair<sim::Nanoseconds, sim::Nanoseconds> costs[] = {{3, 5}, {4, 4}};
  for (auto kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    for (const auto& [f, b] : costs) {
      for (int k = 1; k <= 16; ++k) {
        const auto overlap = sim::uniform_cost_model(k, f, b, 0, CommMode::kOverlap);
        const auto blocking = sim::uniform_cost_model(k, f, b, 0, CommMode::kBlocking);
        for (int m = 1; m <= 64; ++m) {
          INFO("kind " << sched::schedule_kind_name(kind) << " K=" << k << " M=" << m << " F=" << f << " B=" << b);
          const auto plain = make(kind, k, m, false);
          const auto lowered = make(kind, k, m, true);
          check_ideal(run(plain, overlap), k, m, f, b);
          check_ideal(run(lowered, overlap), k, m, f, b);
          check_ideal(run(lowered, blocking), k, m, f, b);
        }
      }
    }
  }
}

TEST_CASE("the bubble fraction and throughput follow from the makespan", "[simulator]") {
  auto model = sim::uniform_cost_model(4, 3, 5);
  model.microbatch_size = 2;
  const auto r = run(make(ScheduleKind::kGPipe, 4, 8, false), model);
  CHECK(r.bubble_fraction == Approx(3.0 / 11.0));
  for (const auto& d : r.devices) CHECK(d.bubble_fraction == Approx(3.0 / 11.0));
  CHECK(r.throughput_samples_per_s == Approx(8.0 * 2 * 1e9 / static_cast<double>(11 * 8)));
}

// Overlapped transfers of c <= min(F, B) never queue on a link (each link carries one transfer
// per F or B), so every hop adds c once in the fill and once in the drain:
//
//   K=2 M=2 F=B=2 c=1 (x: a transfer on the link below the sender):
//     t:  01234567890123
//     d0: F0F1......B0B1
//     0>1   x x
//     d1: ...F0F1B0B1...
//     1>0          x x
//
//   F(s,m) starts at s(F+c) + mF; the last forward ends at T = (K-1)(F+c) + MF;
//   B(s,m) starts at T + (K-1-s)(B+c) + mB;  makespan = (K-1)(F+B+2c) + M(F+B).
TEST_CASE("GPipe with overlapped transfers: makespan (K-1)(F+B+2c) + M(F+B)", "[simulator]") {
  const struct {
    sim::Nanoseconds f, b, c;
  } cases[] = {{3, 5, 2}, {4, 4, 4}, {7, 3, 3}};
  for (const auto& x : cases) {
    for (int k = 1; k <= 8; ++k) {
      const auto model = sim::uniform_cost_model(k, x.f, x.b, x.c, CommMode::kOverlap);
      for (int m = 1; m <= 32; ++m) {
        INFO("K=" << k << " M=" << m << " F=" << x.f << " B=" << x.b << " c=" << x.c);
        const auto r = run(make(ScheduleKind::kGPipe, k, m, true), model);
        CHECK(r.makespan_ns == (k - 1) * (x.f + x.b + 2 * x.c) + m * (x.f + x.b));
      }
    }
  }
}

// GPipe lowered by sched::lower_comm, blocking (rendezvous) transfers of cost c each.
//
// lower_comm orders by (unit-time step, comm first, pair id). RECV_F(m+1) and SEND_F(m) of a
// middle device share a step and the upstream pair has the smaller id, so a middle stage runs
//     RECV_F0 F0 | RECV_F1 SEND_F0 F1 | RECV_F2 SEND_F1 F2 | ... | SEND_F(M-1)
// (it passes micro-batch m on only after m+1 has arrived), and in the drain the natural
//     RECV_B0 B0 SEND_B0 | RECV_B1 B1 SEND_B1 | ...
// Both partners are held for c; a rendezvous starts when the later one arrives.
//
// K=3 M=3 F=2 B=3 c=1, one column per ns (x = a transfer, both partners held):
//   t:  0         1         2         3
//   d0: F0xF1xF2.x.............xB0-.xB1-.xB2-
//   d1: ..xF0xxF1xxF2x.....xB0-xxB1-xxB2-x...
//   d2: ......xF0.xF1xF2B0-xB1-.xB2-.x.......
// d1 sends F0 (t=5) only after receiving F1 (t=4); makespan 37.
//
// Forward phase. Let X_s(m) be the start of the transfer of micro-batch m over link s -> s+1.
//   sender ready:    d0: F (m = 0), X_0(m-1) + c + F (after its previous send and this forward)
//                    middle d_s: X_{s-1}(m+1) + c (m < M-1, after receiving m+1),
//                                X_s(M-2) + c + F (m = M-1 >= 1), X_{s-1}(0) + c + F (M = 1)
//   receiver ready:  m = 0: 0;  last stage: X_{K-2}(m-1) + c + F (end of its previous forward)
//                    middle d_{s+1}: X_s(0) + c + F (m = 1), X_{s+1}(m-2) + c + F (m >= 2)
//   X_s(m) = max(sender ready, receiver ready),  T = X_{K-2}(M-1) + c + F.
// Solving this max-plus system (every max is dominated term-wise, so the result is one linear
// form, whatever F and c are) gives the end of the last forward, for K >= 3:
//   T = (M+K-1) F + c [ (K-1) min(M,3) + 2 max(M-3, 0) ]
// (the first three micro-batches each wait c per link behind their successor; afterwards the
// pipeline is paced by middle stages at F + 2c per micro-batch), and T = (M+1)F + Mc for K = 2.
//
// Drain. Middle stages are paced at B + 2c per micro-batch (RECV, B, SEND); micro-batch 0 needs
// (K-1)(B+c) + B to reach the end of d0, the other M-1 follow at B + 2c:
//   makespan = T + (K-1)(B+c) + B + (M-1)(B+2c)                                  (K >= 3)
//            = (M+K-1)(F+B) + c [ (K-1)(min(M,3)+1) + 2 max(M-3,0) + 2(M-1) ]
//   K = 2:     (M+1)(F+B) + 2Mc           K = 1:  M(F+B)
// Check K=3 M=3 F=2 B=3 c=1: 25 + (2*4 + 0 + 4) = 37, as drawn.
namespace {
sim::Nanoseconds gpipe_blocking_makespan(int k, int m, sim::Nanoseconds f, sim::Nanoseconds b, sim::Nanoseconds c) {
  if (k == 1) return m * (f + b);
  if (k == 2) return (m + 1) * (f + b) + 2 * m * c;
  return (m + k - 1) * (f + b) + c * ((k - 1) * (std::min(m, 3) + 1) + 2 * std::max(m - 3, 0) + 2 * (m - 1));
}
}  // namespace

TEST_CASE("lowered GPipe with blocking transfers matches the derived closed form", "[simulator]") {
  CHECK(gpipe_blocking_makespan(3, 3, 2, 3, 1) == 37);  // the picture above
  const struct {
    sim::Nanoseconds f, b, c;
  } cases[] = {{2, 3, 1}, {3, 5, 7}, {4, 4, 1}, {10, 2, 30}, {5, 9, 0}};
  for (const auto& x : cases) {
    for (int k = 1; k <= 8; ++k) {
      const auto model = sim::uniform_cost_model(k, x.f, x.b, x.c, CommMode::kBlocking);
      for (int m = 1; m <= 32; ++m) {
        INFO("K=" << k << " M=" << m << " F=" << x.f << " B=" << x.b << " c=" << x.c);
        const auto r = run(make(ScheduleKind::kGPipe, k, m, true), model);
        CHECK(r.makespan_ns == gpipe_blocking_makespan(k, m, x.f, x.b, x.c));
        // Time held at a rendezvous is not compute: busy stays M(F+B).
        for (const auto& d : r.devices) CHECK(d.busy_ns == m * (x.f + x.b));
      }
    }
  }
}

TEST_CASE("lowered 1F1B with blocking transfers completes and costs at least the ideal makespan", "[simulator]") {
  for (int k = 1; k <= 8; ++k) {
    const auto model = sim::uniform_cost_model(k, 3, 5, 7, CommMode::kBlocking);
    for (int m = 1; m <= 32; ++m) {
      const auto r = run(make(ScheduleKind::kOneFOneB, k, m, true), model);
      CHECK(r.makespan_ns >= (m + k - 1) * 8 + 2 * (k - 1) * 7);
    }
  }
}

TEST_CASE("per-action overhead is added to every compute action", "[simulator]") {
  auto model = sim::uniform_cost_model(3, 3, 5);
  model.per_action_overhead_ns = 1;
  const auto r = run(make(ScheduleKind::kOneFOneB, 3, 6, false), model);
  CHECK(r.makespan_ns == (6 + 3 - 1) * (3 + 5 + 2));
}
