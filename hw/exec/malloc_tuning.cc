// glibc malloc thresholds for stable allocation costs (see malloc_tuning.h).
#include "hw/exec/malloc_tuning.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pipeworks::hw {

bool stabilize_malloc() {
#if defined(__GLIBC__)
  constexpr int kMmapThresholdBytes = 32 << 20;  // DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
  constexpr int kTrimThresholdBytes = 1 << 30;
  constexpr int kTopPadBytes = 256 << 20;  // above a thread arena's heap (64 MiB): none is unmapped
  const int mmap_ok = mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  const int trim_ok = mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes);
  const int pad_ok = mallopt(M_TOP_PAD, kTopPadBytes);
  return mmap_ok == 1 && trim_ok == 1 && pad_ok == 1;
#else
  return false;
#endif
}

}  // namespace pipeworks::hw
