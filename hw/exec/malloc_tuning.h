// Makes CPU tensor allocation cost independent of history. glibc serves blocks above its mmap
// threshold with a fresh mmap (page-faulted in on first touch, unmapped on free) and moves that
// threshold as blocks are freed, so the same layer costs more or less depending on what ran
// before it (a layer profiled alone then pays page faults the pipelined run does not). Raising
// the mmap and trim thresholds keeps freed buffers in the heap for reuse, in the profile and the
// run alike. A worker thread's arena grows in heaps of 64 MiB; one whose live activations outgrow
// a heap gets a second, which glibc unmaps as soon as it is wholly free unless the top pad is at
// least a heap, so every step faulted it in again (transformer 6 layers, K = 3 on 2 devices, mb
// 15, 69 MiB on one device: forwards late in the fill ran 5-10x their profiled time, the median
// step 2x the prediction; bench/README.md "generalization").
#pragma once

namespace pipeworks::hw {

// mallopt(M_MMAP_THRESHOLD, 32 MiB, glibc's maximum), mallopt(M_TRIM_THRESHOLD, 1 GiB) and
// mallopt(M_TOP_PAD, 256 MiB): memory once used stays with the process. True when all took
// effect (false on a C library without mallopt, where nothing changes).
bool stabilize_malloc();

}  // namespace pipeworks::hw
