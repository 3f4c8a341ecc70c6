// Where a process sits in a multi-process run, read from the variables torchrun (and
// `pipeworks launch`, mpirun/Slurm wrappers that export them) set: RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR, MASTER_PORT. LibTorch-free so the CLI can decide the path.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "sched/result.h"

namespace pipeworks::hw {

struct DistributedEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;  // the ranks on this machine
  std::string master_addr = "127.0.0.1";
  std::uint16_t master_port = 29500;
};

// Looks a variable up; nullptr when unset. Defaults to std::getenv.
using EnvLookup = std::function<const char*(const char*)>;

// True when WORLD_SIZE is set (a launcher started this process as one rank of several).
bool distributed_env_present(const EnvLookup& lookup = {});

// All six variables, strictly: integers in range (0 <= RANK < WORLD_SIZE, LOCAL_RANK >= 0,
// 1 <= LOCAL_WORLD_SIZE <= WORLD_SIZE, 1 <= MASTER_PORT <= 65535), MASTER_ADDR non-empty. LOCAL_RANK
// defaults to RANK, LOCAL_WORLD_SIZE to WORLD_SIZE (one machine), MASTER_ADDR to
// 127.0.0.1 and MASTER_PORT to 29500 when unset (torchrun's defaults); RANK and WORLD_SIZE are
// required. Errors name the variable and its text.
sched::Result<DistributedEnv> read_distributed_env(const EnvLookup& lookup = {});

}  // namespace pipeworks::hw
