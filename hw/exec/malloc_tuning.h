// Makes CPU tensor allocation cost independent of history. glibc serves blocks above its mmap
// threshold with a fresh mmap (page-faulted in on first touch, unmapped on free) and moves that
// threshold as blocks are freed, so the same layer costs more or less depending on what ran
// before it (a layer profiled alone then pays page faults the pipelined run does not). Raising
// the mmap and trim thresholds keeps freed buffers in the heap for reuse, in the profile and the
// run alike.
#pragma once

namespace pipeworks::hw {

// mallopt(M_MMAP_THRESHOLD, 32 MiB, glibc's maximum) and mallopt(M_TRIM_THRESHOLD, 1 GiB);
// true when both took effect (false on a C library without mallopt, where nothing changes).
bool stabilize_malloc();

}  // namespace pipeworks::hw
