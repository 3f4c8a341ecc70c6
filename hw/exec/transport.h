// How stage activations and gradients move between devices: the executor's SEND_*/RECV_*
// actions call a Transport. A send is addressed by its own action (SEND_F(s,m) delivers to
// RECV_F(s+1,m), SEND_B(s,m) to RECV_B(s-1,m); see sched::comm_peer). Receives time out and
// every wait ends at once on abort, so no worker waits forever on a failed peer.
#pragma once

#include <chrono>
#include <string>

#include <ATen/core/Tensor.h>

#include "sched/action.h"
#include "sched/result.h"

namespace pipeworks::hw {

class Transport {
 public:
  virtual ~Transport() = default;
  // Delivers `tensor` to the receive paired with `send` (a SEND_F or SEND_B action).
  virtual sched::Status send(const sched::Action& send, const at::Tensor& tensor) = 0;
  // The tensor for `recv` (a RECV_F or RECV_B action), waiting at most `timeout`; an error on
  // timeout or abort.
  virtual sched::Result<at::Tensor> recv(const sched::Action& recv, std::chrono::nanoseconds timeout) = 0;
  // Waits, at most `timeout`, until every send this device posted has been taken by its receiver:
  // a transport whose sends return once posted (C10dTransport) completes them here; one whose
  // sends complete before returning has nothing to wait for. The executor calls it at the end of
  // each device's program, inside the step.
  virtual sched::Status finish_sends(std::chrono::nanoseconds /*timeout*/) { return sched::Ok{}; }
  // Fails every pending and later send/recv with `reason` until reset().
  virtual void abort(const std::string& reason) = 0;
  // Drops undelivered tensors and the abort state; called between steps.
  virtual void reset() = 0;
};

}  // namespace pipeworks::hw
