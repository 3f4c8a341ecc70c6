// The counting CPU allocator (see counting_allocator.h). Each allocation's {inner DataPtr,
// device, bytes} is kept in a table keyed by its data pointer, which is also the DataPtr's
// context (LibTorch's raw_allocate requires context == data); the deleter subtracts from that
// device and frees.
#include "hw/exec/counting_allocator.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <c10/core/CPUAllocator.h>

#include "hw/exec/malloc_tuning.h"
#include "hw/model/torch_compat.h"

namespace pipeworks::hw {
namespace {

constexpr int kUnattributed = kNumCounters;

struct Counters {
  std::atomic<std::int64_t> live{0};
  std::atomic<std::int64_t> peak{0};
};

std::array<Counters, kNumCounters + 1> counters;
thread_local int tls_device = kUnattributed;
std::atomic<bool> installed{false};

int slot_of(int device) { return device >= 0 && device < kNumCounters ? device : kUnattributed; }

struct Allocation {
  c10::DataPtr inner;
  int slot;
  std::int64_t bytes;
};

struct Table {
  std::mutex mutex;
  std::unordered_map<void*, Allocation> live;
};

Table& table() {
  static Table* t = new Table;  // never destroyed: frees may run during static destruction
  return *t;
}

void release(void* data) {
  Allocation allocation;
  {
    Table& t = table();
    const std::lock_guard lock(t.mutex);
    auto node = t.live.extract(data);
    if (node.empty()) return;
    allocation = std::move(node.mapped());
  }
  counters[static_cast<std::size_t>(allocation.slot)].live.fetch_sub(allocation.bytes, std::memory_order_relaxed);
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

  c10::DataPtr allocate(std::size_t n) PIPEWORKS_ALLOCATOR_ALLOCATE_CONST override {
    c10::DataPtr inner = inner_->allocate(n);
    void* data = inner.get();
    if (data == nullptr) return inner;  // zero bytes: nothing to count
    const c10::Device device = inner.device();
    const int slot = tls_device;
    const auto bytes = static_cast<std::int64_t>(n);
    {
      Table& t = table();
      const std::lock_guard lock(t.mutex);
      t.live.emplace(data, Allocation{std::move(inner), slot, bytes});
    }
    Counters& c = counters[static_cast<std::size_t>(slot)];
    const std::int64_t now = c.live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    std::int64_t peak = c.peak.load(std::memory_order_relaxed);
    while (now > peak && !c.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return {data, data, &release, device};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

#if PIPEWORKS_ALLOCATOR_HAS_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
#endif

 private:
  c10::Allocator* inner_;
};

}  // namespace

void install_counting_allocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Lives for the whole process: tensors it allocated may be freed during static destruction.
    // Allocation costs independent of history (malloc_tuning.h), for profiles and runs alike.
    (void)stabilize_malloc();
    static CountingAllocator allocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&allocator, /*priority=*/1);
    installed.store(true);
  });
}

bool counting_allocator_installed() { return installed.load(); }

DeviceScope::DeviceScope(int device) : previous_(tls_device) { tls_device = slot_of(device); }

DeviceScope::~DeviceScope() { tls_device = previous_; }

sched::Bytes live_bytes(int device) {
  const int slot = slot_of(device);
  if (slot == kUnattributed) return 0;
  return counters[static_cast<std::size_t>(slot)].live.load(std::memory_order_relaxed);
}

sched::Bytes peak_bytes(int device) {
  const int slot = slot_of(device);
  if (slot == kUnattributed) return 0;
  return counters[static_cast<std::size_t>(slot)].peak.load(std::memory_order_relaxed);
}

void reset_peak(int device) {
  const int slot = slot_of(device);
  if (slot == kUnattributed) return;
  Counters& c = counters[static_cast<std::size_t>(slot)];
  c.peak.store(c.live.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

}  // namespace pipeworks::hw
