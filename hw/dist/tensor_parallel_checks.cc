// The tensor-parallel run's checks (see tensor_parallel_checks.h).
#include "hw/dist/tensor_parallel_checks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/dist/replica_checks.h"
#include "hw/run/reference_check.h"

namespace pipeworks::hw {
namespace {

// The positions in the model's parameter list of the parameters on this rank's device.
std::vector<std::size_t> own_positions(const TensorParallelCheckInputs& in) {
  std::vector<std::size_t> out;
  std::size_t index = 0;
  for (const StageCell& c : *in.cells) {
    for (std::size_t i = 0; i < c.parameters().size(); ++i, ++index) {
      if (c.device == in.place->device) out.push_back(index);
    }
  }
  return out;
}

// This rank's gradients in its parameters' order: reduced over its replicas with data parallelism.
sched::Result<std::vector<torch::Tensor>> own_gradients(const TensorParallelCheckInputs& in) {
  std::vector<torch::Tensor> out;
  for (const StageCell& c : *in.cells) {
    if (c.device != in.place->device) continue;
    if (in.replicas == nullptr) {
      for (const torch::Tensor& p : c.parameters()) out.push_back(p.grad());
      continue;
    }
    auto reduced = in.replicas->reduced_gradients(c.stage);
    if (!reduced) return reduced.error();
    out.insert(out.end(), reduced->begin(), reduced->end());
  }
  return out;
}

std::vector<torch::Tensor> own_parameters(const TensorParallelCheckInputs& in) {
  std::vector<torch::Tensor> out;
  for (const StageCell& c : *in.cells) {
    if (c.device != in.place->device) continue;
    for (const torch::Tensor& p : c.parameters()) out.push_back(p.detach());
  }
  return out;
}

// The reference's `whole` tensors at `positions`, each sliced to this rank's shard.
std::vector<torch::Tensor> reference_slices(const std::vector<torch::Tensor>& whole,
                                            const std::vector<std::size_t>& positions,
                                            const std::vector<ParamShard>& shards) {
  std::vector<torch::Tensor> out;
  for (const std::size_t i : positions) out.push_back(whole[i].defined() ? take_shard(whole[i], shards[i]) : whole[i]);
  return out;
}

// This rank's gradients, pickled; empty on the ranks of other replicas (replica 0's speak for them).
std::string pickled(const TensorParallelCheckInputs& in, const std::vector<torch::Tensor>& mine) {
  if (in.place->replica != 0) return std::string();
  c10::List<torch::Tensor> list;
  for (const torch::Tensor& g : mine) list.push_back(g.defined() ? g.detach().cpu() : torch::Tensor());
  const std::vector<char> bytes = torch::pickle_save(list);
  return std::string(bytes.begin(), bytes.end());
}

// The whole model's gradients as the run computed them: every parameter of device d's cells put
// together from the slices of replica 0's tensor ranks of d (a whole parameter from tensor rank
// 0's), exchanged over the store. What the reference's optimizer then applies.
sched::Result<std::vector<torch::Tensor>> assembled_gradients(const TensorParallelCheckInputs& in,
                                                              const std::vector<torch::Tensor>& mine,
                                                              const std::vector<torch::Tensor>& reference, int step) {
  auto all = exchange_all(*in.group, fmt::format("tensor-gradients{}", step), pickled(in, mine));
  if (!all) return all.error();
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& g : reference) out.push_back(g.defined() ? g.clone() : g);
  const sim::ParallelLayout& layout = in.place->layout;
  try {
    for (int t = 0; t < layout.tp; ++t) {
      const std::vector<ParamShard>& shards = (*in.shards)[static_cast<std::size_t>(t)];
      std::map<int, std::pair<c10::List<torch::Tensor>, std::size_t>> sent;  // by rank: its list, the next to take
      std::size_t index = 0;
      for (const StageCell& c : *in.cells) {
        const int owner = sim::rank_of(layout, {t, 0, c.device});
        auto it = sent.find(owner);
        if (it == sent.end()) {
          const std::string& text = (*all)[static_cast<std::size_t>(owner)];
          const torch::IValue value = torch::pickle_load(std::vector<char>(text.begin(), text.end()));
          it = sent.emplace(owner, std::make_pair(value.toTensorList(), std::size_t{0})).first;
        }
        auto& [list, next] = it->second;
        for (std::size_t i = 0; i < c.parameters().size(); ++i, ++index) {
          if (next >= list.size()) return sched::Error{fmt::format("rank {} sent too few gradients", owner)};
          const torch::Tensor g = list.get(next++);
          if ((t == 0 || !shards[index].whole()) && g.defined() && out[index].defined()) {
            put_shard(out[index], shards[index], g);
          }
        }
      }
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("the tensor-parallel gradients of step {}: {}", step, e.what())};
  }
  return out;
}

// Every tensor-parallel rank's digest of its replicated parameters, exchanged; the first rank of
// this rank's group whose digest differs from the group's first is an error.
sched::Status check_tensor_group_agrees(const TensorParallelCheckInputs& in, const std::vector<ParamShard>& shards,
                                        const std::vector<torch::Tensor>& params,
                                        const std::vector<std::size_t>& positions, int step) {
  std::vector<torch::Tensor> replicated;
  for (std::size_t k = 0; k < positions.size(); ++k) {
    if (shards[positions[k]].whole()) replicated.push_back(params[k]);
  }
  auto all = exchange_all(*in.group, fmt::format("tensor-digest{}", step), bytes_digest(replicated));
  if (!all) return all.error();
  const RankPlace& place = *in.place;
  if (const int r = first_disagreeing_rank(*all, place.tensor_group); r >= 0) {
    return sched::Error{fmt::format("rank {}: after step {} the replicated parameters of rank {} differ from rank "
                                    "{}'s, tensor-parallel ranks of the same pipeline rank {}",
                                    place.rank, step, r, place.tensor_group.front(), place.device)};
  }
  return sched::Ok{};
}

}  // namespace

