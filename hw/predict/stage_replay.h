// Stage times in schedule order: every device's program of the very lowered schedule a run will
// execute, replayed by the executor itself with nothing to wait for (a loopback transport hands
// each RECV(s, m) at once micro-batch m's true tensor, from one real pass of every micro-batch),
// first one device at a time, then all devices at once. What a stage costs depends on what ran
// before it on its worker, not only on its layers: a GPipe backward reads a stash written M
// forwards ago (out of cache), a 1F1B backward one written a forward ago, and a stage cycles
// through its own weights only (a working set a whole-model profile overstates). LibTorch-free
// header.
//
//   alone (per device d, devices in turn)        at once (every device from one barrier)
//   d0: F0 F1 F2 F3 B0 B1 B2 B3 |                d0: F0 F1 F2 F3 B0 B1 B2 B3 |
//   d1:                          F0 F1 ... B3 |  d1: F0 F1 F2 F3 B0 B1 B2 B3 |
//   resumed (K > 1, per device in turn, a sleep z before each action, outside its span)
//   d0: z F0 z F1 z F2 ... z B3 |
//
// Each device's measured steps follow an unmeasured step of its own executor (round_plan), as
// each measured step of the run follows a step of the run: a step that follows another
// executor's finds memory and caches as that one left them, and its first B is slower than
// training's.
//
//   stage times   = medians of each stage's F, R and B over rounds x micro-batches, alone
//   resume costs  = max(0, median resumed - median alone) per stage and kind
//   first costs   = medians of each stage's first F, R and B of a step, alone
//   contention(d) = (sum of d's fastest at-once durations) / (the same actions' fastest alone),
//                   >= 1, over the actions that ended while another device still computed
//
// Alone and at once alternate round by round, so load from other processes that comes and goes
// hits both sides of a ratio alike. The replay measures stage costs; the simulator still
// predicts the pipeline: bubbles, dependencies, hand-offs, and contention only where compute
// overlaps (prediction.h).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "hw/predict/cost_fit.h"
#include "hw/run/run.h"
#include "sched/action.h"
#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/plan/partition.h"

namespace pipeworks::hw {

struct StageCell;

// The conditions the replay measures each stage's F, R and B under:
//   alone    every instance, its device alone (the stage times)
//   first    the stage's first instance of the kind in each step, alone: cold after the step
//            boundary, and the first B allocates the parameter gradients (sim::StageCost's first_*_ns)
//   resumed  every instance right after its worker slept kResumePause, as a worker does that waited
//            for data: the excess over alone is what resuming costs (sim::StageCost's resume_*_ns);
//            zeros with one device (nothing to wait for) and on asynchronous devices
enum class ReplayCondition { kAlone, kFirst, kResumed };
inline constexpr ReplayCondition kReplayConditions[] = {ReplayCondition::kAlone, ReplayCondition::kFirst,
                                                        ReplayCondition::kResumed};

// One action kind's figures under each condition.
template <class T>
struct ByCondition {
  T alone{};
  T first{};
  T resumed{};

  T& operator[](ReplayCondition c) { return pick(*this, c); }
  const T& operator[](ReplayCondition c) const { return pick(*this, c); }

 private:
  template <class Self>
  static auto& pick(Self& self, ReplayCondition c) {
    switch (c) {
      case ReplayCondition::kAlone: return self.alone;
      case ReplayCondition::kFirst: return self.first;
      case ReplayCondition::kResumed: break;
    }
    return self.resumed;
  }
};

// The kinds the replay times.
inline constexpr sched::ActionKind kReplayedKinds[] = {sched::ActionKind::kForward, sched::ActionKind::kRecompute,
                                                       sched::ActionKind::kBackward, sched::ActionKind::kBackwardInput,
                                                       sched::ActionKind::kBackwardWeight};

// One stage's figures per replayed kind: F (without the graph when the schedule re-materializes
// the stage), R (zeros when the schedule has none for the stage), B, and I and W (zeros unless the
// schedule splits the stage's backwards).
template <class T>
struct ByKind {
  T forward{};
  T recompute{};
  T backward{};
  T backward_input{};
  T backward_weight{};

