// Keeps freed host memory inside the process, as GPU runtimes' caching allocators keep device
// memory: a pipeline step frees and re-allocates its activations every step, and glibc's malloc by
// default hands the top of its heap back to the kernel on free and faults fresh zeroed pages in
// on the next growth. On a VM that page churn dominated whole steps: transformer 6 layers, GPipe,
// 3 stages on 2 devices, 69 MiB of activations on one of them, forwards late in the fill ran 5-10x
// their profiled time and the step took ~2x the prediction, in most steps (bench/README.md,
// "generalization"). LibTorch-free.
#pragma once

namespace pipeworks::hw {

// Tells glibc's malloc to grow its heaps in large steps and never trim them (M_TOP_PAD 256 MiB,
// M_TRIM_THRESHOLD maximal): memory once used stays with the process, up to its peak plus the
// pad. Process-wide; call once at start-up, before any worker thread. True when applied (glibc),
// false elsewhere (other C libraries keep their own policy).
bool retain_freed_host_memory();

}  // namespace pipeworks::hw
