// Names of the device kinds (see device_kind.h).
#include "hw/exec/device_kind.h"

#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace pipeworks::hw {
namespace {

constexpr std::array<std::pair<DeviceKind, std::string_view>, 2> kNames{{
    {DeviceKind::kCpu, "cpu"},
    {DeviceKind::kCuda, "cuda"},
}};

}  // namespace

std::string_view device_kind_name(DeviceKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

sched::Result<DeviceKind> parse_device_kind(std::string_view name) {
  for (const auto& [kind, known] : kNames) {
    if (known == name) return kind;
  }
  return sched::Error{fmt::format("device '{}' is not supported (cpu or cuda)", name)};
}

}  // namespace pipeworks::hw
