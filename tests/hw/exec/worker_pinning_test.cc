// Worker pinning (hw/exec/cpu_affinity.h): the plan of cores per device, its errors, and that an
// executor's worker threads really run restricted to their device's cores.
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "hw/hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

#include <catch2/catch.hpp>

#include "hw/exec/cpu_affinity.h"
#include "hw/run/run.h"

namespace pipeworks::hw {
namespace {

using sched::ScheduleKind;
using namespace testing;

// Thread id -> its Cpus_allowed_list, for every thread of this process.
std::map<std::string, std::string> thread_cpu_lists() {
  std::map<std::string, std::string> out;
  DIR* dir = opendir("/proc/self/task");
  REQUIRE(dir != nullptr);
  while (const dirent* entry = readdir(dir)) {
    const std::string tid = entry->d_name;
    if (tid == "." || tid == "..") continue;
    std::ifstream status("/proc/self/task/" + tid + "/status");
    for (std::string line; std::getline(status, line);) {
      const std::string key = "Cpus_allowed_list:";
      if (line.rfind(key, 0) == 0) {
        const auto first = line.find_first_not_of(" \t", key.size());
        out[tid] = first == std::string::npos ? "" : line.substr(first);
      }
    }
  }
  closedir(dir);
  return out;
}

TEST_CASE("worker pinning: device d gets usable cores d*t up to (d+1)*t, exclusive") {
  const std::vector<int> usable{0, 1, 2, 3, 5, 6};
  CHECK(plan_worker_cpus(WorkerPinning::kOn, 2, 2, usable).value() == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
  CHECK(plan_worker_cpus(WorkerPinning::kOn, 3, 2, usable).value() ==
        std::vector<std::vector<int>>{{0, 1}, {2, 3}, {5, 6}});
  CHECK(plan_worker_cpus(WorkerPinning::kOn, 6, 1, usable).value().back() == std::vector<int>{6});
  CHECK(plan_worker_cpus(WorkerPinning::kAuto, 5, 1, usable).value().size() == 5);  // core 6 left over
  CHECK(plan_worker_cpus(WorkerPinning::kOff, 2, 1, usable).value().empty());
}

TEST_CASE("worker pinning: auto pins only with a core left over, on fails where they do not fit") {
  const std::vector<int> usable{0, 1};
  CHECK(plan_worker_cpus(WorkerPinning::kAuto, 1, 1, usable).value() == std::vector<std::vector<int>>{{0}});
  CHECK(plan_worker_cpus(WorkerPinning::kAuto, 2, 1, usable).value().empty());  // every core taken
  CHECK(plan_worker_cpus(WorkerPinning::kOn, 2, 1, usable).value() == std::vector<std::vector<int>>{{0}, {1}});
  CHECK(plan_worker_cpus(WorkerPinning::kAuto, 3, 1, usable).value().empty());
  CHECK(plan_worker_cpus(WorkerPinning::kAuto, 2, 2, usable).value().empty());
  auto refused = plan_worker_cpus(WorkerPinning::kOn, 2, 2, usable);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "cannot pin 2 workers x 2 threads to cores of their own: 2 usable core(s) (0-1)");
  CHECK_FALSE(plan_worker_cpus(WorkerPinning::kOn, 0, 1, usable).ok());
  CHECK_FALSE(plan_worker_cpus(WorkerPinning::kAuto, 1, 0, usable).ok());
}

TEST_CASE("rank binding: a rank's process gets its slice whenever every rank fits with no core left over") {
  const std::vector<int> two = {0, 1};
  const std::vector<int> four = {0, 1, 4, 5};
  CHECK(*plan_rank_cpus(WorkerPinning::kAuto, 0, 2, 1, two) == std::vector<int>{0});
  CHECK(*plan_rank_cpus(WorkerPinning::kAuto, 1, 2, 1, two) == std::vector<int>{1});
  CHECK(*plan_rank_cpus(WorkerPinning::kOn, 1, 2, 2, four) == std::vector<int>{4, 5});
  CHECK(plan_rank_cpus(WorkerPinning::kAuto, 3, 4, 1, two)->empty());
  CHECK(plan_rank_cpus(WorkerPinning::kOff, 0, 2, 1, two)->empty());
  auto refused = plan_rank_cpus(WorkerPinning::kOn, 3, 4, 1, two);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("cannot bind 4 ranks x 1 threads to cores of their own: 2 usable core(s) (0-1)"));
  for (auto [rank, ranks, threads] : {std::tuple{2, 2, 1}, std::tuple{-1, 2, 1}, std::tuple{0, 0, 1},
                                      std::tuple{0, 2, 0}}) {
    auto bad = plan_rank_cpus(WorkerPinning::kAuto, rank, ranks, threads, two);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains("rank binding: local rank"));
  }
}

