// The largest values a training run, a prediction or a profile accepts, shared by the library's
// checks and every command's argument checks (cli/arg_checks.h), so `run`, `run --predict` and
// `profile` refuse the same things with the same bounds (the model's own knobs: model_config.h).
// LibTorch-free.
#pragma once

namespace pipeworks::hw {

inline constexpr int kMaxSteps = 1'000'000;           // training steps, measured or warm-up
inline constexpr int kMaxBatchSize = 1 << 20;          // samples per mini-batch or profiled micro-batch
inline constexpr int kMaxThreadsPerWorker = 256;       // intra-op threads of one worker
inline constexpr int kMaxRunDevices = 64;              // devices (workers) of one process's run
inline constexpr int kMaxRepetitions = 100'000;        // timed repetitions, rounds, replay rounds
inline constexpr double kMaxLearningRate = 1e6;
inline constexpr double kMaxTimeoutSeconds = 1e6;

}  // namespace pipeworks::hw
