// What one op costs, read from the cost model (see op_costs.h).
#include "sim/engine/op_costs.h"

#include <cmath>

#include <fmt/format.h>

namespace pipeworks::sim {

namespace detail {

using sched::Action;
using sched::ActionKind;

Nanoseconds compute_cost(const StageCost& c, ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward: return c.forward_ns;
    case ActionKind::kBackward: return c.backward_ns;
    case ActionKind::kBackwardInput: return c.backward_input_ns;
    case ActionKind::kBackwardWeight: return c.backward_weight_ns;
    case ActionKind::kRecompute: return c.recompute_ns;
    default: return 0;
  }
}

// The cost of the stage's first action of `kind` in a step; 0: as the others.
Nanoseconds first_cost(const StageCost& c, ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward: return c.first_forward_ns;
    case ActionKind::kRecompute: return c.first_recompute_ns;
    case ActionKind::kBackward: return c.first_backward_ns;
    default: return 0;
  }
}

Nanoseconds resume_cost(const StageCost& c, ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward: return c.resume_forward_ns;
    case ActionKind::kRecompute: return c.resume_recompute_ns;
    case ActionKind::kBackward:
    case ActionKind::kBackwardInput:
    case ActionKind::kBackwardWeight: return c.resume_backward_ns;
    default: return 0;
  }
}

// Bytes a SEND/RECV carries: stage s's output forwards, the same-sized gradient backwards.
Bytes transfer_bytes(const Action& a, const CostModel& model) {
  const bool forward = a.kind == ActionKind::kSendF || a.kind == ActionKind::kRecvF;
  const bool at_sender = sched::is_send(a.kind);
  // SEND_F(s)/RECV_F(s+1) carry stage s's output; SEND_B(s)/RECV_B(s-1) carry stage s-1's.
  int producer_stage = a.stage;
  if (forward && !at_sender) producer_stage = a.stage - 1;
  if (!forward && at_sender) producer_stage = a.stage - 1;
  return model.stages[static_cast<std::size_t>(producer_stage)].output_bytes;
}

}  // namespace detail

namespace {

__extension__ typedef __int128 Int128;  // NOLINT: ceil(bytes * 1e9 / bandwidth) past int64

}  // namespace

using detail::kMaxTime;
using sched::Error;

sched::Result<Nanoseconds> transfer_ns(const Link& link, Bytes bytes) {
  if (bytes < 0 || link.latency_ns < 0 || !(link.bandwidth_bytes_per_s > 0) ||
      !std::isfinite(link.bandwidth_bytes_per_s)) {
    return Error{"transfer: negative size or latency, or a bandwidth that is not finite and positive"};
  }
  const double bw = link.bandwidth_bytes_per_s;
  Nanoseconds wire = 0;
  if (bw == std::floor(bw) && bw < 9.0e18) {
    const auto den = static_cast<Int128>(bw);
    const Int128 num = static_cast<Int128>(bytes) * 1'000'000'000;
    const Int128 q = (num + den - 1) / den;
    if (q > kMaxTime) return Error{fmt::format("transfer of {} bytes at {} B/s takes too long", bytes, bw)};
    wire = static_cast<Nanoseconds>(q);
  } else {
    const double ns = std::ceil(static_cast<double>(bytes) * 1e9 / bw);
    if (!(ns <= static_cast<double>(kMaxTime))) {
      return Error{fmt::format("transfer of {} bytes at {} B/s takes too long", bytes, bw)};
    }
    wire = static_cast<Nanoseconds>(ns);
  }
  if (wire > kMaxTime - link.latency_ns) return Error{"transfer time overflows"};
  return link.latency_ns + wire;
}

}  // namespace pipeworks::sim
