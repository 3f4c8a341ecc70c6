// The in-process mailbox transport (see inprocess_transport.h).
#include "hw/exec/inprocess_transport.h"

#include <fmt/format.h>

#include "sched/dependencies.h"

namespace pipeworks::hw {

InProcessTransport::Key InProcessTransport::key_of(const sched::Action& recv) {
  return {sched::kind_index(recv.kind), recv.stage, recv.microbatch};
}

sched::Status InProcessTransport::send(const sched::Action& send, const at::Tensor& tensor) {
  if (!sched::is_send(send.kind)) return sched::Error{fmt::format("transport: {} is not a send", to_string(send))};
  const auto peer = sched::comm_peer(send, num_stages_);
  if (!peer) return sched::Error{fmt::format("transport: {} has no receiving stage", to_string(send))};
  {
    const std::lock_guard lock(mutex_);
    if (aborted_) return sched::Error{fmt::format("transport aborted: {}", *aborted_)};
    auto [it, inserted] = mailbox_.emplace(key_of(*peer), tensor);
    if (!inserted) return sched::Error{fmt::format("transport: {} was sent twice", to_string(send))};
  }
  ready_.notify_all();
  return sched::Ok{};
}

sched::Result<at::Tensor> InProcessTransport::recv(const sched::Action& recv, std::chrono::nanoseconds timeout) {
  if (!sched::is_recv(recv.kind)) return sched::Error{fmt::format("transport: {} is not a receive", to_string(recv))};
  const Key key = key_of(recv);
  std::unique_lock lock(mutex_);
  const bool arrived = ready_.wait_for(lock, timeout, [&] { return aborted_ || mailbox_.contains(key); });
  if (aborted_) return sched::Error{fmt::format("transport aborted: {}", *aborted_)};
  if (!arrived) {
    return sched::Error{fmt::format("{} timed out after {} ms waiting for its sender",
                                    to_string(recv),
                                    std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count())};
  }
  auto node = mailbox_.extract(key);
  return std::move(node.mapped());
}

void InProcessTransport::abort(const std::string& reason) {
  {
    const std::lock_guard lock(mutex_);
    if (!aborted_) aborted_ = reason;
  }
  ready_.notify_all();
}

void InProcessTransport::reset() {
  const std::lock_guard lock(mutex_);
  mailbox_.clear();
  aborted_.reset();
}

std::size_t InProcessTransport::pending() const {
  const std::lock_guard lock(mutex_);
  return mailbox_.size();
}

}  // namespace pipeworks::hw