TEST_CASE("rank binding: pin_process binds every thread the process already has") {
  const std::vector<int> usable = usable_cpus();
  std::atomic<bool> stop{false};
  std::thread earlier([&stop] {
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  const std::vector<int> one = {usable.front()};
  const sched::Status bound = pin_process(one);
  const std::map<std::string, std::string> lists = thread_cpu_lists();
  const sched::Status restored = pin_process(usable);  // the other tests run on the whole mask
  stop = true;
  earlier.join();
  REQUIRE(bound.ok());
  REQUIRE(restored.ok());
  REQUIRE(lists.size() >= 2);
  for (const auto& [tid, list] : lists) CHECK(list == format_cpu_list(one));
  for (const auto& [tid, list] : thread_cpu_lists()) CHECK(list == format_cpu_list(usable));
  auto refused = pin_process({-1});
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("core -1 is out of range"));
}

TEST_CASE("worker pinning: names, core lists and the plan's description") {
  for (WorkerPinning p : {WorkerPinning::kOff, WorkerPinning::kAuto, WorkerPinning::kOn}) {
    CHECK(parse_worker_pinning(to_string(p)).value() == p);
  }
  auto bad = parse_worker_pinning("yes");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "worker pinning 'yes' is not one of off, auto, on");
  CHECK(format_cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  CHECK(format_cpu_list({3}) == "3");
  CHECK(format_cpu_list({}).empty());
  CHECK(describe_worker_cpus({{0}, {2, 3}}) == "device 0 on core 0, device 1 on cores 2-3");
  CHECK(describe_worker_cpus({}) == "not pinned");
  CHECK_FALSE(usable_cpus().empty());
}

TEST_CASE("worker pinning: each worker thread of an executor runs on its device's cores only") {
  const std::vector<int> usable = usable_cpus();
  const int devices = std::min<int>(2, static_cast<int>(usable.size()));
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kOneFOneB, devices, 4, false);
  ExecutorOptions options = one_thread();
  options.pin_workers = WorkerPinning::kOn;
  // A runtime may start a helper thread of its own with a process's first thread (ThreadSanitizer
  // does, in the tsan preset): one thread started and joined first keeps it out of `after`.
  std::thread([] {}).join();
  const auto before = thread_cpu_lists();
  auto executor = make_executor(model, schedule, options);
  const auto after = thread_cpu_lists();

  const auto& plan = executor->worker_cpus();
  REQUIRE(plan.size() == static_cast<std::size_t>(devices));
  std::set<std::string> expected, started;
  for (int d = 0; d < devices; ++d) {
    CHECK(plan[static_cast<std::size_t>(d)] == std::vector<int>{usable[static_cast<std::size_t>(d)]});
    expected.insert(format_cpu_list(plan[static_cast<std::size_t>(d)]));
  }
  std::size_t new_threads = 0;
  for (const auto& [tid, cpus] : after) {
    if (before.count(tid) == 0) started.insert(cpus), ++new_threads;
  }
  // Every thread the executor started runs on one device's cores, and every device's cores hold
  // one. A worker may start a helper of LibTorch's (its pthreadpool, when at::set_num_threads
  // first runs) that inherits the worker's cores, so threads are matched by core list, not count.
  CHECK(started == expected);
  CHECK(new_threads >= static_cast<std::size_t>(devices));
  // Pinned workers still train: a step runs every action.
  const MicroBatches batch = split_batch(make_batch(model.config, 8, 1), 4).value();
  auto step = executor->step(batch, 1);
  REQUIRE(step.ok());
  CHECK(step->timeline.spans.size() == static_cast<std::size_t>(schedule.num_actions()));
}

TEST_CASE("worker pinning: an executor that cannot pin as asked is refused with the reason") {
  const int cores = static_cast<int>(usable_cpus().size());
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kGPipe, 2, 2, false);
  ExecutorOptions options = one_thread();
  options.threads_per_worker = cores;  // two workers x every core: never fits
  options.pin_workers = WorkerPinning::kOn;
  const auto partition = sim::uniform_partition(static_cast<int>(model.layers.size()), 2).value();
  auto refused = Executor::create(schedule, make_cells(model, partition, schedule.placement).value(), options);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("executor: cannot pin 2 workers x " + std::to_string(cores) + " threads") == 0);
  options.pin_workers = WorkerPinning::kAuto;  // auto: the OS places them instead
  auto unpinned = Executor::create(schedule, make_cells(model, partition, schedule.placement).value(), options);
  REQUIRE(unpinned.ok());
  CHECK((*unpinned)->worker_cpus().empty());
}

TEST_CASE("worker pinning: a training run reports where its workers ran") {
  RunConfig config;
  config.model = tiny_mlp();
  config.num_stages = 2;
  config.num_microbatches = 2;
  config.batch_size = 4;
  config.steps = 1;
  config.threads_per_worker = 1;
  config.pin_workers = WorkerPinning::kAuto;
  auto report = run_training(config);
  REQUIRE(report.ok());
  const std::vector<int> usable = usable_cpus();
  if (usable.size() > 2) {  // auto: a core left over
    CHECK(report->worker_cpus == std::vector<std::vector<int>>{{usable[0]}, {usable[1]}});
  } else {
    CHECK(report->worker_cpus.empty());
  }
  config.pin_workers = WorkerPinning::kOff;
  CHECK(run_training(config).value().worker_cpus.empty());
  if (usable.size() >= 2) {
    config.pin_workers = WorkerPinning::kOn;
    CHECK(run_training(config).value().worker_cpus == std::vector<std::vector<int>>{{usable[0]}, {usable[1]}});
  }
}

}  // namespace
}  // namespace pipeworks::hw
