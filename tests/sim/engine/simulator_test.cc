// Closed forms of the simulator under uniform costs: ideal and zero-cost communication, overlapped
// transfers, and the lowered GPipe and 1F1B schedules with blocking (rendezvous) transfers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/engine/op_costs.h"
#include "sim/engine/simulator.h"

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

// Each compute span of a simulated timeline by its action ("1F0"): [start, end).
std::map<std::string, std::pair<sched::Nanoseconds, sched::Nanoseconds>> compute_spans(const sim::SimResult& r) {
  std::map<std::string, std::pair<sched::Nanoseconds, sched::Nanoseconds>> at;
  for (const sched::Span& s : r.timeline.spans) {
    if (s.lane == sched::Lane::kCompute) at[sched::to_string(s.action)] = {s.start_ns, s.end_ns};
  }
  return at;
}

// Every compute span's [start, end), in time order.
std::vector<std::pair<sched::Nanoseconds, sched::Nanoseconds>> sorted_compute(const sim::SimResult& r) {
  std::vector<std::pair<sched::Nanoseconds, sched::Nanoseconds>> compute;
  for (const auto& [action, span] : compute_spans(r)) compute.push_back(span);
  std::sort(compute.begin(), compute.end());
  return compute;
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

// GPipe lowered by sched::lower_comm, blocking (rendezvous) transfers of cost c each: a transfer
// starts when the sender has reached SEND (with its data), the receiver has reached RECV and the
// link is free; both streams are held until it ends.
//
// lower_comm orders pairs by (unit-time step, comm first, flow order): among pairs produced at
// the same step, forward pairs from later stages go first, backward pairs from earlier stages
// first. So every middle stage handles one micro-batch at a time, in both phases:
//     d0:        F0 SEND_F0 F1 SEND_F1 ...                  | RECV_B0 B0 RECV_B1 B1 ...
//     d_s:  RECV_F0 F0 SEND_F0 RECV_F1 F1 SEND_F1 ...        | RECV_B0 B0 SEND_B0 RECV_B1 ...
//     d_K-1:  RECV_F0 F0 RECV_F1 F1 ... F(M-1) | B0 SEND_B0 B1 SEND_B1 ...
//
// K=3 M=3 F=2 B=3 c=1, one column per ns (x = a transfer, both partners held; . = idle):
//   t:  0         1         2         3
//   d0: F0xF1.xF2.x............xB0-.xB1-.xB2-
//   d1: ..xF0xxF1xxF2x.....xB0-xxB1-xxB2-x...
//   d2: .....xF0.xF1.xF2B0-xB1-.xB2-.x.......
// d1 sends F0 (t=5) before it receives F1 (t=6); makespan 37.
//
// Forward phase. X_s(m): start of the transfer of micro-batch m over link s -> s+1.
//   sender ready:   d0: X_0(m-1) + c + F (F for m = 0);  middle d_s: X_{s-1}(m) + c + F
//   receiver ready: middle d_{s+1}: X_{s+1}(m-1) + c (it has sent m-1);  last stage:
//                   X_{K-2}(m-1) + c + F (it has run F(m-1));  0 for m = 0
//   X_s(m) = max(sender ready, receiver ready)
// For K >= 3 the solution is X_s(m) = F + s(F+c) + m(F+2c): both terms of every middle max are
// equal to it, and at the ends the other term is smaller by c, whatever F and c are. Middle
// stages pace the pipeline at F + 2c per micro-batch (RECV, F, SEND); d0 waits c per send and the
// last stage c per receive. The last forward ends at
//   T = X_{K-2}(M-1) + c + F = (M+K-1)F + c(K-1) + 2c(M-1)
// For K = 2 no stage is in the middle: X_0(m) = F + m(F+c), T = (M+1)F + Mc.
//
// Drain: the mirror image, started by the last stage at T (it runs B0 as soon as F(M-1) ends);
// every stage has finished its forwards by then, so nothing else interferes:
//   makespan = T + (M+K-1)B + c(K-1) + 2c(M-1)
//            = (M+K-1)(F+B) + 2c(K-1) + 4c(M-1)                     (K >= 3)
//   K = 2:     (M+1)(F+B) + 2Mc           K = 1:  M(F+B)
// Check K=3 M=3 F=2 B=3 c=1: 25 + 4 + 8 = 37.
namespace {
sim::Nanoseconds gpipe_blocking_makespan(int k, int m, sim::Nanoseconds f, sim::Nanoseconds b, sim::Nanoseconds c) {
  if (k == 1) return m * (f + b);
  if (k == 2) return (m + 1) * (f + b) + 2 * m * c;
  return (m + k - 1) * (f + b) + 2 * c * (k - 1) + 4 * c * (m - 1);
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

// 1F1B lowered by sched::lower_comm, blocking transfers of cost c (same rules as above). Stage s
// runs w = K-1-s warm-up forwards, then alternates; lower_comm puts a middle stage's steady state
// in the order  RECV_B(i) B(i) RECV_F(j) SEND_B(i) F(j) SEND_F(j)  (forward pairs first at a
// shared step), i.e. four transfers per micro-batch:
//     d0:    F0 SEND_F0 F1 SEND_F1 ... | RECV_B0 B0 F(w) SEND_F(w) | RECV_B1 B1 ... | RECV_B(M-1) B(M-1)
//     d_s:   RECV_F0 F0 SEND_F0 ...    | RECV_B(i) B(i) RECV_F(j) SEND_B(i) F(j) SEND_F(j) | ...
//     d_K-1: RECV_F0 F0 RECV_F1 B0 SEND_B0 F1 B1 RECV_F2 SEND_B1 F2 B2 ...
//
// K=3 M=4 F=2 B=3 c=1, one column per ns (x = a transfer, both partners held; . = idle):
//   t:  0         1         2         3         4
//   d0: F0xF1.xF2.x......xB0-F3..xxB1-....xB2-..xB3-
//   d1: ..xF0xxF1xx..xB0-xF2xxB1-xxF3xxB2-x.xB3-x...
//   d2: .....xF0.xB0-xF1B1-.xxF2B2-..xxF3B3-x.......
// Once micro-batch 0 has come back (t=13), d1 is never idle until its last SEND_B: it runs
// F + B + 4c per micro-batch, and the other stages wait on it. So, for M >= 3, the makespan is
//   M (F+B+4c)        the middle stage's steady state
// + (K-1)(F+B+2c)     fill and drain: each of the K-1 hops costs one transfer each way
// - 6c                the transfers the first and last micro-batches do not pay on that path
// + max(0, c-F) + max(0, c-B)   once each, when a transfer outlasts the compute it should hide
//                               behind (M = 2 keeps only the first, and saves 5c, not 6c)
//   makespan = (M+K-1)(F+B) + c [2(K-1) + g(M)] + [M>=2] max(0, c-F) + [M>=3] max(0, c-B)
//   with g(1) = 0, g(2) = 3, g(M) = 4M - 6 (M >= 3)                               (K >= 3)
//   K = 2:  (M+1)(F+B) + 2Mc  (no middle stage; each micro-batch crosses once each way)
//   K = 1:  M(F+B)
// Check K=3 M=4 F=2 B=3 c=1: 30 + (4 + 10) = 44, as drawn. The corrections and the constants
// were read off the simulator and then checked over F, B in 1..9 and c in 0..12 (K <= 8,
// M <= 20) before being asserted here.
namespace {
sim::Nanoseconds one_f_one_b_blocking_makespan(int k, int m, sim::Nanoseconds f, sim::Nanoseconds b,
                                                sim::Nanoseconds c) {
  if (k == 1) return m * (f + b);
  if (k == 2) return (m + 1) * (f + b) + 2 * m * c;
  const sim::Nanoseconds g = m == 1 ? 0 : m == 2 ? 3 : 4 * sim::Nanoseconds{m} - 6;
  sim::Nanoseconds t = (m + k - 1) * (f + b) + c * (2 * (k - 1) + g);
  if (m >= 2) t += std::max<sim::Nanoseconds>(0, c - f);
  if (m >= 3) t += std::max<sim::Nanoseconds>(0, c - b);
  return t;
}
}  // namespace

TEST_CASE("lowered 1F1B with blocking transfers matches the closed form", "[simulator]") {
  CHECK(one_f_one_b_blocking_makespan(3, 4, 2, 3, 1) == 44);  // the picture above
  const struct {
    sim::Nanoseconds f, b, c;
  } cases[] = {{2, 3, 1}, {3, 5, 7}, {4, 4, 1}, {10, 2, 30}, {5, 9, 0}, {2, 9, 5}, {9, 2, 5}};
  for (const auto& x : cases) {
    for (int k = 1; k <= 8; ++k) {
      const auto model = sim::uniform_cost_model(k, x.f, x.b, x.c, CommMode::kBlocking);
      for (int m = 1; m <= 32; ++m) {
        INFO("K=" << k << " M=" << m << " F=" << x.f << " B=" << x.b << " c=" << x.c);
        const auto r = run(make(ScheduleKind::kOneFOneB, k, m, true), model);
        CHECK(r.makespan_ns == one_f_one_b_blocking_makespan(k, m, x.f, x.b, x.c));
        for (const auto& d : r.devices) CHECK(d.busy_ns == m * (x.f + x.b));
      }
    }
  }
}

TEST_CASE("eager comm: a receive holds its device until the data arrives, a send never waits", "[simulator]") {
  // Lowered 1F1B, K=2, M=3; stage 0's F costs 10, stage 1's F 1, every B 1, free transfers.
  //   d1 program: RECV_F0 F0 RECV_F1 B0 SEND_B0 F1 B1 RECV_F2 SEND_B1 F2 B2 SEND_B2
  //   overlap: d1 runs B0 at 11 (RECV_F1 is only posted)          -> makespan 34
  //   eager:   d1 waits in RECV_F1 for F(0,1) (ends at 20): B0 at 20 -> makespan 35
  const sched::Schedule schedule = make(ScheduleKind::kOneFOneB, 2, 3, true);
  const auto makespan_and_b0 = [&](CommMode mode) {
    sim::CostModel costs = sim::uniform_cost_model(2, 10, 1, 0, mode);
    costs.stages[1].forward_ns = 1;
    const sim::SimResult r = run(schedule, costs, true);
    sched::Nanoseconds b0 = -1;
    for (const sched::Span& s : r.timeline.spans) {
      if (s.lane == sched::Lane::kCompute && s.action == sched::Action{1, sched::ActionKind::kBackward, 0}) {
        b0 = s.start_ns;
      }
    }
    return std::pair{r.makespan_ns, b0};
  };
  CHECK(makespan_and_b0(CommMode::kOverlap) == std::pair<sim::Nanoseconds, sched::Nanoseconds>{34, 11});
  CHECK(makespan_and_b0(CommMode::kEager) == std::pair<sim::Nanoseconds, sched::Nanoseconds>{35, 20});
}

TEST_CASE("send overhead: a SEND holds its sender's stream for o, then the data leaves", "[simulator]") {
  // Lowered GPipe, K=2, M=2, overlap, F = 10, B = 20, free transfers, o = 3; stage 0 would resume
  // F for +100, but F1 follows a send, not a wait:
  //   d0: F0 [0,10) o [10,13) F1 [13,23) o [23,26) ............ B [59,79) B [82,102)
  //   d1:             F0 [13,23)  F1 [26,36) B [36,56) o [56,59) B [59,79) o [79,82)
  const sched::Schedule schedule = make(ScheduleKind::kGPipe, 2, 2, true);
  sim::CostModel costs = sim::uniform_cost_model(2, 10, 20);
  CHECK(run(schedule, costs).makespan_ns == 90);
  for (sim::Link& link : costs.links) link.send_overhead_ns = 3;
  costs.stages[0].resume_forward_ns = 100;
  const sim::SimResult r = run(schedule, costs, true);
  CHECK(r.makespan_ns == 102);
  CHECK(r.devices[0].busy_ns == 60);  // the overhead is no compute
  CHECK(r.devices[1].busy_ns == 60);
  CHECK(sorted_compute(r) == std::vector<std::pair<sched::Nanoseconds, sched::Nanoseconds>>{
                       {0, 10}, {13, 23}, {13, 23}, {26, 36}, {36, 56}, {59, 79}, {59, 79}, {82, 102}});
  costs.links[0].send_overhead_ns = -1;
  auto refused = sim::simulate(schedule, costs);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("links[0].send_overhead_ns"));
}

TEST_CASE("compute slots: workers beyond the cores wait for one, first come first served", "[simulator]") {
  // Lowered GPipe, K=2, M=2, overlap, F = 10, B = 20, free transfers, one slot for both devices
  // (two workers on one core). At 10 both d0's F1 and d1's F0 are ready: the lower op id (d0's)
  // goes first; at 60 d0's first B and d1's second:
  //   d0: F0 [0,10) F1 [10,20) ........................ B [60,80) ........ B [100,120)
  //   d1:                      F0 [20,30) F1 [30,40) B [40,60) ... B [80,100)
  const sched::Schedule schedule = make(ScheduleKind::kGPipe, 2, 2, true);
  sim::CostModel costs = sim::uniform_cost_model(2, 10, 20);
  costs.compute_slots = 2;  // as many as devices: no limit
  CHECK(run(schedule, costs).makespan_ns == 90);
  costs.compute_slots = 1;
  const sim::SimResult r = run(schedule, costs, true);
  CHECK(r.makespan_ns == 120);  // every action one after another
  CHECK(r.devices[0].busy_ns == 60);
  CHECK(r.devices[1].busy_ns == 60);
  CHECK(sorted_compute(r) == std::vector<std::pair<sched::Nanoseconds, sched::Nanoseconds>>{
                       {0, 10}, {10, 20}, {20, 30}, {30, 40}, {40, 60}, {60, 80}, {80, 100}, {100, 120}});
  // Groups: each device alone in its group never waits.
  costs.contention_group = {0, 1};
  CHECK(run(schedule, costs).makespan_ns == 90);
  costs.compute_slots = -1;
  auto refused = sim::simulate(schedule, costs);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("compute_slots"));
}

TEST_CASE("compute slots with a slice: a worker that computes back to back keeps its slot until its slice ends", "[simulator]") {
  // The schedule of the test above, one slot. d1 takes the slot at 20 (d0 waits for data) and
  // computes back to back, nobody waiting, until 60, where d0's B0 waits for it too:
  //   slice <= 40:  d1's slice (from 20) is over: d0 |B0 [60,80)|, d1 |B1 [80,100)|, d0 |B1 [100,120)|
  //   slice 41:     d1 keeps it: d1 |B1 [60,80)|, then d0 |B0 [80,100)|B1 [100,120)|
  // (d0's B1 needs d1's: d0 never keeps the slot past 80.)
  const sched::Schedule schedule = make(ScheduleKind::kGPipe, 2, 2, true);
  sim::CostModel costs = sim::uniform_cost_model(2, 10, 20);
  costs.compute_slots = 1;
  using Interval = std::pair<sched::Nanoseconds, sched::Nanoseconds>;
  const auto backwards = [&](sched::Nanoseconds slice) {
    costs.compute_slice_ns = slice;
    const sim::SimResult r = run(schedule, costs, true);
    CHECK(r.makespan_ns == 120);
    auto spans = compute_spans(r);
    CHECK(spans.at("1F0") == Interval{20, 30});
    CHECK(spans.at("1B0") == Interval{40, 60});
    return std::vector<Interval>{spans.at("0B0"), spans.at("0B1"), spans.at("1B1")};
  };
  const std::vector<Interval> handed_over{{60, 80}, {100, 120}, {80, 100}};
  CHECK(backwards(0) == handed_over);
  CHECK(backwards(40) == handed_over);
  CHECK(backwards(41) == std::vector<Interval>{{80, 100}, {100, 120}, {60, 80}});
  costs.compute_slice_ns = -1;
  auto refused = sim::simulate(schedule, costs);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("compute_slice_ns"));
}

