// The counting allocator keeps each device's bytes apart, and its probes' counters lie past every
// device a run can have: a 64-device run and a profile or memory probe beside it never share one.
#include "hw/hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

#include <catch2/catch.hpp>

#include <vector>

#include "hw/exec/counting_allocator.h"

namespace pipeworks::hw {
namespace {

// The live bytes of each of `ids` while `holder` holds a 1 MiB tensor allocated under its scope.
std::vector<sched::Bytes> live_while_held(int holder, const std::vector<int>& ids) {
  const DeviceScope scope(holder);
  const torch::Tensor held = torch::empty({1 << 18}, torch::kFloat32);  // 1 MiB
  std::vector<sched::Bytes> out;
  for (const int id : ids) out.push_back(live_bytes(id));
  return out;
}

TEST_CASE("counting allocator: devices and probes count apart") {
  install_counting_allocator();
  const std::vector<int> ids = {0, kMaxCountedDevices - 1, kProfilerCounter, kStageMemoryCounter, kModelProbeCounter};
  for (std::size_t holder = 0; holder < ids.size(); ++holder) {
    std::vector<sched::Bytes> before;
    for (const int id : ids) before.push_back(live_bytes(id));
    const std::vector<sched::Bytes> during = live_while_held(ids[holder], ids);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      INFO("holder " << ids[holder] << ", counter " << ids[i]);
      if (i == holder) {
        CHECK(during[i] - before[i] >= (1 << 20));
      } else {
        CHECK(during[i] == before[i]);
      }
    }
    CHECK(live_bytes(ids[holder]) == before[holder]);  // the free went back to the same counter
  }
  CHECK(kProfilerCounter >= kMaxCountedDevices);
  CHECK(live_bytes(kNumCounters) == 0);  // past the probes: unattributed, not reported
}

}  // namespace
}  // namespace pipeworks::hw
