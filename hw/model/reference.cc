// The non-pipelined reference and tensor comparison (see reference.h).
#include "hw/model/reference.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/model/action_context.h"
#include "hw/model/torch_errors.h"

namespace pipeworks::hw {

Reference::Reference(const Model& model, const OptimizerConfig& optimizer)
    : model_(clone_model(model)), optimizer_(make_optimizer(parameters(), optimizer)) {
  for (Layer& layer : model_.layers) layer.module.ptr()->train();
}

torch::Tensor Reference::forward(const torch::Tensor& input) {
  torch::Tensor x = input;
  for (Layer& layer : model_.layers) x = layer.module.forward(x);
  return x;
}

sched::Result<double> Reference::step(const MicroBatches& batch, std::uint64_t seed, ReferenceMode mode) {
  auto loss = accumulate(batch, seed, mode);
  if (!loss) return loss;
  if (auto stepped = apply_step(); !stepped) return stepped.error();
  return loss;
}

sched::Result<double> Reference::accumulate(const MicroBatches& batch, std::uint64_t seed, ReferenceMode mode) {
  const int m = batch.size();
  if (m < 1) return sched::Error{"reference: no micro-batches"};
  try {
    drop_grads(parameters());
    double loss_sum = 0;
    if (mode == ReferenceMode::kMicrobatchMagnitudes) {
      accumulate_with_magnitudes(batch, seed, loss_sum);
    } else if (mode == ReferenceMode::kMicrobatches) {
      for (int i = 0; i < m; ++i) {
        const auto at = static_cast<std::size_t>(i);
        const ActionScope scope({seed, i, sched::ActionKind::kForward});
        const torch::Tensor loss = compute_loss(model_.loss, forward(batch.inputs[at]), batch.targets[at]);
        loss_sum += loss.item<double>();
        torch::autograd::backward({loss}, {torch::full_like(loss, 1.0 / m)});
      }
      loss_sum /= m;
    } else {
      const ActionScope scope({seed, -1, sched::ActionKind::kForward});
      const torch::Tensor loss = compute_loss(model_.loss, forward(torch::cat(batch.inputs)), torch::cat(batch.targets));
      loss_sum = loss.item<double>();
      loss.backward();
    }
    return loss_sum;
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("reference: {}", torch_error_message(e))};
  }
}

sched::Status Reference::apply_step() {
  try {
    optimizer_->step();
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("reference: optimizer step: {}", torch_error_message(e))};
  }
  return sched::Ok{};
}

void Reference::set_gradients(const std::vector<torch::Tensor>& gradients) {
  const std::vector<torch::Tensor> params = parameters();
  for (std::size_t i = 0; i < params.size() && i < gradients.size(); ++i) {
    if (gradients[i].defined()) params[i].mutable_grad() = gradients[i].detach().clone();
  }
}

// Each micro-batch's backward into fresh gradients, added to the running sum in place as
// autograd's own accumulation adds them (so the sum is kMicrobatches's, bit for bit), and its
// magnitudes to theirs.
void Reference::accumulate_with_magnitudes(const MicroBatches& batch, std::uint64_t seed, double& loss_sum) {
  const int m = batch.size();
  const std::vector<torch::Tensor> params = parameters();
  std::vector<torch::Tensor> sums(params.size());
  magnitudes_.assign(params.size(), torch::Tensor());
  for (int i = 0; i < m; ++i) {
    const auto at = static_cast<std::size_t>(i);
    drop_grads(params);
    const ActionScope scope({seed, i, sched::ActionKind::kForward});
    const torch::Tensor loss = compute_loss(model_.loss, forward(batch.inputs[at]), batch.targets[at]);
    loss_sum += loss.item<double>();
    torch::autograd::backward({loss}, {torch::full_like(loss, 1.0 / m)});
    const torch::NoGradGuard no_grad;
    for (std::size_t p = 0; p < params.size(); ++p) {
      const torch::Tensor g = params[p].grad();
      if (!g.defined()) continue;
      sums[p] = sums[p].defined() ? sums[p].add_(g) : g.clone();
      magnitudes_[p] = magnitudes_[p].defined() ? magnitudes_[p].add_(g.abs()) : g.abs();
    }
  }
  for (std::size_t p = 0; p < params.size(); ++p) params[p].mutable_grad() = sums[p];
  loss_sum /= m;
}

std::vector<torch::Tensor> Reference::parameters() const {
  std::vector<torch::Tensor> out;
  for (const Layer& layer : model_.layers) {
    for (const torch::Tensor& p : layer.module.ptr()->parameters()) out.push_back(p);
  }
  return out;
}

std::vector<torch::Tensor> Reference::gradients() const {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : parameters()) out.push_back(p.grad());
  return out;
}

TensorDiff compare_tensors(const std::vector<torch::Tensor>& actual, const std::vector<torch::Tensor>& expected,
                           double rtol, double atol) {
  TensorDiff diff;
  if (actual.size() != expected.size()) {
    diff.same_shapes = diff.exactly_equal = diff.all_close = false;
    return diff;
  }
  const torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const torch::Tensor& a = actual[i];
    const torch::Tensor& b = expected[i];
    if (a.defined() != b.defined()) {
      diff.same_shapes = diff.exactly_equal = diff.all_close = false;
      continue;
    }
    if (!a.defined()) continue;
    if (a.sizes() != b.sizes()) {
      diff.same_shapes = diff.exactly_equal = diff.all_close = false;
      continue;
    }
    const torch::Tensor a64 = a.to(torch::kDouble);
    const torch::Tensor b64 = b.to(torch::kDouble);
    const torch::Tensor abs = (a64 - b64).abs();
    if (abs.numel() == 0) continue;
    diff.max_abs_diff = std::max(diff.max_abs_diff, abs.max().item<double>());
    const torch::Tensor nonzero = b64.abs() > 0;
    if (nonzero.any().item<bool>()) {
      diff.max_rel_diff = std::max(diff.max_rel_diff, (abs.masked_select(nonzero) / b64.abs().masked_select(nonzero)).max().item<double>());
    }
    diff.exactly_equal = diff.exactly_equal && torch::equal(a, b);
    diff.all_close = diff.all_close && (abs <= atol + rtol * b64.abs()).all().item<bool>();
  }
  return diff;
}

}  // namespace pipeworks::hw
