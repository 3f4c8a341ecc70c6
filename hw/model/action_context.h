// What the running action is, as seen from inside a layer: the executor sets it around every
// F/R/B on the worker's thread, so a dropout layer can draw the same mask at F and at R
// (re-materialization) whatever other threads do, and a test layer can fail at one action.
#pragma once

#include <cstdint>

#include "sched/action.h"

namespace pipeworks::hw {

struct ActionContext {
  std::uint64_t seed = 0;  // the mini-batch's seed; dropout masks derive from (seed, layer, micro-batch)
  int microbatch = -1;     // -1: no micro-batch (a full-batch reference pass)
  sched::ActionKind kind = sched::ActionKind::kForward;
};

// The context of the calling thread (a default one when none is set).
const ActionContext& current_action_context();

// Sets the calling thread's context for its lifetime, restoring the previous one after.
class ActionScope {
 public:
  explicit ActionScope(const ActionContext& context);
  ~ActionScope();
  ActionScope(const ActionScope&) = delete;
  ActionScope& operator=(const ActionScope&) = delete;

 private:
  ActionContext previous_;
};

// A 64-bit mix of the seed, a layer id and a micro-batch (splitmix64 of each in turn).
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t layer_id, std::int64_t microbatch);

}  // namespace pipeworks::hw
