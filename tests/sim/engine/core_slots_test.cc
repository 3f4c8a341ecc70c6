// The compute slots' hand-over rules, step by step as the engine calls them: the picture of
// core_slots.h (two devices, one slot, three actions of 10 each, d1's first ready at 5).
#include <catch2/catch.hpp>

#include "sim/engine/core_slots.h"

using namespace pipeworks;
using Claim = sim::CoreSlots::Claim;

namespace {

// Ops A0, A1, A2 of d0 are 0, 1, 2; B0, B1, B2 of d1 are 3, 4, 5.
constexpr std::int32_t kA0 = 0, kA1 = 1, kA2 = 2, kB0 = 3, kB1 = 4, kB2 = 5;

}  // namespace

TEST_CASE("core slots, slice 0: the slot changes hands at every action's end") {
  //   d0 |A0|  |A1|  |A2|
  //   d1    |B0|  |B1|  |B2|
  sim::CoreSlots slots(1, 1, 2, 0);
  CHECK(slots.claim(0, 0, kA0, 0) == Claim{0, -1});
  slots.occupy(0, 0, kA0, 0);
  CHECK(slots.claim(0, 1, kB0, 5) == Claim{-1, -1});  // waits
  CHECK(slots.claim(0, 0, kA1, 10) == Claim{-1, 0});  // d0 yields to the waiter
  CHECK(slots.next_waiter(0) == kB0);
  slots.occupy(0, 1, kB0, 10);
  CHECK(slots.release(0, kA0, 10, true) == -1);  // A0's end: d0 holds nothing any more
  CHECK(slots.claim(0, 1, kB1, 20) == Claim{-1, 0});
  CHECK(slots.next_waiter(0) == kA1);
  slots.occupy(0, 0, kA1, 20);
  CHECK(slots.release(1, kB0, 20, true) == -1);
  CHECK(slots.claim(0, 0, kA2, 30) == Claim{-1, 0});
  CHECK(slots.next_waiter(0) == kB1);
  slots.occupy(0, 1, kB1, 30);
  CHECK(slots.claim(0, 1, kB2, 40) == Claim{-1, 0});
  CHECK(slots.next_waiter(0) == kA2);
  slots.occupy(0, 0, kA2, 40);
  CHECK(slots.release(0, kA2, 50, false) == 0);  // d0 is done: B2 takes it at 50
  CHECK(slots.next_waiter(0) == kB2);
  slots.occupy(0, 1, kB2, 50);
  CHECK(slots.release(1, kB2, 60, false) == 0);
  CHECK(slots.next_waiter(0) == -1);  // free
  CHECK(slots.claim(0, 1, 6, 70) == Claim{0, -1});
}

TEST_CASE("core slots, slice 25: a device keeps its slot until the first end after its slice") {
  //   d0 |A0|A1|A2|
  //   d1          |B0|B1|B2|
  sim::CoreSlots slots(1, 1, 2, 25);
  CHECK(slots.claim(0, 0, kA0, 0) == Claim{0, -1});
  slots.occupy(0, 0, kA0, 0);
  CHECK(slots.claim(0, 1, kB0, 5) == Claim{-1, -1});
  CHECK(slots.claim(0, 0, kA1, 10) == Claim{0, -1});  // 10 into its slice: it goes on
  slots.occupy(0, 0, kA1, 10);
  CHECK(slots.release(0, kA0, 10, true) == -1);  // A1 runs on it already
  CHECK(slots.claim(0, 0, kA2, 20) == Claim{0, -1});
  slots.occupy(0, 0, kA2, 20);
  // Were d0 to have a fourth action ready at 30, it would not keep the slot: 30 >= 25, B0 waits.
  CHECK(slots.release(0, kA2, 30, true) == 0);
  CHECK(slots.next_waiter(0) == kB0);
  slots.occupy(0, 1, kB0, 30);
  CHECK(slots.claim(0, 0, 6, 30) == Claim{-1, -1});  // that action waits behind d1's slice
  CHECK(slots.release(1, kB0, 40, true) == -1);       // kept: d1's next is ready at 40 (from 30)
  CHECK(slots.claim(0, 1, kB1, 40) == Claim{0, -1});
}

TEST_CASE("core slots: a kept slot idles for its holder, and two slots serve two waiters") {
  sim::CoreSlots slots(1, 2, 3, 100);
  CHECK(slots.claim(0, 0, 0, 0) == Claim{0, -1});
  slots.occupy(0, 0, 0, 0);
  CHECK(slots.claim(0, 1, 1, 0) == Claim{1, -1});
  slots.occupy(1, 1, 1, 0);
  CHECK(slots.claim(0, 2, 2, 3) == Claim{-1, -1});
  // d0's action ends at 10 and its next is ready at 12 (a send between them): it keeps slot 0.
  CHECK(slots.release(0, 0, 10, true) == -1);
  CHECK(slots.release(1, 1, 10, false) == 1);  // d1 waits for data: d2 gets slot 1
  CHECK(slots.next_waiter(1) == 2);
  slots.occupy(1, 2, 2, 10);
  CHECK(slots.claim(0, 0, 3, 12) == Claim{0, -1});
}
