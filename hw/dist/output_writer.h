// The launcher's standard output and error: what the ranks print is queued here and written by a
// thread of its own, so a reader that stops reading (a paused pager) never stops the launcher
// supervising -- its timeouts, signals and rank exits go on while the queue waits. The queue is
// bounded: past kMaxQueuedOutputBytes lines are dropped and counted, and once the reader has
// caught up a notice says how many went. LibTorch-free.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace pipeworks::hw {

inline constexpr std::size_t kMaxQueuedOutputBytes = std::size_t{8} << 20;

class OutputWriter {
 public:
  // Writes to `fd` (not owned); `stream_name` ("standard output") names it in the notices.
  OutputWriter(int fd, std::string stream_name, std::size_t max_queued_bytes = kMaxQueuedOutputBytes);
  // Writes what is still queued (waiting for the reader), then stops the thread.
  ~OutputWriter();
  OutputWriter(const OutputWriter&) = delete;
  OutputWriter& operator=(const OutputWriter&) = delete;

  // Queues `text`, or drops it when the queue is full; never waits for the reader.
  void write(std::string text);
  // Waits until everything queued is written (or writing failed).
  void drain();
  // "cannot write standard output: <reason>" once a write failed (later text is discarded);
  // empty while every write succeeded.
  std::string error() const;

 private:
  void run();
  bool write_all(const std::string& text);  // false once the fd failed (error_ set)

  int fd_;
  std::string stream_name_;
  std::size_t max_queued_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  std::size_t dropped_lines_ = 0;
  bool writing_ = false;  // the thread holds a piece taken off the queue
  bool closing_ = false;
  std::string error_;
  std::thread thread_;
};

}  // namespace pipeworks::hw
