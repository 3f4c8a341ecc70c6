// A user's own data for a TorchScript model: inputs and targets saved from Python with
//   torch.save({"inputs": X, "targets": Y}, "data.pt")
// and read with torch::pickle_load. Each step's batch is drawn from the N samples by the
// step's seed, so the pipeline, its reference and every rank of a multi-process run see the
// same samples.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/model/model_zoo.h"
#include "sched/result.h"

namespace pipeworks::hw {

struct DataFile {
  torch::Tensor inputs;   // (N, ...) float32 or int64
  torch::Tensor targets;  // (N, ...) float32 or int64
};

// Reads `path` and checks its shape: a dict with tensors "inputs" and "targets" of the same
// N >= 1 samples, inputs float32 or int64, targets float32 or int64. Read once per process and
// shared afterwards (every step of a run draws from it).
sched::Result<std::shared_ptr<const DataFile>> read_data_file(const std::string& path);

// The targets against what the model outputs for one sample: float targets of that shape for
// mse; for cross_entropy int64 classes of its shape without the last dimension, each in [0, C)
// where C is that last size.
sched::Status check_targets(const DataFile& data, const std::string& path, const std::vector<std::int64_t>& output_shape,
                            LossKind loss);

// `batch_size` samples drawn by `seed`: without replacement when the file has that many, with
// replacement otherwise.
Batch draw_batch(const DataFile& data, int batch_size, std::uint64_t seed);

}  // namespace pipeworks::hw
