// The shared links' waiting lines (sim/engine/link_queue.h): first come first served on each link,
// links independent, one dispatch event armed per busy link.
#include <catch2/catch.hpp>

#include "sim/engine/link_queue.h"

using namespace pipeworks;

TEST_CASE("link queue: sends leave each link in the order they queued, links apart", "[link_queue]") {
  sim::LinkQueue q(8, 2);
  CHECK(q.empty(0));
  CHECK(q.empty(1));
  q.push(0, 5);
  q.push(1, 2);
  q.push(0, 1);
  q.push(0, 7);
  CHECK(q.pop(0) == 5);
  q.push(0, 3);  // behind the two still waiting
  CHECK(q.pop(1) == 2);
  CHECK(q.empty(1));
  CHECK(q.pop(0) == 1);
  CHECK(q.pop(0) == 7);
  CHECK(q.pop(0) == 3);
  CHECK(q.empty(0));
  q.push(0, 4);  // an emptied line starts again
  CHECK(q.pop(0) == 4);
  CHECK(q.empty(0));
}

TEST_CASE("link queue: a link's dispatch is armed once until disarmed", "[link_queue]") {
  sim::LinkQueue q(4, 2);
  CHECK(q.arm(0));
  CHECK_FALSE(q.arm(0));
  CHECK(q.arm(1));
  q.disarm(0);
  CHECK(q.arm(0));
  CHECK_FALSE(q.arm(1));
}
