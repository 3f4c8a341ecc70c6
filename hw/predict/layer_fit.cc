// A profiled layer's samples fitted into the simulator's layer spec (profiler.h's fit_layer):
// every quantity as the fitted line plus the table of the sizes it was measured at.
#include "hw/predict/profiler.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "hw/predict/cost_fit.h"

namespace pipeworks::hw {
namespace {

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

// The measured value at every profiled size, in increasing size (profile_layers refuses a size
// given twice). A single size too: its value is the one-point fit's, and the table records where
// it was measured, so that a reader at another size knows it extrapolates (size_extrapolation.h).
std::vector<sim::SizePoint> measured_table(const LayerProfile& layer, double (*value)(const LayerSample&)) {
  std::vector<sim::SizePoint> table;
  for (const LayerSample& s : layer.samples) {
    table.push_back(sim::SizePoint{s.microbatch_size, std::llround(std::max(0.0, value(s)))});
  }
  std::sort(table.begin(), table.end(), [](const sim::SizePoint& a, const sim::SizePoint& b) { return a.size < b.size; });
  return table;
}

template <class Scaled>
Scaled with_table(Scaled scaled, std::vector<sim::SizePoint> table) {
  scaled.measured = std::move(table);
  return scaled;
}

// Whether the samples hold the split backward's timings (profile_layers measures them; a sample
// taken by measure() alone, or written by hand, has none).
bool split_measured(const LayerProfile& layer) {
  return std::any_of(layer.samples.begin(), layer.samples.end(), [](const LayerSample& s) {
    return s.backward_input.median_ns > 0 || s.backward_weight.median_ns > 0;
  });
}

}  // namespace

sched::Result<sim::LayerSpec> fit_layer(const LayerProfile& layer, std::vector<std::string>& notes) {
  using Value = double (*)(const LayerSample&);
  const Value values[] = {
      [](const LayerSample& s) { return static_cast<double>(s.forward.median_ns); },
      [](const LayerSample& s) { return static_cast<double>(s.forward_no_grad.median_ns); },
      [](const LayerSample& s) { return static_cast<double>(s.backward.median_ns); },
      [](const LayerSample& s) { return static_cast<double>(s.output_bytes); },
      [](const LayerSample& s) { return static_cast<double>(s.stash_bytes); },
      [](const LayerSample& s) { return static_cast<double>(s.backward_transient_bytes); },
      [](const LayerSample& s) { return static_cast<double>(s.backward_input.median_ns); },
      [](const LayerSample& s) { return static_cast<double>(s.backward_weight.median_ns); },
      [](const LayerSample& s) { return static_cast<double>(s.split_held_bytes); }};
  const char* names[] = {"forward", "forward (no graph)", "backward", "output bytes", "stash bytes",
                         "backward transient bytes", "backward input", "backward weight", "split held bytes"};
  std::vector<LinearFit> fits;
  std::vector<std::vector<sim::SizePoint>> tables;
  for (std::size_t i = 0; i < std::size(values); ++i) {
    auto fit = fit_noted(layer, names[i], values[i], notes);
    if (!fit) return fit.error();
    fits.push_back(*fit);
    tables.push_back(measured_table(layer, values[i]));
  }
  sim::LayerSpec spec;
  spec.name = layer.name;
  spec.param_bytes = layer.param_bytes;
  const auto duration = [&](std::size_t i) {
    sim::ScaledDuration d = with_table(to_scaled_duration(fits[i]), tables[i]);
    d.size_block = sim::pick_size_block(d.measured, d.per_sample_ns);
    return d;
  };
  const auto bytes = [&](std::size_t i) { return with_table(to_scaled_bytes(fits[i]), tables[i]); };
  spec.forward = duration(0);
  spec.forward_no_grad = duration(1);
  spec.set_backward(duration(2));
  if (split_measured(layer)) {
    spec.backward_input = duration(6);
    spec.backward_weight = duration(7);
    spec.backward_split = true;
    spec.whole_backward = duration(2);
  }
  if (std::any_of(layer.samples.begin(), layer.samples.end(), [](const LayerSample& s) { return s.split_held_bytes > 0; })) {
    spec.split_held_bytes = bytes(8);
  }
  spec.output_bytes = bytes(3);
  spec.stash_bytes = bytes(4);
  spec.backward_transient_bytes = bytes(5);
  if (layer.forward_collectives > 0 || layer.backward_collectives > 0) {
    const Value collective = [](const LayerSample& s) { return static_cast<double>(s.collective_bytes); };
    auto fit = fit_noted(layer, "collective bytes", collective, notes);
    if (!fit) return fit.error();
    sim::TensorParallelSplit split;
    split.forward_collectives = layer.forward_collectives;
    split.backward_collectives = layer.backward_collectives;
    split.collective_bytes = with_table(to_scaled_bytes(*fit), measured_table(layer, collective));
    spec.tensor_parallel = std::move(split);
  }
  return spec;
}

}  // namespace pipeworks::hw
