// ModelSpec's arithmetic (costs at a micro-batch size, with overflow checks) and its checks.
#include "sim/spec/model_spec.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

sched::Error error(std::string message) { return sched::Error{std::move(message), std::nullopt}; }

std::int64_t saturated_sum(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::int64_t>::max() : sum;
}

// Every size either table measured, in order (each table's sizes increase; the sweep calls this
// for every layer of every configuration, so a merge, not a tree).
std::vector<int> measured_sizes(const std::vector<SizePoint>& a, const std::vector<SizePoint>& b) {
  std::vector<int> sizes;
  sizes.reserve(a.size() + b.size());
  const auto by_size = [](const SizePoint& p, const SizePoint& q) { return p.size < q.size; };
  std::vector<SizePoint> merged;
  merged.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(merged), by_size);
  for (const SizePoint& p : merged) sizes.push_back(p.size);
  return sizes;
}

}  // namespace

bool backward_overflows(const LayerSpec& layer) {
  const ScaledDuration& i = layer.backward_input;
  const ScaledDuration& w = layer.backward_weight;
  Nanoseconds sum = 0;
  if (__builtin_add_overflow(i.fixed_ns, w.fixed_ns, &sum) || __builtin_add_overflow(i.per_sample_ns, w.per_sample_ns, &sum)) {
    return true;
  }
  for (int size : measured_sizes(i.measured, w.measured)) {
    auto x = i.at(size);
    auto y = w.at(size);
    if (!x || !y || __builtin_add_overflow(*x, *y, &sum)) return true;
  }
  return false;
}

ScaledDuration operator+(const ScaledDuration& a, const ScaledDuration& b) {
  ScaledDuration sum{saturated_sum(a.fixed_ns, b.fixed_ns), saturated_sum(a.per_sample_ns, b.per_sample_ns), {},
                     combined_size_block(a.size_block, b.size_block)};
  if (a.measured.empty() && b.measured.empty()) return sum;
  for (int size : measured_sizes(a.measured, b.measured)) {
    auto x = a.at(size);
    auto y = b.at(size);
    sum.measured.push_back(SizePoint{size, x && y ? saturated_sum(*x, *y) : std::numeric_limits<std::int64_t>::max()});
  }
  return sum;
}

void LayerSpec::set_backward(const ScaledDuration& backward) {
  backward_input = ScaledDuration{backward.fixed_ns - backward.fixed_ns / 2,
                                  backward.per_sample_ns - backward.per_sample_ns / 2, {}, backward.size_block};
  backward_weight = ScaledDuration{backward.fixed_ns / 2, backward.per_sample_ns / 2, {}, backward.size_block};
  for (const SizePoint& p : backward.measured) {
    backward_input.measured.push_back(SizePoint{p.size, p.value - p.value / 2});
    backward_weight.measured.push_back(SizePoint{p.size, p.value / 2});
  }
  backward_split = false;
  whole_backward.reset();
}

std::string_view dtype_name(ParamDtype dtype) {
  switch (dtype) {
    case ParamDtype::kFp32: return "fp32";
    case ParamDtype::kFp16: return "fp16";
    case ParamDtype::kBf16: return "bf16";
  }
  return "?";
}

int dtype_bytes(ParamDtype dtype) { return dtype == ParamDtype::kFp32 ? 4 : 2; }

const TensorParallelSplit::RankTimes* TensorParallelSplit::rank_times_for(int tp) const {
  for (const RankTimes& r : rank_times) {
    if (r.tp == tp) return &r;
  }
  return nullptr;
}

Bytes ModelSpec::total_param_bytes() const {
  Bytes total = 0;
  for (const LayerSpec& layer : layers) total += layer.param_bytes;
  return total;
}

