// Per-stage forward and backward temporaries (see stage_memory.h).
#include "hw/predict/stage_memory.h"

#include <algorithm>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/compute_devices.h"
#include "hw/exec/counting_allocator.h"
#include "hw/model/model_zoo.h"
#include "hw/model/tensor_parallel_group.h"
#include "hw/model/tensor_parallel_model.h"
#include "hw/model/torch_compat.h"
#include "hw/model/torch_errors.h"
#include "hw/run/describe_model.h"
#include "hw/run/device_choice.h"

namespace pipeworks::hw {
namespace {

// The counter used here, apart from executors, the profiler and describe_model (on GPUs: the
// GPU that device would compute on).
constexpr int kStageDevice = kStageMemoryCounter;

// Layers [begin, end) on `input`, and with `is_last` the loss, as the executor's F computes it.
torch::Tensor forward_layers(Model& model, int begin, int end, const torch::Tensor& input,
                             const torch::Tensor& targets, bool is_last) {
  torch::Tensor out = input;
  for (int l = begin; l < end; ++l) out = model.layers[static_cast<std::size_t>(l)].module.forward(out);
  return is_last ? compute_loss(model.loss, out, targets) : out;
}

void drop_grads(Model& model, int begin, int end) {
  for (int l = begin; l < end; ++l) {
    for (torch::Tensor p : model.layers[static_cast<std::size_t>(l)].module.ptr()->parameters()) compat::drop_grad(p);
  }
}

// The temporaries of layers [begin, end) run as one stage on `stage_input` (the output of the
// layers before; a stage input requires grad as the executor makes it): pass 0 warms up, then
// odd passes start without gradients (first), even ones with (later); the largest of each.
// Leaves the range's parameter gradients dropped.
StageExtraBytes measure_layers(Model& model, const ComputeDevices& where, const torch::Tensor& stage_input,
                               const torch::Tensor& targets, int begin, int end, int repetitions) {
  const bool is_last = end == static_cast<int>(model.layers.size());
  const auto above_live = [&] { return where.peak_bytes(kStageDevice) - where.live_bytes(kStageDevice); };
  StageExtraBytes stage;
  for (int pass = 0; pass < 1 + 2 * repetitions; ++pass) {
    const bool first = pass % 2 == 1;
    if (first) drop_grads(model, begin, end);
    const DeviceScope scope(kStageDevice);
    const torch::Tensor input =
        begin > 0 && stage_input.is_floating_point() ? stage_input.detach().requires_grad_(true) : stage_input;
    if (pass > 0) {  // the forward without the graph, its output dropped again
      const torch::NoGradGuard no_grad;
      where.reset_peak(kStageDevice);
      const torch::Tensor kept = forward_layers(model, begin, end, input, targets, is_last);
      stage.forward_no_grad = std::max(stage.forward_no_grad, above_live());
    }
    where.reset_peak(kStageDevice);
    torch::Tensor out = forward_layers(model, begin, end, input, targets, is_last);
    if (pass > 0) stage.forward = std::max(stage.forward, above_live());
    const torch::Tensor grad = torch::ones_like(out);
    const sched::Bytes before_backward = where.live_bytes(kStageDevice);
    where.reset_peak(kStageDevice);
    torch::autograd::backward({out}, {grad});
    const sched::Bytes above = where.peak_bytes(kStageDevice) - before_backward;
    if (pass > 0) {
      sched::Bytes& slot = first ? stage.first : stage.later;
      slot = std::max(slot, above);
    }
  }
  drop_grads(model, begin, end);
  return stage;
}

// The model built for measuring on `where`, in training mode (rank 0's shard alone with
// `tensor_parallel` above 1).
sched::Result<Model> model_on(const ModelConfig& config, const ComputeDevices& where, int tensor_parallel = 1) {
  install_counting_allocator();
  auto model = build_model(config);
  if (!model) return model.error();
  if (tensor_parallel > 1) {
    model = shard_model(*model, std::make_shared<AloneTensorGroup>(tensor_parallel));
    if (!model) return model.error();
  }
  for (Layer& l : model->layers) {
    l.module.ptr()->to(where.device_of(kStageDevice));
    l.module.ptr()->train();
  }
  return model;
}

}  // namespace

sched::Result<std::vector<StageExtraBytes>> measure_stage_extra_bytes(const ModelConfig& config,
                                                                      const sim::Partition& partition,
                                                                      int microbatch_size, int repetitions,
                                                                      DeviceKind device, int tensor_parallel) {
  if (microbatch_size < 1 || repetitions < 1) {
    return sched::Error{"stage memory: micro-batch size and repetitions must be >= 1"};
  }
  auto where_or = make_compute_devices(device);
  if (!where_or) return where_or.error();
  const ComputeDevices& where = **where_or;
  auto model = model_on(config, where, tensor_parallel);
  if (!model) return model.error();
  if (partition.boundaries.empty() || partition.boundaries.back() != static_cast<int>(model->layers.size())) {
    return sched::Error{fmt::format("stage memory: the partition does not cut the model's {} layers",
                                    model->layers.size())};
  }
  const torch::Device on = where.device_of(kStageDevice);
  Batch batch = make_batch(config, microbatch_size, config.seed);
  batch.inputs = batch.inputs.to(on);
  batch.targets = batch.targets.to(on);
  std::vector<StageExtraBytes> extra;
  try {
    torch::Tensor stage_input = batch.inputs;  // the data for stage 0, then each stage's output
    for (int s = 0; s < partition.num_stages(); ++s) {
      extra.push_back(measure_layers(*model, where, stage_input, batch.targets, partition.begin(s), partition.end(s),
                                     repetitions));
      const torch::NoGradGuard no_grad;
      if (s + 1 < partition.num_stages()) {
        stage_input = forward_layers(*model, partition.begin(s), partition.end(s), stage_input, batch.targets, false);
      }
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("stage memory: {}", torch_error_message(e))};
  }
  return extra;
}

std::int64_t range_layer_runs(int layers, int max_layers) {
  std::int64_t runs = 0;
  for (std::int64_t n = 1; n <= std::min(layers, max_layers); ++n) runs += (layers - n + 1) * n;
  return runs;
}

int measured_range_layers(int layers, int requested) {
  if (requested > 0) return std::min(requested, layers);
  int w = 1;
  while (w < layers && range_layer_runs(layers, w + 1) <= kRangeLayerBudget) ++w;
  return w;
}

sched::Result<std::vector<RangeExtraBytes>> measure_range_extra_bytes(
    const ModelConfig& config, int microbatch_size, int repetitions, const ComputeDevices& where, int max_layers,
    const std::function<void(std::int64_t, std::int64_t)>& progress) {
  if (microbatch_size < 1 || repetitions < 1 || max_layers < 1) {
    return sched::Error{"stage memory: micro-batch size, repetitions and range length must be >= 1"};
  }
  auto model = model_on(config, where);
  if (!model) return model.error();
  const torch::Device on = where.device_of(kStageDevice);
  Batch batch = make_batch(config, microbatch_size, config.seed);
  batch.inputs = batch.inputs.to(on);
  batch.targets = batch.targets.to(on);
  const int layers = static_cast<int>(model->layers.size());
  const std::int64_t total = range_layer_runs(layers, max_layers);
  std::int64_t done = 0;
  std::int64_t next_report = total / 10;
  std::vector<RangeExtraBytes> out;
  try {
    torch::Tensor input = batch.inputs;  // the output of layers [0, begin)
    for (int begin = 0; begin < layers; ++begin) {
      for (int end = begin + 1; end <= std::min(layers, begin + max_layers); ++end) {
        out.push_back({begin, end, measure_layers(*model, where, input, batch.targets, begin, end, repetitions)});
        done += end - begin;
      }
      if (progress && done >= next_report && done < total) {
        progress(done, total);
        next_report = done + total / 10;
      }
      const torch::NoGradGuard no_grad;
      input = forward_layers(*model, begin, begin + 1, input, batch.targets, false);
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("stage memory: {}", torch_error_message(e))};
  }
  return out;
}

}  // namespace pipeworks::hw