  // Null for a kind the replay does not time.
  T* of(sched::ActionKind kind) { return pick(*this, kind); }
  const T* of(sched::ActionKind kind) const { return pick(*this, kind); }

 private:
  template <class Self>
  static auto* pick(Self& self, sched::ActionKind kind) {
    using Pointer = decltype(&self.forward);
    switch (kind) {
      case sched::ActionKind::kForward: return &self.forward;
      case sched::ActionKind::kRecompute: return &self.recompute;
      case sched::ActionKind::kBackward: return &self.backward;
      case sched::ActionKind::kBackwardInput: return &self.backward_input;
      case sched::ActionKind::kBackwardWeight: return &self.backward_weight;
      default: return Pointer{nullptr};
    }
  }
};

// A stage's timings: `times.backward.resumed`, or `times.of(kind)->...` over kReplayedKinds.
using StageTimes = ByKind<ByCondition<Timing>>;

// How long the replay's workers sleep before each action in the resumed mode: long enough that a
// worker's thread blocks, as one does that waits for data, and of the order of a run's waits.
inline constexpr std::chrono::microseconds kResumePause{50};

struct ScheduleReplay {
  std::vector<StageTimes> stages;         // per stage
  std::vector<double> device_contention;  // per device, >= 1 (1 with one device)
  std::vector<Timing> device_alone;       // per device: its compute time per program, alone
  std::vector<Timing> device_together;    // the same with every device at once (empty for one)
  int rounds = 0;
};

// One step of a replay round: which executor runs and why; kAtOnce runs every device's.
enum class ReplayStep { kWarm, kAlone, kResumed, kAtOnce };
struct RoundStep {
  ReplayStep step = ReplayStep::kWarm;
  int device = -1;  // -1 with kAtOnce
};

// A round's steps in order. K = 2 with resume costs measured:
//   d0: warm alone resumed                        | at once
//   d1:                     warm alone resumed    | at once
std::vector<RoundStep> round_plan(int devices, bool measure_resume);

// Enough rounds for `min_samples` samples of each stage's F and B (one per micro-batch and
// round), and at least `min_rounds`: with M = 1 a round gives one sample per action.
int replay_rounds_for(int min_rounds, int num_microbatches, int min_samples = 16);

// The replay one round at a time, for a caller that interleaves its rounds with other work
// (run --predict alternates them with the measured run's steps, so that both see the same
// machine: replay_and_measure.h).
class StageReplayer {
 public:
  // Builds one executor per device, each with a loopback transport holding the tensors of one
  // real pass, on the cells of `run_cells` when given (the run's own modules: the replay then
  // reads the very weights, gradients and optimizer state the run does; each device's executor
  // touches only its own stages' cells), else on fresh cells per device. Errors name what failed.
  static sched::Result<std::unique_ptr<StageReplayer>> create(const RunConfig& config,
                                                              const sched::Schedule& schedule,
                                                              const sim::Partition& partition,
                                                              const std::vector<StageCell>* run_cells = nullptr);
  ~StageReplayer();
  StageReplayer(const StageReplayer&) = delete;
  StageReplayer& operator=(const StageReplayer&) = delete;

  // One round: every device alone in turn, then all at once. The first round warms up and is
  // not recorded.
  sched::Status round();
  int measured_rounds() const;
  // The figures of the measured rounds so far; an error before the first.
  sched::Result<ScheduleReplay> result() const;

 private:
  struct State;
  explicit StageReplayer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Replays `schedule` (lowered; as built for `config`, cut by `partition`) for one warm-up and
// `rounds` measured rounds with the run's model, micro-batch size, optimizer and threads per
// worker. Errors name what failed (a model that does not build, a stage that throws).
sched::Result<ScheduleReplay> replay_schedule(const RunConfig& config, const sched::Schedule& schedule,
                                              const sim::Partition& partition, int rounds);

}  // namespace pipeworks::hw
