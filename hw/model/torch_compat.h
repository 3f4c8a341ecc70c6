// Every LibTorch version difference the hardware backend depends on, in one place, so the rest
// of hw/ is written against one API. Tested with LibTorch 1.13; written to build with 2.x.
#pragma once

#include <cstdint>
#include <cstring>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
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
