// The calling thread's action context (see action_context.h).
#include "hw/model/action_context.h"

namespace pipeworks::hw {
namespace {

thread_local ActionContext tls_context;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

}  // namespace

const ActionContext& current_action_context() { return tls_context; }

ActionScope::ActionScope(const ActionContext& context) : previous_(tls_context) { tls_context = context; }

ActionScope::~ActionScope() { tls_context = previous_; }

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t layer_id, std::int64_t microbatch) {
  std::uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ layer_id);
  return splitmix64(h ^ static_cast<std::uint64_t>(microbatch));
}

}  // namespace pipeworks::hw
