// hw/model/ -- the model room: what a pipeline trains, and nothing about how. LibTorch layers
// (layers.h), the model zoo and its synthetic data (this file, model_config.h), the stage cells a
// partition cuts the layers into (stage_cell.h), the optimizers (training.h) and the
// non-pipelined reference the pipelined gradients are checked against (reference.h). It
// depends on LibTorch, sched/ and sim/'s spec types only; every other hw room builds on it.
//
// The model zoo: mlp, transformer and convnet as ordered lists of layers (the units a
// partition cuts at), their synthetic data from a fixed seed, the loss computed on the last
// stage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/modules/container/any.h>

#include "hw/model/model_config.h"
#include "sched/result.h"

namespace pipeworks::hw {

struct Layer {
  std::string name;
  torch::nn::AnyModule module;  // Tensor -> Tensor
};

struct Model {
  ModelConfig config;
  std::vector<Layer> layers;
  LossKind loss = LossKind::kMse;
};

// Builds the model with parameters drawn from config.seed (sets the global CPU seed).
sched::Result<Model> build_model(const ModelConfig& config);

// A deep copy: every layer's parameters cloned, nothing shared with `model`.
Model clone_model(const Model& model);

// The mean loss of `output` against `target`.
torch::Tensor compute_loss(LossKind kind, const torch::Tensor& output, const torch::Tensor& target);

// One mini-batch of synthetic inputs and targets, drawn from its own generator seeded by `seed`.
struct Batch {
  torch::Tensor inputs;
  torch::Tensor targets;
};
Batch make_batch(const ModelConfig& config, int batch_size, std::uint64_t seed);

// The seed of a run's step `step` (0-based): its batch (make_batch) and its dropout masks.
std::uint64_t step_seed(const ModelConfig& config, int step);

// Splits a batch into `num_microbatches` equal micro-batches (batch size must divide evenly).
struct MicroBatches {
  std::vector<torch::Tensor> inputs;
  std::vector<torch::Tensor> targets;
  int size() const { return static_cast<int>(inputs.size()); }
};
sched::Result<MicroBatches> split_batch(const Batch& batch, int num_microbatches);

}  // namespace pipeworks::hw
