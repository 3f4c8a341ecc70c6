// Replica and tensor-group agreement: equal bytes give equal digests, and the first rank of a
// group whose digest differs from the group's first rank's is the one named.
#include <catch2/catch.hpp>

#include <torch/torch.h>

#include "hw/dist/replica_checks.h"

namespace pipeworks::hw {
namespace {

TEST_CASE("replica digests: equal bytes agree and the first differing rank of a group is named") {
  const at::Tensor a = torch::arange(6, torch::kFloat32);
  const at::Tensor b = a.clone();
  at::Tensor c = a.clone();
  c.index_put_({3}, 3.5F);
  CHECK(bytes_digest({a}) == bytes_digest({b}));
  CHECK(bytes_digest({a}) != bytes_digest({c}));
  const std::vector<std::string> digests = {"x", "y", "x", "x", "y"};  // by rank
  CHECK(first_disagreeing_rank(digests, {0, 2, 3}) == -1);
  CHECK(first_disagreeing_rank(digests, {0, 1, 4}) == 1);
  CHECK(first_disagreeing_rank(digests, {2, 3, 4}) == 4);
  CHECK(first_disagreeing_rank(digests, {1, 4}) == -1);
}

}  // namespace
}  // namespace pipeworks::hw
