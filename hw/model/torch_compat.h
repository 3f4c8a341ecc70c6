// Every LibTorch version difference the hardware backend depends on, in one place, so the rest
// of hw/ is written against one API. Built and tested with LibTorch 2.14 (the wheel of
// scripts/requirements.txt); written to build with 2.11 (the GPU machine's) and 1.13.
#pragma once

#include <cstdint>
#include <cstring>

#include <type_traits>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
// LibTorch 2.3 made Allocator::allocate non-const and added the pure virtual copy_data.
#define PIPEWORKS_ALLOCATOR_ALLOCATE_CONST
#define PIPEWORKS_ALLOCATOR_HAS_COPY_DATA 1
#else
#define PIPEWORKS_ALLOCATOR_ALLOCATE_CONST const
#define PIPEWORKS_ALLOCATOR_HAS_COPY_DATA 0
#endif

namespace pipeworks::hw::compat {

// The owning pointer to an autograd graph node, as Tensor::grad_fn() and Edge::function hold it:
// std::shared_ptr<Node> up to LibTorch 2.13, c10::intrusive_ptr<Node> since 2.14.
using NodePtr = std::remove_cvref_t<decltype(std::declval<const at::Tensor&>().grad_fn())>;

// A CPU generator of its own, seeded; dropout masks drawn from it do not depend on what other
// threads draw from the global generator.
inline at::Generator make_cpu_generator(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

// Drops a parameter's gradient (the "set to none" of every version: 1.13's zero_grad() writes
// zeros instead, 2.x's drops; both the pipeline and the reference use this one).
template <class TensorT>
void drop_grad(TensorT& parameter) {
  parameter.mutable_grad().reset();
}

}  // namespace pipeworks::hw::compat
