// A one-line progress bar for long planning runs, drawn on stderr only when stderr is a
// terminal (pipes and log files stay clean):
//
//   sweep [##########..........]  512/1024  50%
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace pipeworks::cli {

class ProgressBar {
 public:
  // Draws on `out` when `enabled`; otherwise every call is a no-op.
  ProgressBar(std::string label, std::size_t total, std::FILE* out, bool enabled);
  // A bar on stderr, enabled when stderr is a terminal (isatty).
  static ProgressBar on_stderr(std::string label, std::size_t total);

  // Records `done` of `total`; redraws at most every 50 ms, and always at completion.
  void update(std::size_t done);
  // Erases the bar so the next output starts on a clean line.
  void finish();

  // The text of the bar for `done` of `total` (no carriage return), for tests.
  static std::string render(const std::string& label, std::size_t done, std::size_t total, int width = 20);

 private:
  std::string label_;
  std::size_t total_ = 0;
  std::FILE* out_ = nullptr;
  bool enabled_ = false;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace pipeworks::cli
