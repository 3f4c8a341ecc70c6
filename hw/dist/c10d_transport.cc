// Header-checked c10d point-to-point transfers (see c10d_transport.h).
#include "hw/dist/c10d_transport.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <array>
#include <climits>

#include "sched/dependencies.h"

namespace pipeworks::hw {
namespace {

using sched::Action;

// Header layout (int64): magic, recv kind, stage, micro-batch, dtype, ndim, sizes...
constexpr std::int64_t kMagic = 0x706970657773;  // "pipews"
constexpr int kHeaderLength = 6 + kMaxTransferDims;

std::chrono::milliseconds at_least_1ms(std::chrono::nanoseconds t) {
  return std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(t));
}

}  // namespace

std::string to_string(const TensorMeta& meta) {
  return fmt::format("{} ({})", c10::toString(meta.dtype), fmt::join(meta.sizes, ", "));
}

TensorMeta meta_of(const at::Tensor& tensor) {
  return {tensor.scalar_type(), std::vector<std::int64_t>(tensor.sizes().begin(), tensor.sizes().end())};
}

C10dTransport::C10dTransport(c10::intrusive_ptr<C10dBackend> backend, C10dTransportOptions options)
    : backend_(std::move(backend)), options_(std::move(options)) {}

sched::Result<std::unique_ptr<C10dTransport>> C10dTransport::create(c10::intrusive_ptr<C10dBackend> backend,
                                                                    C10dTransportOptions options) {
  const auto k = static_cast<long long>(options.placement.size());
  if (!backend) return sched::Error{"c10d transport: no backend"};
  if (k < 1 || options.num_microbatches < 1) return sched::Error{"c10d transport: empty pipeline"};
  if (4 * k * options.num_microbatches > INT_MAX) {
    return sched::Error{
        fmt::format("c10d transport: {} stages x {} micro-batches exceed the tag space", k, options.num_microbatches)};
  }
  return std::unique_ptr<C10dTransport>(new C10dTransport(std::move(backend), std::move(options)));
}

void C10dTransport::agree(const Action& recv, TensorMeta meta) { agreed_[recv] = std::move(meta); }

void C10dTransport::receive_in_order(std::vector<Action> receives) {
  next_receive_.clear();
  for (std::size_t i = 0; i + 1 < receives.size(); ++i) next_receive_.emplace(receives[i], receives[i + 1]);
}

int C10dTransport::rank_of_stage(int stage) const { return options_.placement.at(static_cast<std::size_t>(stage)); }

int C10dTransport::tag_of(const Action& recv, bool payload) const {
  const int k = static_cast<int>(options_.placement.size());
  const int direction = recv.kind == sched::ActionKind::kRecvF ? 0 : 1;
  return ((direction * k + recv.stage) * options_.num_microbatches + recv.microbatch) * 2 + (payload ? 1 : 0);
}

std::optional<std::string> C10dTransport::aborted() const {
  const std::lock_guard lock(mutex_);
  return aborted_;
}

sched::Status C10dTransport::wait(const c10::intrusive_ptr<c10d::Work>& work, std::chrono::milliseconds timeout,
                                  const std::string& what) {
  return wait_work(work, timeout, what);
}

sched::Status C10dTransport::send(const Action& send, const at::Tensor& tensor) {
  const int k = static_cast<int>(options_.placement.size());
  if (!sched::is_send(send.kind)) return sched::Error{fmt::format("transport: {} is not a send", to_string(send))};
  const auto peer = sched::comm_peer(send, k);
  if (!peer) return sched::Error{fmt::format("transport: {} has no receiving stage", to_string(send))};
  if (auto reason = aborted()) return sched::Error{fmt::format("transport aborted: {}", *reason)};
  const int dst = rank_of_stage(peer->stage);
  if (tensor.dim() > kMaxTransferDims) {
    return sched::Error{fmt::format("{}: {} dimensions (at most {})", to_string(send), tensor.dim(), kMaxTransferDims)};
  }
  if (tensor.device() != options_.device) {
    return sched::Error{fmt::format("{}: tensor on {} but this rank transfers from {}", to_string(send),
                                    tensor.device().str(), options_.device.str())};
  }
  const std::string what =
      fmt::format("rank {}: {} to rank {} ({})", options_.rank, to_string(send), dst, to_string(*peer));
  const auto agreed = agreed_.find(*peer);
  if (agreed != agreed_.end() && agreed->second != meta_of(tensor)) {
    return sched::Error{fmt::format("{}: the tensor is {} but the hand-off was agreed as {}", what,
                                    to_string(meta_of(tensor)), to_string(agreed->second))};
  }
  try {
    if (agreed == agreed_.end()) post(header_of(*peer, tensor), dst, tag_of(*peer, false), what + " header");
    post(tensor.detach().contiguous(), dst, tag_of(*peer, true), what);
    return sched::Ok{};
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("{}: {}", what, describe_c10d_exception(e))};
  }
}

at::Tensor C10dTransport::header_of(const Action& peer, const at::Tensor& tensor) const {
  std::array<std::int64_t, kHeaderLength> fields{};
  fields[0] = kMagic;
  fields[1] = sched::kind_index(peer.kind);
  fields[2] = peer.stage;
  fields[3] = peer.microbatch;
  fields[4] = static_cast<std::int64_t>(tensor.scalar_type());
  fields[5] = tensor.dim();
  for (int d = 0; d < tensor.dim(); ++d) fields[static_cast<std::size_t>(6 + d)] = tensor.size(d);
  return torch::from_blob(fields.data(), {kHeaderLength}, torch::kInt64).clone().to(options_.device);
}

