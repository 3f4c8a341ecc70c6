// The transfers waiting for a shared link, first come first served: the engine (engine.cc) starts
// a SEND at once when its link is free and nothing waits, else queues it here and keeps one
// dispatch event per busy link in its event queue. GPipe K = 3, M = 2, F = B = 1, 10 per transfer,
// 0->1 and 1->2 on one link (asserted in tests/sim/engine/timeline_test.cc):
//
//   link  |0->1 mb0 |0->1 mb1 |1->2 mb0 |     0->1 mb1, ready at 2, waits until 11;
//         1         11        21        31    1->2 mb0, ready at 12, until 21
//
// A FIFO per link threaded through the SEND ops (one next-pointer per op), so queuing allocates
// nothing. Header-only: the engine's hot loop calls it on every shared-link transfer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipeworks::sim {

class LinkQueue {
 public:
  LinkQueue() = default;
  LinkQueue(std::size_t num_ops, std::size_t num_links)
      : next_(num_ops, -1), head_(num_links, -1), tail_(num_links, -1), armed_(num_links, 0) {}

  bool empty(std::size_t link) const { return head_[link] < 0; }

  void push(std::size_t link, std::int32_t send) {
    if (head_[link] < 0) {
      head_[link] = send;
    } else {
      next_[static_cast<std::size_t>(tail_[link])] = send;
    }
    tail_[link] = send;
  }

  // The SEND that waited longest. Precondition: !empty(link).
  std::int32_t pop(std::size_t link) {
    const std::int32_t send = head_[link];
    head_[link] = next_[static_cast<std::size_t>(send)];
    if (head_[link] < 0) tail_[link] = -1;
    return send;
  }

  // Whether the link's dispatch event must be scheduled: true once until disarm().
  bool arm(std::size_t link) {
    if (armed_[link] != 0) return false;
    armed_[link] = 1;
    return true;
  }
  void disarm(std::size_t link) { armed_[link] = 0; }

 private:
  std::vector<std::int32_t> next_;  // per op: the SEND queued after it on its link
  std::vector<std::int32_t> head_;  // per link: first waiting SEND, -1 none
  std::vector<std::int32_t> tail_;  // per link: last waiting SEND, -1 none
  std::vector<char> armed_;         // per link: its dispatch event is in the engine's queue
};

}  // namespace pipeworks::sim
