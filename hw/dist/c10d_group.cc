// Store rendezvous, Gloo connection, barrier and gather (see c10d_group.h).
#include "hw/dist/c10d_group.h"

#include <algorithm>

#include <fmt/format.h>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#if __has_include(<gloo/config.h>)
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "hw/model/torch_errors.h"
#define PIPEWORKS_HAVE_GLOO 1
#else
#define PIPEWORKS_HAVE_GLOO 0
#endif

namespace pipeworks::hw {
namespace {

std::vector<std::uint8_t> to_bytes(const std::string& text) { return {text.begin(), text.end()}; }

long long millis(std::chrono::milliseconds t) { return static_cast<long long>(t.count()); }

// "1, 3": the ranks whose key `prefix`/rank is not in the store; throws when the store is gone.
std::string ranks_without(c10d::Store& store, const std::string& prefix, int world_size) {
  std::string missing;
  for (int r = 0; r < world_size; ++r) {
    if (!store.check({prefix + std::to_string(r)})) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  }
  return missing;
}

// Every rank announces itself and waits for all the others, so a rank that never started (or
// died before connecting) is named, after one timeout, by every rank that did.
sched::Status wait_for_every_rank(C10dGroup& group) {
  const std::string prefix = "pipeworks/joined/";
  const DistributedEnv& env = group.env;
  std::vector<std::string> keys;
  for (int r = 0; r < env.world_size; ++r) keys.push_back(prefix + std::to_string(r));
  try {
    group.store->set(prefix + std::to_string(env.rank), to_bytes("1"));
    group.store->wait(keys, group.timeout);
  } catch (const std::exception& e) {
    std::string missing;
    try {
      missing = fmt::format("rank(s) {} did not join", ranks_without(*group.store, prefix, env.world_size));
    } catch (const std::exception&) {
      missing = "the store on rank 0 is unreachable";
    }
    return sched::Error{fmt::format("rank {}: rendezvous at {}:{} of {} ranks failed within {} ms: {} (not started, "
                                    "or exited before connecting): {}",
                                    env.rank, env.master_addr, env.master_port, env.world_size,
                                    millis(group.timeout), missing, describe_c10d_exception(e))};
  }
  return sched::Ok{};
}

}  // namespace

std::string describe_c10d_exception(const std::exception& e) {
  return torch_error_message(e);
}

sched::Status wait_work(const c10::intrusive_ptr<c10d::Work>& work, std::chrono::milliseconds timeout,
                        const std::string& what) {
  try {
    if (!work->wait(timeout)) return sched::Error{fmt::format("{}: the operation was aborted", what)};
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("{}: failed (deadline {} ms): {}", what, millis(timeout), describe_c10d_exception(e))};
  }
  return sched::Ok{};
}

sched::Result<C10dGroup> connect_store(const DistributedEnv& env, std::chrono::milliseconds timeout) {
  C10dGroup group;
  group.env = env;
  group.timeout = timeout;
  c10d::TCPStoreOptions options;
  options.port = env.master_port;
  options.isServer = env.rank == 0;
  options.numWorkers = static_cast<std::size_t>(env.world_size);
  options.waitWorkers = false;  // wait_for_every_rank waits, and names who is missing
  options.timeout = timeout;
  try {
    group.store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("rank {}: cannot rendezvous at {}:{} with {} ranks within {} ms: {}", env.rank,
                                    env.master_addr, env.master_port, env.world_size, millis(timeout),
                                    describe_c10d_exception(e))};
  }
  if (auto joined = wait_for_every_rank(group); !joined) return joined.error();
  return group;
}

#if PIPEWORKS_HAVE_GLOO
namespace {

// A ProcessGroupGloo of `size` ranks over `store`, bound to the interface connect_gloo describes.
c10::intrusive_ptr<C10dBackend> gloo_over(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                          const DistributedEnv& env, std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
  const bool loopback = env.master_addr == "127.0.0.1" || env.master_addr == "localhost";
  if (interface != nullptr && *interface != '\0') {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
  } else if (loopback) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
}

}  // namespace
#endif

constexpr const char* kNoGloo =
    "this build of pipeworks found no Gloo headers (gloo/config.h) next to LibTorch; the CPU multi-process path "
    "needs them";

sched::Result<C10dGroup> connect_gloo(const DistributedEnv& env, std::chrono::milliseconds timeout) {
#if PIPEWORKS_HAVE_GLOO
  auto group = connect_store(env, timeout);
  if (!group) return group.error();
  try {
    group->backend = gloo_over(group->store, env.rank, env.world_size, env, timeout);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("rank {}: cannot connect the Gloo group of {} ranks within {} ms: {}", env.rank,
                                    env.world_size, millis(timeout), describe_c10d_exception(e))};
  }
  return group;
