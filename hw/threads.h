// Intra-op threads per pipeline worker, chosen so K workers share the machine's cores without
// oversubscription: max(1, hardware_concurrency / K) unless `--threads N` asks for N.
//
// What LibTorch 1.13 actually does (OpenMP backend, checked with at::get_parallel_info()):
// at::set_num_threads(n) stores n in a process-wide default *and* sets the calling thread's
// OpenMP thread count; an OpenMP parallel region uses the count of the thread that opens it,
// and a thread that never called it picks up the process-wide default on its first parallel
// op. So each worker calls set_worker_threads at its start and gets its own team of n threads;
// the last value set also becomes the default for threads started later. (With the native
// thread-pool backend the pool is one per process and the last call wins for everyone.)
#pragma once

#include <vector>

namespace pipeworks::hw {

// max(1, hardware_concurrency / num_workers).
int default_threads_per_worker(int num_workers);

// `requested` when > 0, else the default above.
int resolve_threads_per_worker(int requested, int num_workers);

// Sets the calling thread's intra-op threads (at::set_num_threads).
void set_worker_threads(int threads);

// The cores worker `device` is pinned to when every device gets `threads` cores of its own:
// the process's allowed CPUs [device * threads, (device + 1) * threads), or empty when they run
// out (then the worker stays unpinned). `run --predict` pins the stage replay's workers and the
// run's alike, so both put device d on the same core: the two vCPUs of a virtual machine need
// not be equally fast, and an unpinned worker may land on either.
//
//   2 cores, K = 2, 1 thread each:  worker 0 -> {cpu0}   worker 1 -> {cpu1}
//   2 cores, K = 4:                 worker 0 -> {cpu0}   worker 1 -> {cpu1}   2, 3 -> unpinned
std::vector<int> worker_cores(int device, int threads);

// Pins the calling thread (and the OpenMP team it starts) to worker_cores(device, threads);
// returns whether it did.
bool pin_worker(int device, int threads);

}  // namespace pipeworks::hw
