// The data-parallel run's checks (see replica_checks.h).
#include "hw/dist/replica_checks.h"

#include <cstdint>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/run/reference_check.h"

namespace pipeworks::hw {

std::map<int, std::vector<at::Tensor>> replicated_parameters(const std::vector<StageCell>& cells, int device) {
  std::map<int, std::vector<at::Tensor>> out;
  for (const StageCell& c : cells) {
    if (c.device != device) continue;
    auto& mine = out[c.stage];
    for (const torch::Tensor& p : c.parameters()) {
      if (p.requires_grad()) mine.push_back(p);
    }
  }
  return out;
}

std::string bytes_digest(const std::vector<at::Tensor>& tensors) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const at::Tensor& t : tensors) {
    const torch::Tensor bytes = t.detach().cpu().contiguous();
    const auto* data = static_cast<const unsigned char*>(bytes.data_ptr());
    for (std::size_t i = 0; i < bytes.nbytes(); ++i) hash = (hash ^ data[i]) * 1099511628211ULL;
  }
  return fmt::format("{:016x}", hash);
}

int first_disagreeing_rank(const std::vector<std::string>& digests, const std::vector<int>& group) {
  const std::string& first = digests.at(static_cast<std::size_t>(group.front()));
  for (const int r : group) {
    if (digests.at(static_cast<std::size_t>(r)) != first) return r;
  }
  return -1;
}

sched::Status check_replicas_agree(C10dGroup& group, const RankPlace& place, const std::string& digest, int step) {
  auto all = exchange_all(group, fmt::format("replica-digest{}", step), digest);
  if (!all) return all.error();
  if (const int r = first_disagreeing_rank(*all, place.replica_group); r >= 0) {
    return sched::Error{fmt::format("rank {}: after step {} the parameters of rank {} differ from rank {}'s, "
                                    "replicas of the same pipeline rank (data-parallel group {})",
                                    place.rank, step, r, place.replica_group.front(), place.device)};
  }
  return sched::Ok{};
}

sched::Result<GradientCheck> check_replica_gradients(C10dReplicaSync& sync, const std::vector<StageCell>& cells,
                                                     const Reference& reference, const RankPlace& place,
                                                     int num_microbatches) {
  const std::vector<torch::Tensor> ref_grads = reference.gradients();
  const std::vector<torch::Tensor>& magnitudes = reference.magnitudes();
  const int dp = place.layout.dp;
  GradientCheck check;
  std::size_t index = 0;  // position in the model's parameter list
  for (const StageCell& c : cells) {
    std::vector<torch::Tensor> expected, scales;
    for (const torch::Tensor& p : c.parameters()) {
      if (c.device == place.device && p.requires_grad() && index < ref_grads.size()) {
        expected.push_back(ref_grads[index]);
        scales.push_back(index < magnitudes.size() ? magnitudes[index] : torch::Tensor());
      }
      ++index;
    }
    if (c.device != place.device) continue;
    auto reduced = sync.reduced_gradients(c.stage);
    if (!reduced) return reduced.error();
    check_summation_bound(check, *reduced, expected, scales, 2 * (num_microbatches * dp + num_microbatches + dp));
  }
  return check;
}

namespace {

// This rank's stages' reduced gradients, pickled; empty on the ranks of other replicas.
sched::Result<std::string> own_reduced_gradients(C10dReplicaSync& sync, const std::vector<StageCell>& cells,
                                                 const RankPlace& place) {
  c10::List<torch::Tensor> list;
  for (const StageCell& c : cells) {
    if (c.device != place.device) continue;
    auto reduced = sync.reduced_gradients(c.stage);
    if (!reduced) return reduced.error();
    for (const torch::Tensor& g : *reduced) list.push_back(g.detach().cpu());
  }
  if (place.replica != 0) return std::string();
  const std::vector<char> bytes = torch::pickle_save(list);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

sched::Result<std::vector<at::Tensor>> pipeline_gradients(C10dGroup& group, C10dReplicaSync& sync,
                                                          const std::vector<StageCell>& cells, const RankPlace& place,
                                                          int step) {
  auto mine = own_reduced_gradients(sync, cells, place);
  if (!mine) return mine.error();
  auto all = exchange_all(group, fmt::format("reduced-gradients{}", step), *mine);
  if (!all) return all.error();
  std::map<int, std::pair<c10::List<torch::Tensor>, std::size_t>> sent;  // by rank: its list, the next to take
  std::vector<at::Tensor> out;
  try {
    for (const StageCell& c : cells) {
      const int owner = sim::rank_of(place.layout, {0, 0, c.device});
      auto it = sent.find(owner);
      if (it == sent.end()) {
        const std::string& text = (*all)[static_cast<std::size_t>(owner)];
        const torch::IValue value = torch::pickle_load(std::vector<char>(text.begin(), text.end()));
        it = sent.emplace(owner, std::make_pair(value.toTensorList(), std::size_t{0})).first;
      }
      auto& [list, next] = it->second;
      for (const torch::Tensor& p : c.parameters()) {
        if (!p.requires_grad()) {
          out.emplace_back();
          continue;
        }
        if (next >= list.size()) return sched::Error{fmt::format("rank {} sent too few gradients", owner)};
        out.push_back(list.get(next++));
      }
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("the reduced gradients of step {}: {}", step, e.what())};
  }
  return out;
}

}  // namespace pipeworks::hw
