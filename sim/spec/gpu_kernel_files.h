// The GPU cost model's data files (sim/spec/gpu_kernels/*.json) as the build compiled them in
// (cmake/embed_gpu_kernels.cmake writes the definition), so the binary needs no data directory.
#pragma once

#include <span>
#include <string_view>

namespace pipeworks::sim {

struct EmbeddedFile {
  std::string_view name;  // the file's name without ".json"
  std::string_view text;
};

// In the order of their names.
std::span<const EmbeddedFile> gpu_kernel_files();

}  // namespace pipeworks::sim
