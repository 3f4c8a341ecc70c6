// The run's fit to this machine (see run_resources.h).
#include "hw/run/run_resources.h"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "hw/exec/cpu_affinity.h"
#include "hw/exec/threads.h"
#include "hw/model/zoo_shapes.h"
#include "hw/run/run_limits.h"
#include "sched/units_text.h"
#include "sim/spec/batch_split.h"

namespace pipeworks::hw {
namespace {

// /proc/meminfo's "MemAvailable: N kB"; 0 where it cannot be read.
double mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    double kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

double mean_in_flight(const sched::Schedule& schedule) {
  const std::vector<int> peaks = sched::peak_in_flight(schedule);
  if (peaks.empty()) return 0;
  return static_cast<double>(std::accumulate(peaks.begin(), peaks.end(), 0LL)) / static_cast<double>(peaks.size());
}

std::string bytes_text(double bytes) { return sched::format_bytes(static_cast<sched::Bytes>(bytes)); }

sched::Status check_threads(const RunConfig& c, const sched::Schedule& schedule, const MachineResources& m) {
  const int devices = schedule.num_devices();
  const int threads = resolve_threads_per_worker(c.threads_per_worker, devices);
  const long long total = static_cast<long long>(devices) * threads;
  const long long limit = std::max<long long>(kMaxRunDevices, static_cast<long long>(kMaxThreadsPerCore) * m.cores);
  if (total <= limit) return sched::Ok{};
  return sched::Error{fmt::format("{} workers x {} intra-op threads = {} compute threads on {} usable cores, more "
                                  "than the {} this machine runs without crawling ({} per core, or {}); ask for "
                                  "fewer with --intra-op-threads",
                                  devices, threads, total, m.cores, limit, kMaxThreadsPerCore, kMaxRunDevices)};
}

}  // namespace

MachineResources this_machine_resources() {
  return {std::max<int>(1, static_cast<int>(usable_cpus().size())), mem_available_bytes()};
}

RunMemoryEstimate estimate_run_memory(const RunConfig& c, const sched::Schedule& schedule, double share) {
  RunMemoryEstimate e;
  const double in_flight = mean_in_flight(schedule);
  const auto size = sim::microbatch_size(c.batch_size, c.num_microbatches * std::max(1, c.data_parallel));  // a replica's
  const double samples = size ? static_cast<double>(*size) : 0;
  e.parameters = kParameterCopies * 4 * estimated_parameters(c.model) * share;
  // Re-materializing stages keep only their inputs per micro-batch, and one micro-batch's
  // activations while it runs backward: about one micro-batch's worth across the stages.
  const double held = c.recompute ? 1 : in_flight;
  if (c.device == DeviceKind::kCpu) e.activations = held * samples * estimated_activation_bytes_per_sample(c.model) * share;
  e.bookkeeping = in_flight * num_model_layers(c.model) * kHostBytesPerLayerInFlight * share;
  return e;
}

sched::Status check_run_fits(const RunConfig& c, const sched::Schedule& schedule, const MachineResources& m,
                             double share) {
  if (share >= 1) {
    if (auto s = check_threads(c, schedule, m); !s) return s;
  }
  if (m.available_bytes <= 0) return sched::Ok{};
  const RunMemoryEstimate e = estimate_run_memory(c, schedule, share);
  if (e.total() <= m.available_bytes) return sched::Ok{};
  return sched::Error{fmt::format(
      "this run needs about {} of memory (activations {} for {:.3g} micro-batches in flight per stage, autograd's "
      "bookkeeping {}, parameters with their copies {}), more than the {} available: use fewer samples per "
      "micro-batch (more --microbatches), a schedule with fewer in flight (1f1b){}, or a smaller model",
      bytes_text(e.total()), bytes_text(e.activations), mean_in_flight(schedule), bytes_text(e.bookkeeping),
      bytes_text(e.parameters), bytes_text(m.available_bytes), c.recompute ? "" : ", --recompute")};
}

sched::Status check_profile_fits(const ModelConfig& model, int largest_microbatch, DeviceKind device,
                                 const MachineResources& m) {
  if (m.available_bytes <= 0) return sched::Ok{};
  const double parameters = kParameterCopies * 4 * estimated_parameters(model);
  const double activations =
      device == DeviceKind::kCpu ? largest_microbatch * estimated_activation_bytes_per_sample(model) : 0.0;
  if (parameters + activations <= m.available_bytes) return sched::Ok{};
  return sched::Error{fmt::format("profiling a micro-batch of {} needs about {} of memory (activations {}, "
                                  "parameters with their copies {}), more than the {} available: profile smaller "
                                  "--microbatch-sizes or a smaller model",
                                  largest_microbatch, bytes_text(parameters + activations), bytes_text(activations),
                                  bytes_text(parameters), bytes_text(m.available_bytes))};
}

}  // namespace pipeworks::hw
