// The negative corpus in tests/data/invalid/: each file breaks one rule, and validation names
// that rule, where it is broken, and why. Parse-error files fail to load with a located error.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "sched/schedule_file.h"
#include "sched/validate.h"

using namespace pipeworks::sched;

namespace {

struct Expected {
  const char* file;
  DiagnosticKind kind;
  const char* location;  // diagnostic_location, relative to the corpus folder
  const char* fragment;  // part of the message
};

const std::string kDir = std::string(PIPEWORKS_TEST_DATA_DIR) + "/invalid/";

using K = DiagnosticKind;
const Expected kCases[] = {
    {"bad_shape.json", K::kBadShape, "bad_shape.json", "at least 1 stage, it has 0"},
    {"bad_shape_huge.json", K::kBadShape, "bad_shape_huge.json", "2147483647 stages is more than the limit of 65536"},
    {"bad_placement.json", K::kBadPlacement, "bad_placement.json: /placement/1", "placed on device 5"},
    {"bad_placement_size.json", K::kBadPlacement, "bad_placement_size.json: /placement", "names 1 stages"},
    {"out_of_range_stage.json", K::kOutOfRange, "out_of_range_stage.json: /programs/1/2", "2F0 names stage 2"},
    {"out_of_range_microbatch.json", K::kOutOfRange, "out_of_range_microbatch.json: /programs/0/2",
     "names micro-batch 2147483647"},
    {"duplicate.csv", K::kDuplicate, "duplicate.csv:1:5", "0F0 appears again"},
    {"wrong_count_forward.csv", K::kWrongCount, "wrong_count_forward.csv:2:1", "stage 1 has 1 of 2 forwards"},
    {"wrong_count_backward.json", K::kWrongCount, "wrong_count_backward.json: /programs/0",
     "1 of 2 backward gradients"},
    {"wrong_device.json", K::kWrongDevice, "wrong_device.json: /programs/0/1", "stage 1 is placed on device 1"},
    {"stage_on_two_devices.csv", K::kStageOnTwoDevices, "stage_on_two_devices.csv:2:13",
     "stage 0 has actions on devices 0 and 1"},
    {"backward_before_forward.csv", K::kBackwardBeforeForward, "backward_before_forward.csv:1:1",
     "0B0 runs before its forward 0F0"},
    {"weight_before_input.csv", K::kWeightBeforeInput, "weight_before_input.csv:1:5", "0W0 runs before"},
    {"mixed_backward.csv", K::kMixedBackward, "mixed_backward.csv:1:9", "also runs the full backward"},
    {"recompute_before_forward.csv", K::kRecomputeBeforeForward, "recompute_before_forward.csv:1:1",
     "0R0 re-materializes before"},
    {"orphan_recompute.csv", K::kOrphanRecompute, "orphan_recompute.csv:1:9", "not followed by a backward"},
    {"unmatched_send.csv", K::kUnmatchedSend, "unmatched_send.csv:1:5", "0SEND_F0 has no matching 1RECV_F0"},
    {"unmatched_recv.csv", K::kUnmatchedRecv, "unmatched_recv.csv:1:14", "0RECV_B0 has no matching 1SEND_B0"},
    {"local_comm.json", K::kLocalComm, "local_comm.json: /programs/0/1", "which share device 0"},
    {"missing_comm.csv", K::kMissingComm, "missing_comm.csv:1:31", "no 1SEND_B1 / 0RECV_B1 pair"},
    {"comm_order_send.csv", K::kCommOrder, "comm_order_send.csv:1:1", "sends before 0F0 has produced"},
    {"comm_order_recv.csv", K::kCommOrder, "comm_order_recv.csv:1:18", "receives after 0B0 needed"},
    {"deadlock.csv", K::kDeadlock, "deadlock.csv:1:5",
     "0B0 (d0:1) -> 0F1 (d0:2) -> 1F1 (d1:0) -> 1B1 (d1:1) -> 1F0 (d1:2) -> 1B0 (d1:3) -> back"},
    {"deadlock_rendezvous.csv", K::kDeadlock, "deadlock_rendezvous.csv:1:18",
     "0SEND_F1=1RECV_F1 (d0:3, d1:4) -> 1SEND_B0=0RECV_B0 (d1:3, d0:4)"},
    {"bad_composite.csv", K::kBadComposite, "bad_composite.csv:1:6",
     "(0B0;0F1)OVERLAP_F_B must overlap a forward (F) with a backward (B or I), in that order"},
    {"bad_composite_dependent.json", K::kBadComposite, "bad_composite_dependent.json: /programs/0/2",
     "in (0F1;0B1)OVERLAP_F_B, 0B1 depends on 0F1, so the two cannot overlap"},
    {"shard_order.csv", K::kShardOrder, "shard_order.csv:1:18",
     "0UNSHARD gathers stage 0's parameters again: 0UNSHARD at position 0 gathered them"},
    {"sharded_compute.csv", K::kShardedCompute, "sharded_compute.csv:1:1",
     "0F0 runs while stage 0's parameters are sharded"},
    {"reduce_grad_order.json", K::kReduceGradOrder, "reduce_grad_order.json: /programs/0/3",
     "0REDUCE_GRAD reduces stage 0's gradients before 0B1 adds to them"},
};

}  // namespace

