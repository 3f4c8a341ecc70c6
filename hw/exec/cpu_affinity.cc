// Worker-to-core pinning (see cpu_affinity.h).
#include "hw/exec/cpu_affinity.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace pipeworks::hw {

sched::Result<WorkerPinning> parse_worker_pinning(std::string_view text) {
  if (text == "off") return WorkerPinning::kOff;
  if (text == "auto") return WorkerPinning::kAuto;
  if (text == "on") return WorkerPinning::kOn;
  return sched::Error{fmt::format("worker pinning '{}' is not one of off, auto, on", text)};
}

std::string_view to_string(WorkerPinning pinning) {
  switch (pinning) {
    case WorkerPinning::kOff: return "off";
    case WorkerPinning::kAuto: return "auto";
    case WorkerPinning::kOn: return "on";
  }
  return "?";
}

std::vector<int> usable_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
  if (cpus.empty()) {
    const unsigned n = std::thread::hardware_concurrency();
    for (unsigned c = 0; c < std::max(1U, n); ++c) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

sched::Result<std::vector<std::vector<int>>> plan_worker_cpus(WorkerPinning pinning, int num_devices,
                                                              int threads_per_worker, const std::vector<int>& usable) {
  if (num_devices < 1 || threads_per_worker < 1) {
    return sched::Error{fmt::format("worker pinning: {} devices x {} threads per worker", num_devices,
                                    threads_per_worker)};
  }
  std::vector<std::vector<int>> plan;
  if (pinning == WorkerPinning::kOff) return plan;
  const auto needed = static_cast<std::size_t>(num_devices) * static_cast<std::size_t>(threads_per_worker);
  if (pinning == WorkerPinning::kAuto && needed >= usable.size()) return plan;
  if (needed > usable.size()) {
    return sched::Error{fmt::format("cannot pin {} workers x {} threads to cores of their own: {} usable core(s) ({})",
                                    num_devices, threads_per_worker, usable.size(), format_cpu_list(usable))};
  }
  const auto t = static_cast<std::size_t>(threads_per_worker);
  for (std::size_t d = 0; d < static_cast<std::size_t>(num_devices); ++d) {
    plan.emplace_back(usable.begin() + static_cast<std::ptrdiff_t>(d * t),
                      usable.begin() + static_cast<std::ptrdiff_t>((d + 1) * t));
  }
  return plan;
}

sched::Result<std::vector<int>> plan_rank_cpus(WorkerPinning pinning, int local_rank, int local_ranks,
                                               int threads_per_worker, const std::vector<int>& usable) {
  if (local_ranks < 1 || local_rank < 0 || local_rank >= local_ranks || threads_per_worker < 1) {
    return sched::Error{fmt::format("rank binding: local rank {} of {} ranks x {} threads", local_rank, local_ranks,
                                    threads_per_worker)};
  }
  if (pinning == WorkerPinning::kOff) return std::vector<int>();
  const auto needed = static_cast<std::size_t>(local_ranks) * static_cast<std::size_t>(threads_per_worker);
  if (needed > usable.size()) {
    if (pinning == WorkerPinning::kAuto) return std::vector<int>();
    return sched::Error{fmt::format("cannot bind {} ranks x {} threads to cores of their own: {} usable core(s) ({})",
                                    local_ranks, threads_per_worker, usable.size(), format_cpu_list(usable))};
  }
  auto plan = plan_worker_cpus(WorkerPinning::kOn, local_ranks, threads_per_worker, usable);
  if (!plan) return plan.error();
  return plan->at(static_cast<std::size_t>(local_rank));
}

namespace {

sched::Result<cpu_set_t> cpu_set_of(const std::vector<int>& cpus) {
  if (cpus.empty()) return sched::Error{"pin_thread: no cores given"};
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) return sched::Error{fmt::format("pin_thread: core {} is out of range", c)};
    CPU_SET(c, &set);
  }
  return set;
}

sched::Status pin_native(pthread_t thread, const std::vector<int>& cpus) {
  auto set = cpu_set_of(cpus);
  if (!set) return set.error();
  if (const int rc = pthread_setaffinity_np(thread, sizeof(*set), &*set); rc != 0) {
    return sched::Error{fmt::format("cannot pin a worker to cores {}: {}", format_cpu_list(cpus), std::strerror(rc))};
  }
  return sched::Ok{};
}

}  // namespace

sched::Status pin_thread(std::thread& thread, const std::vector<int>& cpus) {
  return pin_native(thread.native_handle(), cpus);
}

sched::Status pin_current_thread(const std::vector<int>& cpus) { return pin_native(pthread_self(), cpus); }

sched::Status pin_process(const std::vector<int>& cpus) {
  auto set = cpu_set_of(cpus);
  if (!set) return set.error();
  if (auto s = pin_current_thread(cpus); !s) return s;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return sched::Error{fmt::format("cannot list this process's threads: {}", std::strerror(errno))};
  sched::Status status = sched::Ok{};
  while (const dirent* entry = readdir(dir)) {
    const pid_t tid = static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10));
    // A thread that ended since the listing (ESRCH) has nothing left to bind.
    if (tid <= 0 || sched_setaffinity(tid, sizeof(*set), &*set) == 0) continue;
    const int error = errno;
    if (error != ESRCH) {
      status = sched::Error{fmt::format("cannot bind thread {} to cores {}: {}", tid, format_cpu_list(cpus),
                                        std::strerror(error))};
    }
  }
  closedir(dir);
  return status;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j > i ? fmt::format("{}-{}", cpus[i], cpus[j]) : fmt::format("{}", cpus[i]);
    i = j + 1;
  }
  return out;
}

std::string describe_worker_cpus(const std::vector<std::vector<int>>& plan) {
  if (plan.empty()) return "not pinned";
  std::string out;
  for (std::size_t d = 0; d < plan.size(); ++d) {
    out += fmt::format("{}device {} on core{} {}", d > 0 ? ", " : "", d, plan[d].size() == 1 ? "" : "s",
                       format_cpu_list(plan[d]));
  }
  return out;
}

}  // namespace pipeworks::hw
