// Decoding a CostModel from bytes (cost_from_bytes.h).
#include "tests/fuzz/cost_from_bytes.h"

#include <algorithm>
#include <array>

namespace pipeworks::fuzz {
namespace {

// Mostly small values (ties and zero are interesting), sometimes anything up to `most`.
std::int64_t amount(ByteSource& bytes, std::int64_t most) {
  const int shape = bytes.small(0, 3);
  if (shape == 0) return 0;
  if (shape == 1) return bytes.in_range(0, 16);
  return bytes.in_range(0, most);
}

sim::StageCost stage_from_bytes(ByteSource& bytes, bool huge) {
  const std::int64_t most_ns = huge ? std::int64_t{1} << 50 : std::int64_t{1} << 24;
  const std::int64_t most_bytes = huge ? std::int64_t{1} << 50 : std::int64_t{1} << 32;
  sim::StageCost c;
  c.forward_ns = 1 + amount(bytes, most_ns - 1);
  c.backward_input_ns = amount(bytes, most_ns);
  c.backward_weight_ns = amount(bytes, most_ns);
  const std::int64_t split_sum = c.backward_input_ns + c.backward_weight_ns;
  c.backward_ns = std::max<std::int64_t>(1, bytes.flag() ? split_sum : amount(bytes, most_ns));
  c.recompute_ns = bytes.flag() ? c.forward_ns : amount(bytes, most_ns);
  if (bytes.flag()) {
    c.resume_forward_ns = amount(bytes, most_ns);
    c.resume_recompute_ns = amount(bytes, most_ns);
    c.resume_backward_ns = amount(bytes, most_ns);
  }
  if (bytes.flag()) {
    c.first_forward_ns = amount(bytes, most_ns);
    c.first_recompute_ns = amount(bytes, most_ns);
    c.first_backward_ns = amount(bytes, most_ns);
  }
  c.input_bytes = amount(bytes, most_bytes);
  c.output_bytes = amount(bytes, most_bytes);
  c.stash_bytes = amount(bytes, most_bytes);
  c.param_bytes = amount(bytes, most_bytes);
  c.grad_bytes = amount(bytes, most_bytes);
  c.optimizer_bytes = amount(bytes, most_bytes);
  return c;
}

double bandwidth_from_bytes(ByteSource& bytes, bool huge) {
  static constexpr std::array<double, 8> kUsual = {1e18, 450e9, 50e9, 8e9, 1e9, 123456789.5, 3e6, 1e5};
  static constexpr std::array<double, 4> kExtreme = {1.0, 0.5, 1e-3, 9.5e18};
  if (huge && bytes.flag()) return kExtreme[bytes.index(kExtreme.size())];
  return kUsual[bytes.index(kUsual.size())];
}

void add_contention(ByteSource& bytes, bool huge, sim::CostModel& model) {
  const auto d = static_cast<std::size_t>(model.num_devices);
  for (std::size_t i = 0; i < d; ++i) {
    model.contention_factor.push_back(huge && bytes.flag() ? 1000.0 : 1.0 + bytes.small(0, 40) / 10.0);
  }
  if (bytes.flag()) {
    for (std::size_t i = 0; i < d; ++i) model.contention_group.push_back(bytes.small(0, 1));
  }
}

// The data-parallel costs: collectives, buckets, gathered bytes, the optimizer tail.
void add_data_parallel(ByteSource& bytes, bool huge, sim::CostModel& model) {
  const std::int64_t most_ns = huge ? std::int64_t{1} << 50 : std::int64_t{1} << 24;
  model.overlap_grad_reduce = bytes.flag();
  for (sim::StageCost& c : model.stages) {
    c.reduce_grad_ns = amount(bytes, most_ns);
    c.reduce_grad_buckets = 1 + static_cast<int>(amount(bytes, 100));
    c.unshard_ns = amount(bytes, most_ns);
    c.unshard_bytes = amount(bytes, huge ? std::int64_t{1} << 50 : std::int64_t{1} << 32);
    c.optimizer_step_ns = amount(bytes, most_ns);
    c.param_gather_ns = amount(bytes, most_ns);
  }
}

// Fields the cost model gained after the first corpus was written, read last so that older
// inputs decode as before: forwards without the graph, contention between devices, then
// data-parallel costs.
void add_later_fields(ByteSource& bytes, bool huge, sim::CostModel& model) {
  if (bytes.flag()) {
    for (sim::StageCost& c : model.stages) c.forward_no_grad_ns = amount(bytes, huge ? std::int64_t{1} << 50 : 1 << 24);
  }
  if (bytes.flag()) add_contention(bytes, huge, model);
  if (bytes.flag()) add_data_parallel(bytes, huge, model);
}

}  // namespace

sim::CostModel cost_model_from_bytes(ByteSource& bytes, const CostShape& shape) {
  const int num_stages = shape.num_stages;
  const int num_devices = shape.num_devices;
  const bool huge = shape.huge;
  sim::CostModel model;
  for (int s = 0; s < num_stages; ++s) model.stages.push_back(stage_from_bytes(bytes, huge));
  model.num_devices = num_devices;
  const std::int64_t most_bytes = huge ? std::int64_t{1} << 50 : std::int64_t{1} << 40;
  for (int d = 0; d < num_devices; ++d) model.device_memory_bytes.push_back(amount(bytes, most_bytes));
  // A few links; each ordered pair picks one (or none), so several senders may share a link.
  const int num_links = bytes.small(1, 4);
  for (int l = 0; l < num_links; ++l) {
    const std::int64_t latency = amount(bytes, huge ? std::int64_t{1} << 50 : std::int64_t{1} << 20);
    model.links.push_back(sim::Link{latency, bandwidth_from_bytes(bytes, huge)});
  }
  const auto d = static_cast<std::size_t>(num_devices);
  model.link_of.assign(d * d, -1);
  const bool one_per_pair = bytes.flag();
  for (std::size_t src = 0; src < d; ++src) {
    for (std::size_t dst = 0; dst < d; ++dst) {
      if (src == dst) continue;
      model.link_of[src * d + dst] = one_per_pair ? static_cast<int>(model.links.size())
                                                  : bytes.small(shape.missing_links ? -1 : 0, num_links - 1);
      if (one_per_pair) {
        const sim::Link copy = model.links[bytes.index(static_cast<std::size_t>(num_links))];
        model.links.push_back(copy);
      }
    }
  }
  model.comm_mode = static_cast<sim::CommMode>(bytes.small(0, 2));
  model.per_action_overhead_ns = amount(bytes, huge ? std::int64_t{1} << 50 : 1'000);
  model.microbatch_size = bytes.small(1, 8);
  add_later_fields(bytes, huge, model);
  return model;
}

}  // namespace pipeworks::fuzz
