// The list rule's parameter grid (policies.h).
#include "sim/synth/policies.h"

#include <algorithm>
#include <functional>
#include <set>

namespace pipeworks::sim {
namespace {

using PerStage = std::function<int(int stage, int stages)>;

constexpr int kEveryExtraUpTo = 16;

// The extra micro-batches e over 1F1B's K-s the limits try: every e up to 16, then powers of two
// up to K (so deep pipelines get a few dozen settings, not K).
std::vector<int> extras(int num_stages) {
  std::vector<int> out;
  for (int e = 0; e <= std::min(num_stages, kEveryExtraUpTo); ++e) out.push_back(e);
  for (int e = 2 * kEveryExtraUpTo; e <= num_stages; e *= 2) out.push_back(e);
  return out;
}

std::vector<PerStage> limit_families(int num_stages, int num_microbatches) {
  std::vector<PerStage> families;
  for (const int e : extras(num_stages)) families.push_back([e](int s, int k) { return k - s + e; });
  families.push_back([](int, int k) { return k; });
  families.push_back([](int, int k) { return 2 * k - 1; });
  families.push_back([num_microbatches](int, int) { return num_microbatches; });
  return families;
}

std::vector<PerStage> deferral_families(int num_microbatches) {
  return {[](int, int) { return 0; },
          [](int, int) { return 1; },
          [](int, int) { return 2; },
          [](int, int k) { return k / 2; },
          [](int, int k) { return k; },
          [num_microbatches](int, int) { return num_microbatches; },
          [](int s, int) { return s; },
          [](int s, int k) { return k - 1 - s; }};
}

}  // namespace

std::vector<ListPolicy> list_policies(const std::vector<int>& memory_limits, int num_microbatches) {
  const int k = static_cast<int>(memory_limits.size());
  std::vector<ListPolicy> policies;
  std::set<ListPolicy> seen;
  for (const PerStage& limit : limit_families(k, num_microbatches)) {
    for (const PerStage& deferral : deferral_families(num_microbatches)) {
      ListPolicy p;
      for (int s = 0; s < k; ++s) {
        const int wanted = std::clamp(limit(s, k), 1, num_microbatches);
        p.in_flight_limit.push_back(std::min(wanted, memory_limits[static_cast<std::size_t>(s)]));
        p.max_deferred_weights.push_back(std::clamp(deferral(s, k), 0, num_microbatches));
      }
      if (seen.insert(p).second) policies.push_back(std::move(p));
    }
  }
  return policies;
}

}  // namespace pipeworks::sim