namespace {

// Non-negative parts and a valid table; `what` names the quantity in the message.
sched::Status check_scaled(std::int64_t fixed, std::int64_t per_sample, const std::vector<SizePoint>& measured,
                           std::string_view what) {
  if (fixed < 0 || per_sample < 0) return error(fmt::format("{} is negative", what));
  if (auto status = check_size_points(measured); !status) return error(fmt::format("{}: {}", what, status.error().message));
  return sched::Ok{};
}

sched::Status check_duration(const ScaledDuration& d, std::string_view what) {
  if (auto s = check_scaled(d.fixed_ns, d.per_sample_ns, d.measured, what); !s) return s;
  if (d.size_block < 1 || d.size_block > kMaxSizeBlock) {
    return error(fmt::format("{}: size_block must be from 1 to {}, got {}", what, kMaxSizeBlock, d.size_block));
  }
  if (d.size_block > 1 && d.measured.empty()) return error(fmt::format("{}: size_block needs a measured table", what));
  return sched::Ok{};
}

// Group sizes from 2 to kMaxTensorParallel, strictly increasing; each entry's times valid and
// its I + W within int64.
sched::Status check_rank_times(const std::vector<TensorParallelSplit::RankTimes>& entries) {
  int previous = 1;
  for (const TensorParallelSplit::RankTimes& r : entries) {
    if (r.tp <= previous || r.tp > kMaxTensorParallel) {
      return error(fmt::format("tensor_parallel rank_times: group sizes must be from 2 to {} and strictly increasing, got {} after {}",
                               kMaxTensorParallel, r.tp, previous));
    }
    previous = r.tp;
    for (const auto& [d, what] : {std::pair{&r.forward, "forward"}, std::pair{&r.backward_input, "backward_input"},
                                  std::pair{&r.backward_weight, "backward_weight"}}) {
      if (auto s = check_duration(*d, fmt::format("tensor_parallel rank_times tp {} {}", r.tp, what)); !s) return s;
    }
    LayerSpec parts;
    parts.backward_input = r.backward_input;
    parts.backward_weight = r.backward_weight;
    parts.backward_split = true;
    if (backward_overflows(parts)) return error(fmt::format("tensor_parallel rank_times tp {}: backward overflows", r.tp));
  }
  return sched::Ok{};
}

sched::Status check_split(const TensorParallelSplit& t, Bytes param_bytes) {
  for (const int count : {t.forward_collectives, t.backward_collectives}) {
    if (count < 0 || count > kMaxTensorParallelCollectives) {
      return error(fmt::format("tensor_parallel: collectives must be from 0 to {}, got {}", kMaxTensorParallelCollectives, count));
    }
  }
  const ScaledBytes& b = t.collective_bytes;
  if (auto s = check_scaled(b.fixed_bytes, b.per_sample_bytes, b.measured, "tensor_parallel collective_bytes"); !s) return s;
  if (!(t.replicated_stash_fraction >= 0 && t.replicated_stash_fraction <= 1)) {
    return error(fmt::format("tensor_parallel: replicated_stash_fraction must be from 0 to 1, got {}", t.replicated_stash_fraction));
  }
  if (t.replicated_param_bytes < 0 || t.replicated_param_bytes > param_bytes) {
    return error(fmt::format("tensor_parallel: replicated_param_bytes must be from 0 to the layer's param_bytes ({}), got {}",
                             param_bytes, t.replicated_param_bytes));
  }
  return check_rank_times(t.rank_times);
}

sched::Status check_layer(const LayerSpec& l) {
  const ScaledDuration no_grad = l.forward_no_grad.value_or(ScaledDuration{});
  const ScaledDuration whole = l.whole_backward.value_or(ScaledDuration{});
  const ScaledBytes held = l.split_held_bytes.value_or(ScaledBytes{});
  const std::pair<const ScaledDuration*, const char*> durations[] = {
      {&l.forward, "forward"}, {&l.backward_input, "backward_input"}, {&l.backward_weight, "backward_weight"},
      {&no_grad, "forward_no_grad"}, {&whole, "backward"}};
  for (const auto& [d, what] : durations) {
    if (auto s = check_duration(*d, what); !s) return s;
  }
  const std::pair<const ScaledBytes*, const char*> sizes[] = {
      {&l.output_bytes, "output_bytes"}, {&l.stash_bytes, "stash_bytes"},
      {&l.backward_transient_bytes, "backward_transient_bytes"}, {&held, "split_held_bytes"}};
  for (const auto& [b, what] : sizes) {
    if (auto s = check_scaled(b->fixed_bytes, b->per_sample_bytes, b->measured, what); !s) return s;
  }
  if (l.param_bytes < 0) return error("param_bytes is negative");
  if (l.whole_backward && !l.backward_split) return error("a whole backward beside I and W needs backward_split");
  if (l.tensor_parallel) return check_split(*l.tensor_parallel, l.param_bytes);
  return sched::Ok{};
}

sched::Status check_temporaries(const ModelSpec& spec) {
  std::set<std::pair<int, int>> ranges;
  for (const StageTemporaries& t : spec.stage_temporaries) {
    const std::string where = fmt::format("stage temporaries of layers [{}, {})", t.begin, t.end);
    if (t.begin < 0 || t.end <= t.begin || t.end > spec.num_layers()) {
      return error(fmt::format("{}: not a range of the {} layers", where, spec.num_layers()));
    }
    if (!ranges.emplace(t.begin, t.end).second) return error(where + ": given twice");
    for (const ScaledBytes* b : {&t.forward, &t.forward_no_grad, &t.first_backward, &t.later_backward}) {
      if (auto s = check_scaled(b->fixed_bytes, b->per_sample_bytes, b->measured, where); !s) return s;
    }
  }
  return sched::Ok{};
}

}  // namespace

