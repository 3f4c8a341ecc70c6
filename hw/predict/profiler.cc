// Layer-by-layer profiling of a model-zoo model and the fit into a ModelSpec (see profiler.h).
#include "hw/predict/profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "hw/exec/compute_devices.h"
#include "hw/exec/counting_allocator.h"
#include "hw/exec/stage_compute.h"
#include "hw/exec/threads.h"
#include "hw/model/model_zoo.h"
#include "hw/model/tensor_parallel_model.h"
#include "hw/model/torch_compat.h"
#include "hw/model/torch_errors.h"
#include "hw/predict/pass_timing.h"
#include "hw/predict/stage_memory.h"
#include "hw/predict/tensor_parallel_profile.h"
#include "hw/run/describe_model.h"
#include "hw/run/device_choice.h"
#include "sched/units_text.h"

namespace pipeworks::hw {
namespace {

// The counter the profiler measures bytes with (apart from executor devices and describe_model's).
constexpr int kProfileDevice = kProfilerCounter;

// What the layer's I leaves for its W (stage_compute.h); the gradients W makes stay in .grad.
sched::Bytes held_for_weight(const LayerRun& run, const torch::Tensor& x) {
  Slot slot;
  slot.input = fresh_input(x, run.is_first);
  slot.output = run.forward(slot.input);
  backward_input(slot, torch::ones_like(slot.output), trainable_parameters(run.layer));
  const sched::Bytes held = pending_weight_bytes(slot);
  backward_weight(slot);
  return held;
}

// One layer's bytes (and timings, which profile_layers replaces with its passes') at one size,
// metered by `where`'s allocator: the counting allocator on the CPU, the caching allocator's on a GPU.
LayerSample measure(const LayerRun& run, const torch::Tensor& x, int size, int warmup, int repetitions,
                    const ComputeDevices& where) {
  LayerSample sample;
  sample.microbatch_size = size;
  std::vector<std::int64_t> fwd, fwd_no_grad, bwd;
  for (int i = 0; i < warmup + repetitions; ++i) {
    const torch::Tensor in = fresh_input(x, run.is_first);
    const auto t0 = ProfileClock::now();
    const torch::Tensor out = run.forward(in);
    if (i >= warmup) fwd.push_back(elapsed_ns_since(t0));
  }
  {
    const torch::NoGradGuard no_grad;
    for (int i = 0; i < warmup + repetitions; ++i) {
      const torch::Tensor in = fresh_input(x, run.is_first);
      const auto t0 = ProfileClock::now();
      const torch::Tensor out = run.forward(in);
      if (i >= warmup) fwd_no_grad.push_back(elapsed_ns_since(t0));
    }
  }
  for (int i = 0; i < warmup + repetitions; ++i) {
    const DeviceScope scope(kProfileDevice);
    const torch::Tensor in = fresh_input(x, run.is_first);
    const sched::Bytes before = where.live_bytes(kProfileDevice);
    const torch::Tensor out = run.forward(in);
    const sched::Bytes after_forward = where.live_bytes(kProfileDevice);
    const torch::Tensor grad = torch::ones_like(out);
    const sched::Bytes before_backward = where.live_bytes(kProfileDevice);
    where.reset_peak(kProfileDevice);
    const auto t0 = ProfileClock::now();
    torch::autograd::backward({out}, {grad});
    const sched::Nanoseconds elapsed = elapsed_ns_since(t0);
    if (i >= warmup) bwd.push_back(elapsed);
    if (i + 1 == warmup + repetitions) {
      sample.stash_bytes = after_forward - before;
      sample.backward_transient_bytes = where.peak_bytes(kProfileDevice) - before_backward;
    }
  }
  sample.forward = summarize_timings(std::move(fwd));
  sample.forward_no_grad = summarize_timings(std::move(fwd_no_grad));
  sample.backward = summarize_timings(std::move(bwd));
  return sample;
}

// Each layer's bytes at one size (one warm-up, one pass of `measure`), appended to its samples.
sched::Status measure_bytes(Model& model, const Batch& batch, int size, std::vector<LayerProfile>& layers,
                            const ComputeDevices& where) {
  torch::Tensor x = batch.inputs;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    Layer& layer = model.layers[l];
    const LayerRun run{layer, l == 0, l + 1 == layers.size(), model.loss, batch.targets};
    try {
      LayerSample sample = measure(run, x, size, 1, 1, where);
      sample.split_held_bytes = held_for_weight(run, x);
      const torch::NoGradGuard no_grad;
      x = layer.module.forward(x).detach();
      sample.output_bytes = static_cast<sched::Bytes>(x.nbytes());
      layers[l].samples.push_back(sample);
    } catch (const std::exception& e) {
      return sched::Error{fmt::format("profile: layer {} at micro-batch size {}: {}", layer.name, size, torch_error_message(e))};
    }
  }
  for (Layer& l : model.layers) {
    for (torch::Tensor p : l.module.ptr()->parameters()) compat::drop_grad(p);
  }
  return sched::Ok{};
}

}  // namespace

