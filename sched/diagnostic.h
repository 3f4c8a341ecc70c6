// What validation reports: one Diagnostic per problem, with its class, where it is (a program
// cell, or a stage for placement and count problems), a message, and a picture of the programs
// with the offending cell marked.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sched/action_index.h"
#include "sched/schedule.h"

namespace pipeworks::sched {

enum class DiagnosticKind {
  kBadShape,                // K < 1, M < 1, or too large to validate
  kBadPlacement,            // placement size != K, device out of range, device without a stage
  kOutOfRange,              // action's stage or micro-batch outside [0,K) x [0,M)
  kDuplicate,               // the same action twice (REDUCE_GRAD included; UNSHARD/RESHARD may repeat)
  kWrongCount,              // a stage lacks some of its M forwards or M backward gradients
  kWrongDevice,             // action on a device other than its stage's placement
  kStageOnTwoDevices,       // inferred placement (CSV): one stage's actions on two rows
  kBackwardBeforeForward,   // B/I(s,m) before F(s,m)
  kWeightBeforeInput,       // W(s,m) before I(s,m)
  kMixedBackward,           // B(s,m) together with I(s,m) or W(s,m)
  kRecomputeBeforeForward,  // R(s,m) before F(s,m)
  kOrphanRecompute,         // R(s,m) with no B/I(s,m) after it
  kUnmatchedSend,           // SEND without its RECV
  kUnmatchedRecv,           // RECV without its SEND
  kLocalComm,               // SEND/RECV between stages on the same device
  kMissingComm,             // lowered schedule with a cross-device dependency and no SEND/RECV pair
  kCommOrder,               // SEND before its producer, or RECV after its consumer
  kDeadlock,                // the programs wait on each other in a cycle (rendezvous semantics)
  kBadComposite,            // a composite mark that names no two actions, or overlaps what cannot overlap
  kShardOrder,              // UNSHARD/RESHARD of a stage that do not alternate around its computes
  kShardedCompute,          // a compute of a stage that UNSHARDs, outside its UNSHARD..RESHARD
  kReduceGradOrder,         // REDUCE_GRAD before one of its stage's B or W
};

inline constexpr int kNumDiagnosticKinds = 22;

// Stable kebab-case name, e.g. "wrong-count", "deadlock"; used in CLI output and tests.
std::string_view diagnostic_kind_name(DiagnosticKind kind);

struct Diagnostic {
  DiagnosticKind kind = DiagnosticKind::kBadShape;
  // The offending cell, when the problem is an action: programs[device][position].
  int device = -1;
  int position = -1;
  // The stage concerned (-1 when none). Placement and count problems have only a stage.
  int stage = -1;
  std::string message;
  // Other cells involved, in order: the first occurrence of a duplicate, the cycle of a deadlock.
  std::vector<Location> related;

  bool has_cell() const { return device >= 0 && position >= 0; }
};

// The program grid (one row per device, one column per program position, every token) with
// the diagnostic's cell marked `[1B0]` and its related cells marked `<1F0>`. A stage-level
// diagnostic marks its device's row with `>`. Long programs are cut to a window around the
// marked cells (`...` shows the cut).
//
//         0    1    2    3
//   d0  0F0 <0F1>[0B0] 0B1
//   d1  1F0  1B0  1F1  1B1
std::string render(const Schedule& schedule, const Diagnostic& diagnostic);

}  // namespace pipeworks::sched