// A split layer's GEMM sums K products a_k b_k of each output element (K: the split dimension,
// the mlp's width, the transformer's model width or ff_width). The reference sums all K in one
// GEMM; a rank sums its K / t, and the all-reduce adds the t partial sums in another order.
// Recursive summation of k terms errs by at most gamma_(k-1) sum |a_k b_k|, gamma_k = k u / (1 - k u)
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 4.4), so the two differ
// by at most (gamma_(K-1) + gamma_(K/t-1) + gamma_(t-1)) sum|a b| <= 2 (K + K/t + t) u sum|a b|
// per reduction (the 2 as in reference_check.h). A gradient depends on the forward's G
// all-reduced outputs (G = the row-parallel GEMMs: the mlp's column/row pairs, two a transformer
// encoder) and on the backward's G all-reduced input gradients: to first order its relative
// difference is at most 2 G times one reduction's, with sum|a b| taken as the value's own scale.
// That scale is not the magnitude of the result when the products cancel, so the bound is the
// check's rtol, with atol = 4 rtol as the default check's (1e-5 / 4e-5), never below the default.
GradientCheck tensor_parallel_tolerance(const ModelConfig& model, int tp) {
  GradientCheck check;
  const bool mlp = model.kind == ModelKind::kMlp;
  const double k = mlp ? model.width : std::max(model.model_width, model.ff_width);
  const double reductions = mlp ? (model.depth + 1) / 2 : 2 * model.layers;  // the mlp's pairs of blocks
  const double u = std::ldexp(1.0, -std::numeric_limits<float>::digits);
  const double per_reduction = 2 * (k + k / tp + tp) * u;
  check.rtol = std::max(check.rtol, 2 * reductions * per_reduction);
  check.atol = std::max(check.atol, 4 * check.rtol);
  return check;
}

sched::Result<GradientCheck> check_tensor_parallel_step(const TensorParallelCheckInputs& in, Reference& reference,
                                                        int step) {
  const std::vector<std::size_t> positions = own_positions(in);
  const std::vector<ParamShard>& shards = (*in.shards)[static_cast<std::size_t>(in.place->tensor_rank)];
  auto gradients = own_gradients(in);
  if (!gradients) return gradients.error();
  GradientCheck check = tensor_parallel_tolerance(*in.model, in.place->layout.tp);
  const std::vector<torch::Tensor> reference_gradients = reference.gradients();
  check_tensors(check, *gradients, reference_slices(reference_gradients, positions, shards));
  auto run_gradients = assembled_gradients(in, *gradients, reference_gradients, step);
  if (!run_gradients) return run_gradients.error();
  reference.set_gradients(*run_gradients);
  if (auto stepped = reference.apply_step(); !stepped) return stepped.error();
  const std::vector<torch::Tensor> params = own_parameters(in);
  GradientCheck parameters;  // the optimizers are elementwise: the default tolerance
  check_tensors(parameters, params, reference_slices(reference.parameters(), positions, shards));
  merge_check(check, parameters);
  if (auto s = check_tensor_group_agrees(in, shards, params, positions, step); !s) return s.error();
  return check;
}

}  // namespace pipeworks::hw