sched::Result<std::vector<LayerProfile>> profile_layers(const ModelConfig& config, const std::vector<int>& sizes,
                                                        int warmup, int repetitions, int threads, int rounds,
                                                        double round_gap_s) {
  const std::unique_ptr<ComputeDevices> cpu = cpu_devices();
  return profile_layers(config, sizes, warmup, repetitions, threads, rounds, round_gap_s, *cpu);
}

namespace {

sched::Status check_profile_sizes(const std::vector<int>& sizes, int warmup, int repetitions, int rounds,
                                  double round_gap_s) {
  if (sizes.empty()) return sched::Error{"profile: no micro-batch sizes"};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1) return sched::Error{fmt::format("profile: micro-batch size {} < 1", sizes[i])};
    if (std::find(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(i), sizes[i]) != sizes.begin() + static_cast<std::ptrdiff_t>(i)) {
      return sched::Error{fmt::format("profile: micro-batch size {} given twice", sizes[i])};
    }
  }
  if (warmup < 0 || repetitions < 1) return sched::Error{"profile: warm-up must be >= 0 and repetitions >= 1"};
  if (rounds < 1 || !(round_gap_s >= 0 && round_gap_s <= 3600)) {
    return sched::Error{"profile: rounds must be >= 1 and the gap between them 0 to 3600 s"};
  }
  return sched::Ok{};
}

// The device's clock for the profiler's passes: the one its executors mark actions with.
std::unique_ptr<ActionClock> profile_clock(const ComputeDevices& where) {
  ExecutorOptions options;
  where.configure(options);
  if (options.clock) return options.clock(kProfileDevice);
  return std::make_unique<HostClock>();
}

// Per round, per size, per layer: the passes' timings (time_sizes_in_turns), the rounds apart.
sched::Result<std::vector<std::vector<PassTimes>>> time_rounds(Model& model, const std::vector<Batch>& batches,
                                                              int warmup, int repetitions, int rounds,
                                                              double round_gap_s, const ComputeDevices& where) {
  std::unique_ptr<ActionClock> clock = profile_clock(where);
  if (!clock) return sched::Error{fmt::format("profile: the {} devices gave no clock", device_kind_name(where.kind()))};
  std::vector<std::vector<PassTimes>> per_round;
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) std::this_thread::sleep_for(std::chrono::duration<double>(round_gap_s));
    auto times = time_sizes_in_turns(model, batches, warmup, repetitions, *clock);
    if (!times) return times.error();
    per_round.push_back(std::move(times).value());
  }
  return per_round;
}

}  // namespace

