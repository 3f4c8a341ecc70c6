// Hand-built GPipe timelines with closed-form times, so viz tests and benchmarks do not depend on
// the simulator. Uniform costs: forward F, backward B, and an optional transfer time C per hop.
//
//   K=4, M=4, F=B=1, C=0 (one column per time unit):
//   t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13
//   d0: F0 F1 F2 F3  .  .  .  .  .  . B0 B1 B2 B3
//   d1:  . F0 F1 F2 F3  .  .  .  . B0 B1 B2 B3  .
//   d2:  .  . F0 F1 F2 F3  .  . B0 B1 B2 B3  .  .
//   d3:  .  .  . F0 F1 F2 F3 B0 B1 B2 B3  .  .  .
//
// Stage s = device s. F(s,m) starts at s(F+C) + mF; with t0 = (K-1)(F+C) + MF the last forward
// ends, and B(s,m) starts at t0 + (K-1-s)(B+C) + mB. Makespan (K-1)(F+B+2C) + M(F+B).
// With C > 0 every hop has a SEND span on the sender's send lane and a RECV span on the
// receiver's recv lane over the same C nanoseconds, linked by a Flow.
// Memory: each forward holds `activation_bytes` from its start until its backward ends.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sched/timeline.h"

namespace pipeworks::viz::testing {

struct GpipeCosts {
  sched::Nanoseconds forward_ns = 1'000'000;
  sched::Nanoseconds backward_ns = 1'000'000;
  sched::Nanoseconds comm_ns = 0;
  sched::Bytes activation_bytes = 1 << 20;
  sched::Nanoseconds start_ns = 0;  // shift of the whole timeline (tests rebasing)
};

inline sched::Timeline make_gpipe_timeline(int k, int m, const GpipeCosts& c = {}, std::string name = "predicted") {
  using sched::ActionKind;
  using sched::Lane;
  using sched::Nanoseconds;
  sched::Timeline tl;
  tl.name = std::move(name);
  tl.num_devices = k;
  tl.num_stages = k;
  tl.num_microbatches = m;
  const Nanoseconds f = c.forward_ns, b = c.backward_ns, x = c.comm_ns;
  auto fwd_start = [&](int s, int mb) { return c.start_ns + s * (f + x) + mb * f; };
  const Nanoseconds t0 = c.start_ns + (k - 1) * (f + x) + m * f;
  auto bwd_start = [&](int s, int mb) { return t0 + (k - 1 - s) * (b + x) + mb * b; };
  auto add = [&tl](int device, Lane lane, ActionKind kind, int stage, int mb, Nanoseconds start, Nanoseconds end) {
    tl.spans.push_back(sched::Span{device, lane, sched::Action{stage, kind, mb}, start, end});
    return tl.spans.size() - 1;
  };
  for (int s = 0; s < k; ++s) {
    for (int mb = 0; mb < m; ++mb) {
      const Nanoseconds fs = fwd_start(s, mb);
      add(s, Lane::kCompute, ActionKind::kForward, s, mb, fs, fs + f);
      if (x > 0 && s + 1 < k) {
        const auto send = add(s, Lane::kSend, ActionKind::kSendF, s, mb, fs + f, fs + f + x);
        const auto recv = add(s + 1, Lane::kRecv, ActionKind::kRecvF, s + 1, mb, fs + f, fs + f + x);
        tl.flows.push_back(sched::Flow{send, recv});
      }
    }
    for (int mb = 0; mb < m; ++mb) {
      const Nanoseconds bs = bwd_start(s, mb);
      add(s, Lane::kCompute, ActionKind::kBackward, s, mb, bs, bs + b);
      if (x > 0 && s > 0) {
        const auto send = add(s, Lane::kSend, ActionKind::kSendB, s, mb, bs + b, bs + b + x);
        const auto recv = add(s - 1, Lane::kRecv, ActionKind::kRecvB, s - 1, mb, bs + b, bs + b + x);
        tl.flows.push_back(sched::Flow{send, recv});
      }
    }
    // Memory: 0 at the start, +A at each forward start, -A at each backward end.
    tl.memory.push_back(sched::MemorySample{s, c.start_ns, 0});
    for (int mb = 0; mb < m; ++mb) {
      tl.memory.push_back(sched::MemorySample{s, fwd_start(s, mb), (mb + 1) * c.activation_bytes});
    }
    for (int mb = 0; mb < m; ++mb) {
      tl.memory.push_back(sched::MemorySample{s, bwd_start(s, mb) + b, (m - 1 - mb) * c.activation_bytes});
    }
  }
  return tl;
}

}  // namespace pipeworks::viz::testing
