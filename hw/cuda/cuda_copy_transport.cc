// Device-to-device transfers on copy streams (see cuda_copy_transport.h).
#include "hw/cuda/cuda_copy_transport.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <fmt/format.h>

#include "sched/dependencies.h"

namespace pipeworks::hw::cuda {
namespace {

c10::DeviceIndex index_of(int gpu) { return static_cast<c10::DeviceIndex>(gpu); }

}  // namespace

CudaCopyTransport::CudaCopyTransport(std::vector<int> stage_gpu) : stage_gpu_(std::move(stage_gpu)) {}

sched::Status CudaCopyTransport::send(const sched::Action& send, const at::Tensor& tensor) {
  const int k = static_cast<int>(stage_gpu_.size());
  if (!sched::is_send(send.kind)) return sched::Error{fmt::format("transport: {} is not a send", to_string(send))};
  const auto peer = sched::comm_peer(send, k);
  if (!peer) return sched::Error{fmt::format("transport: {} has no receiving stage", to_string(send))};
  if (!tensor.is_cuda())
    return sched::Error{fmt::format("{}: tensor is on {}, not a GPU", to_string(send), tensor.device().str())};
  const int src = tensor.get_device();
  const int dst = stage_gpu_[static_cast<std::size_t>(peer->stage)];
  Delivery delivery;
  try {
    // The copy may start once the producer's kernels ran.
    at::cuda::CUDAEvent produced;
    produced.record(c10::cuda::getCurrentCUDAStream(index_of(src)));
    const c10::cuda::CUDAStream src_copy = c10::cuda::getStreamFromPool(false, index_of(src));
    const c10::cuda::CUDAStream dst_copy = c10::cuda::getStreamFromPool(false, index_of(dst));
    produced.block(src_copy);
    {
      // ATen copies between GPUs on the source's current stream and orders it against the
      // destination's current stream: make both of those the copy streams.
      const std::vector<c10::cuda::CUDAStream> streams = src == dst
                                                             ? std::vector<c10::cuda::CUDAStream>{src_copy}
                                                             : std::vector<c10::cuda::CUDAStream>{src_copy, dst_copy};
      const c10::cuda::CUDAMultiStreamGuard guard(streams);
      delivery.tensor = tensor.to(at::Device(at::kCUDA, index_of(dst)), /*non_blocking=*/true, /*copy=*/true);
    }
    // The sender may free its tensor before the copy ran: tell the allocator the copy uses it.
    c10::cuda::CUDACachingAllocator::recordStream(tensor.storage().data_ptr(), src_copy);
    delivery.done = std::make_shared<at::cuda::CUDAEvent>();
    delivery.done->record(src == dst ? src_copy : dst_copy);
  } catch (const std::exception& e) {
    return sched::Error{
        fmt::format("{}: copy from cuda:{} to cuda:{} failed: {}", to_string(send), src, dst, e.what())};
  }
  {
    const std::lock_guard lock(mutex_);
    if (aborted_) return sched::Error{fmt::format("transport aborted: {}", *aborted_)};
    const Key key{sched::kind_index(peer->kind), peer->stage, peer->microbatch};
    if (!mailbox_.emplace(key, std::move(delivery)).second) {
      return sched::Error{fmt::format("transport: {} was sent twice", to_string(send))};
    }
  }
  ready_.notify_all();
  return sched::Ok{};
}

sched::Result<at::Tensor> CudaCopyTransport::recv(const sched::Action& recv, std::chrono::nanoseconds timeout) {
  if (!sched::is_recv(recv.kind)) return sched::Error{fmt::format("transport: {} is not a receive", to_string(recv))};
  const Key key{sched::kind_index(recv.kind), recv.stage, recv.microbatch};
  Delivery delivery;
  {
    std::unique_lock lock(mutex_);
    const bool arrived = ready_.wait_for(lock, timeout, [&] { return aborted_ || mailbox_.contains(key); });
    if (aborted_) return sched::Error{fmt::format("transport aborted: {}", *aborted_)};
    if (!arrived) {
      return sched::Error{fmt::format("{} timed out after {} ms waiting for its sender", to_string(recv),
                                      std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count())};
    }
    delivery = std::move(mailbox_.extract(key).mapped());
  }
  const int gpu = delivery.tensor.get_device();
  const c10::cuda::CUDAStream consumer = c10::cuda::getCurrentCUDAStream(index_of(gpu));
  delivery.done->block(consumer);
  // Allocated on a copy stream, used from now on by the consumer's stream.
  c10::cuda::CUDACachingAllocator::recordStream(delivery.tensor.storage().data_ptr(), consumer);
  return delivery.tensor;
}

void CudaCopyTransport::abort(const std::string& reason) {
  {
    const std::lock_guard lock(mutex_);
    if (!aborted_) aborted_ = reason;
  }
  ready_.notify_all();
}

void CudaCopyTransport::reset() {
  const std::lock_guard lock(mutex_);
  mailbox_.clear();
  aborted_.reset();
}

}  // namespace pipeworks::hw::cuda
