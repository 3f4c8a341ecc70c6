// The tensor-parallel group over a Gloo subgroup (see c10d_tensor_group.h).
#include "hw/dist/c10d_tensor_group.h"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pipeworks::hw {

C10dTensorGroup::C10dTensorGroup(std::vector<int> ranks, int rank, std::chrono::milliseconds timeout)
    : ranks_(std::move(ranks)), rank_(rank), timeout_(timeout) {}

sched::Status C10dTensorGroup::connect(const C10dGroup& world, const std::string& name) {
  auto backend = connect_gloo_subgroup(world, name, ranks_);
  if (!backend) return backend.error();
  backend_ = std::move(backend).value();
  return sched::Ok{};
}

void C10dTensorGroup::all_reduce_sum(at::Tensor& tensor) {
  const std::string what = fmt::format("all-reduce over the tensor-parallel ranks [{}]", fmt::join(ranks_, ","));
  if (!backend_) throw std::runtime_error(what + ": the group is not connected yet");
  try {
    std::vector<at::Tensor> tensors{tensor};
    auto work = backend_->allreduce(tensors);
    if (!work->wait(timeout_)) throw std::runtime_error(what + ": aborted");
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("{}: failed (deadline {} ms): {}", what, timeout_.count(), describe_c10d_exception(e)));
  }
}

}  // namespace pipeworks::hw