void C10dTransport::post(at::Tensor tensor, int dst, int tag, std::string what) {
  std::vector<at::Tensor> tensors{std::move(tensor)};
  auto work = backend_->send(tensors, dst, tag);
  const std::lock_guard lock(mutex_);
  sending_.push_back({std::move(work), std::move(tensors), std::move(what)});
}

sched::Status C10dTransport::finish_sends(std::chrono::nanoseconds timeout) {
  std::vector<PostedSend> posted;
  {
    const std::lock_guard lock(mutex_);
    posted.swap(sending_);
  }
  for (const PostedSend& s : posted) {
    if (auto reason = aborted()) return sched::Error{fmt::format("{}: transport aborted: {}", s.what, *reason)};
    if (auto done = wait(s.work, at_least_1ms(timeout), s.what); !done) return done;
  }
  return sched::Ok{};
}

sched::Result<at::Tensor> C10dTransport::recv(const Action& recv, std::chrono::nanoseconds timeout) {
  const int k = static_cast<int>(options_.placement.size());
  if (!sched::is_recv(recv.kind)) return sched::Error{fmt::format("transport: {} is not a receive", to_string(recv))};
  const auto peer = sched::comm_peer(recv, k);
  if (!peer) return sched::Error{fmt::format("transport: {} has no sending stage", to_string(recv))};
  if (auto reason = aborted()) return sched::Error{fmt::format("transport aborted: {}", *reason)};
  const int src = rank_of_stage(peer->stage);
  const std::string what =
      fmt::format("rank {}: {} waiting for rank {} ({})", options_.rank, to_string(recv), src, to_string(*peer));
  const auto deadline = at_least_1ms(timeout);
  try {
    const auto agreed = agreed_.find(recv);
    auto meta = agreed != agreed_.end() ? sched::Result<TensorMeta>(agreed->second) : recv_header(recv, src, deadline, what);
    if (!meta) return meta.error();
    PostedRecv posted = take_or_start_recv(recv, *meta);
    post_next_recv(recv);
    if (auto s = wait(posted.work, deadline, what); !s) return s.error();
    return posted.tensors[0];
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("{}: {}", what, describe_c10d_exception(e))};
  }
}

C10dTransport::PostedRecv C10dTransport::start_recv(const Action& recv, const TensorMeta& meta) {
  const int src = rank_of_stage(sched::comm_peer(recv, static_cast<int>(options_.placement.size()))->stage);
  std::vector<at::Tensor> payload{torch::empty(meta.sizes, torch::TensorOptions(meta.dtype).device(options_.device))};
  auto work = backend_->recv(payload, src, tag_of(recv, true));
  return {std::move(work), std::move(payload)};
}

C10dTransport::PostedRecv C10dTransport::take_or_start_recv(const Action& recv, const TensorMeta& meta) {
  {
    const std::lock_guard lock(mutex_);
    if (auto it = receiving_.find(recv); it != receiving_.end()) {
      PostedRecv posted = std::move(it->second);
      receiving_.erase(it);
      return posted;
    }
  }
  return start_recv(recv, meta);
}

void C10dTransport::post_next_recv(const Action& recv) {
  const auto next = next_receive_.find(recv);
  if (next == next_receive_.end()) return;
  const auto agreed = agreed_.find(next->second);
  if (agreed == agreed_.end()) return;  // its header says its shape: nothing to post ahead
  const std::lock_guard lock(mutex_);
  if (receiving_.count(next->second) == 0) receiving_.emplace(next->second, start_recv(next->second, agreed->second));
}

// The header of a hand-off nobody agreed on: what the sender says it sends, checked to be for
// this receive and well formed before anything is allocated from it.
sched::Result<TensorMeta> C10dTransport::recv_header(const Action& recv, int src, std::chrono::milliseconds deadline,
                                                     const std::string& what) {
  std::vector<at::Tensor> header{
      torch::empty({kHeaderLength}, torch::TensorOptions(torch::kInt64).device(options_.device))};
  if (auto s = wait(backend_->recv(header, src, tag_of(recv, false)), deadline, what + " (header)"); !s) {
    return s.error();
  }
  const at::Tensor fields = header[0].to(torch::kCPU);
  const std::int64_t* f = fields.data_ptr<std::int64_t>();
  if (f[0] != kMagic || f[1] != sched::kind_index(recv.kind) || f[2] != recv.stage || f[3] != recv.microbatch) {
    return sched::Error{
        fmt::format("{}: the header received is not for this action (magic {:#x}, kind {}, "
                    "stage {}, micro-batch {})",
                    what, f[0], f[1], f[2], f[3])};
  }
  if (f[5] < 0 || f[5] > kMaxTransferDims || f[4] < 0 ||
      f[4] >= static_cast<std::int64_t>(at::ScalarType::NumOptions)) {
    return sched::Error{fmt::format("{}: malformed header (dtype {}, {} dimensions)", what, f[4], f[5])};
  }
  TensorMeta meta{static_cast<at::ScalarType>(f[4]), std::vector<std::int64_t>(f + 6, f + 6 + f[5])};
  for (std::int64_t size : meta.sizes) {
    if (size < 0) return sched::Error{fmt::format("{}: malformed header (negative size)", what)};
  }
  return meta;
}

void C10dTransport::abort(const std::string& reason) {
  const std::lock_guard lock(mutex_);
  if (!aborted_) aborted_ = reason;
}

void C10dTransport::reset() {
  const std::lock_guard lock(mutex_);
  aborted_.reset();
  sending_.clear();
  receiving_.clear();  // left by a failed step only: their sends may never come
}

}  // namespace pipeworks::hw
