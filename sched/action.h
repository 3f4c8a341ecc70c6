// The unit of a schedule: one action of one stage on one micro-batch, e.g. `2F0`, `1SEND_F3`, or
// one action of a whole stage, e.g. `0UNSHARD`. Text form and kind names follow
// torch.distributed.pipelining so its CSV schedules round-trip.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "sched/result.h"

namespace pipeworks::sched {

// The kinds that name a micro-batch come first (compute, then comm): the tables indexed by
// (stage, kind, micro-batch) cover exactly those (kNumMicrobatchKinds).
enum class ActionKind : std::uint8_t {
  kForward,         // F
  kBackward,        // B: full backward (input and weight gradients)
  kBackwardInput,   // I: input gradient only (zero-bubble split)
  kBackwardWeight,  // W: weight gradient only
  kRecompute,       // R: GPipe re-materialization of the forward before its backward
  kSendF,           // SEND_F: send stage output activation to the next stage
  kRecvF,           // RECV_F: receive this stage's input activation
  kSendB,           // SEND_B: send this stage's input gradient to the previous stage
  kRecvB,           // RECV_B: receive the gradient of this stage's output
  // Stage-level kinds: no micro-batch (Action::microbatch is 0 and is not printed).
  kUnshard,     // UNSHARD: gather the stage's sharded parameters before its computes
  kReshard,     // RESHARD: free the gathered parameters after them
  kReduceGrad,  // REDUCE_GRAD: reduce the stage's gradients over its data-parallel group
};

inline constexpr int kNumMicrobatchKinds = 9;
inline constexpr int kNumActionKinds = 12;
inline constexpr std::array<ActionKind, kNumActionKinds> kAllActionKinds = {
    ActionKind::kForward,   ActionKind::kBackward, ActionKind::kBackwardInput,
    ActionKind::kBackwardWeight, ActionKind::kRecompute, ActionKind::kSendF,
    ActionKind::kRecvF,     ActionKind::kSendB,    ActionKind::kRecvB,
    ActionKind::kUnshard,   ActionKind::kReshard,  ActionKind::kReduceGrad};

// "F", "B", "I", "W", "R", "SEND_F", "RECV_F", "SEND_B", "RECV_B", "UNSHARD", "RESHARD",
// "REDUCE_GRAD".
std::string_view kind_name(ActionKind kind);
// Strict inverse of kind_name: the whole text or nothing.
Result<ActionKind> parse_kind(std::string_view text);
// The kind of torch's composite action `(0F3;3B1)OVERLAP_F_B` (sched/composite.h), which is no
// ActionKind: the IR holds a composite as its two sub-actions.
inline constexpr std::string_view kOverlapKindName = "OVERLAP_F_B";

constexpr bool is_send(ActionKind k) { return k == ActionKind::kSendF || k == ActionKind::kSendB; }
constexpr bool is_recv(ActionKind k) { return k == ActionKind::kRecvF || k == ActionKind::kRecvB; }
constexpr bool is_comm(ActionKind k) { return is_send(k) || is_recv(k); }
// F, B, I, W, R: the actions that take time on a device's compute stream.
constexpr bool is_compute(ActionKind k) { return k <= ActionKind::kRecompute; }
// UNSHARD, RESHARD, REDUCE_GRAD: actions of a whole stage, without a micro-batch.
constexpr bool is_stage_level(ActionKind k) { return k >= ActionKind::kUnshard && k <= ActionKind::kReduceGrad; }
// Kinds that produce the gradient a stage sends backwards (B or I).
constexpr bool is_input_backward(ActionKind k) {
  return k == ActionKind::kBackward || k == ActionKind::kBackwardInput;
}
// Kinds that add to a stage's parameter gradients, the last of which REDUCE_GRAD follows (B or W).
constexpr bool is_weight_gradient(ActionKind k) {
  return k == ActionKind::kBackward || k == ActionKind::kBackwardWeight;
}
constexpr int kind_index(ActionKind k) { return static_cast<int>(k); }

struct Action {
  int stage = 0;
  ActionKind kind = ActionKind::kForward;
  int microbatch = 0;

  friend auto operator<=>(const Action&, const Action&) = default;
  friend bool operator==(const Action&, const Action&) = default;
};

// `<stage><KIND><microbatch>`, e.g. "2F0", "1SEND_F3"; `<stage><KIND>` for the stage-level
// kinds, e.g. "0UNSHARD", "1REDUCE_GRAD".
std::string to_string(const Action& action);

// Parses one token strictly. Errors carry the column (0-based, inside `token`) where parsing
// failed: "1F0xyz" (trailing text), "-1F0" (sign), "99999999999F0" (overflow), "0X1" (kind),
// "1F" (no micro-batch), "1UNSHARD0" (a micro-batch on a stage-level kind).
Result<Action> parse_action(std::string_view token);

}  // namespace pipeworks::sched
