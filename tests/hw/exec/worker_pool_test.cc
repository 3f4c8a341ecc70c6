// The worker pool under the executor: the same threads serve every round, the phases of a round
// meet between them, a throwing phase is a value, and destruction joins without hanging. Every
// assertion is on what ran where and in which order, never on how long it took.
#include "hw/exec/worker_pool.h"

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "hw/exec/cpu_affinity.h"

namespace pipeworks::hw {
namespace {

std::unique_ptr<WorkerPool> make_pool(int workers, WorkerPool::Job on_start = {}) {
  auto pool = WorkerPool::create(workers, std::move(on_start));
  REQUIRE(pool.ok());
  return std::move(pool).value();
}

bool all_ok(const std::vector<sched::Status>& outcomes) {
  for (const sched::Status& s : outcomes) {
    if (!s) return false;
  }
  return true;
}

TEST_CASE("worker pool: each round runs every worker once, each on its own thread, the same every round") {
  constexpr int kWorkers = 3;
  constexpr int kRounds = 20;
  auto pool = make_pool(kWorkers);
  CHECK(pool->size() == kWorkers);
  // ids[r][w]: the thread worker w ran on in round r; calls[w]: how often it ran (only w writes).
  std::vector<std::vector<std::thread::id>> ids(kRounds, std::vector<std::thread::id>(kWorkers));
  std::vector<int> calls(kWorkers, 0);
  for (int r = 0; r < kRounds; ++r) {
    const auto outcomes = pool->run({[&, r](int w) {
      ids[static_cast<std::size_t>(r)][static_cast<std::size_t>(w)] = std::this_thread::get_id();
      ++calls[static_cast<std::size_t>(w)];
    }});
    REQUIRE(outcomes.size() == static_cast<std::size_t>(kWorkers));
    CHECK(all_ok(outcomes));
  }
  CHECK(calls == std::vector<int>(kWorkers, kRounds));
  const std::set<std::thread::id> distinct(ids[0].begin(), ids[0].end());
  CHECK(distinct.size() == static_cast<std::size_t>(kWorkers));
  CHECK(distinct.count(std::this_thread::get_id()) == 0);
  for (const auto& round : ids) CHECK(round == ids[0]);
  CHECK(all_ok(pool->run({})));  // a round without phases wakes the workers and ends
}

TEST_CASE("worker pool: every worker finishes a phase before any worker starts the next") {
  constexpr int kWorkers = 4;
  auto pool = make_pool(kWorkers);
  for (int r = 0; r < 10; ++r) {
    std::atomic<int> first_done{0}, second_done{0};
    std::vector<int> seen_first(kWorkers, -1), seen_second(kWorkers, -1);
    const auto outcomes = pool->run({
        [&](int) { ++first_done; },
        [&](int w) {
          seen_first[static_cast<std::size_t>(w)] = first_done.load();
          ++second_done;
        },
        [&](int w) { seen_second[static_cast<std::size_t>(w)] = second_done.load(); },
    });
    CHECK(all_ok(outcomes));
    CHECK(seen_first == std::vector<int>(kWorkers, kWorkers));
    CHECK(seen_second == std::vector<int>(kWorkers, kWorkers));
  }
}

TEST_CASE("worker pool: a throwing phase is its worker's error, the others finish and the pool serves on") {
  auto pool = make_pool(3);
  std::vector<int> second(3, 0);
  const std::vector<WorkerPool::Job> phases = {
      [](int w) {
        if (w == 1) throw std::runtime_error("worker 1 broke");
        if (w == 2) throw 42;  // not a std::exception
      },
      [&](int w) { ++second[static_cast<std::size_t>(w)]; },
  };
  const auto failed = pool->run(phases);
  REQUIRE(failed.size() == 3);
  CHECK(failed[0].ok());
  REQUIRE_FALSE(failed[1].ok());
  CHECK(failed[1].error().message == "worker 1 broke");
  REQUIRE_FALSE(failed[2].ok());
  CHECK(failed[2].error().message == "unknown exception");
  CHECK(second == std::vector<int>{1, 0, 0});  // a failed worker skips its later phases
  const auto next = pool->run({[&](int w) { ++second[static_cast<std::size_t>(w)]; }});
  CHECK(all_ok(next));
  CHECK(second == std::vector<int>{2, 1, 1});
}

TEST_CASE("worker pool: on_start runs once on each worker's thread before its first phase") {
  constexpr int kWorkers = 3;
  std::vector<std::thread::id> started(kWorkers);
  std::vector<int> starts(kWorkers, 0);
  auto pool = make_pool(kWorkers, [&](int w) {
    started[static_cast<std::size_t>(w)] = std::this_thread::get_id();
    ++starts[static_cast<std::size_t>(w)];
  });
  std::vector<char> same_thread(kWorkers, 0);
  for (int r = 0; r < 3; ++r) {
    CHECK(all_ok(pool->run({[&](int w) {
      const auto i = static_cast<std::size_t>(w);
      same_thread[i] = started[i] == std::this_thread::get_id() ? 1 : 0;
    }})));
    CHECK(same_thread == std::vector<char>(kWorkers, 1));
  }
  CHECK(starts == std::vector<int>(kWorkers, 1));

  // A start that throws: that worker reports it every round and runs nothing.
  std::vector<int> ran(2, 0);
  auto broken = make_pool(2, [](int w) {
    if (w == 0) throw std::runtime_error("no settings");
  });
  for (int r = 0; r < 2; ++r) {
    const auto outcomes = broken->run({[&](int w) { ++ran[static_cast<std::size_t>(w)]; }});
    REQUIRE_FALSE(outcomes[0].ok());
    CHECK(outcomes[0].error().message == "no settings");
    CHECK(outcomes[1].ok());
  }
  CHECK(ran == std::vector<int>{0, 2});
}

TEST_CASE("worker pool: pin restricts a worker's thread to the given cores") {
  const std::vector<int> usable = usable_cpus();
  REQUIRE_FALSE(usable.empty());
  auto pool = make_pool(2);
  REQUIRE(pool->pin(0, {usable.back()}).ok());
  std::vector<std::vector<int>> seen(2);
  CHECK(all_ok(pool->run({[&](int w) { seen[static_cast<std::size_t>(w)] = usable_cpus(); }})));
  CHECK(seen[0] == std::vector<int>{usable.back()});
  CHECK(seen[1] == usable);  // not pinned: the process's cores
  CHECK_FALSE(pool->pin(2, {usable[0]}).ok());
  CHECK_FALSE(pool->pin(-1, {usable[0]}).ok());
  CHECK_FALSE(pool->pin(1, {}).ok());
}

TEST_CASE("worker pool: refuses no workers, destroying pools never hangs (idle, used, after a failure)") {
  CHECK_FALSE(WorkerPool::create(0).ok());
  CHECK_FALSE(WorkerPool::create(-2).ok());
  int rounds = 0;
  for (int i = 0; i < 60; ++i) {
    auto pool = make_pool(1 + i % 4);
    if (i % 3 == 1) rounds += all_ok(pool->run({[](int) {}})) ? 1 : 0;
    if (i % 3 == 2) rounds += all_ok(pool->run({[](int) { throw std::runtime_error("x"); }})) ? 0 : 1;
  }
  CHECK(rounds == 40);
}

}  // namespace
}  // namespace pipeworks::hw
