// The launcher behind `pipeworks launch`: the rendezvous variables each rank gets, output
// forwarded line by line per rank, the first failure stopping the others (and what they
// started), SIGTERM to the launcher reaching every rank, and a rank that never joins named.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "golden_file.h"  // read_text_file
#include "hw/dist/launcher.h"
#include "temp_path.h"

namespace pipeworks::hw {
namespace {

std::string pipeworks_exe() { return std::string(PIPEWORKS_BINARY_DIR) + "/cli/pipeworks"; }

struct Lines {
  std::map<int, std::vector<std::string>> out, err;
};

LineSink collect(Lines& lines) {
  return [&lines](int rank, bool is_stderr, std::string_view line) {
    (is_stderr ? lines.err : lines.out)[rank].emplace_back(line);
  };
}

TEST_CASE("launcher: each rank gets torchrun's variables and its own output lines") {
  LaunchOptions options;
  options.num_processes = 3;
  options.extra_env = {{"PIPEWORKS_LAUNCH_TEST", "x"}};
  options.command = {"sh", "-c",
                     "echo \"$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $PIPEWORKS_LAUNCH_TEST\"; "
                     "printf 'no newline' >&2"};
  Lines lines;
  auto result = launch(options, collect(lines));
  REQUIRE(result.ok());
  CHECK(result->exit_code == 0);
  REQUIRE(result->exits.size() == 3);
  for (int r = 0; r < 3; ++r) {
    const std::string rank = std::to_string(r);
    CHECK(lines.out[r] == std::vector<std::string>{rank + " " + rank + " 3 3 127.0.0.1 x"});
    CHECK(lines.err[r] == std::vector<std::string>{"no newline"});
    CHECK(result->exits[static_cast<std::size_t>(r)].exit_code == 0);
    CHECK(result->exits[static_cast<std::size_t>(r)].seconds_after_first_failure < 0);
  }
}

TEST_CASE("launcher: the first failing rank stops the others, --keep-going does not") {
  LaunchOptions options;
  options.num_processes = 3;
  // A generous grace period: on a loaded machine a rank may take a while to act on SIGTERM,
  // and the test is about SIGTERM, not the SIGKILL escalation.
  options.grace_s = 15;
  options.command = {"sh", "-c", "if [ \"$RANK\" = 1 ]; then exit 5; fi; exec sleep 60"};
  const auto start = std::chrono::steady_clock::now();
  auto result = launch(options);
  REQUIRE(result.ok());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  CHECK(result->exit_code == 1);
  CHECK(result->exits[1].exit_code == 5);
  CHECK_FALSE(result->exits[1].stopped_by_launcher);
  for (std::size_t r : {0U, 2U}) {
    CHECK(result->exits[r].stopped_by_launcher);
    CHECK(result->exits[r].signaled);
    CHECK(result->exits[r].exit_code == 128 + SIGTERM);
  }
  options.keep_going = true;
  // Rank 0 outlives rank 1's failure by a margin that survives a loaded machine.
  options.command = {"sh", "-c", "if [ \"$RANK\" = 1 ]; then exit 5; fi; sleep 2"};
  result = launch(options);
  REQUIRE(result.ok());
  CHECK(result->exit_code == 1);
  CHECK(result->exits[0].exit_code == 0);
  CHECK_FALSE(result->exits[0].stopped_by_launcher);
  CHECK(result->exits[0].seconds_after_first_failure >= 0);
}

// `pipeworks launch` run by an outer launch through `sh -c script`, with $PW naming the binary.
LaunchResult launch_script(const std::string& script, Lines& lines, std::vector<std::pair<std::string, std::string>> env = {}) {
  LaunchOptions outer;
  outer.num_processes = 1;
  outer.kill_after_s = 60;  // a safety net only
  env.emplace_back("PW", pipeworks_exe());
  outer.extra_env = std::move(env);
  outer.command = {"sh", "-c", script};
  auto result = launch(outer, collect(lines));
  REQUIRE(result.ok());
  return *result;
}

TEST_CASE("launcher: SIGTERM to `pipeworks launch` stops every rank") {
  // A shell starts `pipeworks launch -n 2`, whose ranks print their pids, and SIGTERMs it once
  // both have printed (not after a fixed time: a loaded machine may take longer to start them).
  const std::string pids = test::temp_path("sigterm_launch", ".txt").string();
  Lines lines;
  const LaunchResult result =
      launch_script("\"$PW\" launch -n 2 -- sh -c 'echo $$; exec sleep 30' > \"$PIDS\" & launcher=$!; "
                    "until [ \"$(grep -c . \"$PIDS\")\" -ge 2 ]; do sleep 0.05; done; "
                    "kill -TERM $launcher; wait $launcher; echo \"launch exited $?\"",
                    lines, {{"PIDS", pids}});
  CHECK_FALSE(result.timed_out);
  INFO(test::read_text_file(pids));
  CHECK(lines.out[0] == std::vector<std::string>{"launch exited 1"});  // its own verdict, not a kill
  std::vector<std::string> printed;
  for (std::string text = test::read_text_file(pids); !text.empty();) {
    const std::size_t end = text.find('\n');
    printed.push_back(text.substr(0, end));
    text = end == std::string::npos ? "" : text.substr(end + 1);
  }
  REQUIRE(printed.size() == 2);
  for (const std::string& line : printed) {
    const pid_t pid = std::stoi(line.substr(line.find("] ") + 2));
    CHECK(::kill(pid, 0) == -1);
    CHECK(errno == ESRCH);
  }
  std::remove(pids.c_str());
}

// True once `pid` is gone (a stopped orphan may stay a zombie until init reaps it).
bool gone_soon(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    if (::kill(pid, 0) == -1 && errno == ESRCH) return true;
    ::usleep(50'000);
  }
  return false;
}

// The pid a rank printed as its first line.
pid_t printed_pid(Lines& lines, int rank) {
  REQUIRE_FALSE(lines.out[rank].empty());
  return static_cast<pid_t>(std::stoi(lines.out[rank].front()));
}

TEST_CASE("launcher: every stop reaches what a rank started, not just the rank") {
  LaunchOptions options;
  options.num_processes = 1;
  options.kill_after_s = 3;  // the rank prints its child's pid long before, even on a loaded machine
  options.command = {"sh", "-c", "sleep 60 & echo $!; wait"};
  Lines lines;
  auto result = launch(options, collect(lines));
  REQUIRE(result.ok());
  CHECK(result->timed_out);
  CHECK(gone_soon(printed_pid(lines, 0)));

  // A failing rank stops the others' whole groups: rank 1 fails once rank 0 has started its child.
  const std::string started = test::temp_path("rank_started", ".txt").string();
  options.kill_after_s = 0;
  options.num_processes = 2;
  options.extra_env = {{"STARTED", started}};
  options.command = {"sh", "-c",
                     "if [ \"$RANK\" = 1 ]; then until [ -s \"$STARTED\" ]; do sleep 0.05; done; exit 3; fi; "
                     "sleep 60 & echo $!; echo $! > \"$STARTED\"; wait"};
  lines = {};
  result = launch(options, collect(lines));
  REQUIRE(result.ok());
  CHECK(result->exits[1].exit_code == 3);
  CHECK(result->exits[0].stopped_by_launcher);
  CHECK(gone_soon(printed_pid(lines, 0)));
  std::remove(started.c_str());
}

TEST_CASE("launcher: what an exited rank left behind holding its output does not keep the launch open") {
  LaunchOptions options;
  options.num_processes = 1;
  options.grace_s = 1;
  options.command = {"sh", "-c", "sleep 60 & echo $!; exit 0"};
  Lines lines;
  const auto start = std::chrono::steady_clock::now();
  auto result = launch(options, collect(lines));
  REQUIRE(result.ok());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  CHECK(result->exit_code == 0);
  CHECK(gone_soon(printed_pid(lines, 0)));
}

TEST_CASE("launcher: a rank that never joins the rendezvous is named by the ranks that did") {
  LaunchOptions options;
  options.num_processes = 2;
  options.command = {"sh", "-c",
                     "if [ \"$RANK\" = 1 ]; then exec sleep 60; fi; exec " + pipeworks_exe() +
                         " run --distributed --model mlp --depth 2 --width 8 -K 2 -M 2 --batch 4 --steps 1 --intra-op-threads 1 "
                         "--timeout 3"};
  Lines lines;
  auto result = launch(options, collect(lines));
  REQUIRE(result.ok());
  CHECK(result->exit_code == 1);
  CHECK(result->exits[0].exit_code == 1);
  std::string errors;
  for (const std::string& line : lines.err[0]) errors += line + "\n";
  INFO(errors);
  CHECK_THAT(errors, Catch::Contains("rank 0: rendezvous at 127.0.0.1:") && Catch::Contains("rank(s) 1 did not join"));
}

TEST_CASE("launcher: output without newlines is forwarded in pieces of at most kMaxForwardedLineBytes") {
  LaunchOptions options;
  options.num_processes = 1;
  options.command = {"sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x; echo; echo next"};
  Lines lines;
  auto result = launch(options, collect(lines));
  REQUIRE(result.ok());
  REQUIRE(lines.out[0].size() >= 3);
  CHECK(lines.out[0].back() == "next");
  std::size_t bytes = 0;
  for (std::size_t i = 0; i + 1 < lines.out[0].size(); ++i) {
    CHECK(lines.out[0][i].size() <= kMaxForwardedLineBytes);
    CHECK(lines.out[0][i].find_first_not_of('x') == std::string::npos);
    bytes += lines.out[0][i].size();
  }
  CHECK(bytes == 1000000);
}

TEST_CASE("launcher: a line of exactly one piece whose newline comes in a later read is one line") {
  // The sleep makes the newline arrive after the piece went out (in one read the line goes out
  // whole); either way the rank wrote two lines and two lines come out.
  LaunchOptions options;
  options.num_processes = 1;
  options.command = {"sh", "-c",
                     "head -c " + std::to_string(kMaxForwardedLineBytes) + " /dev/zero | tr '\\0' x; sleep 0.3; echo; echo next"};
  Lines lines;
  auto result = launch(options, collect(lines));
  REQUIRE(result.ok());
  REQUIRE(lines.out[0].size() == 2);
  CHECK(lines.out[0][0] == std::string(kMaxForwardedLineBytes, 'x'));
  CHECK(lines.out[0][1] == "next");
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

TEST_CASE("launcher: a reader that stops reading its output does not stop the supervision") {
  // The rank floods standard output, which goes to a reader that never reads; --kill-after 1
  // must still stop the rank. The reader waits up to ~10 s for that, then says what it saw.
  const std::string pid_file = std::string(PIPEWORKS_BINARY_DIR) + "/launcher_test_unread_rank.pid";
  std::remove(pid_file.c_str());
  Lines lines;
  launch_script("\"$PW\" launch --kill-after 1 -n 1 -- sh -c 'echo $$ > \"$PIDFILE\"; exec yes' | "
                "sh -c 'for i in $(seq 200); do p=$(cat \"$PIDFILE\" 2>/dev/null); "
                "if [ -n \"$p\" ] && ! kill -0 \"$p\" 2>/dev/null; then echo rank-gone >&2; exit 0; fi; sleep 0.05; done; "
                "echo rank-alive >&2'",
                lines, {{"PIDFILE", pid_file}});
  const std::string errors = joined(lines.err[0]);
  INFO(errors);
  CHECK_THAT(errors, Catch::Contains("rank-gone"));
  std::remove(pid_file.c_str());
}

TEST_CASE("launcher: what leaves a rank's process group does not outlive the launch") {
  LaunchOptions options;
  options.num_processes = 1;
  options.grace_s = 1;
  for (const char* command : {"setsid sleep 60 >/dev/null 2>&1 & echo $!", "setsid sleep 60 & echo $!"}) {
    options.command = {"sh", "-c", command};
    Lines lines;
    const auto start = std::chrono::steady_clock::now();
    auto result = launch(options, collect(lines));
    REQUIRE(result.ok());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
    CHECK(gone_soon(printed_pid(lines, 0)));
  }
}

TEST_CASE("launcher: what a rank started does not outlive a launcher killed with SIGKILL") {
  // The inner launcher's rank starts `sleep 60` in its group; once its pid is printed the
  // launcher gets SIGKILL, and the script waits up to ~10 s for the sleep to be gone.
  const std::string out_file = std::string(PIPEWORKS_BINARY_DIR) + "/launcher_test_killed_launcher.out";
  std::remove(out_file.c_str());
  Lines lines;
  launch_script("\"$PW\" launch --grace 1 -n 1 -- sh -c 'sleep 60 & echo $!; wait' > \"$OUT\" & L=$!; "
                "while ! [ -s \"$OUT\" ]; do sleep 0.05; done; kill -9 $L; p=$(sed 's/.*] //' \"$OUT\"); "
                "for i in $(seq 200); do if ! kill -0 \"$p\" 2>/dev/null; then echo gone; exit 0; fi; sleep 0.05; done; "
                "echo alive; kill \"$p\"",
                lines, {{"OUT", out_file}});
  INFO(joined(lines.err[0]));
  CHECK(lines.out[0] == std::vector<std::string>{"gone"});
  std::remove(out_file.c_str());
}

TEST_CASE("launcher: a full standard output is reported with its own reason") {
  Lines lines;
  const LaunchResult result = launch_script("\"$PW\" launch -n 1 -- echo hello > /dev/full", lines);
  const std::string errors = joined(lines.err[0]);
  INFO(errors);
  CHECK(result.exits[0].exit_code != 0);
  CHECK_THAT(errors, Catch::Contains("cannot write standard output: No space left on device"));
  CHECK_THAT(errors, !Catch::Contains("No such process"));
}

TEST_CASE("launcher: ranks started with different configurations fail at the rendezvous naming the field") {
  LaunchOptions options;
  options.num_processes = 2;
  options.command = {"sh", "-c",
                     "M=2; if [ \"$RANK\" = 1 ]; then M=4; fi; exec " + pipeworks_exe() +
                         " run --distributed --model mlp --depth 2 --width 8 -K 2 -M $M --batch 4 --steps 1 "
                         "--intra-op-threads 1 --timeout 120"};
  Lines lines;
  const auto start = std::chrono::steady_clock::now();
  auto result = launch(options, collect(lines));
  REQUIRE(result.ok());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(100));  // not the 120 s timeout
  CHECK(result->exit_code == 1);
  const std::string errors = joined(lines.err[0]) + joined(lines.err[1]);
  INFO(errors);
  CHECK_THAT(errors, Catch::Contains("the ranks were started with different configurations: -M (--microbatches) is "));
}

TEST_CASE("launcher: bad options are errors before anything starts") {
  LaunchOptions options;
  options.command = {};
  CHECK_FALSE(launch(options).ok());
  options.command = {"true"};
  options.num_processes = 0;
  CHECK_FALSE(launch(options).ok());
  options.num_processes = 1;
  options.master_addr = "not-an-address";
  CHECK_FALSE(launch(options).ok());
  options.master_addr = "127.0.0.1";
  options.command = {"/nonexistent/program"};
  auto result = launch(options);
  REQUIRE(result.ok());
  CHECK(result->exits[0].exit_code == 127);
}

}  // namespace
}  // namespace pipeworks::hw
