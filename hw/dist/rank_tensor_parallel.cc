// A rank's tensor-parallel set-up (see rank_tensor_parallel.h).
#include "hw/dist/rank_tensor_parallel.h"

#include <charconv>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace pipeworks::hw {

sched::Result<std::optional<int>> read_wrong_shard(const EnvLookup& lookup) {
  const char* text = lookup ? lookup("PIPEWORKS_TEST_WRONG_SHARD") : std::getenv("PIPEWORKS_TEST_WRONG_SHARD");
  if (text == nullptr) return std::optional<int>{};
  const std::string value(text);
  int rank = -1;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), rank);
  if (error != std::errc{} || end != value.data() + value.size() || rank < 0) {
    return sched::Error{fmt::format("PIPEWORKS_TEST_WRONG_SHARD='{}': expected a rank number", value)};
  }
  return std::optional<int>{rank};
}

sched::Result<Model> tensor_parallel_model(const Model& model, const RankPlace& place,
                                           std::chrono::milliseconds timeout, std::optional<int> wrong_shard,
                                           RankTensorParallel& out) {
  const int tp = place.layout.tp;
  if (tp == 1) return clone_model(model);
  out.group = std::make_shared<C10dTensorGroup>(place.tensor_group, place.tensor_rank, timeout);
  for (int t = 0; t < tp; ++t) out.shards.push_back(tensor_parallel_shards(model, tp, t));
  const int shard = wrong_shard == place.rank ? (place.tensor_rank + 1) % tp : place.tensor_rank;
  return shard_model(model, out.group, shard);
}

sched::Status connect_tensor_group(RankTensorParallel& tp, const C10dGroup& world, const RankPlace& place) {
  if (!tp.group) return sched::Ok{};
  return tp.group->connect(world, fmt::format("tp-of-device{}-replica{}", place.device, place.replica));
}

}  // namespace pipeworks::hw
