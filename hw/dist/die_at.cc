// The die-at test hook (see die_at.h).
#include "hw/dist/die_at.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/model/action_context.h"

namespace pipeworks::hw {
namespace {

using sched::Action;
using sched::ActionKind;

[[noreturn]] void die(const Action& at, int rank) {
  std::fprintf(stderr, "rank %d: PIPEWORKS_TEST_DIE_AT: exiting with code %d at %s\n", rank, kDieAtExitCode,
               sched::to_string(at).c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  ::_exit(kDieAtExitCode);
}

// Identity; exits at the F/R of its micro-batch, or (B) from the gradient hook of its output.
class DieLayerImpl : public torch::nn::Module {
 public:
  DieLayerImpl(Action at, int rank) : at_(at), rank_(rank) {}
  torch::Tensor forward(const torch::Tensor& x) {
    const ActionContext& context = current_action_context();
    if (context.microbatch != at_.microbatch) return x;
    if (context.kind == at_.kind && (at_.kind == ActionKind::kForward || at_.kind == ActionKind::kRecompute)) {
      die(at_, rank_);
    }
    if (at_.kind == ActionKind::kBackward && x.requires_grad()) {
      const Action at = at_;
      const int rank = rank_;
      torch::Tensor y = x.view_as(x);
      y.register_hook([at, rank](const torch::Tensor& grad) -> torch::Tensor {
        die(at, rank);
        return grad;
      });
      return y;
    }
    return x;
  }

 private:
  Action at_;
  int rank_;
};
TORCH_MODULE(DieLayer);

class DyingTransport final : public Transport {
 public:
  DyingTransport(std::unique_ptr<Transport> inner, Action at, int rank)
      : inner_(std::move(inner)), at_(at), rank_(rank) {}
  sched::Status send(const Action& send, const at::Tensor& tensor) override {
    if (send == at_) die(at_, rank_);
    return inner_->send(send, tensor);
  }
  sched::Result<at::Tensor> recv(const Action& recv, std::chrono::nanoseconds timeout) override {
    if (recv == at_) die(at_, rank_);
    return inner_->recv(recv, timeout);
  }
  sched::Status finish_sends(std::chrono::nanoseconds timeout) override {
    return inner_->finish_sends(timeout);
  }
  void abort(const std::string& reason) override { inner_->abort(reason); }
  void reset() override { inner_->reset(); }

 private:
  std::unique_ptr<Transport> inner_;
  Action at_;
  int rank_;
};

}  // namespace

sched::Result<std::optional<Action>> read_die_at(const EnvLookup& lookup) {
  const char* text = lookup ? lookup("PIPEWORKS_TEST_DIE_AT") : std::getenv("PIPEWORKS_TEST_DIE_AT");
  if (text == nullptr) return std::optional<Action>{};
  const std::string value(text);
  const auto bad = [&] {
    return sched::Error{fmt::format("PIPEWORKS_TEST_DIE_AT='{}': expected stage,KIND,microbatch (e.g. 1,B,2)", value)};
  };
  const auto first = value.find(',');
  const auto second = first == std::string::npos ? first : value.find(',', first + 1);
  if (second == std::string::npos) return bad();
  // Reuse the action grammar: "1,B,2" -> "1B2".
  auto action = sched::parse_action(value.substr(0, first) + value.substr(first + 1, second - first - 1) +
                                    value.substr(second + 1));
  if (!action) return bad();
  if (action->kind == ActionKind::kBackwardInput || action->kind == ActionKind::kBackwardWeight) return bad();
  return std::optional<Action>{*action};
}

void install_die_at(std::vector<StageCell>& cells, const Action& at, int rank) {
  if (!sched::is_compute(at.kind)) return;
  for (StageCell& cell : cells) {
    if (cell.stage == at.stage) cell.layers->push_back("die_at", DieLayer(at, rank));
  }
}

std::unique_ptr<Transport> dying_transport(std::unique_ptr<Transport> inner, const Action& at, int rank) {
  return std::make_unique<DyingTransport>(std::move(inner), at, rank);
}

}  // namespace pipeworks::hw
