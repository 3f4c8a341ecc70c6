// A ComputeDevices that computes on this CPU but behaves as queued devices (GPUs) do, so the GPU
// branch of every path that takes a ComputeDevices runs in the CPU tests: its work is
// "asynchronous", its memory is metered outside the executor (scripted bytes, or the CPU's
// counting allocator), its hand-off is its own transport, and its clocks are scripted: every
// mark is 1 us after the one before on that clock, so a span between two adjacent marks is
// exactly 1 us, whatever the host's clock says.
#pragma once

#include <atomic>
#include <map>
#include <memory>

#include "hw/exec/action_clock.h"
#include "hw/exec/compute_devices.h"
#include "hw/exec/counting_allocator.h"
#include "hw/exec/inprocess_transport.h"

namespace pipeworks::hw::testing {

inline constexpr sched::Nanoseconds kScriptedMarkNs = 1000;

// Mark n of a step is n us after the step's origin; finish_step() counts the steps it resolves.
class ScriptedClock final : public ActionClock {
 public:
  explicit ScriptedClock(std::atomic<int>* finished) : finished_(finished) {}
  void start_step(std::chrono::steady_clock::time_point /*origin*/) override { marks_ = 0; }
  ClockMark mark() override { return ++marks_; }
  sched::Status finish_step() override {
    ++*finished_;
    return sched::Ok{};
  }
  sched::Nanoseconds ns(ClockMark mark) const override { return mark * kScriptedMarkNs; }

 private:
  std::atomic<int>* finished_;
  ClockMark marks_ = 0;
};

class ScriptedDevices final : public ComputeDevices {
 public:
  // A queued device like a GPU, on the CPU.
  DeviceKind kind() const override { return DeviceKind::kCuda; }
  torch::Device device_of(int /*device*/) const override { return torch::kCPU; }
  bool asynchronous() const override { return true; }
  void configure(ExecutorOptions& options) const override {
    options.measure_memory = false;
    std::atomic<int>* finished = &steps_finished;
    options.clock = [finished](int /*device*/) { return std::make_unique<ScriptedClock>(finished); };
  }
  std::unique_ptr<Transport> transport(const std::vector<StageCell>& cells) const override {
    return std::make_unique<InProcessTransport>(static_cast<int>(cells.size()));
  }
  void synchronize() const override { ++synchronized; }
  void use_exact_arithmetic() const override {}
  sched::Bytes live_bytes(int device) const override {
    ++meter_reads;
    return counting_allocator ? hw::live_bytes(device) : live.at(memory_domain(device));
  }
  sched::Bytes peak_bytes(int device) const override {
    ++meter_reads;
    return counting_allocator ? hw::peak_bytes(device) : peak.at(memory_domain(device));
  }
  void reset_peak(int device) const override {
    if (counting_allocator) {
      hw::reset_peak(device);
    } else {
      peak[memory_domain(device)] = live.at(memory_domain(device));
    }
  }
  int memory_domain(int device) const override { return device / 2; }  // two devices per "GPU"
  bool executor_meters_memory() const override { return false; }

  // true: bytes from the CPU's counting allocator (per device, inside a DeviceScope); false: the
  // scripted `live` and `peak` per memory domain.
  bool counting_allocator = false;
  mutable std::map<int, sched::Bytes> live, peak;
  mutable std::atomic<int> synchronized = 0;
  mutable std::atomic<int> meter_reads = 0;
  mutable std::atomic<int> steps_finished = 0;  // by every clock these devices made (on any thread)
};

}  // namespace pipeworks::hw::testing
