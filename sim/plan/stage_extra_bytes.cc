// The executor's bytes per stage beyond the stashes, from the model spec (stage_extra_bytes.h).
#include "sim/plan/stage_extra_bytes.h"

#include <algorithm>

#include "sim/spec/optimizer.h"

namespace pipeworks::sim {
namespace {

sched::Error overflow() { return sched::Error{"stage temporaries: byte counts overflow"}; }

// The spec's measured temporaries of a stage's layer range at `size`.
sched::Result<StageExtraBytes> range_bytes(const StageTemporaries& t, int size) {
  auto forward = t.forward.at(size);
  auto no_grad = t.forward_no_grad.at(size);
  auto first = t.first_backward.at(size);
  auto later = t.later_backward.at(size);
  if (!forward || !no_grad || !first || !later) return overflow();
  return StageExtraBytes{*first, *later, *forward, *no_grad};
}

}  // namespace

sched::Result<StageExtraBytes> composed_backward_bytes(const ModelSpec& spec, int begin, int end, int size) {
  StageExtraBytes extra;
  Bytes freed = 0;
  Bytes grads = 0;
  for (int l = end - 1; l >= begin; --l) {
    const auto i = static_cast<std::size_t>(l);
    auto transient = spec.layers[i].backward_transient_bytes.at(size);
    auto output = spec.layers[i].output_bytes.at(size);
    auto stash = spec.layers[i].stash_bytes.at(size);
    if (!transient || !output || !stash) return overflow();
    grads += gradient_bytes(spec.layers[i].param_bytes);
    const Bytes term = *transient + (l + 1 < end ? *output : 0) - freed;
    extra.later = std::max(extra.later, term);
    extra.first = std::max(extra.first, term + grads);
    freed += *stash;
  }
  return extra;
}

sched::Result<Bytes> split_held_bytes(const ModelSpec& spec, int begin, int end, bool last, int size) {
  if (begin == 0) return Bytes{0};
  Bytes held = 0;
  for (int l = begin; l < end; ++l) {
    const LayerSpec& layer = spec.layers[static_cast<std::size_t>(l)];
    const bool loss_output = last && l + 1 == end && !layer.split_held_bytes;
    auto bytes = loss_output ? sched::Result<Bytes>{0} : layer.split_held_bytes.value_or(layer.output_bytes).at(size);
    if (!bytes || __builtin_add_overflow(held, *bytes, &held)) return overflow();
  }
  return held;
}

sched::Result<std::vector<StageExtraBytes>> spec_stage_extra_bytes(const ModelSpec& spec, const Partition& partition,
                                                                   int size) {
  std::vector<StageExtraBytes> extra;
  for (int s = 0; s < partition.num_stages(); ++s) {
    const int begin = partition.begin(s);
    const int end = partition.end(s);
    const StageTemporaries* measured = spec.temporaries_of(begin, end);
    auto bytes = measured != nullptr ? range_bytes(*measured, size) : composed_backward_bytes(spec, begin, end, size);
    if (!bytes) return bytes.error();
    auto held = split_held_bytes(spec, begin, end, s + 1 == partition.num_stages(), size);
    if (!held) return held.error();
    bytes->split_held = *held;
    extra.push_back(*bytes);
  }
  return extra;
}

void set_stage_extra_bytes(CostModel& costs, const std::vector<StageExtraBytes>& extra) {
  for (std::size_t s = 0; s < costs.stages.size() && s < extra.size(); ++s) costs.stages[s].extra = extra[s];
}

}  // namespace pipeworks::sim
