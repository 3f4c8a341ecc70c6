// Hand-offs through a ComputeDevices' own transport, timed on the receiver's clock (see
// device_handoff.h).
#include "hw/predict/device_handoff.h"

#include <chrono>
#include <memory>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/compute_devices.h"
#include "hw/predict/cost_fit.h"

namespace pipeworks::hw {
namespace {

constexpr int kSender = 0;
constexpr int kReceiver = 1;

// Two one-layer cells, stage s on device s: what the transport needs to know where stages live.
std::vector<StageCell> two_cells() {
  std::vector<StageCell> cells(2);
  for (int s = 0; s < 2; ++s) {
    cells[static_cast<std::size_t>(s)].stage = s;
    cells[static_cast<std::size_t>(s)].device = s;
    cells[static_cast<std::size_t>(s)].layers = torch::nn::Sequential(torch::nn::Identity());
  }
  return cells;
}

// One hand-off of `tensor` for micro-batch `m`: nanoseconds between the receiver's marks.
sched::Result<sched::Nanoseconds> one_handoff(Transport& transport, ActionClock& clock, const torch::Tensor& tensor,
                                              int m) {
  clock.start_step(std::chrono::steady_clock::now());
  const ClockMark before = clock.mark();
  if (auto sent = transport.send(sched::Action{0, sched::ActionKind::kSendF, m}, tensor); !sent) return sent.error();
  auto got = transport.recv(sched::Action{1, sched::ActionKind::kRecvF, m}, std::chrono::seconds(10));
  if (!got) return got.error();
  const ClockMark after = clock.mark();
  if (auto status = clock.finish_step(); !status) return status.error();
  return clock.ns(after) - clock.ns(before);
}

}  // namespace

sched::Result<std::vector<HandoffSample>> device_handoffs(const ComputeDevices& where,
                                                          const std::vector<sched::Bytes>& bytes, int warmup,
                                                          int repetitions) {
  std::unique_ptr<Transport> transport = where.transport(two_cells());
  if (!transport) return sched::Error{fmt::format("hand-off: the {} devices bring no transport of their own", device_kind_name(where.kind()))};
  ExecutorOptions options;
  where.configure(options);
  std::unique_ptr<ActionClock> clock =
      options.clock ? options.clock(kReceiver) : std::unique_ptr<ActionClock>(std::make_unique<HostClock>());
  if (!clock) return sched::Error{fmt::format("hand-off: the {} devices gave no clock", device_kind_name(where.kind()))};
  std::vector<HandoffSample> out;
  int m = 0;
  for (const sched::Bytes size : bytes) {
    const torch::Tensor tensor =
        torch::zeros({size / 4}, torch::TensorOptions().dtype(torch::kFloat32).device(where.device_of(kSender)));
    std::vector<std::int64_t> samples;
    for (int i = 0; i < warmup + repetitions; ++i, ++m) {
      auto ns = one_handoff(*transport, *clock, tensor, m);
      if (!ns) return sched::Error{fmt::format("hand-off of {} bytes: {}", size, ns.error().message)};
      if (i >= warmup) samples.push_back(*ns);
    }
    transport->reset();
    out.push_back({size, summarize_timings(std::move(samples))});
  }
  return out;
}

}  // namespace pipeworks::hw
