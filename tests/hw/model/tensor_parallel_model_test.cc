// The split layers in one process (hw/model/tensor_parallel_model.h): two threads stand for two
// tensor-parallel ranks over a group that sums in memory. The sharded mlp (dropout masks sliced
// inside the split blocks) and transformer compute the unsharded model's output, and each rank's
// gradients are the slice of the unsharded model's, up to the split sums' rounding; the shards
// name exactly the slices the layers hold.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "hw/model/action_context.h"
#include "hw/model/model_zoo.h"
#include "hw/model/tensor_parallel_model.h"

namespace pipeworks::hw {
namespace {

// What two in-process ranks share: the tensors of the all-reduce in flight, and a generation count.
struct Rendezvous {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<torch::Tensor> deposited = std::vector<torch::Tensor>(2);
  int arrived = 0;
  int generation = 0;
  torch::Tensor sum;
};

class InMemoryGroup final : public TensorParallelGroup {
 public:
  InMemoryGroup(std::shared_ptr<Rendezvous> shared, int rank) : shared_(std::move(shared)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  // Rank 0's tensor plus rank 1's, for both; the last to arrive adds.
  void all_reduce_sum(at::Tensor& tensor) override {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    const int generation = shared_->generation;
    shared_->deposited[static_cast<std::size_t>(rank_)] = tensor.clone();
    if (++shared_->arrived == 2) {
      shared_->sum = shared_->deposited[0] + shared_->deposited[1];
      shared_->arrived = 0;
      ++shared_->generation;
      shared_->changed.notify_all();
    } else {
      shared_->changed.wait(lock, [&] { return shared_->generation != generation; });
    }
    tensor.copy_(shared_->sum);
  }

 private:
  std::shared_ptr<Rendezvous> shared_;
  int rank_;
};

torch::Tensor run_forward(Model& model, const Batch& batch) {
  const ActionScope scope({7, 0, sched::ActionKind::kForward});
  torch::Tensor x = batch.inputs;
  for (Layer& layer : model.layers) x = layer.module.forward(x);
  const torch::Tensor loss = compute_loss(model.loss, x, batch.targets);
  loss.backward();
  return x.detach();
}

std::vector<torch::Tensor> parameters_of(const Model& model) {
  std::vector<torch::Tensor> out;
  for (const Layer& layer : model.layers) {
    for (const torch::Tensor& p : layer.module.ptr()->parameters()) out.push_back(p);
  }
  return out;
}

// The unsharded model against its two shards run on two threads.
void check_split(const ModelConfig& config) {
  Model whole = build_model(config).value();
  const Batch batch = make_batch(config, 4, 11);
  const torch::Tensor expected = run_forward(whole, batch);
  const std::vector<torch::Tensor> whole_params = parameters_of(whole);
  auto shared = std::make_shared<Rendezvous>();
  std::vector<Model> shards;
  for (int rank = 0; rank < 2; ++rank) {
    shards.push_back(shard_model(whole, std::make_shared<InMemoryGroup>(shared, rank)).value());
  }
  std::vector<torch::Tensor> outputs(2);
  std::thread other([&] { outputs[1] = run_forward(shards[1], batch); });
  outputs[0] = run_forward(shards[0], batch);
  other.join();
  CHECK(torch::allclose(outputs[0], expected, 1e-5, 1e-5));
  CHECK(torch::equal(outputs[0], outputs[1]));
  for (int rank = 0; rank < 2; ++rank) {
    const std::vector<ParamShard> slices = tensor_parallel_shards(whole, 2, rank);
    const std::vector<torch::Tensor> mine = parameters_of(shards[static_cast<std::size_t>(rank)]);
    REQUIRE(mine.size() == whole_params.size());
    REQUIRE(slices.size() == whole_params.size());
    int split = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      INFO("rank " << rank << ", parameter " << i);
      split += slices[i].whole() ? 0 : 1;
      CHECK(torch::equal(mine[i], take_shard(whole_params[i], slices[i])));
      CHECK(torch::allclose(mine[i].grad(), take_shard(whole_params[i].grad(), slices[i]), 1e-4, 1e-5));
    }
    CHECK(split > 0);
  }
}

TEST_CASE("tensor-parallel model: the mlp's column/row pairs compute the unsharded model, masks sliced") {
  ModelConfig c;
  c.kind = ModelKind::kMlp;
  c.depth = 4;  // fc0..fc3 and the head: pairs (fc0, fc1), (fc2, fc3), the head whole
  c.width = 8;
  c.dropout = 0.25;
  check_split(c);
  c.depth = 3;  // pairs (fc0, fc1), (fc2, head)
  check_split(c);
}

TEST_CASE("tensor-parallel model: the transformer's split attention and feed-forward compute the unsharded model") {
  ModelConfig c;
  c.kind = ModelKind::kTransformer;
  c.layers = 2;
  c.model_width = 8;
  c.heads = 2;
  c.ff_width = 16;
  c.seq_len = 4;
  c.vocab = 16;
  c.dropout = 0.25;
  check_split(c);
}

TEST_CASE("tensor-parallel model: the QKV shard takes its heads' rows of q, k and v, put_shard writes them back") {
  ModelConfig c;
  c.kind = ModelKind::kTransformer;
  c.layers = 1;
  c.model_width = 4;
  c.heads = 2;
  c.ff_width = 8;
  const Model model = build_model(c).value();
  const std::vector<ParamShard> shards = tensor_parallel_shards(model, 2, 1);
  const std::vector<torch::Tensor> params = parameters_of(model);
  // embed (2), ln1 (2), ln2 (2), then qkv's weight.
  const ParamShard& qkv = shards[6];
  CHECK(qkv.dim == 0);
  CHECK(qkv.ranges == std::vector<std::pair<std::int64_t, std::int64_t>>{{2, 2}, {6, 2}, {10, 2}});
  torch::Tensor whole = torch::zeros_like(params[6]);
  put_shard(whole, qkv, take_shard(params[6], qkv));
  CHECK(torch::equal(whole.narrow(0, 6, 2), params[6].narrow(0, 6, 2)));
  CHECK(torch::equal(whole.narrow(0, 0, 2), torch::zeros({2, 4})));
  CHECK(check_tensor_parallel_split(c, 3).error().message ==
        "--tp 3: the transformer's --heads (2) does not split into 3 equal shards");
}

}  // namespace
}  // namespace pipeworks::hw
