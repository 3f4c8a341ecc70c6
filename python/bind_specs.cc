// Python bindings for the inputs of a simulation: human units, model and cluster specs with their
// presets and JSON forms, partitions (uniform, explicit, balanced) and the CostModel.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "python/convert.h"
#include "python/without_gil.h"
#include "sched/limits.h"
#include "sim/plan/cost_model_builder.h"
#include "sim/plan/partition.h"
#include "sim/spec/cluster_presets.h"
#include "sim/spec/model_presets.h"
#include "sim/spec/units.h"

namespace py = pybind11;

namespace pipeworks::python {
namespace {

using sim::Bytes;
using sim::Nanoseconds;

// A stage count the library takes (sched/limits.h), checked before anything is allocated for
// it; raises pipeworks.Error (a ValueError) naming the limit.
void check_stage_count(std::int64_t stages) { unwrap_status(sched::check_schedule_size(stages, 1)); }

std::vector<py::dict> preset_dicts(const std::vector<sim::PresetInfo>& presets) {
  std::vector<py::dict> out;
  for (const auto& p : presets) out.push_back(py::dict(py::arg("name") = p.name, py::arg("description") = p.description));
  return out;
}

void bind_units(py::module_& m) {
  m.def("parse_duration", [](const std::string& t) { return unwrap(sim::parse_duration(t)); }, py::arg("text"),
        "'1.5ms' -> 1500000 (ns). Strict: a unit is required.");
  m.def("parse_bytes", [](const std::string& t) { return unwrap(sim::parse_bytes(t)); }, py::arg("text"),
        "'80GiB' -> bytes (SI kB/MB/GB and IEC KiB/MiB/GiB).");
  m.def("parse_bandwidth", [](const std::string& t) { return unwrap(sim::parse_bandwidth(t)); }, py::arg("text"),
        "'900GB/s' or '400Gbit/s' -> bytes per second.");
  m.def("format_duration", &sim::format_duration, py::arg("ns"), "1500000 -> '1.50 ms'.");
  m.def("format_bytes", &sim::format_bytes, py::arg("bytes"), "1342177280 -> '1.25 GiB'.");
  m.def("format_bandwidth", &sim::format_bandwidth, py::arg("bytes_per_s"), "450e9 -> '450.00 GB/s'.");
}

void bind_presets(py::module_& m) {
  m.def("model_presets", [] { return preset_dicts(sim::model_presets()); },
        "Built-in model presets as a list of {'name', 'description'} dicts.");
  m.def("model_preset",
        [](const std::string& name, std::optional<int> layers, std::optional<std::int64_t> hidden,
           std::optional<std::int64_t> heads, std::optional<std::int64_t> sequence, std::optional<std::int64_t> vocab,
           std::optional<double> flops_per_s, std::optional<Nanoseconds> forward_ns,
           std::optional<Nanoseconds> backward_ns, std::optional<Bytes> output_bytes,
           std::optional<Bytes> stash_bytes, std::optional<Bytes> param_bytes, std::optional<std::string> attention,
           std::optional<std::string> gpu) {
          sim::PresetOptions o{layers, hidden, heads, sequence, vocab, flops_per_s, forward_ns, backward_ns,
                               output_bytes, stash_bytes, param_bytes, std::nullopt, std::nullopt};
          if (attention) o.attention = unwrap(sim::parse_attention(*attention));
          if (gpu) o.gpu = unwrap(sim::gpu_kernel_model_named_or_file(*gpu));
          return unwrap(sim::model_preset(name, o));
        },
        py::arg("name"), py::kw_only(), py::arg("layers") = py::none(), py::arg("hidden") = py::none(),
        py::arg("heads") = py::none(), py::arg("sequence") = py::none(), py::arg("vocab") = py::none(),
        py::arg("flops_per_s") = py::none(), py::arg("forward_ns") = py::none(), py::arg("backward_ns") = py::none(),
        py::arg("output_bytes") = py::none(), py::arg("stash_bytes") = py::none(), py::arg("param_bytes") = py::none(),
        py::arg("attention") = py::none(), py::arg("gpu") = py::none(),
        "A built-in ModelSpec ('uniform', 'gpt2-small', ..., 'amoeba'; see model_presets()). Options that\n"
        "do not apply to the preset raise pipeworks.Error. uniform: layers, forward_ns, backward_ns\n"
        "(per sample per layer), output_bytes, stash_bytes, param_bytes; gpt*: layers, hidden, heads,\n"
        "sequence, vocab, flops_per_s, attention ('stored', 'selective-recompute' or 'flash': what a block\n"
        "keeps of its attention core), gpu (a GPU cost model's name, e.g. 'a100-sxm-80gb', or a data\n"
        "file's path: every layer timed kernel by kernel, not with flops_per_s); amoeba: layers (normal\n"
        "cells), flops_per_s.");
  m.def("cluster_presets", [] { return preset_dicts(sim::cluster_presets()); },
        "Built-in cluster presets as a list of {'name', 'description'} dicts.");
  m.def("cluster_preset",
        [](const std::string& name, std::optional<int> nodes) {
          return unwrap(sim::cluster_preset(name, sim::ClusterPresetOptions{nodes}));
        },
        py::arg("name"), py::kw_only(), py::arg("nodes") = py::none(),
        "A built-in ClusterSpec ('cpu2', 'dgx-a100', 'dgx-h100', 'dgx-h200', 'multinode'; nodes= for the DGX ones).");
}

void bind_partitions(py::module_& m) {
  py::class_<sim::Partition>(m, "Partition", "Stage s runs layers [boundaries[s], boundaries[s+1]).")
      .def_readonly("boundaries", &sim::Partition::boundaries)
      .def_property_readonly("num_stages", &sim::Partition::num_stages)
      .def("layers", [](const sim::Partition& p) {
        std::vector<int> out;
        for (int s = 0; s < p.num_stages(); ++s) out.push_back(p.end(s) - p.begin(s));
        return out;
      }, "Number of layers per stage.")
      .def("__eq__", [](const sim::Partition& a, const sim::Partition& b) { return a == b; })
      .def("__str__", [](const sim::Partition& p) { return sim::to_string(p); })
      .def("__repr__", [](const sim::Partition& p) { return "<Partition " + sim::to_string(p) + ">"; });

  m.def("explicit_partition",
        [](std::vector<int> boundaries, int num_layers) {
          check_stage_count(static_cast<std::int64_t>(boundaries.size()) - 1);
          return unwrap(sim::explicit_partition(std::move(boundaries), num_layers));
        },
        py::arg("boundaries"), py::arg("num_layers"), "Checks and wraps K+1 boundaries from 0 to num_layers.");
  m.def("uniform_partition",
        [](int layers, int stages) {
          check_stage_count(stages);
          return unwrap(sim::uniform_partition(layers, stages));
        },
        py::arg("num_layers"), py::arg("num_stages"), "Equal layer counts (the first stages get the remainder).");
  m.def("balanced_partition",
        [](const sim::ModelSpec& model, int num_stages, int microbatch_size, const std::string& optimizer, bool recompute,
           std::vector<double> stage_speed, std::vector<Bytes> capacity_bytes, std::vector<int> in_flight) {
          check_stage_count(num_stages);
          sim::BalanceOptions o{microbatch_size, unwrap(sim::parse_optimizer(optimizer)), recompute,
                                std::move(stage_speed), std::move(capacity_bytes), std::move(in_flight)};
          return without_gil([](const sim::ModelSpec& copy, int stages, const sim::BalanceOptions& options) {
            return unwrap(sim::balanced_partition(copy, stages, options));
          }, model, num_stages, std::move(o));
        },
        py::arg("model"), py::arg("num_stages"), py::kw_only(), py::arg("microbatch_size") = 1,
        py::arg("optimizer") = "adam", py::arg("recompute") = false, py::arg("stage_speed") = std::vector<double>{},
        py::arg("capacity_bytes") = std::vector<Bytes>{}, py::arg("in_flight") = std::vector<int>{},
        "The exact min-max partition: minimizes the slowest stage's forward+backward time, optionally\n"
        "under per-stage memory caps (capacity_bytes) with in_flight micro-batches per stage.");
}

void bind_cost_model_builders(py::module_& m) {
  m.def("build_cost_model",
        [](const sim::ModelSpec& model, const sim::ClusterSpec& cluster, const sim::Partition& partition,
           std::optional<std::vector<int>> placement, int microbatch_size, const std::string& optimizer) {
          std::vector<int> where = placement ? *placement : unwrap(sim::default_placement(partition.num_stages(), cluster));
          const auto kind = unwrap(sim::parse_optimizer(optimizer));
          if (model.tensor_parallel == 1 || where.empty()) {
            return unwrap(sim::build_cost_model(model, cluster, partition, where, microbatch_size, kind));
          }
          sim::ParallelLayout layout;
          layout.tp = model.tensor_parallel;
          layout.pp = *std::max_element(where.begin(), where.end()) + 1;
          return unwrap(sim::build_cost_model(model, cluster, partition, where, microbatch_size, kind, layout));
        },
        py::arg("model"), py::arg("cluster"), py::arg("partition"), py::kw_only(), py::arg("placement") = py::none(),
        py::arg("microbatch_size") = 1, py::arg("optimizer") = "adam",
        "The simulator's CostModel for a partition of `model` on `cluster` (placement: stage i on pipeline\n"
        "rank i by default) at a micro-batch size; optimizer 'sgd', 'momentum' or 'adam'. A model from\n"
        "tensor_parallel_view lays each pipeline rank over its tp devices and pays its collectives.");
  m.def("uniform_cost_model",
        [](int num_stages, Nanoseconds forward_ns, Nanoseconds backward_ns, Nanoseconds transfer_ns,
           const std::string& comm_mode) {
          check_stage_count(num_stages);
          return sim::uniform_cost_model(num_stages, forward_ns, backward_ns, transfer_ns,
                                         unwrap(sim::parse_comm_mode(comm_mode)));
        },
        py::arg("num_stages"), py::arg("forward_ns"), py::arg("backward_ns"), py::arg("transfer_ns") = 0,
        py::arg("comm_mode") = "overlap",
        "Every stage F = forward_ns, B = backward_ns (I = W = B/2, R = F), one device per stage, every\n"
        "transfer transfer_ns long.");
}

}  // namespace

void bind_specs(py::module_& m) {
  bind_units(m);
  bind_spec_classes(m);
  bind_presets(m);
  bind_partitions(m);
  bind_cost_model_builders(m);
}

}  // namespace pipeworks::python
