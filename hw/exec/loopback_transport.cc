// The peerless transport of the stage replay (see loopback_transport.h).
#include "hw/exec/loopback_transport.h"

#include <fmt/format.h>

namespace pipeworks::hw {

std::string LoopbackTransport::aborted() const {
  const std::lock_guard lock(mutex_);
  return aborted_;
}

sched::Status LoopbackTransport::send(const sched::Action& send, const at::Tensor&) {
  if (const std::string why = aborted(); !why.empty()) {
    return sched::Error{fmt::format("{}: transport aborted: {}", to_string(send), why)};
  }
  return sched::Ok{};
}

sched::Result<at::Tensor> LoopbackTransport::recv(const sched::Action& recv, std::chrono::nanoseconds) {
  if (const std::string why = aborted(); !why.empty()) {
    return sched::Error{fmt::format("{}: transport aborted: {}", to_string(recv), why)};
  }
  const bool forward = recv.kind == sched::ActionKind::kRecvF;
  if (!forward && recv.kind != sched::ActionKind::kRecvB) {
    return sched::Error{fmt::format("{} is not a receive", to_string(recv))};
  }
  // RECV_F(s, m) gets stage s-1's output of m; RECV_B(s, m) the gradient of stage s's output of m.
  const int from = forward ? recv.stage - 1 : recv.stage;
  const auto& source = forward ? outputs_ : output_grads_;
  if (from < 0 || static_cast<std::size_t>(from) >= source.size() || recv.microbatch < 0 ||
      static_cast<std::size_t>(recv.microbatch) >= source[static_cast<std::size_t>(from)].size() ||
      !source[static_cast<std::size_t>(from)][static_cast<std::size_t>(recv.microbatch)].defined()) {
    return sched::Error{fmt::format("{}: the loopback transport has no tensor for it", to_string(recv))};
  }
  return source[static_cast<std::size_t>(from)][static_cast<std::size_t>(recv.microbatch)];
}

void LoopbackTransport::abort(const std::string& reason) {
  const std::lock_guard lock(mutex_);
  aborted_ = reason.empty() ? "aborted" : reason;
}

void LoopbackTransport::reset() {
  const std::lock_guard lock(mutex_);
  aborted_.clear();
}

}  // namespace pipeworks::hw
