// `pipeworks launch`: starts K copies of a command on this machine as ranks 0..K-1 of one
// multi-process run -- the variables torchrun sets (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) on 127.0.0.1 and a free port -- forwards their
// output line by line with a "[rank r] " prefix, and when one fails stops the others
// (SIGTERM, SIGKILL after a grace period) unless told to keep going. LibTorch-free.
//
//   launch -n 3 -- pipeworks run ...
//     rank 0 -------------------| terminated   <- SIGTERM (SIGKILL after --grace)
//     rank 1 ----------X exit 3               first failure
//     rank 2 -------------------| terminated
//
// SIGINT/SIGTERM to the launcher stop every rank the same way. Each rank runs in a process group
// of its own and every stop goes to the whole group, so what a rank started (a shell's children,
// a data loader) stops with it; once every rank has exited, processes they left behind that still
// hold the output pipes are stopped the same way, so the launch always ends. A rank also gets
// SIGTERM if the launcher itself dies. Descendants that leave a rank's group, or outlive a
// killed launcher, are stopped too (hw/dist/descendants.h).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/result.h"

namespace pipeworks::hw {

inline constexpr int kMaxLaunchProcesses = 1024;
// A rank's line longer than this (or output without newlines) is forwarded in pieces of this
// size, each a line with its prefix: the launcher holds at most this much of a line.
inline constexpr std::size_t kMaxForwardedLineBytes = std::size_t{64} << 10;

struct LaunchOptions {
  int num_processes = 2;     // 1..kMaxLaunchProcesses
  std::string master_addr = "127.0.0.1";
  int master_port = 0;        // 0: a free port, found by binding port 0
  bool keep_going = false;    // do not stop the others when a rank fails
  double kill_after_s = 0;    // > 0: stop everything after this many seconds (counts as failure)
  double grace_s = 3;         // SIGTERM -> SIGKILL
  std::vector<std::string> command;  // argv; "pipeworks" means this executable
  std::vector<std::pair<std::string, std::string>> extra_env;  // set in every child
};

struct RankExit {
  int rank = 0;
  int exit_code = 0;  // 128 + signal when killed by a signal
  bool signaled = false;
  bool stopped_by_launcher = false;  // the launcher sent it SIGTERM/SIGKILL
  // Seconds from the first failure (of any rank) to this rank's exit; negative when it exited
  // before, or when no rank failed.
  double seconds_after_first_failure = -1;
};

struct LaunchResult {
  std::vector<RankExit> exits;  // by rank
  bool timed_out = false;       // kill_after_s ran out
  bool signaled = false;        // the launcher got SIGINT/SIGTERM and stopped every rank
  int exit_code = 0;            // 0 when every rank exited 0, else 1
  // "cannot write standard output: <reason>" when the default sink's writing failed (then
  // exit_code is 1); empty otherwise.
  std::string output_error;
};

// (rank, from stderr?, line without its newline)
using LineSink = std::function<void(int rank, bool is_stderr, std::string_view line)>;

// Runs the command K times and waits for all. Errors only for what prevents starting
// (bad options, no free port, fork failure); a rank that fails is in the result.
// The default sink writes "[rank r] line" to this process's stdout/stderr from threads of its
// own (hw/dist/output_writer.h): a reader that stops reading does not stop the supervision.
sched::Result<LaunchResult> launch(const LaunchOptions& options, const LineSink& sink = {});

// A TCP port on `host` that was free a moment ago.
sched::Result<int> find_free_port(const std::string& host = "127.0.0.1");

}  // namespace pipeworks::hw
