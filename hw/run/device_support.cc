// Whether hw/cuda/ is compiled in, and how devices share memory (see device_support.h).
#include "hw/run/device_support.h"

#include <map>

#include "hw/run/device_choice.h"

namespace pipeworks::hw {

bool built_with_cuda() { return PIPEWORKS_HAVE_CUDA != 0; }

sched::Status check_device_available(DeviceKind device) {
  auto devices = make_compute_devices(device);
  if (!devices) return devices.error();
  return sched::Ok{};
}

sched::Result<std::vector<int>> memory_domains(DeviceKind device, int num_devices) {
  auto devices = make_compute_devices(device);
  if (!devices) return devices.error();
  std::vector<int> out;
  for (int d = 0; d < num_devices; ++d) out.push_back((*devices)->memory_domain(d));
  return out;
}

std::vector<sched::Bytes> shared_peaks(const std::vector<sched::Bytes>& peaks, const std::vector<int>& domains) {
  std::map<int, sched::Bytes> sum;
  for (std::size_t d = 0; d < peaks.size() && d < domains.size(); ++d) sum[domains[d]] += peaks[d];
  std::vector<sched::Bytes> out = peaks;
  for (std::size_t d = 0; d < out.size() && d < domains.size(); ++d) out[d] = sum[domains[d]];
  return out;
}

}  // namespace pipeworks::hw
