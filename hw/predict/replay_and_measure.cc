// The stage replay and the measured run, taking turns (see replay_and_measure.h).
#include "hw/predict/replay_and_measure.h"

namespace pipeworks::hw {

std::vector<bool> interleaving(int rounds, int steps) {
  std::vector<bool> order;
  int r = 0, s = 0;
  while (r < rounds || s < steps) {
    // Compare (r + 1/2) / rounds with (s + 1/2) / steps without division.
    const bool replay_next = s >= steps || (r < rounds && static_cast<long long>(2 * r + 1) * steps <=
                                                              static_cast<long long>(2 * s + 1) * rounds);
    order.push_back(replay_next);
    (replay_next ? r : s) += 1;
  }
  return order;
}

sched::Result<ReplayAndRun> replay_and_measure(const RunConfig& config, const sched::Schedule& schedule,
                                               const sim::Partition& partition, int rounds, int warmup,
                                               const OnMeasuredStep& on_step) {
  if (rounds < 1) return sched::Error{"stage replay: rounds must be >= 1"};
  if (config.steps < 1 || warmup < 0) return sched::Error{"steps must be >= 1 and warm-up steps >= 0"};
  auto stepper = RunStepper::create(config, schedule, partition);
  if (!stepper) return stepper.error();
  // On the run's own cells: one set of weights in the caches, and whatever their placement in
  // memory costs, the replay pays too.
  auto replayer = StageReplayer::create(config, schedule, partition, &(*stepper)->cells());
  if (!replayer) return replayer.error();
  ReplayAndRun out;
  out.run.threads_per_worker = (*stepper)->threads_per_worker();
  out.run.worker_cpus = (*stepper)->worker_cpus();
  const auto run_step = [&](bool is_warmup) -> sched::Status {
    auto measured = (*stepper)->step();
    if (!measured) return measured.error();
    if (on_step) on_step(*measured, is_warmup);
    (is_warmup ? out.run.warmup : out.run.steps).push_back(std::move(measured).value());
    return sched::Ok{};
  };
  if (auto s = (*replayer)->round(); !s) return s.error();  // the replay's warm-up round
  for (int i = 0; i < warmup; ++i) {
    if (auto s = run_step(true); !s) return s.error();
  }
  bool after_replay = false;
  for (bool replay_next : interleaving(rounds, config.steps)) {
    if (replay_next) {
      if (auto s = (*replayer)->round(); !s) return s.error();
      after_replay = true;
      continue;
    }
    // A replay round leaves its own activations and buffers in the caches: one more warm-up step
    // first, so each measured step follows a step of the run as in training.
    if (after_replay) {
      if (auto s = run_step(true); !s) return s.error();
    }
    if (auto s = run_step(false); !s) return s.error();
    after_replay = false;
  }
  auto replay = (*replayer)->result();
  if (!replay) return replay.error();
  out.replay = std::move(replay).value();
  return out;
}

}  // namespace pipeworks::hw
