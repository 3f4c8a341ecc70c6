// A zoo model split over tensor-parallel ranks (see tensor_parallel_model.h).
#include "hw/model/tensor_parallel_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "hw/model/tensor_parallel_layers.h"

namespace pipeworks::hw {
namespace {

enum class LayerSplit : std::uint8_t { kWhole, kColumn, kRow, kEncoder };

// The mlp's blocks fc0..fc{depth-1}, head pair up in order; the transformer splits its encoders.
LayerSplit layer_split(const Model& model, std::size_t layer) {
  if (model.config.kind == ModelKind::kTransformer) {
    const bool encoder = layer > 0 && layer + 1 < model.layers.size();
    return encoder ? LayerSplit::kEncoder : LayerSplit::kWhole;
  }
  if (model.config.kind != ModelKind::kMlp) return LayerSplit::kWhole;
  if (layer % 2 == 1) return LayerSplit::kRow;
  return layer + 1 < model.layers.size() ? LayerSplit::kColumn : LayerSplit::kWhole;
}

ParamShard rows(std::int64_t count, int tp, int rank, std::int64_t offset = 0) {
  const std::int64_t each = count / tp;
  return {0, {{offset + rank * each, each}}};
}

ParamShard columns(std::int64_t count, int tp, int rank) {
  const std::int64_t each = count / tp;
  return {1, {{rank * each, each}}};
}

// One layer's shards in its parameters' order (weight, then bias, of each Linear).
std::vector<ParamShard> layer_shards(const Model& model, std::size_t layer, int tp, int rank) {
  const ModelConfig& c = model.config;
  switch (layer_split(model, layer)) {
    case LayerSplit::kColumn:
      return {rows(c.width, tp, rank), rows(c.width, tp, rank)};
    case LayerSplit::kRow:
      return {columns(c.width, tp, rank), ParamShard{}};
    case LayerSplit::kEncoder: {
      const std::int64_t d = c.model_width;
      ParamShard qkv = rows(d, tp, rank);
      qkv.ranges.push_back({d + qkv.ranges[0].first, d / tp});
      qkv.ranges.push_back({2 * d + qkv.ranges[0].first, d / tp});
      // ln1 (weight, bias), ln2, qkv, out, ff1, ff2: the order EncoderLayer registers them.
      return {ParamShard{}, ParamShard{}, ParamShard{},          ParamShard{},           qkv,
              qkv,          columns(d, tp, rank), ParamShard{}, rows(c.ff_width, tp, rank),
              rows(c.ff_width, tp, rank), columns(c.ff_width, tp, rank), ParamShard{}};
    }
    case LayerSplit::kWhole:
      break;
  }
  return std::vector<ParamShard>(model.layers[layer].module.ptr()->parameters().size());
}

torch::nn::AnyModule split_layer(const Model& model, std::size_t layer,
                                 const std::shared_ptr<TensorParallelGroup>& group) {
  const ModelConfig& c = model.config;
  const auto id = static_cast<std::uint64_t>(layer);
  const bool head = layer + 1 == model.layers.size();  // the mlp's head: no tanh, no dropout, layer id 0
  switch (layer_split(model, layer)) {
    case LayerSplit::kColumn:
    case LayerSplit::kRow: {
      const TensorSplit split = layer_split(model, layer) == LayerSplit::kColumn ? TensorSplit::kColumn : TensorSplit::kRow;
      return torch::nn::AnyModule(TensorParallelDense(c.width, c.width, !head, head ? 0.0 : c.dropout, head ? 0 : id,
                                                      split, group));
    }
    case LayerSplit::kEncoder:
      return torch::nn::AnyModule(TensorParallelEncoder(c.model_width, c.heads, c.ff_width, c.dropout, id, group));
    case LayerSplit::kWhole:
      break;
  }
  return model.layers[layer].module.clone();
}

}  // namespace

std::vector<ParamShard> tensor_parallel_shards(const Model& model, int tp, int rank) {
  std::vector<ParamShard> out;
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    for (ParamShard& shard : layer_shards(model, l, tp, rank)) out.push_back(std::move(shard));
  }
  return out;
}

at::Tensor take_shard(const at::Tensor& whole, const ParamShard& shard) {
  if (shard.whole()) return whole;
  std::vector<torch::Tensor> pieces;
  for (const auto& [first, count] : shard.ranges) pieces.push_back(whole.narrow(shard.dim, first, count));
  return pieces.size() == 1 ? pieces.front().contiguous() : torch::cat(pieces, shard.dim);
}

void put_shard(at::Tensor& whole, const ParamShard& shard, const at::Tensor& piece) {
  const torch::NoGradGuard no_grad;
  if (shard.whole()) {
    whole.copy_(piece);
    return;
  }
  std::int64_t offset = 0;
  for (const auto& [first, count] : shard.ranges) {
    whole.narrow(shard.dim, first, count).copy_(piece.narrow(shard.dim, offset, count));
    offset += count;
  }
}

sched::Result<Model> shard_model(const Model& model, const std::shared_ptr<TensorParallelGroup>& group,
                                 int shard_rank) {
  if (auto s = check_tensor_parallel_split(model.config, group->size()); !s) return s.error();
  const int rank = shard_rank < 0 ? group->rank() : shard_rank;
  Model out;
  out.config = model.config;
  out.loss = model.loss;
  const torch::NoGradGuard no_grad;
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const Layer& layer = model.layers[l];
    torch::nn::AnyModule split = split_layer(model, l, group);
    const std::vector<torch::Tensor> whole = layer.module.ptr()->parameters();
    const std::vector<torch::Tensor> mine = split.ptr()->parameters();
    const std::vector<ParamShard> shards = layer_shards(model, l, group->size(), rank);
    if (whole.size() != mine.size() || shards.size() != mine.size()) {
      return sched::Error{fmt::format("layer '{}': {} parameters, its tensor-parallel form {}", layer.name,
                                      whole.size(), mine.size())};
    }
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const torch::Tensor slice = take_shard(whole[i], shards[i]);
      if (slice.sizes() != mine[i].sizes()) {
        return sched::Error{fmt::format("layer '{}': parameter {} is {} on a rank, its slice {}", layer.name, i,
                                        fmt::join(mine[i].sizes(), "x"), fmt::join(slice.sizes(), "x"))};
      }
      mine[i].copy_(slice);
    }
    out.layers.push_back({layer.name, std::move(split)});
  }
  return out;
}

}  // namespace pipeworks::hw