TEST_CASE("compute slots: a worker that waited for a slot resumes, 1F1B on 3 devices and 2 slots", "[simulator]") {
  // Waiting for a slot is idling: the action costs its resume cost more. Every device resumes F
  // for +1 and B for +2; against the same schedule without a limit the makespan only grows, and
  // the compute of all devices is never more than two at once.
  const sched::Schedule schedule = make(ScheduleKind::kOneFOneB, 3, 6, true);
  sim::CostModel costs = sim::uniform_cost_model(3, 10, 20);
  for (sim::StageCost& c : costs.stages) c.resume_forward_ns = 1, c.resume_backward_ns = 2;
  const sim::Nanoseconds unlimited = run(schedule, costs).makespan_ns;
  costs.compute_slots = 2;
  const sim::SimResult r = run(schedule, costs, true);
  CHECK(r.makespan_ns > unlimited);
  std::vector<std::pair<sched::Nanoseconds, int>> edges;
  for (const sched::Span& s : r.timeline.spans) {
    if (s.lane != sched::Lane::kCompute) continue;
    edges.emplace_back(s.start_ns, +1);
    edges.emplace_back(s.end_ns, -1);
  }
  std::sort(edges.begin(), edges.end());  // at one time, ends (-1) before starts
  int running = 0;
  int most = 0;
  for (const auto& [t, step] : edges) most = std::max(most, running += step);
  CHECK(most == 2);
}

