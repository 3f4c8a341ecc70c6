// A Transport between threads of one process: a mailbox of tensors keyed by the receiving
// action (kind, stage, micro-batch). Sends never block (the mailbox buffers), receives wait on
// a condition variable with a deadline.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "hw/exec/transport.h"

namespace pipeworks::hw {

class InProcessTransport final : public Transport {
 public:
  // num_stages: to pair a send with its receive and reject sends off the pipeline's ends.
  explicit InProcessTransport(int num_stages) : num_stages_(num_stages) {}

  sched::Status send(const sched::Action& send, const at::Tensor& tensor) override;
  sched::Result<at::Tensor> recv(const sched::Action& recv, std::chrono::nanoseconds timeout) override;
  void abort(const std::string& reason) override;
  void reset() override;

  // Tensors delivered and not yet received.
  std::size_t pending() const;

 private:
  using Key = std::tuple<int, int, int>;  // (kind index, stage, micro-batch) of the receive
  static Key key_of(const sched::Action& recv);

  int num_stages_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::map<Key, at::Tensor> mailbox_;
  std::optional<std::string> aborted_;
};

}  // namespace pipeworks::hw
