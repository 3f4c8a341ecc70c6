// A connected group of ranks for a multi-process run: c10d's TCPStore (rendezvous, barriers,
// gathering small reports) plus a point-to-point c10d backend (Gloo on CPU; NCCL in hw/cuda/).
// Every blocking call here has a deadline and returns an Error naming what it waited for.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/version.h>

#include "hw/dist/distributed_env.h"
#include "sched/result.h"

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

namespace pipeworks::hw {

// What ProcessGroupGloo / ProcessGroupNCCL derive from: c10d::Backend since LibTorch 2.0,
// c10d::ProcessGroup before. Both have send(tensors, dst, tag) and recv(tensors, src, tag).
#if TORCH_VERSION_MAJOR >= 2
using C10dBackend = c10d::Backend;
#else
using C10dBackend = c10d::ProcessGroup;
#endif

struct C10dGroup {
  DistributedEnv env;
  std::chrono::milliseconds timeout{0};
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<C10dBackend> backend;  // null until a backend is connected
};

// Connects to (rank 0: serves) the TCPStore at MASTER_ADDR:MASTER_PORT, waiting at most
// `timeout` for all WORLD_SIZE ranks.
sched::Result<C10dGroup> connect_store(const DistributedEnv& env, std::chrono::milliseconds timeout);

// connect_store plus a ProcessGroupGloo over it (full mesh of TCP pairs). The Gloo device binds
// to GLOO_SOCKET_IFNAME when set, to 127.0.0.1 when MASTER_ADDR is a loopback address, else to
// the address the host name resolves to.
sched::Result<C10dGroup> connect_gloo(const DistributedEnv& env, std::chrono::milliseconds timeout);

// A Gloo group of `ranks` (world ranks, in group-rank order) inside `world`, its keys under
// "pipeworks/group/<name>" of the world's store; every rank in `ranks`, and only those, calls it
// with the same arguments. An error names the group.
sched::Result<c10::intrusive_ptr<C10dBackend>> connect_gloo_subgroup(const C10dGroup& world, const std::string& name,
                                                                     const std::vector<int>& ranks);

// Waits until every rank reached the barrier called `name` (each name used once per run).
sched::Status store_barrier(C10dGroup& group, const std::string& name);

// The last call of a run: rank 0 serves the store, so it returns only after every other rank
// said it is done with the store (otherwise a rank still waiting on the final barrier's answer
// could see the store vanish). Other ranks return at once.
sched::Status store_farewell(C10dGroup& group);

// Every rank gets every rank's `value` in rank order (each name used once per run).
sched::Result<std::vector<std::string>> exchange_all(C10dGroup& group, const std::string& name,
                                                     const std::string& value);

// Rank 0 gets every rank's `value` in rank order; other ranks get an empty vector.
sched::Result<std::vector<std::string>> gather_to_root(C10dGroup& group, const std::string& name,
                                                       const std::string& value);

// A c10d/Gloo exception's message without LibTorch's backtrace.
std::string describe_c10d_exception(const std::exception& e);

// Waits at most `timeout` for `work`; an error names `what` (aborted, or failed and why).
sched::Status wait_work(const c10::intrusive_ptr<c10d::Work>& work, std::chrono::milliseconds timeout,
                        const std::string& what);

}  // namespace pipeworks::hw
