// The GPU cost model's kernel times (gpu_kernels.h) and its data files' reader.
#include "sim/spec/gpu_kernels.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/spec/gpu_kernel_files.h"
#include "sim/spec/spec_json.h"

namespace pipeworks::sim {
namespace {

sched::Error error(std::string message) { return sched::Error{std::move(message), std::nullopt}; }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A fraction in (0, 1] under `key`.
double fraction(SpecReader& reader, const Json& root, std::string_view key) {
  const double value = reader.positive_number(root, "", key, std::nullopt);
  if (reader.ok() && value > 1) reader.fail(pointer_child("", key), &root[std::string(key)], "must be at most 1");
  return value;
}

}  // namespace

double gemm_efficiency(const GpuKernelModel& gpu, const GemmShape& shape) {
  // In doubles: a user's 1 x 1 tile on a long sequence's batched scores counts past int64.
  const double tiles = static_cast<double>(ceil_div(shape.m, gpu.tile_rows)) *
                       static_cast<double>(ceil_div(shape.n, gpu.tile_cols)) * static_cast<double>(shape.batch);
  const double waves = std::ceil(tiles / gpu.multiprocessors);
  const double wave_fill = tiles / (waves * gpu.multiprocessors);
  const auto k = static_cast<double>(shape.k);
  return gpu.gemm_efficiency * wave_fill * k / (k + gpu.gemm_k_half);
}

double gemm_ns(const GpuKernelModel& gpu, const GemmShape& shape) {
  const auto m = static_cast<double>(shape.m);
  const auto n = static_cast<double>(shape.n);
  const auto k = static_cast<double>(shape.k);
  const auto batch = static_cast<double>(shape.batch);
  const double compute_ns = 2 * m * n * k * batch / (gpu.peak_flops_per_s * gemm_efficiency(gpu, shape)) * 1e9;
  const double bytes = 2 * (m * k + k * n + m * n) * batch;  // bf16 operands read, output written
  return std::max(compute_ns, streaming_ns(gpu, bytes));
}

double streaming_ns(const GpuKernelModel& gpu, double bytes) {
  return bytes / (gpu.memory_bytes_per_s * gpu.memory_efficiency) * 1e9;
}

double flash_attention_ns(const GpuKernelModel& gpu, double flops, bool backward) {
  const double efficiency = backward ? gpu.flash_backward_efficiency : gpu.flash_forward_efficiency;
  return flops / (gpu.peak_flops_per_s * efficiency) * 1e9;
}

sched::Result<GpuKernelModel> parse_gpu_kernel_model(std::string_view json_text, std::string_view source) {
  auto parsed = parse_spec_json(json_text, source);
  if (!parsed) return parsed.error();
  const Json& root = *parsed;
  SpecReader reader{std::string(source)};
  if (!reader.expect_object(root, "")) return reader.error();
  reader.allow_keys(root, "", {"name", "source", "peak_flops_per_s", "memory_bandwidth_bytes_per_s", "multiprocessors",
                               "tile_rows", "tile_cols", "gemm_efficiency", "gemm_k_half", "memory_efficiency",
                               "flash_forward_efficiency", "flash_backward_efficiency", "host_per_kernel", "host_per_kernel_ns",
                               "sources"});
  GpuKernelModel gpu;
  gpu.name = reader.string(root, "", "name", std::nullopt);
  gpu.source = reader.string(root, "", "source", std::string{});
  gpu.peak_flops_per_s = reader.flop_rate(root, "", "peak_flops_per_s", std::nullopt);
  gpu.memory_bytes_per_s = reader.bandwidth(root, "", "memory_bandwidth_bytes_per_s", std::nullopt);
  for (const auto& [key, field] : {std::pair{"multiprocessors", &gpu.multiprocessors},
                                   std::pair{"tile_rows", &gpu.tile_rows}, std::pair{"tile_cols", &gpu.tile_cols}}) {
    const std::int64_t value = reader.integer(root, "", key, 1, std::nullopt);
    if (reader.ok() && value > 65536) reader.fail(pointer_child("", key), &root[key], "must be at most 65536");
    *field = static_cast<int>(std::min<std::int64_t>(value, 65536));
  }
  gpu.gemm_efficiency = fraction(reader, root, "gemm_efficiency");
  gpu.memory_efficiency = fraction(reader, root, "memory_efficiency");
  gpu.flash_forward_efficiency = fraction(reader, root, "flash_forward_efficiency");
  gpu.flash_backward_efficiency = fraction(reader, root, "flash_backward_efficiency");
  if (const auto it = root.find("gemm_k_half"); reader.ok()) {
    if (it == root.end() || !it->is_number() || !(it->get<double>() >= 0 && it->get<double>() <= 1e9)) {
      reader.fail("/gemm_k_half", it == root.end() ? nullptr : &*it, "expected a number from 0 to 1e9");
    } else {
      gpu.gemm_k_half = it->get<double>();
    }
  }
  const Nanoseconds host = reader.duration(root, "", "host_per_kernel", std::nullopt);
  if (reader.ok() && host > 1'000'000'000) reader.fail("/host_per_kernel", nullptr, "must be at most 1s");
  gpu.host_ns_per_kernel = static_cast<double>(host);
  if (const auto it = root.find("sources"); reader.ok() && it != root.end()) {
    if (reader.expect_object(*it, "/sources")) {
      for (auto s = it->begin(); s != it->end() && reader.ok(); ++s) {
        if (!s->is_string()) reader.fail(pointer_child("/sources", s.key()), &*s, "expected a string");
      }
    }
  }
  if (!reader.ok()) return reader.error();
  return gpu;
}

sched::Result<GpuKernelModel> gpu_kernel_model_named_or_file(const std::string& name_or_path) {
  for (const EmbeddedFile& file : gpu_kernel_files()) {
    if (file.name == name_or_path) return gpu_kernel_model(name_or_path);
  }
  if (name_or_path.find_first_of("/.") == std::string::npos) return gpu_kernel_model(name_or_path);  // a mistyped name
  auto text = read_spec_file(name_or_path);
  if (!text) return text.error();
  return parse_gpu_kernel_model(*text, name_or_path);
}

std::string gpu_kernel_model_to_json(const GpuKernelModel& gpu) {
  const nlohmann::ordered_json out{{"name", gpu.name},
                                   {"source", gpu.source},
                                   {"peak_flops_per_s", gpu.peak_flops_per_s},
                                   {"memory_bandwidth_bytes_per_s", gpu.memory_bytes_per_s},
                                   {"multiprocessors", gpu.multiprocessors},
                                   {"tile_rows", gpu.tile_rows},
                                   {"tile_cols", gpu.tile_cols},
                                   {"gemm_efficiency", gpu.gemm_efficiency},
                                   {"gemm_k_half", gpu.gemm_k_half},
                                   {"memory_efficiency", gpu.memory_efficiency},
                                   {"flash_forward_efficiency", gpu.flash_forward_efficiency},
                                   {"flash_backward_efficiency", gpu.flash_backward_efficiency},
                                   {"host_per_kernel_ns", std::llround(gpu.host_ns_per_kernel)}};
  return out.dump(2);
}

std::vector<std::string> gpu_kernel_model_names() {
  std::vector<std::string> names;
  for (const EmbeddedFile& file : gpu_kernel_files()) names.emplace_back(file.name);
  return names;
}

sched::Result<GpuKernelModel> gpu_kernel_model(std::string_view name) {
  for (const EmbeddedFile& file : gpu_kernel_files()) {
    if (file.name == name) return parse_gpu_kernel_model(file.text, fmt::format("gpu_kernels/{}.json", file.name));
  }
  std::string names;
  for (const std::string& n : gpu_kernel_model_names()) names += fmt::format("{}{}", names.empty() ? "" : ", ", n);
  return error(fmt::format("unknown GPU '{}' (built-in GPU cost models: {})", name, names));
}

}  // namespace pipeworks::sim
