// A Transport with no peer, for replaying one device's program alone (stage_replay.h): sends
// are dropped, and every receive returns at once a fixed tensor of what the peer would send --
// stage s-1's output of micro-batch m for RECV_F(s, m), the gradient of stage s's output of
// micro-batch m for RECV_B(s, m). Receives of a stage or micro-batch it was given nothing for
// fail with an error naming the action.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "hw/exec/transport.h"

namespace pipeworks::hw {

class LoopbackTransport final : public Transport {
 public:
  // outputs[s][m]: what stage s sends forward for micro-batch m; output_grads[s][m]: what stage s
  // receives backward for it.
  LoopbackTransport(std::vector<std::vector<at::Tensor>> outputs, std::vector<std::vector<at::Tensor>> output_grads)
      : outputs_(std::move(outputs)), output_grads_(std::move(output_grads)) {}

  sched::Status send(const sched::Action& send, const at::Tensor& tensor) override;
  sched::Result<at::Tensor> recv(const sched::Action& recv, std::chrono::nanoseconds timeout) override;
  void abort(const std::string& reason) override;
  void reset() override;

 private:
  std::vector<std::vector<at::Tensor>> outputs_;
  std::vector<std::vector<at::Tensor>> output_grads_;
  mutable std::mutex mutex_;  // abort() may come from another worker than the receiving one
  std::string aborted_;       // non-empty after abort(), until reset()
  std::string aborted() const;
};

}  // namespace pipeworks::hw
