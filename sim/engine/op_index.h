// The simulator's flat index of a schedule's actions and sched's dependency rule resolved against
// it: pass 1 of building an op table (sim/engine/op_table.cc), kept apart so that each file holds one
// step. Internal to sim/; nothing outside it includes this header.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "sched/action.h"
#include "sched/dependencies.h"
#include "sched/schedule.h"

namespace pipeworks::sim::detail {

using sched::Action;
using sched::ActionKind;

// The kinds with a micro-batch: stage-level actions (UNSHARD, RESHARD, REDUCE_GRAD) have no slot,
// as in sched::ActionIndex (nothing depends on them).
inline constexpr int kKinds = sched::kNumMicrobatchKinds;

// The slot of (stage, micro-batch, kind index) in a FlatIndex over `num_microbatches`: the one
// layout rule of the index, for every reader of it.
inline std::size_t index_slot(std::size_t num_microbatches, int stage, int microbatch, unsigned kind) {
  return (static_cast<std::size_t>(stage) * num_microbatches + static_cast<std::size_t>(microbatch)) * kKinds + kind;
}

// Op id of every in-range action: one int32 per (stage, micro-batch, kind), -1 when absent. The
// kinds of one (stage, micro-batch) sit together, so the look-ups of one op share cache lines.
// (sched::ActionIndex answers the same questions through out-of-line calls; this is the inlined
// copy for the simulator's hot loop, as docs/design.md allows where measured faster: bench/README.md.)
class FlatIndex {
 public:
  FlatIndex(int num_stages, int num_microbatches)
      : k_(num_stages), m_(num_microbatches),
        size_(static_cast<std::size_t>(num_stages) * static_cast<std::size_t>(num_microbatches) * kKinds),
        op_(new std::int32_t[size_]) {
    std::memset(op_.get(), 0xff, size_ * sizeof(std::int32_t));  // -1 in every slot, written once
  }

  int num_stages() const { return k_; }
  int num_microbatches() const { return m_; }
  bool in_range(const Action& a) const {  // (unsigned: a negative value wraps past the bound)
    return static_cast<unsigned>(a.stage) < static_cast<unsigned>(k_) &&
           static_cast<unsigned>(a.microbatch) < static_cast<unsigned>(m_) &&
           static_cast<unsigned>(sched::kind_index(a.kind)) < static_cast<unsigned>(kKinds);
  }
  // Precondition: in_range(a).
  std::size_t slot(const Action& a) const {
    return index_slot(static_cast<std::size_t>(m_), a.stage, a.microbatch,
                      static_cast<unsigned>(sched::kind_index(a.kind)));
  }
  std::size_t size() const { return size_; }
  std::int32_t* data() { return op_.get(); }
  const std::int32_t* data() const { return op_.get(); }

 private:
  int k_;
  int m_;
  std::size_t size_;
  std::unique_ptr<std::int32_t[]> op_;
};

// The look-up side of a FlatIndex, passed by value: a copy held in registers, which the hot
// loops' stores cannot alias, as they may alias the fields of a FlatIndex behind a reference.
struct IndexView {
  const std::int32_t* op;
  std::size_t num_microbatches;

  // Precondition: 0 <= stage < K, 0 <= m < M.
  std::int32_t find(int stage, ActionKind kind, int m) const {
    return op[slot(stage, kind, m)];
  }
  std::size_t slot(int stage, ActionKind kind, int m) const {
    return index_slot(num_microbatches, stage, m, static_cast<unsigned>(sched::kind_index(kind)));
  }
  static bool present(std::int32_t op) { return op >= 0; }
};

inline IndexView view(const FlatIndex& index) {
  return IndexView{index.data(), static_cast<std::size_t>(index.num_microbatches())};
}

// One data dependency: the action sched::resolve_dependencies picks (for the message) and its op
// id (-1: the schedule does not contain it).
using Dep = sched::ResolvedDependency<std::int32_t>;

// sched's dependency rule (dependencies.h) over the flat index, for every kind but RECV (the
// simulator gives a RECV no dependency: it is paired with its SEND instead).
inline int dependencies(IndexView index, const Action& a, int num_stages, std::array<Dep, 2>& out) {
  return sched::resolve_dependencies(index, a, num_stages, out);
}

// Pass 1 of the compilation: where every action is (the first occurrence wins), which slots hold
// a repeated action and the first out-of-range op (both are reported, in program order, by pass 2).
// A stage-level action is out of range only when its stage is (its micro-batch is not read).
struct Located {
  FlatIndex index;
  std::vector<std::uint8_t> is_repeated;  // per slot; empty when no action repeats
  std::size_t first_out_of_range;         // op id; the number of ops when none
  unsigned kinds_present = 0;             // bit kind_index(k): the schedule has an in-range k
  bool has_reduce_grad = false;           // some in-range action is a REDUCE_GRAD
  std::int64_t num_sends = 0;             // in-range SENDs
};

// Precondition: device_begin has one entry per program and one past the end (op ids).
Located locate_actions(const sched::Schedule& schedule, const std::vector<std::int32_t>& device_begin);

}  // namespace pipeworks::sim::detail