sched::Result<std::vector<LayerProfile>> profile_layers(const ModelConfig& config, const std::vector<int>& sizes,
                                                        int warmup, int repetitions, int threads, int rounds,
                                                        double round_gap_s, const ComputeDevices& where,
                                                        int tensor_parallel) {
  if (auto status = check_profile_sizes(sizes, warmup, repetitions, rounds, round_gap_s); !status) return status.error();
  install_counting_allocator();
  set_worker_threads(threads);
  auto model = build_model(config);
  if (!model) return model.error();
  if (tensor_parallel > 1) {
    model = shard_model(*model, std::make_shared<AloneTensorGroup>(tensor_parallel));
    if (!model) return model.error();
  }
  const torch::Device on = where.device_of(kProfileDevice);
  for (Layer& l : model->layers) {
    l.module.ptr()->to(on);
    l.module.ptr()->train();
  }
  std::vector<LayerProfile> layers(model->layers.size());
  for (std::size_t l = 0; l < layers.size(); ++l) {
    layers[l].name = model->layers[l].name;
    for (const auto& p : model->layers[l].module.ptr()->parameters()) {
      layers[l].param_bytes += static_cast<sched::Bytes>(p.nbytes());
    }
  }
  std::vector<Batch> batches;
  for (int size : sizes) {
    Batch batch = make_batch(config, size, config.seed);
    batches.push_back(Batch{batch.inputs.to(on), batch.targets.to(on)});
    if (auto status = measure_bytes(*model, batches.back(), size, layers, where); !status) return status.error();
  }
  try {
    auto per_round = time_rounds(*model, batches, warmup, repetitions, rounds, round_gap_s, where);
    if (!per_round) return per_round.error();
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      for (std::size_t l = 0; l < layers.size(); ++l) {
        LayerSample& sample = layers[l].samples[i];
        sample.forward = median_of_rounds(*per_round, i, &PassTimes::forward, l);
        sample.forward_no_grad = median_of_rounds(*per_round, i, &PassTimes::forward_no_grad, l);
        sample.backward = median_of_rounds(*per_round, i, &PassTimes::backward, l);
        sample.backward_input = median_of_rounds(*per_round, i, &PassTimes::backward_input, l);
        sample.backward_weight = median_of_rounds(*per_round, i, &PassTimes::backward_weight, l);
      }
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("profile: whole-model pass: {}", torch_error_message(e))};
  }
  for (Layer& l : model->layers) {
    for (torch::Tensor p : l.module.ptr()->parameters()) compat::drop_grad(p);
  }
  return layers;
}


namespace {

// A byte count over the profiled sizes as the spec holds it: the fitted line and, for more than
// one size, the table.
sched::Result<sim::ScaledBytes> scaled_over_sizes(const std::vector<int>& sizes, const std::vector<sched::Bytes>& values) {
  std::vector<FitPoint> points;
  std::vector<sim::SizePoint> table;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    points.push_back({static_cast<double>(sizes[i]), static_cast<double>(values[i])});
    table.push_back(sim::SizePoint{sizes[i], values[i]});
  }
  auto fit = fit_linear(points);
  if (!fit) return fit.error();
  std::sort(table.begin(), table.end(), [](const sim::SizePoint& a, const sim::SizePoint& b) { return a.size < b.size; });
  sim::ScaledBytes scaled = to_scaled_bytes(*fit);
  if (sizes.size() > 1) scaled.measured = std::move(table);
  return scaled;
}