TEST_CASE("per-action overhead is added to every compute action", "[simulator]") {
  auto model = sim::uniform_cost_model(3, 3, 5);
  model.per_action_overhead_ns = 1;
  const auto r = run(make(ScheduleKind::kOneFOneB, 3, 6, false), model);
  CHECK(r.makespan_ns == (6 + 3 - 1) * (3 + 5 + 2));
}

TEST_CASE("resume costs: an action that starts after its device idled costs its stage's resume cost more",
          "[simulator]") {
  // Lowered GPipe, K=2, M=1, eager, F = 10, B = 20, free transfers; stage 1 resumes F for +3,
  // stage 0 resumes B for +7 (the other resume costs are set too but never apply):
  //   d0: F0 [0,10) ..... waits in RECV_B0 ..... B0 [43, 43+20+7)
  //   d1: waits in RECV_F0, F0 [10, 10+10+3) B0 [23, 43)   (B0 follows F0 at once: no resume)
  const sched::Schedule schedule = make(ScheduleKind::kGPipe, 2, 1, true);
  sim::CostModel costs = sim::uniform_cost_model(2, 10, 20, 0, CommMode::kEager);
  costs.stages[1].resume_forward_ns = 3;
  costs.stages[1].resume_backward_ns = 100;
  costs.stages[0].resume_forward_ns = 100;
  costs.stages[0].resume_backward_ns = 7;
  const sim::SimResult r = run(schedule, costs, true);
  CHECK(r.makespan_ns == 70);
  CHECK(r.devices[0].busy_ns == 10 + 27);
  CHECK(r.devices[1].busy_ns == 13 + 20);
  CHECK(sorted_compute(r) == std::vector<std::pair<sched::Nanoseconds, sched::Nanoseconds>>{{0, 10}, {10, 23}, {23, 43}, {43, 70}});

  sim::CostModel none = sim::uniform_cost_model(2, 10, 20, 0, CommMode::kEager);
  CHECK(run(schedule, none).makespan_ns == 60);
  none.stages[0].resume_backward_ns = -1;
  auto refused = sim::simulate(schedule, none);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("stages[0].resume_backward_ns") != std::string::npos);
}

