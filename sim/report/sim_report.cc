// The simulate command's table and JSON report (see sim_report.h, docs/simulate_report.md).
#include "sim/report/sim_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sched/schedule_notes.h"
#include "sched/units_text.h"
#include "sim/engine/closed_form_bubble.h"
#include "sim/engine/sim_result_fields.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/field_json.h"
#include "sim/spec/size_extrapolation.h"
#include "sim/spec/text_table.h"
#include "sim/spec/units.h"

namespace pipeworks::sim {
namespace {

using Json = nlohmann::ordered_json;

// A device's figures and then its memory's, in their tables' order (sim_result_fields.h).
Json device_figures(const DeviceResult& d) {
  Json j = Json::object();
  add_json_fields(j, device_result_fields(), d);
  add_json_fields(j, memory_report_fields(), d.memory);
  return j;
}

// "[0,7) embedding..h5", or "[3,4) h2" for one layer, or "" when the layers are unknown.
std::string layers_text(const ReportInputs& inputs, int stage) {
  if (stage < 0 || static_cast<std::size_t>(stage) >= inputs.stages.size()) return "";
  const StageLayers& l = inputs.stages[static_cast<std::size_t>(stage)];
  std::string names = l.first_layer;
  if (l.layer_end - l.layer_begin > 1) names += ".." + l.last_layer;
  return fmt::format("[{},{}) {}", l.layer_begin, l.layer_end, names);
}

const DeviceResult* device_of_stage(const SimResult& result, int stage) {
  for (const DeviceResult& d : result.devices) {
    if (std::find(d.stages.begin(), d.stages.end(), stage) != d.stages.end()) return &d;
  }
  return nullptr;
}

}  // namespace

std::vector<StageLayers> stage_layers(const Partition& partition, const ModelSpec& model) {
  std::vector<StageLayers> stages;
  for (int s = 0; s < partition.num_stages(); ++s) {
    const int b = partition.begin(s);
    const int e = partition.end(s);
    stages.push_back(StageLayers{b, e, model.layers[static_cast<std::size_t>(b)].name,
                                 model.layers[static_cast<std::size_t>(e - 1)].name});
  }
  return stages;
}


std::vector<std::string> simulation_notes(const SimResult& result) {
  std::vector<std::string> notes;
  const bool collectives_timed = std::any_of(result.devices.begin(), result.devices.end(),
                                             [](const DeviceResult& d) { return d.collective_ns > 0; });
  if (const std::int64_t n = result.num_stage_level_actions; n > 0 && !collectives_timed) {
    notes.push_back(fmt::format("{} (UNSHARD, RESHARD, REDUCE_GRAD) {}: the cost model gives {} no time (no "
                                "data-parallel group)",
                                sched::counted(n, "stage-level action"), n == 1 ? "costs nothing" : "cost nothing",
                                n == 1 ? "it" : "them"));
  }
  if (const std::int64_t n = result.num_composites; n > 0 && result.overlapped_pass_share >= 1) {
    notes.push_back(fmt::format("{} {}: overlap is not modelled", sched::counted(n, "OVERLAP_F_B action"),
                                n == 1 ? "runs as its forward then its backward" : "run as their forward then their backward"));
  } else if (n > 0) {
    notes.push_back(fmt::format("{} {} overlapped: the longer pass and {:g}% of the shorter, both ending together "
                                "(the cluster's overlapped_pass_share)",
                                sched::counted(n, "OVERLAP_F_B action"), n == 1 ? "runs" : "run",
                                100 * result.overlapped_pass_share));
  }
  return notes;
}

std::vector<std::string> input_warnings(const ModelSpec& model, int microbatch_size,
                                        std::optional<sched::ScheduleKind> kind, int virtual_stages) {
  std::vector<std::string> out;
  if (auto e = size_extrapolation(model, microbatch_size)) out.push_back(describe(*e));
  if (kind) {
    if (auto note = sched::degenerate_schedule_note(*kind, virtual_stages)) out.push_back(*note);
  }
  return out;
}

double gpipe_closed_form_bubble(int num_stages, int num_microbatches) {
  const auto form = closed_form_bubble(sched::ScheduleKind::kGPipe, num_stages, num_microbatches, num_stages);
  return form ? form->fraction() : 0.0;
}

nlohmann::ordered_json layout_json(const ParallelLayout& layout) {
  return nlohmann::ordered_json{{"tp", layout.tp},
                                {"pp", layout.pp},
                                {"virtual_stages", layout.virtual_stages},
                                {"dp", layout.dp},
                                {"zero", std::string(zero_stage_name(layout.zero))},
                                {"rank_order", std::string(rank_order_name(layout.order))},
                                {"devices", layout.devices()},
                                {"text", layout_text(layout)}};
}

std::string report_json(const SimResult& result, const ReportInputs& inputs) {
  Json stages = Json::array();
  for (int s = 0; s < inputs.num_stages; ++s) {
    const DeviceResult* d = device_of_stage(result, s);
    if (d == nullptr) continue;
    Json j{{"stage", s}};
    if (static_cast<std::size_t>(s) < inputs.stages.size()) {
      const StageLayers& l = inputs.stages[static_cast<std::size_t>(s)];
      j["layer_begin"] = l.layer_begin;
      j["layer_end"] = l.layer_end;
      j["layers"] = layers_text(inputs, s);
    }
    j.update(device_figures(*d));
    stages.push_back(std::move(j));
  }
  Json devices = Json::array();
  for (const DeviceResult& d : result.devices) {
    Json j = device_figures(d);
    j["stages"] = d.stages;
    devices.push_back(std::move(j));
  }
  Json report{
      {"schema", "pipeworks.simulate_report/1"},
      {"model", inputs.model},
      {"cluster", inputs.cluster},
      {"schedule", inputs.schedule},
      {"num_stages", inputs.num_stages},
      {"num_microbatches", inputs.num_microbatches},
      {"microbatch_size", inputs.microbatch_size},
      {"batch_size", std::int64_t{inputs.num_microbatches} * inputs.microbatch_size},
      {"recompute", inputs.recompute},
      {"comm_lowered", inputs.comm_lowered},
  };
  if (inputs.layout) {
    report["layout"] = layout_json(*inputs.layout);
    report["global_batch_size"] = std::int64_t{inputs.num_microbatches} * inputs.microbatch_size * inputs.layout->dp;
  }
  // The result's fields after the inputs (those the inputs echo already, once). The closed form
  // comes right after the simulated bubble it is the reference for.
  for (const Field<SimResult>& field : sim_result_fields()) {
    add_json_field(report, field, result);
    if (field.name == "bubble_fraction") {
      report["gpipe_closed_form_bubble_fraction"] =
          gpipe_closed_form_bubble(inputs.num_stages, inputs.num_microbatches);
    }
  }
  if (inputs.layout) {
    report["global_throughput_samples_per_s"] = result.throughput_samples_per_s * inputs.layout->dp;
  }
  report["notes"] = simulation_notes(result);
  report["warnings"] = inputs.warnings;
  report["stages"] = std::move(stages);
  report["devices"] = std::move(devices);
  return report.dump(2) + "\n";
}

namespace {

Nanoseconds max_collective_ns(const SimResult& result) {
  Nanoseconds most = 0;
  for (const DeviceResult& d : result.devices) most = std::max(most, d.collective_ns);
  return most;
}

}  // namespace

std::string summary_table(const SimResult& result, const ReportInputs& inputs) {
  // Text columns (layers, fits) align left, numbers right.
  TextTable table({{"stage", true}, {"device", true}, {"layers", false}, {"busy", true}, {"bubble", true},
                   {"peak memory", true}, {"capacity", true}, {"fits", false}});
  for (int s = 0; s < inputs.num_stages; ++s) {
    const DeviceResult* d = device_of_stage(result, s);
    if (d == nullptr) continue;
    const MemoryReport& m = d->memory;
    table.add({std::to_string(s), std::to_string(d->device), layers_text(inputs, s), format_duration(d->busy_ns),
               format_percent(d->bubble_fraction), format_bytes(m.peak_bytes),
               m.capacity_bytes > 0 ? format_bytes(m.capacity_bytes) : "-", m.fits ? "yes" : "NO"});
  }
  std::string text = table.str();

  const int k = inputs.num_stages;
  const int m = inputs.num_microbatches;
  const std::int64_t samples = std::int64_t{m} * inputs.microbatch_size;
  text += "\n";
  text += fmt::format("makespan     {}\n", format_duration(result.makespan_ns));
  if (result.step_ns != result.makespan_ns) {
    text += fmt::format("step         {} (the optimizer step{} after each device's last action)\n",
                        format_duration(result.step_ns), inputs.layout && inputs.layout->dp > 1 &&
                        (inputs.layout->zero == ZeroStage::kOptimizer || inputs.layout->zero == ZeroStage::kGradients)
                            ? " and ZeRO's parameter all-gather" : "");
  }
  if (const Nanoseconds collective = max_collective_ns(result); collective > 0) {
    text += fmt::format("collectives  {} on the busiest device's collective lane (UNSHARD, REDUCE_GRAD)\n",
                        format_duration(collective));
  }
  if (inputs.layout && inputs.layout->dp > 1) {
    const int dp = inputs.layout->dp;
    text += fmt::format("throughput   {:.1f} samples/s over {} replicas ({} per iteration, {} each)\n",
                        result.throughput_samples_per_s * dp, dp, sched::counted(samples * dp, "sample"),
                        sched::counted(samples, "sample"));
  } else {
    text += fmt::format("throughput   {:.1f} samples/s ({} per iteration)\n", result.throughput_samples_per_s,
                        sched::counted(samples, "sample"));
  }
  // A schedule file's kind is unknown, and its layout alone does not say which closed form holds
  // (a V-shaped file looks interleaved): GPipe's, for reference, said as such.
  const std::string closed_form =
      inputs.kind ? closed_form_text(*inputs.kind, k, m, static_cast<int>(result.devices.size()))
                  : closed_form_text(sched::ScheduleKind::kGPipe, k, m, k) + " (for reference: the file's kind is unknown)";
  text += fmt::format("bubble       {} simulated, {}\n", format_percent(result.bubble_fraction), closed_form);
  std::size_t fitting = 0;
  for (const DeviceResult& d : result.devices) fitting += d.memory.fits ? 1 : 0;
  text += fmt::format("memory       {}\n", result.fits ? "fits on every device"
                                                       : fmt::format("DOES NOT FIT on {} of {} devices",
                                                                     result.devices.size() - fitting,
                                                                     result.devices.size()));
  for (const std::string& note : simulation_notes(result)) text += fmt::format("note         {}\n", note);
  for (const std::string& warning : inputs.warnings) text += fmt::format("warning      {}\n", warning);
  return text;
}

}  // namespace pipeworks::sim
