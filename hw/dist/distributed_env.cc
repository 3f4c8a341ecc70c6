// Reading and checking the rendezvous variables (see distributed_env.h).
#include "hw/dist/distributed_env.h"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace pipeworks::hw {
namespace {

const char* look_up(const EnvLookup& lookup, const char* name) {
  return lookup ? lookup(name) : std::getenv(name);
}

sched::Result<long long> parse_int(const char* name, std::string_view text, long long low, long long high) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end || value < low || value > high) {
    return sched::Error{fmt::format("{}='{}' is not an integer in [{}, {}]", name, text, low, high)};
  }
  return value;
}

}  // namespace

bool distributed_env_present(const EnvLookup& lookup) { return look_up(lookup, "WORLD_SIZE") != nullptr; }

sched::Result<DistributedEnv> read_distributed_env(const EnvLookup& lookup) {
  constexpr long long kMaxWorld = 1 << 20;
  DistributedEnv env;
  const char* world = look_up(lookup, "WORLD_SIZE");
  const char* rank = look_up(lookup, "RANK");
  if (world == nullptr || rank == nullptr) {
    return sched::Error{"distributed run: RANK and WORLD_SIZE must be set (torchrun, 'pipeworks launch', or your "
                        "MPI/Slurm wrapper sets them)"};
  }
  auto w = parse_int("WORLD_SIZE", world, 1, kMaxWorld);
  if (!w) return w.error();
  env.world_size = static_cast<int>(*w);
  auto r = parse_int("RANK", rank, 0, *w - 1);
  if (!r) return r.error();
  env.rank = static_cast<int>(*r);
  env.local_rank = env.rank;
  if (const char* local = look_up(lookup, "LOCAL_RANK")) {
    auto l = parse_int("LOCAL_RANK", local, 0, kMaxWorld);
    if (!l) return l.error();
    env.local_rank = static_cast<int>(*l);
  }
  env.local_world_size = env.world_size;
  if (const char* local_world = look_up(lookup, "LOCAL_WORLD_SIZE")) {
    auto l = parse_int("LOCAL_WORLD_SIZE", local_world, 1, *w);
    if (!l) return l.error();
    env.local_world_size = static_cast<int>(*l);
  }
  if (const char* addr = look_up(lookup, "MASTER_ADDR")) {
    if (std::string_view(addr).empty()) return sched::Error{"MASTER_ADDR is set but empty"};
    env.master_addr = addr;
  }
  if (const char* port = look_up(lookup, "MASTER_PORT")) {
    auto p = parse_int("MASTER_PORT", port, 1, 65535);
    if (!p) return p.error();
    env.master_port = static_cast<std::uint16_t>(*p);
  }
  return env;
}

}  // namespace pipeworks::hw
