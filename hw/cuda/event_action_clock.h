// The executor's action clock on a GPU (action_clock.h): every mark is a CUDA event recorded by
// the device's worker on the GPU's current stream, so a span is when the GPU ran the action's
// kernels, not when the host launched them (the host returns from a launch long before).
//
// Alignment with the step's host origin (the step time and every other clock are host times):
// start_step() drains the stream, records the origin event E0 on it and reads the host time h0;
// the idle stream passes E0 within microseconds of h0, and every later event is measured from
// E0 on the GPU's own clock (resolution about 0.5 us).
//
//   host      origin ------------- h0 ----------------------------------------> ns since origin
//   worker d                       start_step: drain, record E0, read h0
//                                       mark e0, launch F0, mark e1 (returns at once) ...
//   GPU       (idle) ............. [E0] ....... [e0]=======F0=======[e1] .......
//                                   |<- e0 - E0 ->|<---- F0 on GPU -->|
//   span F0 = (h0 + (e0 - E0), h0 + (e1 - E0)), resolved after the step (one synchronize)
//
// SEND and RECV copy on copy streams (cuda_copy_transport.h) but are marked on the compute
// stream like every action: a SEND span is (nearly) empty, at the point where its tensor was
// ready and the copy could start; a RECV span is how long the compute stream waited for the
// copy to arrive, i.e. the part of the transfer that compute did not hide.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hw/cuda/cuda_device.h"
#include "hw/exec/action_clock.h"

namespace pipeworks::hw::cuda {

class EventActionClock final : public ActionClock {
 public:
  explicit EventActionClock(int gpu);

  void start_step(std::chrono::steady_clock::time_point origin) override;
  // An event index; a CUDA error is remembered and reported by finish_step().
  ClockMark mark() override;
  // One synchronize on the last event, then every mark's time from E0 plus h0.
  sched::Status finish_step() override;
  sched::Nanoseconds ns(ClockMark mark) const override;

 private:
  EventClock events_;
  sched::Nanoseconds origin_offset_ns_ = 0;  // h0
  std::optional<std::string> error_;         // the first CUDA error of this step
  std::vector<sched::Nanoseconds> resolved_;  // per mark, after finish_step()
};

// Clocks for the executor (ExecutorOptions::clock): device d's clock marks events on GPU
// gpu_of_device(d).
ActionClockFactory event_clocks(std::function<int(int)> gpu_of_device);

}  // namespace pipeworks::hw::cuda
