// From specs to a simulation, checking what comes out (spec_simulation.h).
#include "tests/fuzz/spec_simulation.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/engine/simulator.h"
#include "sim/plan/cost_model_builder.h"
#include "sim/plan/partition_text.h"
#include "sim/spec/tensor_parallel.h"
#include "tests/fuzz/fuzz_check.h"

namespace pipeworks::fuzz {
namespace {

void check_result(const sim::SimResult& r) {
  require(r.makespan_ns >= 0, "a simulation's makespan is non-negative");
  for (const sim::DeviceResult& d : r.devices) {
    require(d.bubble_fraction >= 0 && d.bubble_fraction <= 1, "every device's bubble lies in [0, 1]",
            [&] { return fmt::format("device {}: bubble {}", d.device, d.bubble_fraction); });
    const sim::Bytes fixed = d.memory.param_bytes + d.memory.grad_bytes + d.memory.optimizer_bytes;
    require(d.memory.peak_bytes >= fixed && d.memory.peak_activation_bytes >= 0,
            "a device's memory peak is at least its static part",
            [&] { return fmt::format("device {}: peak {}, static {}", d.device, d.memory.peak_bytes, fixed); });
  }
}

void simulate_one(const sim::ModelSpec& model, const sim::ClusterSpec& cluster, int stages, int microbatch_size,
                  std::string_view partition_text) {
  constexpr int kMicrobatches = 3;
  sim::PartitionContext context;
  context.schedule = sched::ScheduleKind::kGPipe;
  context.num_microbatches = kMicrobatches;
  context.microbatch_size = microbatch_size;
  for (int s = 0; s < stages; ++s) {
    context.stage_speed.push_back(cluster.devices[static_cast<std::size_t>(s)].relative_speed);
    context.capacity_bytes.push_back(cluster.devices[static_cast<std::size_t>(s)].memory_bytes);
  }
  auto choice = sim::parse_partition_choice(partition_text);
  require(choice.ok(), "the harness's partition texts are uniform or balanced");
  auto partition = sim::choose_partition(*choice, model, stages, context);
  if (!partition) {
    const bool capped = std::any_of(context.capacity_bytes.begin(), context.capacity_bytes.end(),
                                    [](sim::Bytes b) { return b > 0; });
    require(capped || partition.error().message.find("fits in memory") == std::string::npos,
            "a partition is refused for memory only when some stage has a memory cap",
            [&] { return partition.error().message; });
    return;
  }
  const std::vector<int> placement = sched::identity_placement(stages);
  sim::ParallelLayout layout;
  layout.tp = model.tensor_parallel;
  layout.pp = stages;
  auto costs =
      sim::build_cost_model(model, cluster, *partition, placement, microbatch_size, sim::OptimizerKind::kAdam, layout);
  if (!costs) return;
  auto schedule = sched::gpipe(sched::ScheduleShape{stages, kMicrobatches, placement});
  require(schedule.ok(), "GPipe generates for a small shape");
  auto lowered = sched::lower_comm(*schedule);
  require(lowered.ok(), "GPipe lowers");
  for (const sched::Schedule* s : {&*schedule, &*lowered}) {
    if (auto result = sim::simulate(*s, *costs)) check_result(*result);
  }
}

}  // namespace

sim::ClusterSpec reference_cluster() {
  sim::ClusterSpec c;
  c.name = "reference";
  c.devices.assign(4, sim::DeviceSpec{80LL << 30, 1.0, 4e14});
  c.devices_per_node = 2;
  c.intra_node = sim::LinkSpec{450e9, 3'000};
  c.inter_node = sim::LinkSpec{50e9, 5'000};
  c.dispatch_overhead_ns = 10'000;
  return c;
}

sim::ModelSpec reference_model() {
  sim::ModelSpec m;
  m.name = "reference";
  m.input_bytes = sim::ScaledBytes{0, 16 << 10};
  for (int l = 0; l < 8; ++l) {
    sim::LayerSpec layer;
    layer.name = fmt::format("layer{}", l);
    layer.forward = sim::ScaledDuration{20'000, 1'500'000 + 100'000 * l};
    layer.set_backward(sim::ScaledDuration{40'000, 3'000'000});
    layer.output_bytes = sim::ScaledBytes{0, 3 << 20};
    layer.stash_bytes = sim::ScaledBytes{1 << 20, 12 << 20};
    layer.param_bytes = 75 << 20;
    m.layers.push_back(layer);
  }
  return m;
}

void simulate_specs(const sim::ModelSpec& model, const sim::ClusterSpec& cluster) {
  // A whole model whose layers split runs again as one rank of tp 2, with sequence parallelism.
  if (model.tensor_parallel == 1 && sim::splits_over_tensor_parallel(model)) {
    auto rank = sim::tensor_parallel_view(model, 2, true);
    require(rank.ok() && sim::check_model_spec(*rank).ok(), "a model whose layers split has a valid rank of tp 2",
            [&] { return rank ? sim::check_model_spec(*rank).error().message : rank.error().message; });
    simulate_specs(*rank, cluster);
  }
  const int most = std::min({model.num_layers(), cluster.num_devices() / model.tensor_parallel, 4});
  if (most < 1) return;
  for (const int stages : {1, most}) {
    for (const int microbatch_size : {1, 4096}) {
      for (const std::string_view text : {"uniform", "balanced"}) {
        simulate_one(model, cluster, stages, microbatch_size, text);
      }
    }
    if (most == 1) break;
  }
}

}  // namespace pipeworks::fuzz
