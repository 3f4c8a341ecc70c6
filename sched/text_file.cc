// Checked whole-file reads and replace-on-success writes (see text_file.h).
#include "sched/text_file.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace pipeworks::sched {
namespace {

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

Error failure(const std::string& path, std::string_view what, int error_number) {
  return Error{fmt::format("{}: {}: {}", path, what, std::strerror(error_number))};
}

// What exists at `path`: nothing (-1), a regular file (1) or something else (0).
int kind_of(const std::string& path, struct stat& info) {
  if (::stat(path.c_str(), &info) != 0) return -1;
  return S_ISREG(info.st_mode) ? 1 : 0;
}

// Writes everything `produce` hands over to an opened file, then closes it.
Status write_and_close(std::FILE* raw, const std::string& shown_path,
                       const std::function<bool(const ChunkSink&)>& produce) {
  File file(raw, &std::fclose);
  int error_number = 0;
  const ChunkSink sink = [&](std::string_view chunk) {
    if (error_number != 0) return false;
    if (!chunk.empty() && std::fwrite(chunk.data(), 1, chunk.size(), file.get()) != chunk.size()) error_number = errno;
    return error_number == 0;
  };
  const bool produced = produce(sink);
  if (error_number == 0 && std::fflush(file.get()) != 0) error_number = errno;
  if (std::fclose(file.release()) != 0 && error_number == 0) error_number = errno;
  if (error_number != 0) return failure(shown_path, "cannot write", error_number);
  if (!produced) return Error{fmt::format("{}: the output could not be produced", shown_path)};
  return Ok{};
}

}  // namespace

Result<std::string> read_text_file(const std::string& path, std::size_t max_bytes) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return failure(path, "cannot open", errno);
  if (S_ISDIR(info.st_mode)) return Error{fmt::format("{}: is a directory, not a file", path)};
  File file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return failure(path, "cannot open", errno);
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    const std::size_t n = std::fread(chunk, 1, sizeof chunk, file.get());
    if (text.size() + n > max_bytes) {
      return Error{fmt::format("{}: larger than the limit of {} bytes", path, max_bytes)};
    }
    text.append(chunk, n);
    if (n < sizeof chunk) break;
  }
  if (std::ferror(file.get())) return failure(path, "cannot read", errno);
  return text;
}

namespace {

// SIGINT, SIGTERM and SIGHUP held back (this thread) while it lives: one that arrives while a
// temporary file exists takes effect once the file is renamed or removed, so a stop never leaves
// a half-written temporary behind.
class StopSignalsHeld {
 public:
  StopSignalsHeld() {
    sigset_t stops;
    sigemptyset(&stops);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stops, sig);
    ::pthread_sigmask(SIG_BLOCK, &stops, &previous_);
  }
  ~StopSignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  StopSignalsHeld(const StopSignalsHeld&) = delete;
  StopSignalsHeld& operator=(const StopSignalsHeld&) = delete;

 private:
  sigset_t previous_{};
};

}  // namespace

Status write_file_in_chunks(const std::string& path, const std::function<bool(const ChunkSink&)>& produce) {
  if (path.empty()) return Error{"an output path is empty"};
  struct stat info {};
  const int kind = kind_of(path, info);
  if (kind == 0 && S_ISDIR(info.st_mode)) return Error{fmt::format("{}: is a directory, not a file", path)};
  if (kind == 0) {  // a device or a pipe: written in place
    std::FILE* raw = std::fopen(path.c_str(), "wb");
    if (raw == nullptr) return failure(path, "cannot open for writing", errno);
    return write_and_close(raw, path, produce);
  }
  if (kind == 1 && ::access(path.c_str(), W_OK) != 0) return failure(path, "cannot open for writing", errno);
  // A link is followed: the file it names is replaced, the link stays.
  std::unique_ptr<char, decltype(&std::free)> resolved(kind == 1 ? ::realpath(path.c_str(), nullptr) : nullptr,
                                                        &std::free);
  const std::string target = resolved ? std::string(resolved.get()) : path;
  const std::string temporary = fmt::format("{}.pipeworks-{}.tmp", target, ::getpid());
  const StopSignalsHeld held;  // until the temporary file is renamed or removed
  std::FILE* raw = std::fopen(temporary.c_str(), "wb");
  if (raw == nullptr) return failure(path, "cannot open for writing", errno);
  if (auto written = write_and_close(raw, path, produce); !written) {
    ::unlink(temporary.c_str());
    return written;
  }
  if (kind == 1) ::chmod(temporary.c_str(), info.st_mode & 07777);
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const int error_number = errno;
    ::unlink(temporary.c_str());
    return failure(path, "cannot write", error_number);
  }
  return Ok{};
}

Status check_output_path(const std::string& path) {
  if (path.empty()) return Error{"an output path is empty"};
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return Error{fmt::format("{}: is a directory, not a file", path)};
    if (::access(path.c_str(), W_OK) != 0) return failure(path, "cannot open for writing", errno);
    return Ok{};
  }
  if (errno != ENOENT) return failure(path, "cannot open for writing", errno);
  const std::size_t slash = path.find_last_of('/');
  const std::string directory = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (::access(directory.c_str(), W_OK | X_OK) != 0) return failure(path, "cannot open for writing", errno);
  return Ok{};
}

Status write_text_file(const std::string& path, std::string_view text) {
  return write_file_in_chunks(path, [text](const ChunkSink& sink) { return sink(text); });
}

}  // namespace pipeworks::sched
