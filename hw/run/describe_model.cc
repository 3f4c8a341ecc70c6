// describe_model (see describe_model.h): each layer run once at two batch sizes under the counting
// allocator; the difference gives the per-sample bytes, the rest the fixed bytes.
#include "hw/run/describe_model.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/counting_allocator.h"
#include "hw/model/torch_errors.h"

namespace pipeworks::hw {
namespace {

// The counter describe_model measures with (kept apart from the low device numbers executors use).
constexpr int kProbeDevice = kModelProbeCounter;

}  // namespace

namespace {

struct Probe {
  torch::Tensor output;
  sched::Bytes retained_bytes = 0;
};

// Runs `layer` on `input` with the graph kept; bytes the forward left allocated (its output and
// what autograd saved for backward).
Probe probe_layer(Layer& layer, const torch::Tensor& input) {
  const DeviceScope scope(kProbeDevice);
  const sched::Bytes before = live_bytes(kProbeDevice);
  Probe probe;
  probe.output = layer.module.forward(input);
  probe.retained_bytes = live_bytes(kProbeDevice) - before;
  return probe;
}

sim::ScaledBytes scaled(sched::Bytes at_one, sched::Bytes at_two) {
  return {at_one - (at_two - at_one), at_two - at_one};
}

}  // namespace

sched::Result<sim::ModelSpec> describe_model(const Model& model, int probe_batch) {
  if (probe_batch < 1) return sched::Error{"describe_model: probe_batch must be >= 1"};
  install_counting_allocator();
  Model copy = clone_model(model);
  const Batch one = make_batch(model.config, probe_batch, model.config.seed);
  const Batch two = make_batch(model.config, 2 * probe_batch, model.config.seed);
  sim::ModelSpec spec;
  spec.name = model_display_name(model.config);
  spec.description = model.config.kind == ModelKind::kScripted
                         ? fmt::format("TorchScript module {} ({} layers)", model.config.scripted.path, copy.layers.size())
                         : fmt::format("pipeworks hw model zoo: {} ({} layers)", spec.name, copy.layers.size());
  auto per_sample = [&](sched::Bytes a, sched::Bytes b) {
    const sim::ScaledBytes s = scaled(a, b);
    return sim::ScaledBytes{s.fixed_bytes, s.per_sample_bytes / probe_batch};
  };
  const auto input_bytes = [](const torch::Tensor& t) { return static_cast<sched::Bytes>(t.nbytes()); };
  spec.input_bytes = per_sample(input_bytes(one.inputs), input_bytes(two.inputs));
  torch::Tensor x1 = one.inputs;
  torch::Tensor x2 = two.inputs;
  try {
    for (Layer& layer : copy.layers) {
      if (x1.is_floating_point()) {
        x1 = x1.detach().requires_grad_(true);
        x2 = x2.detach().requires_grad_(true);
      }
      Probe p1 = probe_layer(layer, x1);
      Probe p2 = probe_layer(layer, x2);
      sim::LayerSpec layer_spec;
      layer_spec.name = layer.name;
      layer_spec.output_bytes = per_sample(input_bytes(p1.output), input_bytes(p2.output));
      layer_spec.stash_bytes = per_sample(p1.retained_bytes, p2.retained_bytes);
      for (const auto& parameter : layer.module.ptr()->parameters()) {
        layer_spec.param_bytes += static_cast<sched::Bytes>(parameter.nbytes());
      }
      spec.layers.push_back(std::move(layer_spec));
      x1 = p1.output;
      x2 = p2.output;
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("describe_model: {}", torch_error_message(e))};
  }
  return spec;
}

}  // namespace pipeworks::hw
