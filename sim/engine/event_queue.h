// The simulator's time-ordered queue: a binary min-heap over (time, order) on a reusable vector,
// so the event loop allocates only when it grows. `order` breaks ties deterministically; the
// simulator packs (phase, id) into it so that at equal times phase-0 events run first and,
// within a phase, smaller ids first.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace pipeworks::sim {

struct Event {
  std::int64_t time_ns = 0;
  std::uint64_t order = 0;
  friend bool operator>(const Event& a, const Event& b) {
    return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.order > b.order;
  }
};

class EventQueue {
 public:
  static constexpr std::uint64_t order_of(std::uint32_t phase, std::uint32_t id) {
    return (std::uint64_t{phase} << 32) | id;
  }
  static constexpr std::uint32_t phase_of(const Event& e) { return static_cast<std::uint32_t>(e.order >> 32); }
  static constexpr std::uint32_t id_of(const Event& e) { return static_cast<std::uint32_t>(e.order); }

  void reserve(std::size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

  void push(Event e) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
  }
  // Precondition: !empty().
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    const Event e = heap_.back();
    heap_.pop_back();
    return e;
  }

 private:
  std::vector<Event> heap_;
};

}  // namespace pipeworks::sim
