// The configuration summary ranks compare at the rendezvous: equal configurations agree, and
// the first differing field is named with both values.
#include <catch2/catch.hpp>

#include "hw/dist/run_agreement.h"

namespace pipeworks::hw {
namespace {

TEST_CASE("run agreement: the first differing field is named with both values") {
  RunConfig a;
  DistributedOptions options;
  RunConfig b = a;
  CHECK_FALSE(first_difference(run_config_summary(a, options), run_config_summary(b, options), 1).has_value());
  b.num_microbatches = 2;
  a.num_microbatches = 4;
  b.model.width = 8;
  const auto difference = first_difference(run_config_summary(a, options), run_config_summary(b, options), 1);
  REQUIRE(difference.has_value());
  CHECK(*difference == "--width is 256 here but 8 on rank 1");
  b.model.width = a.model.width;
  CHECK(first_difference(run_config_summary(a, options), run_config_summary(b, options), 0) ==
        "-M (--microbatches) is 4 here but 2 on rank 0");
  CHECK(first_difference("--model=mlp\n", "--model=mlp\n--extra=1\n", 2) == "rank 2 runs another version of pipeworks");
}

}  // namespace
}  // namespace pipeworks::hw
