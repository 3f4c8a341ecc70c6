// Puts a timing into the cache state the run has. A run's optimizer step finds its state evicted
// by the step's compute in between; timed back to back with itself it finds everything in cache
// and comes out short (bench/README.md, "the optimizer step after a cache sweep"). Sweeping a
// buffer of twice the last-level cache before each timed repetition times it as the run meets
// it. LibTorch-free.
#pragma once

#include <string_view>
#include <vector>

#include "sched/result.h"
#include "sched/timeline.h"

namespace pipeworks::hw {

// sysfs's cache size text ("32768K", "1M", "512"): bytes, or an error naming the text.
sched::Result<sched::Bytes> parse_cache_size(std::string_view text);

// The largest data or unified cache of cpu0 (/sys/devices/system/cpu/cpu0/cache), or `fallback`
// where sysfs does not say.
sched::Bytes last_level_cache_bytes(sched::Bytes fallback = sched::Bytes{32} << 20);

class CacheSweep {
 public:
  // A buffer of `bytes` (at least one cache line).
  explicit CacheSweep(sched::Bytes bytes);
  // Writes one byte in every 64-byte line of the buffer, evicting what the cache held.
  void run();
  sched::Bytes bytes() const { return static_cast<sched::Bytes>(buffer_.size()); }

 private:
  std::vector<unsigned char> buffer_;
  unsigned char round_ = 0;
};

}  // namespace pipeworks::hw
