// The launcher's queued, bounded output (see output_writer.h).
#include "hw/dist/output_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace pipeworks::hw {
namespace {

std::string dropped_notice(std::size_t lines, const std::string& stream_name) {
  return fmt::format("pipeworks launch: {} line(s) of rank output dropped while {} was not read\n", lines, stream_name);
}

}  // namespace

OutputWriter::OutputWriter(int fd, std::string stream_name, std::size_t max_queued_bytes)
    : fd_(fd), stream_name_(std::move(stream_name)), max_queued_bytes_(max_queued_bytes), thread_([this] { run(); }) {}

OutputWriter::~OutputWriter() {
  {
    const std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void OutputWriter::write(std::string text) {
  {
    const std::lock_guard lock(mutex_);
    if (!error_.empty()) return;
    if (queued_bytes_ + text.size() > max_queued_bytes_) {
      ++dropped_lines_;
      return;
    }
    if (dropped_lines_ > 0) {
      // The reader caught up with part of the queue: say what was lost, where it was lost.
      std::string notice = dropped_notice(dropped_lines_, stream_name_);
      queued_bytes_ += notice.size();
      queue_.push_back(std::move(notice));
      dropped_lines_ = 0;
    }
    queued_bytes_ += text.size();
    queue_.push_back(std::move(text));
  }
  changed_.notify_all();
}

void OutputWriter::drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return (queue_.empty() && !writing_) || !error_.empty(); });
}

std::string OutputWriter::error() const {
  const std::lock_guard lock(mutex_);
  return error_;
}

bool OutputWriter::write_all(const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n >= 0) {
      done += static_cast<std::size_t>(n);
    } else if (errno != EINTR) {
      const std::string reason = std::strerror(errno);  // read at once: nothing else ran since write()
      const std::lock_guard lock(mutex_);
      error_ = fmt::format("cannot write {}: {}", stream_name_, reason);
      return false;
    }
  }
  return true;
}

void OutputWriter::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !queue_.empty() || closing_; });
    if (queue_.empty() || !error_.empty()) {
      if (closing_ || !error_.empty()) break;
      continue;
    }
    std::string text = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    const bool ok = write_all(text);
    lock.lock();
    queued_bytes_ -= text.size();
    writing_ = false;
    if (!ok) {
      queue_.clear();
      queued_bytes_ = 0;
    }
    changed_.notify_all();
    if (!ok) break;
  }
  if (dropped_lines_ > 0 && error_.empty()) {
    const std::string notice = dropped_notice(dropped_lines_, stream_name_);
    lock.unlock();
    write_all(notice);
  }
}

}  // namespace pipeworks::hw
