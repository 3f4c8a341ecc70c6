// Per-stage forward and backward temporaries (see stage_memory.h).
#include "hw/predict/stage_memory.h"

#include <algorithm>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/compute_devices.h"
#include "hw/exec/counting_allocator.h"
#include "hw/model/model_zoo.h"
#include "hw/model/torch_compat.h"
#include "hw/run/describe_model.h"

namespace pipeworks::hw {
namespace {

// The counter used here, apart from executors, the profiler and describe_model (on GPUs: the
// GPU that device would compute on).
constexpr int kStageDevice = kMaxCountedDevices - 3;

// Stage s's layers on `input`, and on the last stage the loss, as the executor's F computes it.
torch::Tensor forward_stage(Model& model, const sim::Partition& partition, int s, const torch::Tensor& input,
                            const torch::Tensor& targets, bool is_last) {
  torch::Tensor out = input;
  for (int l = partition.begin(s); l < partition.end(s); ++l) {
    out = model.layers[static_cast<std::size_t>(l)].module.forward(out);
  }
  return is_last ? compute_loss(model.loss, out, targets) : out;
}

}  // namespace

sched::Result<std::vector<StageExtraBytes>> measure_stage_extra_bytes(const ModelConfig& config,
                                                                      const sim::Partition& partition,
                                                                      int microbatch_size, int repetitions,
                                                                      const std::string& device) {
  if (microbatch_size < 1 || repetitions < 1) {
    return sched::Error{"stage memory: micro-batch size and repetitions must be >= 1"};
  }
  auto where_or = make_compute_devices(device);
  if (!where_or) return where_or.error();
  const ComputeDevices& where = **where_or;
  install_counting_allocator();
  auto model = build_model(config);
  if (!model) return model.error();
  if (partition.boundaries.empty() || partition.boundaries.back() != static_cast<int>(model->layers.size())) {
    return sched::Error{fmt::format("stage memory: the partition does not cut the model's {} layers",
                                    model->layers.size())};
  }
  const torch::Device on = where.device_of(kStageDevice);
  const auto above_live = [&] { return where.peak_bytes(kStageDevice) - where.live_bytes(kStageDevice); };
  for (Layer& l : model->layers) {
    l.module.ptr()->to(on);
    l.module.ptr()->train();
  }
  Batch batch = make_batch(config, microbatch_size, config.seed);
  batch.inputs = batch.inputs.to(on);
  batch.targets = batch.targets.to(on);
  std::vector<StageExtraBytes> extra(static_cast<std::size_t>(partition.num_stages()));
  try {
    torch::Tensor stage_input = batch.inputs;  // the data for stage 0, then each stage's output
    for (int s = 0; s < partition.num_stages(); ++s) {
      const bool is_last = s + 1 == partition.num_stages();
      // Pass 0 warms up; then odd passes start without gradients (first), even ones with (later).
      for (int pass = 0; pass < 1 + 2 * repetitions; ++pass) {
        const bool first = pass % 2 == 1;
        if (first) {
          for (int l = partition.begin(s); l < partition.end(s); ++l) {
            for (torch::Tensor p : model->layers[static_cast<std::size_t>(l)].module.ptr()->parameters()) {
              compat::drop_grad(p);
            }
          }
        }
        const DeviceScope scope(kStageDevice);
        const torch::Tensor input =
            s > 0 && stage_input.is_floating_point() ? stage_input.detach().requires_grad_(true) : stage_input;
        StageExtraBytes& stage = extra[static_cast<std::size_t>(s)];
        if (pass > 0) {  // the forward without the graph, its output dropped again
          const torch::NoGradGuard no_grad;
          where.reset_peak(kStageDevice);
          const torch::Tensor kept = forward_stage(*model, partition, s, input, batch.targets, is_last);
          stage.forward_no_grad = std::max(stage.forward_no_grad, above_live());
        }
        where.reset_peak(kStageDevice);
        torch::Tensor out = forward_stage(*model, partition, s, input, batch.targets, is_last);
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
        if (pass == 2 * repetitions && !is_last) stage_input = out.detach();
      }
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("stage memory: {}", e.what())};
  }
  return extra;
}

}  // namespace pipeworks::hw
