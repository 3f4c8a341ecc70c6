// tensor_parallel_view: the per-rank rules of tensor_parallel.h applied layer by layer.
#include "sim/spec/tensor_parallel.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

// value x factor rounded, factor in (0, 1]: never more than value (a product that rounds up to
// 2^63 in double keeps the value).
std::int64_t scaled_value(std::int64_t value, double factor) {
  const double scaled = static_cast<double>(value) * factor;
  return scaled >= 9.2e18 ? value : std::min(value, static_cast<std::int64_t>(std::llround(scaled)));
}

std::vector<SizePoint> scaled_points(const std::vector<SizePoint>& points, double factor) {
  std::vector<SizePoint> out = points;
  for (SizePoint& p : out) p.value = scaled_value(p.value, factor);
  return out;
}

ScaledDuration scaled(const ScaledDuration& d, double factor) {
  return ScaledDuration{scaled_value(d.fixed_ns, factor), scaled_value(d.per_sample_ns, factor),
                        scaled_points(d.measured, factor), d.size_block};
}

ScaledBytes scaled(const ScaledBytes& b, double factor) {
  return ScaledBytes{scaled_value(b.fixed_bytes, factor), scaled_value(b.per_sample_bytes, factor),
                     scaled_points(b.measured, factor)};
}

LayerSpec rank_layer(const LayerSpec& whole, int tp, bool sequence_parallel) {
  const double share = 1.0 / tp;
  const TensorParallelSplit& split = *whole.tensor_parallel;
  LayerSpec l = whole;
  if (const TensorParallelSplit::RankTimes* known = split.rank_times_for(tp)) {
    l.forward = known->forward;
    l.backward_input = known->backward_input;
    l.backward_weight = known->backward_weight;
    l.whole_backward.reset();
    l.forward_no_grad.reset();
  } else {
    l.forward = scaled(whole.forward, share);
    l.backward_input = scaled(whole.backward_input, share);
    l.backward_weight = scaled(whole.backward_weight, share);
    if (whole.whole_backward) l.whole_backward = scaled(*whole.whole_backward, share);
    if (whole.forward_no_grad) l.forward_no_grad = scaled(*whole.forward_no_grad, share);
  }
  l.output_bytes = scaled(whole.output_bytes, share);
  const double kept = sequence_parallel ? 0.0 : split.replicated_stash_fraction;
  l.stash_bytes = scaled(whole.stash_bytes, kept + (1 - kept) * share);
  l.backward_transient_bytes = scaled(whole.backward_transient_bytes, share);
  if (whole.split_held_bytes) l.split_held_bytes = scaled(*whole.split_held_bytes, share);
  l.param_bytes = split.replicated_param_bytes + (whole.param_bytes - split.replicated_param_bytes) / tp;
  l.tensor_parallel->rank_times.clear();  // a rank's model splits no further (tensor_parallel_view refuses it)
  return l;
}

}  // namespace

bool splits_over_tensor_parallel(const ModelSpec& model) {
  for (const LayerSpec& layer : model.layers) {
    if (!layer.tensor_parallel) return false;
  }
  return true;
}

sched::Result<ModelSpec> tensor_parallel_view(const ModelSpec& whole, int tp, bool sequence_parallel, bool overlap) {
  auto fail = [&](std::string message) -> sched::Error {
    return sched::Error{fmt::format("model '{}': {}", whole.name, message), std::nullopt};
  };
  if (tp < 1 || tp > kMaxTensorParallel) return fail(fmt::format("tensor parallelism must be from 1 to {}, got {}", kMaxTensorParallel, tp));
  if (sequence_parallel && tp == 1) return fail("sequence parallelism needs tensor parallelism above 1");
  if (overlap && tp == 1) return fail("overlapping tensor-parallel collectives needs tensor parallelism above 1");
  if (tp == 1) return whole;
  if (whole.tensor_parallel != 1) {
    return fail(fmt::format("its costs are already one rank's of tensor parallelism {}", whole.tensor_parallel));
  }
  ModelSpec rank = whole;
  rank.tensor_parallel = tp;
  rank.sequence_parallel = sequence_parallel;
  rank.tensor_parallel_overlap = overlap;
  for (std::size_t i = 0; i < whole.layers.size(); ++i) {
    const LayerSpec& layer = whole.layers[i];
    if (!layer.tensor_parallel) {
      return fail(fmt::format("layer {} ('{}') does not say how it splits over tensor-parallel ranks (its "
                              "'tensor_parallel' field, docs/model_spec.md); tensor parallelism {} needs every layer's",
                              i, layer.name, tp));
    }
    rank.layers[i] = rank_layer(layer, tp, sequence_parallel);
  }
  for (StageTemporaries& t : rank.stage_temporaries) {
    for (ScaledBytes* b : {&t.forward, &t.forward_no_grad, &t.first_backward, &t.later_backward}) *b = scaled(*b, 1.0 / tp);
  }
  return rank;
}

}  // namespace pipeworks::sim
