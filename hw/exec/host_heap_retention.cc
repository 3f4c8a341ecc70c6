// glibc's heap growth and trimming set once per process (see host_heap_retention.h).
#include "hw/exec/host_heap_retention.h"

#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pipeworks::hw {

bool retain_freed_host_memory() {
#if defined(__GLIBC__)
  constexpr int kTopPadBytes = 256 << 20;
  const bool padded = mallopt(M_TOP_PAD, kTopPadBytes) == 1;
  const bool untrimmed = mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  return padded && untrimmed;
#else
  return false;
#endif
}

}  // namespace pipeworks::hw
