// The NCCL flavour of c10d_group.h for multi-process runs on GPUs: the same TCPStore
// rendezvous, then a ProcessGroupNCCL whose rank uses GPU LOCAL_RANK (modulo the GPUs present).
// Sends and receives are matched per pair of ranks in call order (NCCL ignores tags); the
// lowered schedule's global order makes both sides call them in the same order.
#pragma once

#include <chrono>

#include "hw/dist/c10d_group.h"

namespace pipeworks::hw::cuda {

// The GPU this rank drives: LOCAL_RANK modulo the visible GPUs (error without GPUs).
sched::Result<int> gpu_of_rank(const DistributedEnv& env);

// Sets blocking waits (so Work::wait(timeout) returns on the host with an error on timeout,
// both the 1.13 and 2.x variable names) unless already set, then connects.
sched::Result<C10dGroup> connect_nccl(const DistributedEnv& env, std::chrono::milliseconds timeout);

}  // namespace pipeworks::hw::cuda