TEST_CASE("idle slowdown: an action after its device idled takes a share of its time more, growing with the idle",
          "[simulator]") {
  // Lowered GPipe, K=2, M=1, eager, F = 10, B = 20, free transfers; idle slowdown 1.4 reached
  // after 20 of idle, linear before: d1's F0 idled 10 (+10 x 0.4 x 10/20 = 2), its B0 follows at
  // once; d0's B0 idled 32 (+20 x 0.4 = 8). d0's F0 starts the step: no idle.
  //   d0: F0 [0,10) ........ waits 32 ......... B0 [42, 70)
  //   d1: waits, F0 [10, 22) B0 [22, 42)
  const sched::Schedule schedule = make(ScheduleKind::kGPipe, 2, 1, true);
  sim::CostModel costs = sim::uniform_cost_model(2, 10, 20, 0, CommMode::kEager);
  costs.idle_slowdown = 1.4;
  costs.idle_slowdown_after_ns = 20;
  using Spans = std::vector<std::pair<sched::Nanoseconds, sched::Nanoseconds>>;
  const Spans expected{{0, 10}, {10, 22}, {22, 42}, {42, 70}};
  const sim::SimResult r = run(schedule, costs, true);
  CHECK(r.makespan_ns == 70);
  CHECK(sorted_compute(r) == expected);
  CHECK(r.devices[0].busy_ns == 10 + 28);
  // The same with one compute slot for both devices (the slot path): every action waits anyway.
  costs.compute_slots = 1;
  CHECK(sorted_compute(run(schedule, costs, true)) == expected);
  CHECK(sim::idle_extra_ns(20, 5, 1.4, 20) == 2);
  CHECK(sim::idle_extra_ns(20, 0, 1.4, 20) == 0);
  CHECK(sim::idle_extra_ns(20, 1000, 1.4, 20) == 8);
  CHECK(sim::idle_extra_ns(20, 1000, 1.0, 0) == 0);
  costs.compute_slots = 0;
  costs.idle_slowdown_after_ns = 0;
  auto refused = sim::simulate(schedule, costs);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("idle_slowdown"));
  costs.idle_slowdown = 0.5;
  costs.idle_slowdown_after_ns = 20;
  CHECK_FALSE(sim::simulate(schedule, costs).ok());
}

