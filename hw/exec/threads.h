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

namespace pipeworks::hw {

// max(1, hardware_concurrency / num_workers).
int default_threads_per_worker(int num_workers);

// `requested` when > 0, else the default above.
int resolve_threads_per_worker(int requested, int num_workers);

// Sets the calling thread's intra-op threads (at::set_num_threads).
void set_worker_threads(int threads);

}  // namespace pipeworks::hw