// Every contiguous range's temporaries at every size (stage_memory.h), as spec entries.
sched::Result<std::vector<sim::StageTemporaries>> stage_temporaries(
    const ProfileOptions& options, const ComputeDevices& where, const std::function<void(const std::string&)>& say) {
  constexpr int kRepetitions = 2;
  const int layers = num_model_layers(options.model);
  const int max_layers = measured_range_layers(layers, options.max_range_layers);
  std::vector<std::vector<RangeExtraBytes>> per_size;
  for (int size : options.microbatch_sizes) {
    const auto progress = [&](std::int64_t done, std::int64_t total) {
      say(fmt::format("stage temporaries at size {}: {:.0f}% of {} layer runs", size, 100.0 * done / total, total));
    };
    auto ranges = measure_range_extra_bytes(options.model, size, kRepetitions, where, max_layers, progress);
    if (!ranges) return ranges.error();
    per_size.push_back(std::move(ranges).value());
  }
  std::vector<sim::StageTemporaries> out;
  for (std::size_t r = 0; r < per_size.front().size(); ++r) {
    sim::StageTemporaries t;
    t.begin = per_size.front()[r].begin;
    t.end = per_size.front()[r].end;
    const std::pair<sched::Bytes StageExtraBytes::*, sim::ScaledBytes*> parts[] = {
        {&StageExtraBytes::forward, &t.forward}, {&StageExtraBytes::forward_no_grad, &t.forward_no_grad},
        {&StageExtraBytes::first, &t.first_backward}, {&StageExtraBytes::later, &t.later_backward}};
    for (const auto& [member, into] : parts) {
      std::vector<sched::Bytes> values;
      for (const auto& ranges : per_size) values.push_back(ranges[r].bytes.*member);
      auto scaled = scaled_over_sizes(options.microbatch_sizes, values);
      if (!scaled) return scaled.error();
      *into = std::move(scaled).value();
    }
    out.push_back(std::move(t));
  }
  return out;
}

// The layers at every size (with tp > 1, rank 0's shard alone, each layer's all-reduces counted).
sched::Result<std::vector<LayerProfile>> profiled_layers(const ProfileOptions& options, const ComputeDevices& where) {
  if (options.tensor_parallel > 1 && options.measure_stage_temporaries) {
    return sched::Error{"profile: stage temporaries are measured on the unsharded model, not on a tensor-parallel rank"};
  }
  auto layers = profile_layers(options.model, options.microbatch_sizes, options.warmup, options.repetitions,
                               options.threads, options.rounds, options.round_gap_s, where, options.tensor_parallel);
  if (!layers || options.tensor_parallel == 1) return layers;
  auto counted = add_layer_collectives(options.model, options.tensor_parallel, options.microbatch_sizes, *layers);
  if (!counted) return counted.error();
  return layers;
}

std::string spec_description(const ProfileOptions& options, const ComputeDevices& where) {
  std::string text = fmt::format(
      "profiled on {} with {}, micro-batch sizes {}",
      where.kind() == DeviceKind::kCpu ? std::string("this CPU")
                                       : fmt::format("this machine's GPU ({})", device_kind_name(where.kind())),
      sched::counted(options.threads, "intra-op thread"), fmt::join(options.microbatch_sizes, ","));
  if (options.tensor_parallel > 1) {
    text += fmt::format("; one rank of {} tensor-parallel ranks (its all-reduces counted, not timed)",
                        options.tensor_parallel);
  }
  return text;
}

// The spec's input bytes, fitted over the micro-batch sizes, and each profiled layer's fitted costs.
sched::Status fit_spec_layers(const ProfileOptions& options, Profile& profile) {
  std::vector<FitPoint> input_points;
  for (int size : options.microbatch_sizes) {
    const Batch batch = make_batch(options.model, size, options.model.seed);
    input_points.push_back({static_cast<double>(size), static_cast<double>(batch.inputs.nbytes())});
  }
  auto input_fit = fit_linear(input_points);
  if (!input_fit) return input_fit.error();
  profile.spec.input_bytes = to_scaled_bytes(*input_fit);
  for (const LayerProfile& layer : profile.layers) {
    auto fitted = fit_layer(layer, profile.notes);
    if (!fitted) return fitted.error();
    profile.spec.layers.push_back(std::move(fitted).value());
  }
  return sched::Ok{};
}