TEST_CASE("first-of-step costs: a stage's first F, R and B of a step cost their own figure, without resume",
          "[simulator]") {
  // Lowered GPipe, K=2, M=2, eager, F = 10, B = 20, free transfers; stage 1's first F costs 15,
  // its first B 26, and it resumes F for +3:
  //   d0: F0 [0,10) F1 [10,20) ... waits for the gradients ... B B
  //   d1: waits, F0 [10,25) (first: 15, no resume)  F1 [25,35) (its input was there at 20: no
  //       wait, no resume)  first B 26, second B 20
  const sched::Schedule schedule = make(ScheduleKind::kGPipe, 2, 2, true);
  sim::CostModel costs = sim::uniform_cost_model(2, 10, 20, 0, CommMode::kEager);
  costs.stages[1].first_forward_ns = 15;
  costs.stages[1].first_backward_ns = 26;
  costs.stages[1].resume_forward_ns = 3;
  const sim::SimResult r = run(schedule, costs, true);
  auto at = compute_spans(r);
  CHECK(at["1F0"] == std::pair<sched::Nanoseconds, sched::Nanoseconds>{10, 25});  // first: 15, no resume
  CHECK(at["1F1"] == std::pair<sched::Nanoseconds, sched::Nanoseconds>{25, 35});  // input there at 20: no wait
  CHECK(at["1B0"].second - at["1B0"].first + at["1B1"].second - at["1B1"].first == 26 + 20);
  CHECK(r.devices[1].busy_ns == 15 + 10 + 26 + 20);
  costs.stages[1].first_backward_ns = -2;
  CHECK_FALSE(sim::simulate(schedule, costs).ok());
}

TEST_CASE("a forward whose micro-batch is re-materialized costs the forward without the graph", "[simulator]") {
  // K = 1, M = 2, GPipe with R before each B: F0 F1 R0 B0 R1 B1; F without the graph costs 6,
  // R (the forward that keeps it) 10, B 20: makespan 2 x 6 + 2 x (10 + 20) = 72.
  auto schedule = sched::add_recompute(make(ScheduleKind::kGPipe, 1, 2, false));
  REQUIRE(schedule.ok());
  sim::CostModel costs = sim::uniform_cost_model(1, 10, 20);
  CHECK(run(*schedule, costs).makespan_ns == 2 * 10 + 2 * 30);
  costs.stages[0].forward_no_grad_ns = 6;
  CHECK(run(*schedule, costs).makespan_ns == 2 * 6 + 2 * 30);
  // Without R in the schedule, F keeps the graph and costs forward_ns.
  CHECK(run(make(ScheduleKind::kGPipe, 1, 2, false), costs).makespan_ns == 2 * 10 + 2 * 20);
}
