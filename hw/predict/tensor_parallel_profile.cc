// Counts a tensor-parallel rank's collectives per layer (see tensor_parallel_profile.h).
#include "hw/predict/tensor_parallel_profile.h"

#include <memory>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/model/model_zoo.h"
#include "hw/model/tensor_parallel_group.h"
#include "hw/model/tensor_parallel_model.h"
#include "hw/model/torch_errors.h"
#include "hw/predict/pass_timing.h"

namespace pipeworks::hw {

sched::Result<std::vector<LayerCollectives>> count_layer_collectives(const ModelConfig& config, int tp,
                                                                     int microbatch_size) {
  if (tp < 2 || microbatch_size < 1) {
    return sched::Error{fmt::format("counting collectives: tp {} (>= 2), micro-batch size {} (>= 1)", tp,
                                    microbatch_size)};
  }
  auto whole = build_model(config);
  if (!whole) return whole.error();
  auto group = std::make_shared<AloneTensorGroup>(tp);
  auto shard = shard_model(*whole, group);
  if (!shard) return shard.error();
  const Batch batch = make_batch(config, microbatch_size, config.seed);
  std::vector<LayerCollectives> out;
  torch::Tensor x = batch.inputs;
  const std::size_t n = shard->layers.size();
  for (std::size_t l = 0; l < n; ++l) {
    Layer& layer = shard->layers[l];
    const LayerRun run{layer, l == 0, l + 1 == n, shard->loss, batch.targets};
    LayerCollectives counted;
    try {
      const torch::Tensor input = fresh_input(x, l == 0);
      group->reset_counts();
      const torch::Tensor output = run.forward(input);
      counted.forward = group->calls();
      counted.bytes = group->largest_bytes();
      group->reset_counts();
      torch::autograd::backward({output}, {torch::ones_like(output)});
      counted.backward = group->calls();
      counted.bytes = std::max(counted.bytes, group->largest_bytes());
      x = output.detach();
    } catch (const std::exception& e) {
      return sched::Error{fmt::format("counting collectives: layer {}: {}", layer.name, torch_error_message(e))};
    }
    out.push_back(counted);
  }
  return out;
}

sched::Status add_layer_collectives(const ModelConfig& model, int tp, const std::vector<int>& sizes,
                                    std::vector<LayerProfile>& layers) {
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    auto counted = count_layer_collectives(model, tp, sizes[i]);
    if (!counted) return counted.error();
    if (counted->size() != layers.size()) {
      return sched::Error{fmt::format("counting collectives: {} layers, the profile has {}", counted->size(),
                                      layers.size())};
    }
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const LayerCollectives& c = (*counted)[l];
      LayerProfile& layer = layers[l];
      if (i > 0 && (c.forward != layer.forward_collectives || c.backward != layer.backward_collectives)) {
        return sched::Error{fmt::format("layer {}: {} forward and {} backward all-reduces at micro-batch size {}, {} "
                                        "and {} at {}", layer.name, c.forward, c.backward, sizes[i],
                                        layer.forward_collectives, layer.backward_collectives, sizes[0])};
      }
      layer.forward_collectives = c.forward;
      layer.backward_collectives = c.backward;
      layer.samples.at(i).collective_bytes = c.bytes;
    }
  }
  return sched::Ok{};
}

}  // namespace pipeworks::hw
