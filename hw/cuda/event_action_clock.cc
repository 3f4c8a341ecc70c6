// CUDA-event action timing aligned to the host origin (see event_action_clock.h).
#include "hw/cuda/event_action_clock.h"

#include <exception>
#include <memory>
#include <utility>

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "hw/model/torch_errors.h"

namespace pipeworks::hw::cuda {
namespace {

std::string describe(const std::exception& e) {
  return torch_error_message(e);
}

}  // namespace

EventActionClock::EventActionClock(int gpu) : events_(gpu) {}

void EventActionClock::start_step(std::chrono::steady_clock::time_point origin) {
  error_.reset();
  resolved_.clear();
  origin_offset_ns_ = 0;
  try {
    const auto gpu = static_cast<c10::DeviceIndex>(events_.gpu());
    const c10::cuda::CUDAGuard guard(gpu);
    c10::cuda::getCurrentCUDAStream(gpu).synchronize();  // idle: E0 happens when it is recorded
    events_.start();
    origin_offset_ns_ =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin).count();
  } catch (const std::exception& e) {
    error_ = fmt::format("cuda:{}: cannot record the origin event: {}", events_.gpu(), describe(e));
  }
}

ClockMark EventActionClock::mark() {
  if (error_) return -1;
  try {
    return static_cast<ClockMark>(events_.mark());
  } catch (const std::exception& e) {
    error_ = fmt::format("cuda:{}: cannot record an event: {}", events_.gpu(), describe(e));
    return -1;
  }
}

sched::Status EventActionClock::finish_step() {
  if (error_) return sched::Error{*error_};
  try {
    events_.synchronize();
    resolved_.resize(events_.marks());
    for (std::size_t i = 0; i < resolved_.size(); ++i) resolved_[i] = origin_offset_ns_ + events_.elapsed_ns(i);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("cuda:{}: cannot read the events: {}", events_.gpu(), describe(e))};
  }
  return sched::Ok{};
}

sched::Nanoseconds EventActionClock::ns(ClockMark mark) const {
  // Only marks of this step reach here (finish_step() succeeded); anything else reads as 0.
  if (mark < 0 || static_cast<std::size_t>(mark) >= resolved_.size()) return 0;
  return resolved_[static_cast<std::size_t>(mark)];
}

ActionClockFactory event_clocks(std::function<int(int)> gpu_of_device) {
  return [gpu_of_device = std::move(gpu_of_device)](int device) -> std::unique_ptr<ActionClock> {
    return std::make_unique<EventActionClock>(gpu_of_device(device));
  };
}

}  // namespace pipeworks::hw::cuda
