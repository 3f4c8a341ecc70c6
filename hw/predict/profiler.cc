// Layer-by-layer profiling of a model-zoo model and the fit into a ModelSpec (see profiler.h).
#include "hw/predict/profiler.h"

#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "hw/exec/counting_allocator.h"
#include "hw/exec/threads.h"
#include "hw/model/model_zoo.h"
#include "hw/model/torch_compat.h"
#include "hw/run/describe_model.h"

namespace pipeworks::hw {
namespace {

// The counter the profiler measures bytes with (apart from executor devices and describe_model's).
constexpr int kProfileDevice = kMaxCountedDevices - 2;

using Clock = std::chrono::steady_clock;

sched::Nanoseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

struct LayerRun {
  Layer& layer;
  bool is_first = false;
  bool is_last = false;
  LossKind loss = LossKind::kMse;
  const torch::Tensor& target;

  // What the executor's F does for this layer: the module, plus the loss (read back with item(),
  // as the executor does) on the last layer.
  torch::Tensor forward(const torch::Tensor& input) const {
    torch::Tensor out = layer.module.forward(input);
    if (is_last) {
      out = compute_loss(loss, out, target);
      (void)out.item<double>();
    }
    return out;
  }
};

// Stage inputs require grad (the executor detaches them so), the model's data does not.
torch::Tensor fresh_input(const torch::Tensor& x, bool is_data) {
  return x.is_floating_point() && !is_data ? x.detach().requires_grad_(true) : x;
}

LayerSample measure(const LayerRun& run, const torch::Tensor& x, int size, int warmup, int repetitions) {
  LayerSample sample;
  sample.microbatch_size = size;
  std::vector<std::int64_t> fwd, fwd_no_grad, bwd;
  for (int i = 0; i < warmup + repetitions; ++i) {
    const torch::Tensor in = fresh_input(x, run.is_first);
    const auto t0 = Clock::now();
    const torch::Tensor out = run.forward(in);
    if (i >= warmup) fwd.push_back(since(t0));
  }
  {
    const torch::NoGradGuard no_grad;
    for (int i = 0; i < warmup + repetitions; ++i) {
      const torch::Tensor in = fresh_input(x, run.is_first);
      const auto t0 = Clock::now();
      const torch::Tensor out = run.forward(in);
      if (i >= warmup) fwd_no_grad.push_back(since(t0));
    }
  }
  for (int i = 0; i < warmup + repetitions; ++i) {
    const DeviceScope scope(kProfileDevice);
    const torch::Tensor in = fresh_input(x, run.is_first);
    const sched::Bytes before = live_bytes(kProfileDevice);
    const torch::Tensor out = run.forward(in);
    const sched::Bytes after_forward = live_bytes(kProfileDevice);
    const torch::Tensor grad = torch::ones_like(out);
    const sched::Bytes before_backward = live_bytes(kProfileDevice);
    reset_peak(kProfileDevice);
    const auto t0 = Clock::now();
    torch::autograd::backward({out}, {grad});
    const sched::Nanoseconds elapsed = since(t0);
    if (i >= warmup) bwd.push_back(elapsed);
    if (i + 1 == warmup + repetitions) {
      sample.stash_bytes = after_forward - before;
      sample.backward_transient_bytes = peak_bytes(kProfileDevice) - before_backward;
    }
  }
  sample.forward = summarize_timings(std::move(fwd));
  sample.forward_no_grad = summarize_timings(std::move(fwd_no_grad));
  sample.backward = summarize_timings(std::move(bwd));
  return sample;
}

// Times every layer inside whole-model passes, layer after layer in model order (backward in
// reverse), as a pipeline stage runs them: a layer's weights and inputs are as cold or warm as
// after its neighbour, not after itself repeated. Per repetition:
//
//   F:  x0 -> [layer 0] -> x1 -> [layer 1] -> ... -> loss      (each input detached, requires grad)
//   B:  loss -> [layer L-1] -> x_{L-1}.grad -> ... -> [layer 0]
//   F without the graph: the same forward pass under NoGradGuard
//
// Returns per layer the (forward, forward_no_grad, backward) medians.
struct SequenceTimings {
  std::vector<Timing> forward, forward_no_grad, backward;
};

SequenceTimings time_in_sequence(Model& model, const Batch& batch, int warmup, int repetitions) {
  const std::size_t n = model.layers.size();
  std::vector<std::vector<std::int64_t>> fwd(n), fwd_no_grad(n), bwd(n);
  for (int r = 0; r < warmup + repetitions; ++r) {
    const bool keep = r >= warmup;
    std::vector<torch::Tensor> inputs(n), outputs(n);
    torch::Tensor x = batch.inputs;
    for (std::size_t l = 0; l < n; ++l) {
      const LayerRun run{model.layers[l], l == 0, l + 1 == n, model.loss, batch.targets};
      inputs[l] = fresh_input(x, l == 0);
      const auto t0 = Clock::now();
      outputs[l] = run.forward(inputs[l]);
      if (keep) fwd[l].push_back(since(t0));
      x = outputs[l].detach();
    }
    for (std::size_t l = n; l-- > 0;) {
      const torch::Tensor grad = l + 1 == n ? torch::ones_like(outputs[l]) : inputs[l + 1].grad();
      const auto t0 = Clock::now();
      torch::autograd::backward({outputs[l]}, {grad});
      if (keep) bwd[l].push_back(since(t0));
    }
    const torch::NoGradGuard no_grad;
    x = batch.inputs;
    for (std::size_t l = 0; l < n; ++l) {
      const LayerRun run{model.layers[l], l == 0, l + 1 == n, model.loss, batch.targets};
      const auto t0 = Clock::now();
      x = run.forward(x);
      if (keep) fwd_no_grad[l].push_back(since(t0));
    }
  }
  SequenceTimings out;
  for (std::size_t l = 0; l < n; ++l) {
    out.forward.push_back(summarize_timings(std::move(fwd[l])));
    out.forward_no_grad.push_back(summarize_timings(std::move(fwd_no_grad[l])));
    out.backward.push_back(summarize_timings(std::move(bwd[l])));
  }
  return out;
}

std::vector<FitPoint> points(const LayerProfile& layer, double (*value)(const LayerSample&)) {
  std::vector<FitPoint> out;
  for (const LayerSample& s : layer.samples) out.push_back({static_cast<double>(s.microbatch_size), value(s)});
  return out;
}

sched::Result<LinearFit> fit_noted(const LayerProfile& layer, const char* what, double (*value)(const LayerSample&),
                                   std::vector<std::string>& notes) {
  auto fit = fit_linear(points(layer, value));
  if (!fit) return sched::Error{fmt::format("{} {}: {}", layer.name, what, fit.error().message)};
  if (fit->clamped_fixed) notes.push_back(fmt::format("{} {}: negative fixed part clamped to 0", layer.name, what));
  if (fit->clamped_per_sample) {
    notes.push_back(fmt::format("{} {}: negative per-sample part clamped to 0", layer.name, what));
  }
  return fit;
}

}  // namespace

sched::Result<std::vector<LayerProfile>> profile_layers(const ModelConfig& config, const std::vector<int>& sizes,
                                                        int warmup, int repetitions, int threads) {
  if (sizes.empty()) return sched::Error{"profile: no micro-batch sizes"};
  for (int s : sizes) {
    if (s < 1) return sched::Error{fmt::format("profile: micro-batch size {} < 1", s)};
  }
  if (warmup < 0 || repetitions < 1) return sched::Error{"profile: warm-up must be >= 0 and repetitions >= 1"};
  install_counting_allocator();
  set_worker_threads(threads);
  auto model = build_model(config);
  if (!model) return model.error();
  for (Layer& l : model->layers) l.module.ptr()->train();
  std::vector<LayerProfile> layers(model->layers.size());
  for (std::size_t l = 0; l < layers.size(); ++l) {
    layers[l].name = model->layers[l].name;
    for (const auto& p : model->layers[l].module.ptr()->parameters()) {
      layers[l].param_bytes += static_cast<sched::Bytes>(p.nbytes());
    }
  }
  for (int size : sizes) {
    const Batch batch = make_batch(config, size, config.seed);
    torch::Tensor x = batch.inputs;
    for (std::size_t l = 0; l < layers.size(); ++l) {
      Layer& layer = model->layers[l];
      const LayerRun run{layer, l == 0, l + 1 == layers.size(), model->loss, batch.targets};
      try {
        // Bytes here (one warm-up, one pass); the times come from whole-model passes below.
        LayerSample sample = measure(run, x, size, 1, 1);
        const torch::NoGradGuard no_grad;
        x = layer.module.forward(x).detach();
        sample.output_bytes = static_cast<sched::Bytes>(x.nbytes());
        layers[l].samples.push_back(sample);
      } catch (const std::exception& e) {
        return sched::Error{fmt::format("profile: layer {} at micro-batch size {}: {}", layer.name, size, e.what())};
      }
    }
    try {
      const SequenceTimings times = time_in_sequence(*model, batch, warmup, repetitions);
      for (std::size_t l = 0; l < layers.size(); ++l) {
        LayerSample& sample = layers[l].samples.back();
        sample.forward = times.forward[l];
        sample.forward_no_grad = times.forward_no_grad[l];
        sample.backward = times.backward[l];
      }
    } catch (const std::exception& e) {
      return sched::Error{fmt::format("profile: whole-model pass at micro-batch size {}: {}", size, e.what())};
    }
    for (Layer& l : model->layers) {
      for (torch::Tensor p : l.module.ptr()->parameters()) compat::drop_grad(p);
    }
  }
  return layers;
}

sched::Result<sim::LayerSpec> fit_layer(LayerProfile& layer, std::vector<std::string>& notes) {
  sim::LayerSpec spec;
  spec.name = layer.name;
  spec.param_bytes = layer.param_bytes;
  auto forward = fit_noted(layer, "forward", [](const LayerSample& s) { return static_cast<double>(s.forward.median_ns); }, notes);
  if (!forward) return forward.error();
  auto no_grad = fit_noted(layer, "forward (no graph)",
                           [](const LayerSample& s) { return static_cast<double>(s.forward_no_grad.median_ns); }, notes);
  if (!no_grad) return no_grad.error();
  auto backward = fit_noted(layer, "backward", [](const LayerSample& s) { return static_cast<double>(s.backward.median_ns); }, notes);
  if (!backward) return backward.error();
  auto output = fit_noted(layer, "output bytes", [](const LayerSample& s) { return static_cast<double>(s.output_bytes); }, notes);
  if (!output) return output.error();
  auto stash = fit_noted(layer, "stash bytes", [](const LayerSample& s) { return static_cast<double>(s.stash_bytes); }, notes);
  if (!stash) return stash.error();
  auto transient = fit_noted(layer, "backward transient bytes",
                             [](const LayerSample& s) { return static_cast<double>(s.backward_transient_bytes); }, notes);
  if (!transient) return transient.error();
  spec.forward = to_scaled_duration(*forward);
  spec.set_backward(to_scaled_duration(*backward));
  spec.output_bytes = to_scaled_bytes(*output);
  spec.stash_bytes = to_scaled_bytes(*stash);
  layer.forward_no_grad = to_scaled_duration(*no_grad);
  layer.backward_transient = to_scaled_bytes(*transient);
  return spec;
}

sched::Result<Profile> profile_model(const ProfileOptions& options,
                                     const std::function<void(const std::string&)>& progress) {
  const auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  Profile profile;
  profile.options = options;
  if (options.workers < 1) return sched::Error{"profile: workers must be >= 1"};
  const auto t0 = Clock::now();
  auto layers = profile_layers(options.model, options.microbatch_sizes, options.warmup, options.repetitions,
                               options.threads);
  if (!layers) return layers.error();
  profile.layers = std::move(layers).value();
  say(fmt::format("layers: {} layers x {} sizes in {:.1f} s", profile.layers.size(), options.microbatch_sizes.size(),
                  static_cast<double>(since(t0)) / 1e9));

  sim::ModelSpec& spec = profile.spec;
  spec.name = std::string(model_kind_name(options.model.kind));
  spec.description = fmt::format("profiled on this CPU with {} intra-op thread(s), micro-batch sizes {}", options.threads,
                                 fmt::join(options.microbatch_sizes, ","));
  std::vector<FitPoint> input_points;
  for (int size : options.microbatch_sizes) {
    const Batch batch = make_batch(options.model, size, options.model.seed);
    input_points.push_back({static_cast<double>(size), static_cast<double>(batch.inputs.nbytes())});
  }
  auto input_fit = fit_linear(input_points);
  if (!input_fit) return input_fit.error();
  spec.input_bytes = to_scaled_bytes(*input_fit);
  for (LayerProfile& layer : profile.layers) {
    auto fitted = fit_layer(layer, profile.notes);
    if (!fitted) return fitted.error();
    spec.layers.push_back(std::move(fitted).value());
  }
  if (auto status = sim::check_model_spec(spec); !status) return sched::Error{"profile: " + status.error().message};

  if (options.measure_machine) {
    const auto t1 = Clock::now();
    const int middle = options.microbatch_sizes[options.microbatch_sizes.size() / 2];
    auto machine = profile_machine(options.model, middle, options.workers, options.threads, options.repetitions,
                                   profile.notes);
    if (!machine) return machine.error();
    profile.machine = std::move(machine).value();
    say(fmt::format("machine: hand-off, dispatch overhead and contention in {:.1f} s",
                    static_cast<double>(since(t1)) / 1e9));
  } else {
    profile.machine.workers = options.workers;
    profile.machine.threads = options.threads;
    profile.machine.handoff_bandwidth_bytes_per_s = kUnboundedBandwidth;
  }
  profile.cluster = cluster_from_machine(profile.machine);
  return profile;
}

}  // namespace pipeworks::hw
