// How long a process that wakes while every core computes waits for one, measured by the run's
// own ranks, so the simulator can give its compute slots the OS's time slice
// (ClusterSpec::core_slice_ns). Only when the processes' threads outnumber the cores and a
// replica has two pipeline ranks or more (one device per replica competes with nobody in the
// simulated replica):
//
//   replica 0, device 0   |== gap ==|send|  sleeps in recv ...... |wakes| (R times)
//   replica 0, device 1             sleeps in recv |wait|wakes|send|
//   every other rank      computes without pause until device 0's rank says stop
//
// Device 1's rank wakes while the busy ranks hold every core; the one-way time above the idle
// hand-off is its wait. A waiter's wake falls anywhere in the running process's slice, so the
// median wait is half a slice: slice = 2 x (median one way - idle one way).
#pragma once

#include <optional>

#include "hw/dist/rank_run.h"
#include "sched/result.h"
#include "sim/spec/units.h"

namespace pipeworks::hw {

// Whether the probe runs: `processes` x `threads` beyond `cores`, and pp >= 2.
bool probes_core_slice(int processes, int threads, int cores, int pipeline_ranks);

// Every rank calls it at the same point of the run; `idle_one_way_ns` is the 4-byte hand-off
// measured with every rank idle (device 0's rank; others ignore it). Device 0's rank of replica
// 0 gets the slice; every other rank, and every rank when the probe does not run, nullopt.
sched::Result<std::optional<sched::Nanoseconds>> probe_core_slice(RankRun& run, int repetitions,
                                                                  sched::Nanoseconds idle_one_way_ns);

}  // namespace pipeworks::hw