#else
  (void)env;
  (void)timeout;
  return sched::Error{kNoGloo};
#endif
}

sched::Result<c10::intrusive_ptr<C10dBackend>> connect_gloo_subgroup(const C10dGroup& world, const std::string& name,
                                                                     const std::vector<int>& ranks) {
  const auto at = std::find(ranks.begin(), ranks.end(), world.env.rank);
  if (at == ranks.end()) return sched::Error{fmt::format("rank {} is not in group {}", world.env.rank, name)};
#if PIPEWORKS_HAVE_GLOO
  try {
    auto store = c10::make_intrusive<c10d::PrefixStore>("pipeworks/group/" + name, world.store);
    return gloo_over(store, static_cast<int>(at - ranks.begin()), static_cast<int>(ranks.size()), world.env,
                     world.timeout);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("rank {}: cannot connect the Gloo group {} of {} ranks within {} ms: {}",
                                    world.env.rank, name, ranks.size(), millis(world.timeout),
                                    describe_c10d_exception(e))};
  }
#else
  return sched::Error{kNoGloo};
#endif
}

sched::Status store_barrier(C10dGroup& group, const std::string& name) {
  const std::string key = "pipeworks/barrier/" + name;
  try {
    group.store->setTimeout(group.timeout);
    group.store->set(key + "/" + std::to_string(group.env.rank), to_bytes("1"));
    if (group.store->add(key, 1) == group.env.world_size) group.store->set(key + "/done", to_bytes("1"));
    group.store->wait({key + "/done"}, group.timeout);
  } catch (const std::exception& e) {
    std::string missing;
    try {
      missing = ranks_without(*group.store, key + "/", group.env.world_size);
      missing = missing.empty() ? "" : "; missing rank(s) " + missing;
    } catch (const std::exception&) {
      missing = "; the store on rank 0 is unreachable";
    }
    return sched::Error{fmt::format("rank {}: barrier '{}' failed (at most {} ms){}: {}", group.env.rank, name,
                                    millis(group.timeout), missing, describe_c10d_exception(e))};
  }
  return sched::Ok{};
}

sched::Status store_farewell(C10dGroup& group) {
  const std::string key = "pipeworks/farewell";
  if (group.env.world_size == 1) return sched::Ok{};
  try {
    group.store->setTimeout(group.timeout);
    if (group.env.rank != 0) {
      if (group.store->add(key, 1) == group.env.world_size - 1) group.store->set(key + "/all", to_bytes("1"));
      return sched::Ok{};
    }
    group.store->wait({key + "/all"}, group.timeout);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("rank {}: waiting for the other ranks to finish failed (at most {} ms): {}",
                                    group.env.rank, millis(group.timeout), describe_c10d_exception(e))};
  }
  return sched::Ok{};
}

sched::Result<std::vector<std::string>> exchange_all(C10dGroup& group, const std::string& name,
                                                     const std::string& value) {
  const std::string prefix = "pipeworks/exchange/" + name + "/";
  std::vector<std::string> values;
  int waiting_for = group.env.rank;
  try {
    group.store->setTimeout(group.timeout);
    group.store->set(prefix + std::to_string(group.env.rank), to_bytes(value));
    for (int r = 0; r < group.env.world_size; ++r) {
      waiting_for = r;
      const std::vector<std::uint8_t> bytes = group.store->get(prefix + std::to_string(r));
      values.emplace_back(bytes.begin(), bytes.end());
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("rank {}: exchanging '{}' failed waiting for rank {} (at most {} ms): {}",
                                    group.env.rank, name, waiting_for, millis(group.timeout),
                                    describe_c10d_exception(e))};
  }
  return values;
}

sched::Result<std::vector<std::string>> gather_to_root(C10dGroup& group, const std::string& name,
                                                       const std::string& value) {
  const std::string prefix = "pipeworks/gather/" + name + "/";
  std::vector<std::string> values;
  int waiting_for = group.env.rank;
  try {
    group.store->setTimeout(group.timeout);
    group.store->set(prefix + std::to_string(group.env.rank), to_bytes(value));
    if (group.env.rank != 0) return values;
    for (int r = 0; r < group.env.world_size; ++r) {
      waiting_for = r;
      const std::vector<std::uint8_t> bytes = group.store->get(prefix + std::to_string(r));
      values.emplace_back(bytes.begin(), bytes.end());
      group.store->deleteKey(prefix + std::to_string(r));
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("rank {}: gathering '{}' failed waiting for rank {} (at most {} ms): {}",
                                    group.env.rank, name, waiting_for, millis(group.timeout),
                                    describe_c10d_exception(e))};
  }
  return values;
}

}  // namespace pipeworks::hw
