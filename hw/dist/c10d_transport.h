// The Transport of a multi-process run: each SEND/RECV of a rank's program becomes a c10d
// point-to-point send/recv (Gloo on CPU, NCCL on CUDA) with the rank that runs the peer stage.
// A small header goes first -- the receiving action, dtype and shape -- so the receiver checks
// what arrives against what it expects and never reinterprets bytes:
//
//   sender  SEND_F(s,m): [header: 1RECV_F3, float32, (8,256)] --> [payload 8x256 float32]
//   receiver RECV_F(s+1,m): recv header, check it, allocate, recv payload into it
//
// Sends wait for completion (Gloo's TCP pairs deliver once the receiver posted its receive),
// so both sides behave like rendezvous operations; lower_comm orders them so that no valid
// schedule deadlocks. Every wait has a deadline and names the peer rank and the action.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "hw/dist/c10d_group.h"
#include "hw/exec/transport.h"

namespace pipeworks::hw {

// What a received tensor must look like.
struct TensorMeta {
  at::ScalarType dtype = at::kFloat;
  std::vector<std::int64_t> sizes;
  friend bool operator==(const TensorMeta&, const TensorMeta&) = default;
};
std::string to_string(const TensorMeta& meta);  // "float32 (8, 256)"
TensorMeta meta_of(const at::Tensor& tensor);

// Most dimensions a transferred tensor may have.
inline constexpr int kMaxTransferDims = 10;

struct C10dTransportOptions {
  int rank = 0;
  std::vector<int> placement;  // stage -> rank (the schedule's stage -> device)
  int num_microbatches = 1;
  c10::Device device = c10::Device(c10::kCPU);  // where tensors are sent from and received to
  std::chrono::milliseconds timeout = std::chrono::minutes(3);  // every send (recv: per call)
};

class C10dTransport final : public Transport {
 public:
  // Errors when the tags (kind, stage, micro-batch) do not fit Gloo's int tags.
  static sched::Result<std::unique_ptr<C10dTransport>> create(c10::intrusive_ptr<C10dBackend> backend,
                                                              C10dTransportOptions options);

  // A receive of `recv` must deliver exactly `meta`; receives without an expectation accept any
  // dtype and shape the header announces.
  void expect(const sched::Action& recv, TensorMeta meta);

  sched::Status send(const sched::Action& send, const at::Tensor& tensor) override;
  sched::Result<at::Tensor> recv(const sched::Action& recv, std::chrono::nanoseconds timeout) override;
  void abort(const std::string& reason) override;
  void reset() override;

 private:
  C10dTransport(c10::intrusive_ptr<C10dBackend> backend, C10dTransportOptions options);
  int rank_of_stage(int stage) const;
  int tag_of(const sched::Action& recv, bool payload) const;
  // Waits for `work`; the error says who was waited for and why it failed.
  sched::Status wait(const c10::intrusive_ptr<c10d::Work>& work, std::chrono::milliseconds timeout,
                     const std::string& what);
  std::optional<std::string> aborted() const;

  c10::intrusive_ptr<C10dBackend> backend_;
  C10dTransportOptions options_;
  std::map<sched::Action, TensorMeta> expected_;
  mutable std::mutex mutex_;
  std::optional<std::string> aborted_;
};

}  // namespace pipeworks::hw
