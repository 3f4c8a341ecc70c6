// `pipeworks kernels`: what a GPU cost model (sim/spec/gpu_kernels.h) predicts for given GEMM
// shapes and streamed byte counts, on the GPU alone (no host time), so a GPU's own measurements
// can be set beside it (bench/gpu_kernel_sweep).
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command_list.h"
#include "sched/units_text.h"
#include "sim/spec/gpu_kernels.h"
#include "sim/spec/units.h"

namespace pipeworks::cli {
namespace {

struct KernelsOptions {
  std::string gpu;
  std::vector<std::string> gemms;
  std::vector<std::string> streams;
  std::string json;
};

constexpr std::int64_t kMaxGemmSide = 10'000'000;

// "MxNxK" or "MxNxKxBATCH", each from 1 to kMaxGemmSide.
sched::Result<sim::GemmShape> parse_gemm(const std::string& text) {
  std::vector<std::int64_t> sides;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('x', start), text.size());
    const std::string part = text.substr(start, end - start);
    const bool digits = !part.empty() && part.size() <= 8 && part.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(part) < 1 || std::stoll(part) > kMaxGemmSide) {
      return sched::Error{fmt::format("--gemm '{}': expected MxNxK or MxNxKxBATCH, each from 1 to {}", text, kMaxGemmSide)};
    }
    sides.push_back(std::stoll(part));
    start = end + 1;
  }
  if (sides.size() != 3 && sides.size() != 4) {
    return sched::Error{fmt::format("--gemm '{}': expected MxNxK or MxNxKxBATCH, each from 1 to {}", text, kMaxGemmSide)};
  }
  return sim::GemmShape{sides[0], sides[1], sides[2], sides.size() == 4 ? sides[3] : 1};
}

int run(const KernelsOptions& o) {
  auto gpu = sim::gpu_kernel_model_named_or_file(o.gpu);
  if (!gpu) return report_error("kernels", kExitUsage, "--gpu: " + gpu.error().message);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::cout << fmt::format("{} (GPU time alone; peak {:.1f} TFLOP/s, {:.0f} GB/s)\n", gpu->name,
                           gpu->peak_flops_per_s / 1e12, gpu->memory_bytes_per_s / 1e9);
  for (const std::string& text : o.gemms) {
    auto shape = parse_gemm(text);
    if (!shape) return report_error("kernels", kExitUsage, shape.error().message);
    const double ns = sim::gemm_ns(*gpu, *shape);
    const double flops = 2.0 * static_cast<double>(shape->m) * static_cast<double>(shape->n) *
                         static_cast<double>(shape->k) * static_cast<double>(shape->batch);
    std::cout << fmt::format("  gemm {:<24} {:>12}  {:8.1f} TFLOP/s  {:5.1f}% of peak\n", text,
                             sim::format_duration(static_cast<sim::Nanoseconds>(ns)), flops / ns / 1e3,
                             100 * flops / ns / 1e-9 / gpu->peak_flops_per_s);
    rows.push_back({{"kind", "gemm"}, {"shape", text}, {"flops", flops}, {"ns", ns}});
  }
  for (const std::string& text : o.streams) {
    auto bytes = sim::parse_bytes(text);
    if (!bytes || *bytes < 1) return report_error("kernels", kExitUsage, fmt::format("--stream '{}': expected a size such as 1GiB", text));
    const double ns = sim::streaming_ns(*gpu, static_cast<double>(*bytes));
    std::cout << fmt::format("  stream {:<22} {:>12}  {:8.1f} GB/s\n", sched::format_bytes(*bytes),
                             sim::format_duration(static_cast<sim::Nanoseconds>(ns)), static_cast<double>(*bytes) / ns);
    rows.push_back({{"kind", "stream"}, {"bytes", *bytes}, {"ns", ns}});
  }
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << nlohmann::ordered_json{{"gpu", gpu->name}, {"kernels", rows}}.dump(2) << "\n";
    if (!out) return report_error("kernels", kExitInvalid, fmt::format("--json: cannot write {}", o.json));
  }
  return kExitOk;
}

}  // namespace

void add_kernels_command(CLI::App& app, CommandContext& context) {
  CLI::App* command = app.add_subcommand(
      "kernels", "What a GPU cost model predicts for GEMM shapes and streamed bytes (docs/gpu_cost_model.md)");
  auto o = std::make_shared<KernelsOptions>();
  command->add_option("--gpu", o->gpu, "a100-sxm-80gb, h100-sxm, h200-sxm or a data file's path")->required();
  command->add_option("--gemm", o->gemms, "a GEMM of an MxN bf16 output with inner size K (xBATCH: a batch of them)");
  command->add_option("--stream", o->streams, "a streaming kernel's bytes read plus written, e.g. 1GiB");
  command->add_option("--json", o->json, "also write the predictions as JSON");
  command->callback([o, &context] { context.exit_code = run(*o); });
}

}  // namespace pipeworks::cli
