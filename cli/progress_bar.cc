// Terminal progress bar (see progress_bar.h); throttled so that thousands of updates cost little.
#include "cli/progress_bar.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace pipeworks::cli {

ProgressBar::ProgressBar(std::string label, std::size_t total, std::FILE* out, bool enabled)
    : label_(std::move(label)), total_(total), out_(out), enabled_(enabled && out != nullptr) {}

ProgressBar ProgressBar::on_stderr(std::string label, std::size_t total) {
  return ProgressBar(std::move(label), total, stderr, isatty(fileno(stderr)) != 0);
}

std::string ProgressBar::render(const std::string& label, std::size_t done, std::size_t total, int width) {
  const std::size_t shown = std::min(done, total);
  const double fraction = total == 0 ? 1.0 : static_cast<double>(shown) / static_cast<double>(total);
  const int filled = static_cast<int>(fraction * width);
  return fmt::format("{} [{}{}] {:>{}}/{} {:3.0f}%", label, std::string(static_cast<std::size_t>(filled), '#'),
                     std::string(static_cast<std::size_t>(width - filled), '.'), shown,
                     fmt::formatted_size("{}", total), total, fraction * 100);
}

void ProgressBar::update(std::size_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total_ && drawn_ && now - last_draw_ < std::chrono::milliseconds(50)) return;
  last_draw_ = now;
  drawn_ = true;
  fmt::print(out_, "\r{}", render(label_, done, total_));
  std::fflush(out_);
}

void ProgressBar::finish() {
  if (!enabled_ || !drawn_) return;
  fmt::print(out_, "\r{}\r", std::string(render(label_, total_, total_).size(), ' '));
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace pipeworks::cli
