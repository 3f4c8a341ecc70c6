// The Transport of a multi-process run: each SEND/RECV of a rank's program becomes a c10d
// point-to-point send/recv (Gloo on CPU, NCCL on CUDA) with the rank that runs the peer stage.
// Where both ranks of a hand-off agreed on its dtype and shape beforehand (agree(), from one
// table both compute), the payload travels alone, checked against the agreement by the sender;
// otherwise a small header goes first -- the receiving action, dtype and shape -- so the receiver
// checks what arrives against what it expects and never reinterprets bytes:
//
//   agreed      SEND_F(s,m): check (8,256) float32 --> [payload 8x256 float32]
//               RECV_F(s+1,m): allocate (8,256) float32, recv payload into it
//   not agreed  SEND_F(s,m): [header: 1RECV_F3, float32, (8,256)] --> [payload 8x256 float32]
//               RECV_F(s+1,m): recv header, check it, allocate, recv payload into it
//
// One message a hand-off instead of two halves what a hand-off costs when messages are small
// (the dispatch-bound steps of bench/peers). Either way the tag names the receiving action, so a
// payload can only land in the receive it was sent to.
//
// A send returns once posted, as torch's isend does: the rank computes on while the receiver
// takes the data, and finish_sends (called by the executor at the end of the rank's program)
// waits for every posted send. A receive waits for its data. Given the order of the rank's
// receives (receive_in_order), a receive first posts the next agreed one, so that its sender
// finds it posted:
//
//   rank 1 (receiver)   RECV_F(1,0): post 1RECV_F1, wait for 0 ...... F(1,0) ........ RECV_F(1,1): posted, wait
//   rank 0 (sender)                   F(0,1) SEND_F(0,1): receiver ready -> written by this thread
//
// Gloo writes a payload from the sending thread only when the receiver's recv is already
// posted; otherwise the data waits until the sender's I/O thread answers the receiver's late
// "ready", and when the sender's cores compute, that thread waits for a core (up to a scheduler
// tick; docs/data_parallel.md). One receive ahead holds one received tensor early, outside the
// executor's activation count. Nothing waits for a peer that waits
// for this rank in turn, so every valid schedule completes (lower_comm's order is deadlock-free
// even for rendezvous sends). Every wait has a deadline and names the peer rank and the action.
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
std::string to_string(const TensorMeta& meta);  // "Float (8, 256)"
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

  // The hand-off into `recv` carries exactly `meta`: both ranks of the hand-off call this for the
  // same receive with the same meta (the receiver for its RECV, the sender for the RECV its SEND
  // feeds), and the payload then travels without a header. A send whose tensor differs from the
  // agreement is refused before anything is sent. Hand-offs without an agreement carry a header
  // and accept any dtype and shape it announces. An agreement on one side only is a contract
  // violation that ends in a timeout naming the peer.
  void agree(const sched::Action& recv, TensorMeta meta);
  // The receives of one step of this rank's program, in the order the rank runs them: each
  // receive then posts the next agreed one before it waits.
  void receive_in_order(std::vector<sched::Action> receives);

  sched::Status send(const sched::Action& send, const at::Tensor& tensor) override;
  sched::Result<at::Tensor> recv(const sched::Action& recv, std::chrono::nanoseconds timeout) override;
  // Waits for every posted send (at most `timeout` for each still running); the first failure
  // names its action and peer. The tensors sent stay alive until then.
  sched::Status finish_sends(std::chrono::nanoseconds timeout) override;
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
  // Posts `tensor` to `dst` with `tag`; the work and the tensor wait in sending_ for finish_sends.
  void post(at::Tensor tensor, int dst, int tag, std::string what);
  at::Tensor header_of(const sched::Action& peer, const at::Tensor& tensor) const;
  sched::Result<TensorMeta> recv_header(const sched::Action& recv, int src, std::chrono::milliseconds deadline,
                                        const std::string& what);

  std::map<sched::Action, TensorMeta> agreed_;  // by receiving action
  std::map<sched::Action, sched::Action> next_receive_;  // receive_in_order's: each receive's successor

  struct PostedRecv {
    c10::intrusive_ptr<c10d::Work> work;
    std::vector<at::Tensor> tensors;  // the payload's buffer
  };
  PostedRecv start_recv(const sched::Action& recv, const TensorMeta& meta);
  // The receive `recv` posted ahead, taken out of receiving_, or posted now.
  PostedRecv take_or_start_recv(const sched::Action& recv, const TensorMeta& meta);
  // Posts the agreed receive after `recv` in receive_in_order's order, unless posted already.
  void post_next_recv(const sched::Action& recv);

  struct PostedSend {
    c10::intrusive_ptr<c10d::Work> work;
    std::vector<at::Tensor> tensors;  // what the work reads, kept alive until it completes
    std::string what;
  };
  mutable std::mutex mutex_;  // guards aborted_, sending_ and receiving_
  std::optional<std::string> aborted_;
  std::vector<PostedSend> sending_;
  std::map<sched::Action, PostedRecv> receiving_;  // posted ahead, by receiving action
};

}  // namespace pipeworks::hw
