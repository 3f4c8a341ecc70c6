// format_bytes (see units_text.h).
#include "sched/units_text.h"

#include <array>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

namespace pipeworks::sched {

std::string format_bytes(Bytes bytes) {
  static constexpr std::array<std::string_view, 5> kNames = {"B", "KiB", "MiB", "GiB", "TiB"};
  const double value = static_cast<double>(bytes);
  const double magnitude = std::fabs(value);
  std::size_t index = 0;
  double divisor = 1;
  while (index + 1 < kNames.size() && magnitude >= divisor * 1024.0) {
    divisor *= 1024.0;
    ++index;
  }
  if (index == 0) return fmt::format("{} {}", bytes, kNames[0]);
  return fmt::format("{:.2f} {}", value / divisor, kNames[index]);
}

std::string counted(std::int64_t n, std::string_view singular, std::string_view plural) {
  if (n == 1) return fmt::format("1 {}", singular);
  return plural.empty() ? fmt::format("{} {}s", n, singular) : fmt::format("{} {}", n, plural);
}

}  // namespace pipeworks::sched
