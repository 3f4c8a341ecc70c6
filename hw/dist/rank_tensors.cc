// A rank's own parameters and gradients: check and test dump (see rank_tensors.h).
#include "hw/dist/rank_tensors.h"

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/dist/c10d_group.h"
#include "hw/run/reference_check.h"

namespace pipeworks::hw {

RankTensors rank_tensors(const std::vector<StageCell>& cells, int rank, const Reference* reference) {
  RankTensors own;
  std::vector<torch::Tensor> ref_params, ref_grads;
  if (reference != nullptr) {
    ref_params = reference->parameters();
    ref_grads = reference->gradients();
  }
  std::size_t index = 0;
  for (const StageCell& c : cells) {
    for (const torch::Tensor& p : c.parameters()) {
      if (c.device == rank) {
        own.parameters.push_back(p.detach().cpu());
        own.gradients.push_back(p.grad().defined() ? p.grad().cpu() : p.grad());
        if (reference != nullptr && index < ref_params.size()) {
          own.reference_parameters.push_back(ref_params[index]);
          own.reference_gradients.push_back(ref_grads[index]);
        }
      }
      ++index;
    }
  }
  return own;
}

GradientCheck check_rank_tensors(const RankTensors& own) {
  GradientCheck check;
  check_tensors(check, own.gradients, own.reference_gradients);
  check_tensors(check, own.parameters, own.reference_parameters);
  return check;
}

sched::Status dump_rank_tensors(const RankTensors& own, int rank) {
  const char* dir = std::getenv("PIPEWORKS_TEST_DUMP_DIR");
  if (dir == nullptr) return sched::Ok{};
  std::vector<torch::Tensor> all = own.parameters;
  all.insert(all.end(), own.gradients.begin(), own.gradients.end());
  const std::string path = (std::filesystem::path(dir) / fmt::format("rank{}.pt", rank)).string();
  try {
    torch::save(all, path);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("cannot write {}: {}", path, describe_c10d_exception(e))};
  }
  return sched::Ok{};
}

}  // namespace pipeworks::hw
