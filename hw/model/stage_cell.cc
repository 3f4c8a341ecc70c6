// Cutting a model into stage cells (see stage_cell.h).
#include "hw/model/stage_cell.h"

#include <fmt/format.h>
#include <torch/torch.h>

namespace pipeworks::hw {

sched::Result<std::vector<StageCell>> make_cells(const Model& model, const sim::Partition& partition,
                                                 const std::vector<int>& placement,
                                                 const std::optional<FailAt>& fail_at) {
  const int num_layers = static_cast<int>(model.layers.size());
  if (auto checked = sim::explicit_partition(partition.boundaries, num_layers); !checked) return checked.error();
  const int num_stages = partition.num_stages();
  if (static_cast<int>(placement.size()) != num_stages) {
    return sched::Error{
        fmt::format("the placement names {} stages but the partition has {}", placement.size(), num_stages)};
  }
  if (fail_at && (fail_at->stage < 0 || fail_at->stage >= num_stages)) {
    return sched::Error{fmt::format("FailAt stage {} is out of range 0..{}", fail_at->stage, num_stages - 1)};
  }
  std::vector<StageCell> cells;
  for (int s = 0; s < num_stages; ++s) {
    StageCell cell;
    cell.stage = s;
    cell.device = placement[static_cast<std::size_t>(s)];
    cell.first_layer = partition.begin(s);
    cell.end_layer = partition.end(s);
    cell.is_last = s + 1 == num_stages;
    cell.loss = model.loss;
    for (int l = cell.first_layer; l < cell.end_layer; ++l) {
      const Layer& layer = model.layers[static_cast<std::size_t>(l)];
      cell.layers->push_back(layer.name, layer.module.clone());
    }
    if (fail_at && fail_at->stage == s) cell.layers->push_back("fail", FailLayer(*fail_at));
    cells.push_back(std::move(cell));
  }
  return cells;
}

std::vector<torch::Tensor> cell_parameters(const std::vector<StageCell>& cells) {
  std::vector<torch::Tensor> out;
  for (const StageCell& cell : cells) {
    for (const torch::Tensor& p : cell.parameters()) out.push_back(p);
  }
  return out;
}

}  // namespace pipeworks::hw
