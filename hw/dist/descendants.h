// What the ranks start must not outlive the launch, even when it leaves the rank's process group
// (setsid, a daemon's double fork) or the launcher is killed with SIGKILL. Two Linux mechanisms:
//  - the launcher is a child subreaper (PR_SET_CHILD_SUBREAPER) while it runs, so a descendant
//    whose parent exits becomes the launcher's child: it gets every stop the ranks get, and
//    whatever is left when the ranks are gone is stopped (SIGTERM, SIGKILL after the grace
//    period) and reaped;
//  - a watchdog process, started before the ranks, learns each rank's process group and waits
//    on a pipe from the launcher; when the launcher dies without saying it is done, the pipe
//    closes and the watchdog stops those groups (the ranks themselves also get SIGTERM from
//    PR_SET_PDEATHSIG). LibTorch-free.
#pragma once

#include <sys/types.h>

#include <set>
#include <vector>

namespace pipeworks::hw {

class DescendantGuard {
 public:
  // Becomes a subreaper and starts the watchdog (which waits grace_s between SIGTERM and SIGKILL).
  explicit DescendantGuard(double grace_s);
  // Stops and reaps what is left (see stop_all_adopted), ends the watchdog, restores the flag.
  ~DescendantGuard();
  DescendantGuard(const DescendantGuard&) = delete;
  DescendantGuard& operator=(const DescendantGuard&) = delete;

  // A rank was started in process group `pgid`: the watchdog stops it if the launcher dies.
  void watch(pid_t pgid);
  // Children of this process that it did not start: descendants of the ranks whose parents
  // exited. `ranks` are the ranks still running (children, but not adopted).
  std::vector<pid_t> adopted(const std::vector<pid_t>& ranks) const;
  // Sends `sig` to each adopted child (and its process group when it leads one).
  void signal_adopted(int sig, const std::vector<pid_t>& ranks) const;
  // Reaps the adopted children that exited.
  void reap_adopted(const std::vector<pid_t>& ranks) const;
  // SIGTERM to every adopted child, SIGKILL to those left after grace_s, until none is left.
  void stop_all_adopted() const;

 private:
  double grace_s_;
  int previous_subreaper_ = 0;
  std::set<pid_t> children_before_;  // this process's children before the launch (not ours)
  pid_t watchdog_ = -1;
  int watchdog_fd_ = -1;  // write end; closing it without the done message stops the ranks
};

}  // namespace pipeworks::hw
