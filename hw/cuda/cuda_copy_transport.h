// The in-process Transport between GPUs: a SEND copies the tensor device-to-device on a copy
// stream of its own, so the copy overlaps the sender's next compute; the RECV makes the
// receiver's stream wait for the copy's event instead of blocking the host.
//
//   sender stream   [F0]--ready--[F1]........
//   copy stream          wait(ready)[copy 0->1]--done
//   receiver stream                       wait(done)[F0 of stage 1]
//
// Mailbox semantics (sends never block, receives wait with a deadline) are those of
// InProcessTransport; only the data movement differs.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include <ATen/cuda/CUDAEvent.h>

#include "hw/exec/transport.h"

namespace pipeworks::hw::cuda {

class CudaCopyTransport final : public Transport {
 public:
  // stage_gpu[s]: the CUDA device index stage s runs on.
  explicit CudaCopyTransport(std::vector<int> stage_gpu);

  sched::Status send(const sched::Action& send, const at::Tensor& tensor) override;
  sched::Result<at::Tensor> recv(const sched::Action& recv, std::chrono::nanoseconds timeout) override;
  void abort(const std::string& reason) override;
  void reset() override;

 private:
  struct Delivery {
    at::Tensor tensor;                           // on the receiver's GPU
    std::shared_ptr<at::cuda::CUDAEvent> done;   // recorded after the copy
  };
  using Key = std::tuple<int, int, int>;  // (kind index, stage, micro-batch) of the receive

  std::vector<int> stage_gpu_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::map<Key, Delivery> mailbox_;
  std::optional<std::string> aborted_;
};

}  // namespace pipeworks::hw::cuda
