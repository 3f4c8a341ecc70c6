// build_cost_model: sums layer costs per stage, scales them by device speed and lays out the
// links of the two-level topology (rules in cost_model_builder.h).
#include "sim/plan/cost_model_builder.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sched/schedule.h"
#include "sim/engine/collectives.h"
#include "sim/engine/op_costs.h"

namespace pipeworks::sim {
namespace {

sched::Error error(std::string message) { return sched::Error{std::move(message), std::nullopt}; }

// Sum over layers [begin, end) of `part(layer)` at the micro-batch size, overflow-checked.
template <class Part>
sched::Result<std::int64_t> sum_at(const ModelSpec& model, int begin, int end, int microbatch_size, Part part) {
  std::int64_t total = 0;
  for (int l = begin; l < end; ++l) {
    const LayerSpec& layer = model.layers[static_cast<std::size_t>(l)];
    auto value = part(layer).at(microbatch_size);
    if (!value) return sched::Error{fmt::format("layer '{}': {}", layer.name, value.error().message), std::nullopt};
    if (__builtin_add_overflow(total, *value, &total)) {
      return error(fmt::format("stage costs for layers [{},{}) overflow 64 bits", begin, end));
    }
  }
  return total;
}

sched::Result<Nanoseconds> scaled_by_speed(sched::Result<Nanoseconds> ns, double speed) {
  if (!ns) return ns;
  const double value = std::round(static_cast<double>(*ns) / speed);
  if (!(value < 9.2e18)) return error("stage time overflows 64 bits after dividing by device speed");
  return static_cast<Nanoseconds>(value);
}

// Layers [begin, end) forward without the graph (each layer's forward_no_grad, else its
// forward); 0 when no layer of the stage states one (the simulator then uses forward_ns).
sched::Result<Nanoseconds> no_grad_forward(const ModelSpec& model, int begin, int end, int m, double speed) {
  bool stated = false;
  for (int l = begin; l < end; ++l) stated = stated || model.layers[static_cast<std::size_t>(l)].forward_no_grad;
  if (!stated) return Nanoseconds{0};
  return scaled_by_speed(
      sum_at(model, begin, end, m, [](const LayerSpec& l) { return l.forward_no_grad.value_or(l.forward); }), speed);
}

// Layers [begin, end) run as a whole backward (B), where some layer states what that costs
// apart from its I and W (LayerSpec::whole_backward; the others count I + W); 0 when none does
// (B is then the stage's I + W).
sched::Result<Nanoseconds> whole_backward(const ModelSpec& model, int begin, int end, int m, double speed) {
  bool stated = false;
  for (int l = begin; l < end; ++l) stated = stated || model.layers[static_cast<std::size_t>(l)].whole_backward;
  if (!stated) return Nanoseconds{0};
  return scaled_by_speed(sum_at(model, begin, end, m, [](const LayerSpec& l) { return l.backward(); }), speed);
}

// The tensor-parallel collectives of one layer in one forward and in one input-gradient backward,
// on the group's link inside the node (tensor_parallel_collective_ns); with overlap, only what
// they take beyond the pass's own compute (at the device's speed).
struct PassCollectives {
  Nanoseconds forward_ns = 0;
  Nanoseconds backward_ns = 0;
};
sched::Result<PassCollectives> layer_collectives(const ModelSpec& model, const LayerSpec& layer, int m, const Link& link,
                                                 double speed) {
  const TensorParallelSplit& split = *layer.tensor_parallel;
  auto bytes = split.collective_bytes.at(m);
  if (!bytes) return bytes.error();
  auto one = tensor_parallel_collective_ns(*bytes, model.tensor_parallel, link, model.sequence_parallel);
  if (!one) return sched::Error{fmt::format("layer '{}': {}", layer.name, one.error().message), std::nullopt};
  PassCollectives pass;
  if (__builtin_mul_overflow(*one, split.forward_collectives, &pass.forward_ns) ||
      __builtin_mul_overflow(*one, split.backward_collectives, &pass.backward_ns) || pass.forward_ns > detail::kMaxTime ||
      pass.backward_ns > detail::kMaxTime) {
    return error(fmt::format("layer '{}': its tensor-parallel collectives take too long", layer.name));
  }
  if (!model.tensor_parallel_overlap) return pass;
  auto forward = scaled_by_speed(layer.forward.at(m), speed);
  auto input_grad = scaled_by_speed(layer.backward_input.at(m), speed);
  if (!forward) return forward.error();
  if (!input_grad) return input_grad.error();
  pass.forward_ns = std::max<Nanoseconds>(0, pass.forward_ns - *forward);
  pass.backward_ns = std::max<Nanoseconds>(0, pass.backward_ns - *input_grad);
  return pass;
}

// The collectives of layers [begin, end) per pass; {0, 0} for tp 1.
sched::Result<PassCollectives> tensor_parallel_collectives(const ModelSpec& model, int begin, int end, int m,
                                                           const Link& link, double speed) {
  PassCollectives total;
  if (model.tensor_parallel == 1) return total;
  for (int l = begin; l < end; ++l) {
    const LayerSpec& layer = model.layers[static_cast<std::size_t>(l)];
    if (!layer.tensor_parallel) continue;
    auto pass = layer_collectives(model, layer, m, link, speed);
    if (!pass) return pass.error();
    total.forward_ns += pass->forward_ns;  // each term <= kMaxTime: the sum stays in int64
    total.backward_ns += pass->backward_ns;
    if (total.forward_ns > detail::kMaxTime || total.backward_ns > detail::kMaxTime) {
      return error(fmt::format("tensor-parallel collectives of layers [{},{}) take too long", begin, end));
    }
  }
  return total;
}

// Adds the stage's tensor-parallel collectives to the passes that run them: F, R and a no-grad F
// the forward's, I and B the backward's.
sched::Status add_collectives(StageCost& cost, const PassCollectives& c) {
  cost.forward_ns += c.forward_ns;
  cost.recompute_ns += c.forward_ns;
  if (cost.forward_no_grad_ns > 0) cost.forward_no_grad_ns += c.forward_ns;
  cost.backward_ns += c.backward_ns;
  (cost.backward_input_ns > 0 ? cost.backward_input_ns : cost.backward_weight_ns) += c.backward_ns;
  for (const Nanoseconds t : {cost.forward_ns, cost.backward_ns}) {
    if (t > detail::kMaxTime) return error("stage time with tensor-parallel collectives overflows");
  }
  return sched::Ok{};
}

sched::Result<StageCost> stage_cost(const ModelSpec& model, int begin, int end, int m, double speed,
                                    OptimizerKind optimizer, const Link& tensor_link) {
  StageCost cost;
  auto forward = scaled_by_speed(sum_at(model, begin, end, m, [](const LayerSpec& l) { return l.forward; }), speed);
  auto input_grad =
      scaled_by_speed(sum_at(model, begin, end, m, [](const LayerSpec& l) { return l.backward_input; }), speed);
  auto weight_grad =
      scaled_by_speed(sum_at(model, begin, end, m, [](const LayerSpec& l) { return l.backward_weight; }), speed);
  auto whole = whole_backward(model, begin, end, m, speed);
  auto stash = sum_at(model, begin, end, m, [](const LayerSpec& l) { return l.stash_bytes; });
  auto input = begin == 0 ? model.input_bytes.at(m)
                          : model.layers[static_cast<std::size_t>(begin - 1)].output_bytes.at(m);
  auto output = model.layers[static_cast<std::size_t>(end - 1)].output_bytes.at(m);
  for (const auto* r : {&forward, &input_grad, &weight_grad, &whole, &stash, &input, &output}) {
    if (!*r) return r->error();
  }
  if (*whole > 0) {
    cost.backward_ns = *whole;
  } else if (__builtin_add_overflow(*input_grad, *weight_grad, &cost.backward_ns)) {
    return error("backward time overflows");
  }
  cost.forward_ns = *forward;
  cost.backward_input_ns = *input_grad;
  cost.backward_weight_ns = *weight_grad;
  if (begin == 0) {  // the model's input needs no gradient: a split backward's I has nothing to do, W is all of B
    cost.backward_input_ns = 0;
    cost.backward_weight_ns = cost.backward_ns;
  }
  cost.recompute_ns = *forward;
  if (auto no_grad = no_grad_forward(model, begin, end, m, speed); !no_grad) {
    return no_grad.error();
  } else {
    cost.forward_no_grad_ns = *no_grad;
  }
  cost.input_bytes = *input;
  cost.output_bytes = *output;
  cost.stash_bytes = *stash;
  for (int l = begin; l < end; ++l) {
    if (__builtin_add_overflow(cost.param_bytes, model.layers[static_cast<std::size_t>(l)].param_bytes,
                               &cost.param_bytes)) {
      return error(fmt::format("parameter bytes of layers [{},{}) overflow 64 bits", begin, end));
    }
  }
  cost.grad_bytes = gradient_bytes(cost.param_bytes);
  cost.optimizer_bytes = optimizer_state_bytes(cost.param_bytes, model.param_dtype, optimizer);
  auto collectives = tensor_parallel_collectives(model, begin, end, m, tensor_link, speed);
  if (!collectives) return collectives.error();
  if (auto added = add_collectives(cost, *collectives); !added) return added.error();
  return cost;
}

// Links in order of first use, scanning (a, b) row by row; cost-model device a is cluster device
// devices[a].
void add_links(CostModel& cost, const ClusterSpec& cluster, const std::vector<int>& devices) {
  const auto D = static_cast<std::size_t>(cost.num_devices);
  std::vector<int> egress(static_cast<std::size_t>(cluster.num_nodes()) * static_cast<std::size_t>(cluster.inter_node_links), -1);
  cost.link_of.assign(D * D, -1);
  for (std::size_t a = 0; a < D; ++a) {
    const int from = devices[a];
    const int node = cluster.node_of(from);
    for (std::size_t b = 0; b < D; ++b) {
      if (a == b) continue;
      int& slot = cost.link_of[a * D + b];
      if (node == cluster.node_of(devices[b])) {
        slot = static_cast<int>(cost.links.size());
        cost.links.push_back(Link{cluster.intra_node.latency_ns, cluster.intra_node.bandwidth_bytes_per_s,
                                  cluster.intra_node.send_overhead_ns});
        continue;
      }
      const int nic = (from % cluster.devices_per_node) % cluster.inter_node_links;
      int& shared = egress[static_cast<std::size_t>(node) * static_cast<std::size_t>(cluster.inter_node_links) +
                           static_cast<std::size_t>(nic)];
      if (shared < 0) {
        shared = static_cast<int>(cost.links.size());
        cost.links.push_back(Link{cluster.inter_node.latency_ns, cluster.inter_node.bandwidth_bytes_per_s,
                                  cluster.inter_node.send_overhead_ns});
      }
      slot = shared;
    }
  }
}

}  // namespace

sched::Result<CostModel> build_cost_model(const ModelSpec& model, const ClusterSpec& cluster,
                                          const Partition& partition, const std::vector<int>& placement,
                                          int microbatch_size, OptimizerKind optimizer) {
  if (placement.empty()) return error("placement has no entries");
  for (std::size_t s = 0; s < placement.size(); ++s) {
    if (placement[s] < 0 || placement[s] >= cluster.num_devices()) {
      return error(fmt::format("stage {} is placed on device {}, but cluster '{}' has devices 0..{}", s, placement[s],
                               cluster.name, cluster.num_devices() - 1));
    }
  }
  ParallelLayout layout;
  layout.pp = *std::max_element(placement.begin(), placement.end()) + 1;
  layout.tp = model.tensor_parallel;
  return build_cost_model(model, cluster, partition, placement, microbatch_size, optimizer, layout, {});
}

sched::Result<CostModel> build_cost_model(const ModelSpec& model, const ClusterSpec& cluster,
                                          const Partition& partition, const std::vector<int>& placement,
                                          int microbatch_size, OptimizerKind optimizer, const ParallelLayout& layout,
                                          const DataParallelOptions& options) {
  for (const auto& status : {check_model_spec(model), check_cluster_spec(cluster)}) {
    if (!status) return status.error();
  }
  return build_cost_model_of_checked(model, cluster, partition, placement, microbatch_size, optimizer, layout, options);
}

sched::Result<CostModel> build_cost_model_of_checked(const ModelSpec& model, const ClusterSpec& cluster,
                                                     const Partition& partition, const std::vector<int>& placement,
                                                     int microbatch_size, OptimizerKind optimizer,
                                                     const ParallelLayout& layout, const DataParallelOptions& options) {
  auto valid = explicit_partition(partition.boundaries, model.num_layers());
  if (!valid) return error(fmt::format("partition does not fit model '{}': {}", model.name, valid.error().message));
  if (microbatch_size < 1) return error(fmt::format("micro-batch size must be at least 1, got {}", microbatch_size));
  const int K = partition.num_stages();
  if (placement.size() != static_cast<std::size_t>(K)) {
    return error(fmt::format("placement has {} entries for {} stages", placement.size(), K));
  }
  if (auto st = check_layout(layout, cluster.num_devices(), cluster.devices_per_node); !st) return st.error();
  if (model.tensor_parallel != layout.tp) {
    return error(fmt::format("model '{}' is costed for tensor parallelism {}, the layout has tp {}", model.name,
                             model.tensor_parallel, layout.tp));
  }
  const LinkSpec& tensor = cluster.tensor_parallel_link.value_or(cluster.intra_node);
  const Link tensor_link{tensor.latency_ns, tensor.bandwidth_bytes_per_s};
  const std::vector<int> devices = replica_devices(layout);
  for (int s = 0; s < K; ++s) {
    const int d = placement[static_cast<std::size_t>(s)];
    if (d < 0 || d >= layout.pp) {
      return error(fmt::format("stage {} is placed on device {}, but {} has pipeline ranks 0..{}", s, d,
                               layout_text(layout), layout.pp - 1));
    }
  }
  CostModel cost;
  cost.microbatch_size = microbatch_size;
  cost.comm_mode = cluster.comm_mode;
  cost.per_action_overhead_ns = cluster.dispatch_overhead_ns;
  for (int s = 0; s < K; ++s) {
    const DeviceSpec& device =
        cluster.devices[static_cast<std::size_t>(devices[static_cast<std::size_t>(placement[static_cast<std::size_t>(s)])])];
    auto stage = stage_cost(model, partition.begin(s), partition.end(s), microbatch_size, device.relative_speed,
                            optimizer, tensor_link);
    if (!stage) return sched::Error{fmt::format("stage {}: {}", s, stage.error().message), std::nullopt};
    cost.stages.push_back(*stage);
  }
  const int D = layout.pp;
  if (auto count = check_cost_model_devices(D); !count) return error(count.error().message);
  cost.num_devices = D;
  for (int d = 0; d < D; ++d) {
    cost.device_memory_bytes.push_back(cluster.devices[static_cast<std::size_t>(devices[static_cast<std::size_t>(d)])].memory_bytes);
  }
  if (cluster.contention_factor > 1.0) cost.contention_factor.assign(static_cast<std::size_t>(D), cluster.contention_factor);
  cost.compute_slots = cluster.compute_slots();
  cost.compute_slice_ns = cluster.core_slice_ns;
  cost.idle_slowdown = cluster.idle_slowdown;
  cost.idle_slowdown_after_ns = cluster.idle_slowdown_after_ns;
  cost.overlapped_pass_share = cluster.overlapped_pass_share;
  if (cluster.contention_factor > 1.0 || cost.compute_slots > 0) {
    for (int d = 0; d < D; ++d) cost.contention_group.push_back(cluster.node_of(devices[static_cast<std::size_t>(d)]));
  }
  add_links(cost, cluster, devices);
  if (auto st = add_data_parallel_costs(cost, placement, model, cluster, layout, optimizer, options); !st) {
    return st.error();
  }
  return cost;
}

sched::Result<std::vector<int>> default_placement(int num_stages, const ClusterSpec& cluster) {
  if (num_stages < 1) return error(fmt::format("need at least one stage, got {}", num_stages));
  if (num_stages > cluster.num_devices()) {
    return error(fmt::format("{} stages do not fit on cluster '{}' with {} devices (one stage per device)",
                             num_stages, cluster.name, cluster.num_devices()));
  }
  return sched::identity_placement(num_stages);
}

}  // namespace pipeworks::sim
