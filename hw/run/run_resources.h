// Whether a run fits the machine it is about to run on: its compute threads against the cores and
// its memory estimate against the memory available, checked before any model is built, so a run
// that cannot fit is refused at once with its figures (`run` exits 2) instead of failing an
// allocation, or crawling, minutes in. LibTorch-free.
//
//   threads   devices x intra-op threads per worker <= max(kMaxRunDevices, kMaxThreadsPerCore x cores)
//   memory    parameters  kParameterCopies x parameters x 4 B   (model, cells, gradients, reference)
//           + activations mean in-flight micro-batches x micro-batch x bytes per sample (zoo_shapes.h;
//                         on the CPU device only: elsewhere they live on the GPU)
//           + bookkeeping mean in-flight micro-batches x layers x kHostBytesPerLayerInFlight
//                         (autograd's nodes and tensor handles, which no allocator counts)
#pragma once

#include <string>

#include "hw/run/run.h"
#include "sched/result.h"
#include "sched/schedule.h"

namespace pipeworks::hw {

inline constexpr int kMaxThreadsPerCore = 8;
inline constexpr double kParameterCopies = 4;
// Measured: a 2-layer mlp of width 1, K = 2, GPipe, M = 16,384 and 65,536 (bench/README.md,
// "hostile inputs, round 3"): 10.3 KiB more resident per micro-batch, 2 layers each held.
inline constexpr double kHostBytesPerLayerInFlight = 5 * 1024;

struct MachineResources {
  int cores = 1;
  double available_bytes = 0;  // 0: unknown, and memory is not checked
};

// This machine's usable cores (its affinity mask) and /proc/meminfo's MemAvailable.
MachineResources this_machine_resources();

struct RunMemoryEstimate {
  double parameters = 0;
  double activations = 0;
  double bookkeeping = 0;
  double total() const { return parameters + activations + bookkeeping; }
};

// `schedule` is the run's (build_schedule); `share` the part of it this process runs (1, or
// 1 / world size for one rank of a distributed run).
RunMemoryEstimate estimate_run_memory(const RunConfig& config, const sched::Schedule& schedule, double share = 1);

sched::Status check_run_fits(const RunConfig& config, const sched::Schedule& schedule, const MachineResources& machine,
                             double share = 1);

// A profile runs one micro-batch of each size through every layer (on the CPU): the largest
// size's activations and the parameters' copies must fit.
sched::Status check_profile_fits(const ModelConfig& model, int largest_microbatch, DeviceKind device,
                                 const MachineResources& machine);

}  // namespace pipeworks::hw