// The spec's stage temporaries, measured over layer ranges, with a note where ranges were capped.
sched::Status add_stage_temporaries(const ProfileOptions& options, const ComputeDevices& where,
                                    const std::function<void(const std::string&)>& say, Profile& profile) {
  const auto t1 = ProfileClock::now();
  auto temporaries = stage_temporaries(options, where, say);
  if (!temporaries) return sched::Error{"profile: " + temporaries.error().message};
  const int model_layers = num_model_layers(options.model);
  if (const int w = measured_range_layers(model_layers, options.max_range_layers); w < model_layers) {
    profile.notes.push_back(fmt::format(
        "stage temporaries measured for ranges of up to {} of the {} layers ({} runs of a layer per size at most); "
        "a longer stage composes its layers' bytes (--range-layers measures longer ranges, in time growing as "
        "layers x range^2)",
        w, model_layers, kRangeLayerBudget));
  }
  profile.spec.stage_temporaries = std::move(temporaries).value();
  say(fmt::format("stage temporaries: {} layer ranges x {} sizes in {:.1f} s", profile.spec.stage_temporaries.size(),
                  options.microbatch_sizes.size(), static_cast<double>(elapsed_ns_since(t1)) / 1e9));
  return sched::Ok{};
}

// The machine's figures (hand-off, dispatch, contention, ...) measured at the middle micro-batch
// size, or, with measure_machine off, a machine that adds nothing.
sched::Status add_machine(const ProfileOptions& options, const ComputeDevices& where,
                          const std::function<void(const std::string&)>& say, Profile& profile) {
  if (!options.measure_machine) {
    profile.machine.workers = options.workers;
    profile.machine.threads = options.threads;
    profile.machine.device = where.kind();
    profile.machine.handoff_bandwidth_bytes_per_s = kUnboundedBandwidth;
    return sched::Ok{};
  }
  const auto t1 = ProfileClock::now();
  const int middle = options.microbatch_sizes[options.microbatch_sizes.size() / 2];
  auto machine = profile_machine(options.model, middle, options.workers, options.threads, options.repetitions,
                                 profile.notes, where, options.worker_cpus);
  if (!machine) return machine.error();
  profile.machine = std::move(machine).value();
  say(fmt::format("machine: hand-off, dispatch overhead and contention in {:.1f} s",
                  static_cast<double>(elapsed_ns_since(t1)) / 1e9));
  return sched::Ok{};
}

}  // namespace

sched::Result<Profile> profile_model(const ProfileOptions& options,
                                     const std::function<void(const std::string&)>& progress) {
  const std::function<void(const std::string&)> say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  Profile profile;
  profile.options = options;
  if (options.workers < 1) return sched::Error{"profile: workers must be >= 1"};
  auto where_or = make_compute_devices(options.device);
  if (!where_or) return sched::Error{"profile: " + where_or.error().message};
  const ComputeDevices& where = **where_or;
  const auto t0 = ProfileClock::now();
  auto layers = profiled_layers(options, where);
  if (!layers) return layers.error();
  profile.layers = std::move(layers).value();
  profile.spec.tensor_parallel = options.tensor_parallel;
  say(fmt::format("layers: {} layers x {} sizes in {:.1f} s", profile.layers.size(), options.microbatch_sizes.size(),
                  static_cast<double>(elapsed_ns_since(t0)) / 1e9));
  profile.spec.name = model_display_name(options.model);
  profile.spec.description = spec_description(options, where);
  if (auto fitted = fit_spec_layers(options, profile); !fitted) return fitted.error();
  if (options.measure_stage_temporaries) {
    if (auto added = add_stage_temporaries(options, where, say, profile); !added) return added.error();
  }
  if (auto status = sim::check_model_spec(profile.spec); !status) {
    return sched::Error{"profile: " + status.error().message};
  }
  if (auto added = add_machine(options, where, say, profile); !added) return added.error();
  profile.cluster = cluster_from_machine(profile.machine);
  return profile;
}

}  // namespace pipeworks::hw