TEST_CASE("each corpus file reports its diagnostic class, location and message", "[corpus]") {
  for (const Expected& e : kCases) {
    INFO(e.file);
    auto loaded = load_schedule(kDir + e.file);
    REQUIRE(loaded.ok());
    const auto diagnostics = validate(loaded->schedule, ValidateOptions{loaded->placement_inferred});
    REQUIRE_FALSE(diagnostics.empty());
    const Diagnostic& d = diagnostics.front();
    CHECK(diagnostic_kind_name(d.kind) == diagnostic_kind_name(e.kind));
    CHECK(diagnostic_location(*loaded, d) == kDir + e.location);
    CHECK_THAT(d.message, Catch::Contains(e.fragment));
    CHECK_THAT(format_diagnostic(*loaded, d),
               Catch::Contains(std::string(": error: ") + d.message + " [" + std::string(diagnostic_kind_name(e.kind)) + "]"));
    // Every diagnostic renders a grid with its cell or row marked.
    for (const Diagnostic& any : diagnostics) {
      const std::string grid = render(loaded->schedule, any);
      if (any.has_cell()) CHECK_THAT(grid, Catch::Contains("["));
    }
  }
}

TEST_CASE("every diagnostic class has a corpus file", "[corpus]") {
  std::set<DiagnosticKind> covered;
  for (const Expected& e : kCases) covered.insert(e.kind);
  CHECK(covered.size() == static_cast<std::size_t>(kNumDiagnosticKinds));
}

TEST_CASE("corpus parse errors are located", "[corpus]") {
  const std::pair<const char*, const char*> cases[] = {
      {"parse_trailing.csv", "parse_trailing.csv:2:8: error: unexpected trailing text 'xyz' in action '1F0xyz'"},
      {"parse_sign.csv", "parse_sign.csv:1:6: error: stage index in '-1F0' must be a non-negative integer"},
      {"parse_overflow.csv", "parse_overflow.csv:1:5: error: stage index '99999999999' in '99999999999F0' is out of range"},
      {"parse_kind.csv", "parse_kind.csv:1:6: error: unknown action kind 'X'"},
      {"parse_composite.csv", "parse_composite.csv:1:17: error: unterminated composite action '(0F1;0B1'"},
      {"too_large.csv", "too_large.csv:1:5: error: stage 65536 in '65536F0' is beyond the largest supported schedule"},
      {"parse_action.json", "parse_action.json: /programs/1/2: error: unexpected trailing text 'xyz'"},
      {"unknown_member.json", "unknown_member.json: /extra: error: unknown member"},
      {"syntax.json", "syntax.json:2:15: error: invalid JSON"},
  };
  for (const auto& [file, prefix] : cases) {
    INFO(file);
    auto loaded = load_schedule(kDir + file);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().message.rfind(kDir + prefix, 0) == 0);
  }
}
