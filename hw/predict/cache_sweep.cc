// The cache sweep before a timed repetition (see cache_sweep.h).
#include "hw/predict/cache_sweep.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace pipeworks::hw {
namespace {

constexpr std::size_t kLineBytes = 64;
constexpr int kMaxCacheIndex = 16;

std::string read_word(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  in >> word;
  return word;
}

}  // namespace

sched::Result<sched::Bytes> parse_cache_size(std::string_view text) {
  sched::Bytes value = 0;
  const char* end = text.data() + text.size();
  auto [next, error] = std::from_chars(text.data(), end, value);
  const std::string_view unit(next, static_cast<std::size_t>(end - next));
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (error != std::errc() || value <= 0 || shift < 0 || value > (sched::Bytes{1} << (50 - shift))) {
    return sched::Error{fmt::format("cache size '{}': expected a positive count of bytes, K, M or G", text)};
  }
  return value << shift;
}

sched::Bytes last_level_cache_bytes(sched::Bytes fallback) {
  int best_level = 0;
  sched::Bytes best = 0;
  for (int i = 0; i < kMaxCacheIndex; ++i) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", i);
    const std::string type = read_word(dir + "type");
    if (type.empty()) break;
    if (type == "Instruction") continue;
    const auto size = parse_cache_size(read_word(dir + "size"));
    int level = 0;
    const std::string level_text = read_word(dir + "level");
    std::from_chars(level_text.data(), level_text.data() + level_text.size(), level);
    if (!size || level < best_level) continue;
    best = level > best_level ? *size : std::max(best, *size);
    best_level = level;
  }
  return best > 0 ? best : fallback;
}

CacheSweep::CacheSweep(sched::Bytes bytes)
    : buffer_(static_cast<std::size_t>(std::max<sched::Bytes>(bytes, kLineBytes)), 0) {}

void CacheSweep::run() {
  ++round_;
  volatile unsigned char* data = buffer_.data();
  for (std::size_t i = 0; i < buffer_.size(); i += kLineBytes) data[i] = round_;
}

}  // namespace pipeworks::hw
