// Subreaper and watchdog for the ranks' descendants (see descendants.h).
#include "hw/dist/descendants.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "hw/dist/launcher.h"

namespace pipeworks::hw {
namespace {

// This process's children, from /proc/self/task/<tid>/children (every thread's).
std::set<pid_t> current_children() {
  std::set<pid_t> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t pid = 0; in >> pid;) out.insert(pid);
  }
  return out;
}

void sleep_seconds(double s) {
  timespec t{static_cast<std::time_t>(s), static_cast<long>((s - static_cast<double>(static_cast<std::time_t>(s))) * 1e9)};
  while (::nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

// The watchdog, in the forked child: only async-signal-safe calls until it exits. Reads process
// groups (int32) until 0 (the launch is over: exit) or end of file (the launcher died: stop them).
[[noreturn]] void run_watchdog(int read_fd, double grace_s, const sigset_t& parent_mask) {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);  // it outlives the launcher
  ::sigprocmask(SIG_SETMASK, &parent_mask, nullptr);
  const int devnull = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3 && devnull >= 0; ++fd) ::dup2(devnull, fd);  // holds no pipe of the launcher's readers
  pid_t groups[kMaxLaunchProcesses];
  int count = 0;
  for (;;) {
    std::int32_t value = 0;
    const ssize_t n = ::read(read_fd, &value, sizeof value);
    if (n == sizeof value && value == 0) ::_exit(0);
    if (n == sizeof value && count < kMaxLaunchProcesses) groups[count++] = value;
    if (n == 0) break;
    if (n < 0 && errno != EINTR) ::_exit(1);
  }
  for (int i = 0; i < count; ++i) ::kill(-groups[i], SIGTERM);
  sleep_seconds(grace_s);
  for (int i = 0; i < count; ++i) ::kill(-groups[i], SIGKILL);
  ::_exit(0);
}

bool contains(const std::vector<pid_t>& pids, pid_t pid) { return std::find(pids.begin(), pids.end(), pid) != pids.end(); }

}  // namespace

DescendantGuard::DescendantGuard(double grace_s) : grace_s_(grace_s) {
  ::prctl(PR_GET_CHILD_SUBREAPER, &previous_subreaper_);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  children_before_ = current_children();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no watchdog: the subreaper still covers a living launcher
  sigset_t all, parent_mask;
  ::sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, &parent_mask);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[1]);
    run_watchdog(fds[0], grace_s, parent_mask);
  }
  ::sigprocmask(SIG_SETMASK, &parent_mask, nullptr);
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return;
  }
  watchdog_ = pid;
  watchdog_fd_ = fds[1];
}

DescendantGuard::~DescendantGuard() {
  stop_all_adopted();
  if (watchdog_fd_ >= 0) {
    const std::int32_t done = 0;
    [[maybe_unused]] const ssize_t n = ::write(watchdog_fd_, &done, sizeof done);
    ::close(watchdog_fd_);
  }
  if (watchdog_ > 0) {
    while (::waitpid(watchdog_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, previous_subreaper_);
}

void DescendantGuard::watch(pid_t pgid) {
  if (watchdog_fd_ < 0) return;
  const auto value = static_cast<std::int32_t>(pgid);
  [[maybe_unused]] const ssize_t n = ::write(watchdog_fd_, &value, sizeof value);  // 4 bytes: atomic on a pipe
}

std::vector<pid_t> DescendantGuard::adopted(const std::vector<pid_t>& ranks) const {
  std::vector<pid_t> out;
  for (pid_t pid : current_children()) {
    if (pid != watchdog_ && !children_before_.contains(pid) && !contains(ranks, pid)) out.push_back(pid);
  }
  return out;
}

void DescendantGuard::signal_adopted(int sig, const std::vector<pid_t>& ranks) const {
  for (pid_t pid : adopted(ranks)) {
    if (::getpgid(pid) == pid) ::kill(-pid, sig);
    ::kill(pid, sig);
  }
}

void DescendantGuard::reap_adopted(const std::vector<pid_t>& ranks) const {
  for (pid_t pid : adopted(ranks)) ::waitpid(pid, nullptr, WNOHANG);
}

void DescendantGuard::stop_all_adopted() const {
  using Clock = std::chrono::steady_clock;
  const auto term_sent = Clock::now();
  signal_adopted(SIGTERM, {});
  bool killed = false;
  for (;;) {
    reap_adopted({});
    if (adopted({}).empty()) return;
    // What is adopted now includes children of those just stopped: they get the same.
    const bool past_grace = std::chrono::duration<double>(Clock::now() - term_sent).count() > grace_s_;
    if (past_grace || killed) {
      signal_adopted(SIGKILL, {});
      killed = true;
    } else {
      signal_adopted(SIGTERM, {});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace pipeworks::hw
