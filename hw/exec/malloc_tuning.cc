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
  const int mmap_ok = mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  const int trim_ok = mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes);
  return mmap_ok == 1 && trim_ok == 1;
#else
  return false;
#endif
}

}  // namespace pipeworks::hw