const StageTemporaries* ModelSpec::temporaries_of(int begin, int end) const {
  for (const StageTemporaries& t : stage_temporaries) {
    if (t.begin == begin && t.end == end) return &t;
  }
  return nullptr;
}

sched::Status check_model_spec(const ModelSpec& spec) {
  auto fail = [&](std::string message) -> sched::Status {
    return sched::Error{fmt::format("model '{}': {}", spec.name, message), std::nullopt};
  };
  if (spec.layers.empty()) return fail("needs at least one layer");
  if (!(std::isfinite(spec.flops_per_sample) && spec.flops_per_sample >= 0) || spec.tokens_per_sample < 0) {
    return fail("flops_per_sample and tokens_per_sample must be finite and non-negative");
  }
  if (spec.tensor_parallel < 1 || spec.tensor_parallel > kMaxTensorParallel) {
    return fail(fmt::format("tensor_parallel must be from 1 to {}, got {}", kMaxTensorParallel, spec.tensor_parallel));
  }
  if (spec.sequence_parallel && spec.tensor_parallel == 1) return fail("sequence_parallel needs tensor_parallel above 1");
  if (spec.tensor_parallel_overlap && spec.tensor_parallel == 1) {
    return fail("tensor_parallel_overlap needs tensor_parallel above 1");
  }
  if (spec.layers.size() > static_cast<std::size_t>(kMaxModelLayers)) {
    return fail(fmt::format("has {} layers; at most {} are supported", spec.layers.size(), kMaxModelLayers));
  }
  const ScaledBytes& input = spec.input_bytes;
  if (auto s = check_scaled(input.fixed_bytes, input.per_sample_bytes, input.measured, "input_bytes"); !s) {
    return fail(s.error().message);
  }
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& layer = spec.layers[i];
    if (layer.name.empty()) return fail(fmt::format("layer {} has no name", i));
    if (!names.insert(layer.name).second) {
      return fail(fmt::format("layer {}: duplicate layer name '{}'", i, layer.name));
    }
    if (auto s = check_layer(layer); !s) return fail(fmt::format("layer {} ('{}'): {}", i, layer.name, s.error().message));
    if (backward_overflows(layer)) {
      return fail(fmt::format("layer {} ('{}'): backward_input + backward_weight overflows 64 bits", i, layer.name));
    }
  }
  if (auto s = check_temporaries(spec); !s) return fail(s.error().message);
  return sched::Ok{};
}

}  // namespace pipeworks::sim
