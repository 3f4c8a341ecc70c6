// Fork/exec of K ranks with output forwarding and fail-fast (see launcher.h).
#include "hw/dist/launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "hw/dist/descendants.h"
#include "hw/dist/output_writer.h"

namespace pipeworks::hw {
namespace {

using Clock = std::chrono::steady_clock;

// SIGINT/SIGTERM to the launcher: forwarded to every rank (then SIGKILL after the grace period),
// so stopping the launcher never leaves ranks behind.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void remember_stop_signal(int sig) { g_stop_signal = sig; }

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// A stream's unfinished line; `pieces_sent` when kMaxForwardedLineBytes pieces of it already
// went out (its newline then ends it without one more, empty, line).
struct PendingLine {
  std::string text;
  bool pieces_sent = false;
};

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // read ends
  int err_fd = -1;
  PendingLine out_buffer, err_buffer;
  bool running = false;
  bool signaled_by_us = false;
  RankExit exit;
};

// The default sink: "[rank r] line" queued on this process's stdout or stderr writer.
LineSink writer_sink(OutputWriter& out, OutputWriter& err) {
  return [&out, &err](int rank, bool is_stderr, std::string_view line) {
    (is_stderr ? err : out).write(fmt::format("[rank {}] {}\n", rank, line));
  };
}

// Appends `part` to the unfinished line in `pending`, handing each kMaxForwardedLineBytes piece
// to the sink as a line of its own.
void append_capped(PendingLine& pending, std::string_view part, int rank, bool is_stderr, const LineSink& sink) {
  while (!part.empty()) {
    const std::size_t take = std::min(part.size(), kMaxForwardedLineBytes - pending.text.size());
    pending.text.append(part.substr(0, take));
    part.remove_prefix(take);
    if (pending.text.size() == kMaxForwardedLineBytes) {
      sink(rank, is_stderr, pending.text);
      pending.text.clear();
      pending.pieces_sent = true;
    }
  }
}

// Hands the lines `chunk` completes to the sink; the unfinished rest waits in `pending`. No line
// handed over is longer than kMaxForwardedLineBytes (a longer one goes out in pieces), and each
// byte is looked at once, so a rank that never writes a newline costs linear time and bounded
// memory.
void forward_chunk(PendingLine& pending, std::string_view chunk, int rank, bool is_stderr, const LineSink& sink) {
  for (std::size_t nl = chunk.find('\n'); nl != std::string_view::npos; nl = chunk.find('\n')) {
    if (pending.text.empty() && !pending.pieces_sent && nl <= kMaxForwardedLineBytes) {
      sink(rank, is_stderr, chunk.substr(0, nl));
    } else {
      append_capped(pending, chunk.substr(0, nl), rank, is_stderr, sink);
      if (!pending.text.empty() || !pending.pieces_sent) sink(rank, is_stderr, pending.text);  // the last piece
      pending = PendingLine{};
    }
    chunk.remove_prefix(nl + 1);
  }
  append_capped(pending, chunk, rank, is_stderr, sink);
}

// At end of file: the unfinished rest, if any, as a last line.
void flush_rest(PendingLine& pending, int rank, bool is_stderr, const LineSink& sink) {
  if (!pending.text.empty()) sink(rank, is_stderr, pending.text);
  pending = PendingLine{};
}

std::string resolve_program(const std::string& program) {
  if (program != "pipeworks") return program;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? program : self.string();
}

// In the forked child, signals still blocked (start_children): the parent's handlers undone
// before they are unblocked, so a stop that arrives before exec ends the child, not a copy of
// the parent's code.
[[noreturn]] void exec_child(const LaunchOptions& options, int rank, int port, int out_fd, int err_fd,
                             const sigset_t& parent_mask, pid_t launcher) {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != launcher) ::_exit(128 + SIGTERM);  // the launcher died before prctl took effect
  ::sigprocmask(SIG_SETMASK, &parent_mask, nullptr);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  const std::string world = std::to_string(options.num_processes);
  const std::string r = std::to_string(rank);
  ::setenv("RANK", r.c_str(), 1);
  ::setenv("LOCAL_RANK", r.c_str(), 1);
  ::setenv("WORLD_SIZE", world.c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", world.c_str(), 1);
  ::setenv("MASTER_ADDR", options.master_addr.c_str(), 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  for (const auto& [name, value] : options.extra_env) ::setenv(name.c_str(), value.c_str(), 1);
  const std::string program = resolve_program(options.command.front());
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (std::size_t i = 1; i < options.command.size(); ++i)
    argv.push_back(const_cast<char*>(options.command[i].c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "pipeworks launch: cannot run '%s': %s\n", argv[0], std::strerror(errno));
  ::_exit(127);
}

void read_some(int& fd, PendingLine& buffer, int rank, bool is_stderr, const LineSink& sink) {
  char chunk[65536];
  const ssize_t n = ::read(fd, chunk, sizeof chunk);
  if (n > 0) {
    forward_chunk(buffer, std::string_view(chunk, static_cast<std::size_t>(n)), rank, is_stderr, sink);
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    flush_rest(buffer, rank, is_stderr, sink);
    ::close(fd);
    fd = -1;
  }
}

// Stops a rank's process group while the rank runs or something of its group still holds its
// output pipes, remembering that the launcher did.
void stop(Child& c, int sig) {
  if (c.running || c.out_fd >= 0 || c.err_fd >= 0) {
    ::kill(-c.pid, sig);
    if (c.running) c.signaled_by_us = true;
  }
}

std::vector<pid_t> running_pids(const std::vector<Child>& children) {
  std::vector<pid_t> out;
  for (const Child& c : children) {
    if (c.running) out.push_back(c.pid);
  }
  return out;
}

// Every rank's group, and with a guard what the launcher adopted from them (descendants.h).
void stop_all(std::vector<Child>& children, int sig, const DescendantGuard* guard = nullptr) {
  for (Child& c : children) stop(c, sig);
  if (guard != nullptr) guard->signal_adopted(sig, running_pids(children));
}

// The checked options' rendezvous port: master_port, or a free one when it is 0.
sched::Result<int> checked_port(const LaunchOptions& options) {
  if (options.num_processes < 1 || options.num_processes > kMaxLaunchProcesses) {
    return sched::Error{fmt::format("launch: -n {} is out of range 1..{}", options.num_processes, kMaxLaunchProcesses)};
  }
  if (options.command.empty()) return sched::Error{"launch: no command given (launch -n K -- COMMAND ...)"};
  if (options.master_port < 0 || options.master_port > 65535) {
    return sched::Error{fmt::format("launch: port {} is out of range", options.master_port)};
  }
  if (options.master_port != 0) return options.master_port;
  return find_free_port(options.master_addr);
}

// Forks one child per rank, its stdout and stderr on pipes; on failure kills those started.
sched::Status start_children(const LaunchOptions& options, int port, std::vector<Child>& children,
                             DescendantGuard& guard) {
  const pid_t launcher = ::getpid();
  for (int rank = 0; rank < options.num_processes; ++rank) {
    int out_pipe[2];
    int err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
      stop_all(children, SIGKILL);
      return sched::Error{fmt::format("launch: pipe(): {}", std::strerror(errno))};
    }
    sigset_t all, parent_mask;
    ::sigfillset(&all);
    ::sigprocmask(SIG_BLOCK, &all, &parent_mask);
    const pid_t pid = ::fork();
    if (pid == 0) exec_child(options, rank, port, out_pipe[1], err_pipe[1], parent_mask, launcher);
    const int fork_errno = errno;
    ::sigprocmask(SIG_SETMASK, &parent_mask, nullptr);
    if (pid < 0) {
      stop_all(children, SIGKILL);
      return sched::Error{fmt::format("launch: fork(): {}", std::strerror(fork_errno))};
    }
    ::setpgid(pid, pid);  // also here, so a stop that comes before the child's own call reaches it
    guard.watch(pid);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    Child& c = children[static_cast<std::size_t>(rank)];
    c.pid = pid;
    c.out_fd = out_pipe[0];
    c.err_fd = err_pipe[0];
    c.running = true;
    c.exit.rank = rank;
  }
  return sched::Ok{};
}

// SIGINT/SIGTERM remembered (g_stop_signal) while it lives; the previous handlers afterwards.
class StopSignalHandlers {
 public:
  StopSignalHandlers() {
    g_stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = remember_stop_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignalHandlers() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignalHandlers(const StopSignalHandlers&) = delete;
  StopSignalHandlers& operator=(const StopSignalHandlers&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Forwards what the ranks wrote, waiting at most 50 ms for it. False once every pipe is closed
// and no rank runs: the launch is over.
bool forward_output(std::vector<Child>& children, const LineSink& sink) {
  std::vector<pollfd> fds;
  std::vector<std::pair<std::size_t, bool>> owners;  // (child, is stderr)
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (children[i].out_fd >= 0) {
      fds.push_back({children[i].out_fd, POLLIN, 0});
      owners.emplace_back(i, false);
    }
    if (children[i].err_fd >= 0) {
      fds.push_back({children[i].err_fd, POLLIN, 0});
      owners.emplace_back(i, true);
    }
  }
  bool any_running = false;
  for (const Child& c : children) any_running = any_running || c.running;
  if (fds.empty() && !any_running) return false;
  if (fds.empty()) {
    ::usleep(20000);
    return true;
  }
  ::poll(fds.data(), fds.size(), 50);
  for (std::size_t f = 0; f < fds.size(); ++f) {
    if ((fds[f].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    Child& c = children[owners[f].first];
    const bool is_err = owners[f].second;
    read_some(is_err ? c.err_fd : c.out_fd, is_err ? c.err_buffer : c.out_buffer, c.exit.rank, is_err, sink);
  }
  return true;
}

// When the launch started, when the first rank failed, when SIGTERM went to every rank, when
// the leftovers of exited ranks were told to stop.
struct Supervision {
  const DescendantGuard* guard;
  Clock::time_point started;
  std::optional<Clock::time_point> first_failure, term_sent, leftovers_term_sent;
};

// Records the ranks that exited; the first failure stops the others unless keep_going.
void reap_exits(std::vector<Child>& children, const LaunchOptions& options, Supervision& sup,
                Clock::time_point now) {
  for (Child& c : children) {
    if (!c.running) continue;
    int status = 0;
    if (::waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
    c.running = false;
    c.exit.signaled = WIFSIGNALED(status);
    c.exit.exit_code = c.exit.signaled ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    c.exit.stopped_by_launcher = c.signaled_by_us;
    if (sup.first_failure) c.exit.seconds_after_first_failure = seconds_between(*sup.first_failure, now);
    if (c.exit.exit_code != 0 && !sup.first_failure) {
      sup.first_failure = now;
      c.exit.seconds_after_first_failure = 0;
      if (!options.keep_going) {
        stop_all(children, SIGTERM, sup.guard);
        sup.term_sent = now;
      }
    }
  }
}

// kill_after_s running out stops every rank; SIGKILL follows SIGTERM after grace_s.
void enforce_deadlines(std::vector<Child>& children, const LaunchOptions& options, LaunchResult& result,
                       Supervision& sup, Clock::time_point now) {
  if (options.kill_after_s > 0 && !result.timed_out && seconds_between(sup.started, now) > options.kill_after_s) {
    result.timed_out = true;
    if (!sup.first_failure) sup.first_failure = now;
    stop_all(children, SIGTERM, sup.guard);
    sup.term_sent = now;
  }
  if (sup.term_sent && seconds_between(*sup.term_sent, now) > options.grace_s) stop_all(children, SIGKILL, sup.guard);
}

// Once every rank has exited, what they left behind holding the pipes gets SIGTERM, SIGKILL
// after the grace period, and a grace period later its pipes are closed unread.
void stop_leftovers(std::vector<Child>& children, const LaunchOptions& options, Supervision& sup,
                    Clock::time_point now, const LineSink& sink) {
  for (const Child& c : children) {
    if (c.running) return;
  }
  if (!sup.leftovers_term_sent) {
    stop_all(children, SIGTERM, sup.guard);
    sup.leftovers_term_sent = now;
    return;
  }
  const double waited = seconds_between(*sup.leftovers_term_sent, now);
  if (waited > options.grace_s) stop_all(children, SIGKILL, sup.guard);
  if (waited <= 2 * options.grace_s + 1) return;
  for (Child& c : children) {
    for (auto [fd, buffer, is_err] : {std::tuple{&c.out_fd, &c.out_buffer, false}, {&c.err_fd, &c.err_buffer, true}}) {
      if (*fd < 0) continue;
      flush_rest(*buffer, c.exit.rank, is_err, sink);
      ::close(*fd);
      *fd = -1;
    }
  }
}

// Forwards output and reaps ranks until every rank exited and every pipe closed.
void supervise(std::vector<Child>& children, const LaunchOptions& options, const LineSink& sink,
               const DescendantGuard& guard, LaunchResult& result) {
  Supervision sup{&guard, Clock::now(), std::nullopt, std::nullopt, std::nullopt};
  const StopSignalHandlers handlers;
  for (;;) {
    if (g_stop_signal != 0 && !result.signaled) {
      result.signaled = true;
      stop_all(children, SIGTERM, &guard);
      sup.term_sent = Clock::now();
    }
    if (!forward_output(children, sink)) break;
    const Clock::time_point now = Clock::now();
    reap_exits(children, options, sup, now);
    guard.reap_adopted(running_pids(children));
    enforce_deadlines(children, options, result, sup, now);
    stop_leftovers(children, options, sup, now, sink);
  }
}

}  // namespace

sched::Result<int> find_free_port(const std::string& host) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return sched::Error{fmt::format("launch: socket(): {}", std::strerror(errno))};
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    ::close(fd);
    return sched::Error{fmt::format("launch: '{}' is not an IPv4 address", host)};
  }
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return sched::Error{fmt::format("launch: no free port on {}: {}", host, why)};
  }
  ::close(fd);
  return static_cast<int>(ntohs(address.sin_port));
}

sched::Result<LaunchResult> launch(const LaunchOptions& options, const LineSink& sink_in) {
  auto port = checked_port(options);
  if (!port) return port.error();
  std::vector<Child> children(static_cast<std::size_t>(options.num_processes));
  DescendantGuard guard(options.grace_s);
  if (auto s = start_children(options, *port, children, guard); !s) return s.error();
  // The writers' threads start after the forks (a child of a threaded process runs little).
  std::optional<OutputWriter> out, err;
  if (!sink_in) {
    out.emplace(STDOUT_FILENO, "standard output");
    err.emplace(STDERR_FILENO, "standard error");
  }
  const LineSink sink = sink_in ? sink_in : writer_sink(*out, *err);
  LaunchResult result;
  supervise(children, options, sink, guard, result);
  guard.stop_all_adopted();  // before waiting for a slow reader of the output
  if (out) {
    out->drain();
    err->drain();
    result.output_error = !out->error().empty() ? out->error() : err->error();
    if (!result.output_error.empty()) result.exit_code = 1;
  }
  for (const Child& c : children) {
    result.exits.push_back(c.exit);
    if (c.exit.exit_code != 0) result.exit_code = 1;
  }
  if (result.timed_out || result.signaled) result.exit_code = 1;
  return result;
}

}  // namespace pipeworks::hw
