// Reading measured tables at any micro-batch size: the block-1 rule's neighbours and slope, the
// kernel-block rule's smooth curve plus remainder costs, and how a profile picks the block.
#include <catch2/catch.hpp>

#include "sim/spec/model_spec.h"
#include "sim/spec/size_table.h"

namespace pipeworks::sim {
namespace {

// A machine with a kernel block of 4: value = 100 * size + remainder cost, the cost 0 for
// multiples of 4, 70 for remainder 1, 40 for 2, 60 for 3 (per_sample 100 = the curve's slope).
//
//   size      1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16
//   measured  .   .   .   x   x   x   x   x   x   x   .   x   .   .   .   .
std::vector<SizePoint> blocked_table() {
  return {{4, 400}, {5, 570}, {6, 640}, {7, 760}, {8, 800}, {9, 970}, {10, 1040}, {12, 1200}};
}

TEST_CASE("a kernel block: the multiples' curve plus the mean remainder cost of the same remainder") {
  const ScaledDuration d{0, 100, blocked_table(), 4};
  // Exact at measured sizes.
  CHECK(d.at(5).value() == 570);
  CHECK(d.at(12).value() == 1200);
  // Off the table: curve (between multiples, or the slope beyond them) + remainder cost.
  const std::pair<int, Nanoseconds> expected[] = {
      {11, 1100 + 60},  // between 8 and 12, remainder 3 measured at 7 only
      {13, 1300 + 70},  // beyond 12 by the slope, remainder 1 measured at 5 and 9
      {14, 1400 + 40},  {15, 1500 + 60}, {16, 1600},
      {1, 100 + 70},    // below the first multiple: the slope, then the remainder cost
      {2, 200 + 40},    {3, 300 + 60}};
  for (const auto& [size, ns] : expected) CHECK(d.at(size).value() == ns);
  // The block-1 rule reads the same table between neighbours: 11 sits between 10 and 12.
  CHECK(ScaledDuration(0, 100, blocked_table()).at(11).value() == 1120);
}

TEST_CASE("a kernel block falls back to the block-1 rule where the table cannot apply it") {
  // No multiple of 4 measured.
  CHECK(scaled_value(0, 10, {{1, 10}, {3, 50}}, 2, 4).value() == 30);
  // No measured size with the remainder: 6 reads between 4 and 8.
  CHECK(scaled_value(0, 10, {{4, 400}, {8, 800}}, 6, 4).value() == 600);
  // Sizes below the first multiple do not count: 3 (remainder 3) is below 4.
  CHECK(scaled_value(0, 10, {{3, 1000}, {4, 400}, {8, 800}}, 7, 4).value() == 700);
  // Never below 0.
  CHECK(scaled_value(0, 0, {{4, 100}, {5, 0}, {8, 100}}, 9, 4).value() == 0);
  CHECK_FALSE(scaled_value(0, 10, {{4, 400}}, 5, 0).ok());
  CHECK_FALSE(scaled_value(0, 10, {{4, 400}}, 5, kMaxSizeBlock + 1).ok());
}

TEST_CASE("leave-one-out error: each inner size predicted from the others") {
  // Block 1, size 2 from 1 and 4: 10 + (40 - 10) / 3 = 20, measured 26.
  CHECK(leave_one_out_error({{1, 10}, {2, 26}, {4, 40}}, 10, 1).value() == Approx(6.0 / 26.0));
  CHECK(leave_one_out_error({{1, 10}, {4, 40}}, 10, 1).value() == 0.0);
}

TEST_CASE("a profile picks the block its sizes support, and 1 for a smooth curve") {
  const int remainder_cost[] = {0, 70, 40, 60};
  std::vector<SizePoint> blocked;
  std::vector<SizePoint> smooth;
  for (int size : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16}) {
    blocked.push_back({size, 100 * size + remainder_cost[size % 4]});
    smooth.push_back({size, 100 * size + 5});
  }
  CHECK(leave_one_out_error(blocked, 100, 4).value() == 0.0);
  CHECK(leave_one_out_error(blocked, 100, 1).value() > 0.02);
  CHECK(pick_size_block(blocked, 100) == 4);
  CHECK(pick_size_block(smooth, 100) == 1);
  // The old profile sizes hold no remainder beyond the first multiple: nothing to tell a block by.
  CHECK(pick_size_block({{1, 170}, {2, 240}, {4, 400}, {8, 800}, {16, 1600}, {32, 3200}}, 100) == 1);
}

TEST_CASE("sums and splits carry the block") {
  CHECK(combined_size_block(4, 2) == 4);
  CHECK(combined_size_block(2, 4) == 4);
  CHECK(combined_size_block(4, 1) == 4);
  CHECK(combined_size_block(4, 3) == 1);
  const ScaledDuration blocked{0, 100, blocked_table(), 4};
  CHECK((blocked + ScaledDuration{0, 1}).size_block == 4);
  LayerSpec layer;
  layer.set_backward(blocked);
  CHECK(layer.backward_input.size_block == 4);
  CHECK(layer.backward_weight.size_block == 4);
  CHECK(layer.backward().at(11).value() == 1160);
}

TEST_CASE("size_block in JSON: written beside the table, read back, refused where it means nothing") {
  constexpr const char* kSpec = R"({"name": "k", "layers": [{"name": "fc", "backward": "1us",
    "forward": {"per_sample": "100ns", "size_block": 4,
                "measured": {"4": "400ns", "5": "570ns", "8": "800ns", "9": "970ns"}}}]})";
  auto spec = parse_model_spec(kSpec, "k.json");
  REQUIRE(spec.ok());
  CHECK(spec->layers[0].forward.size_block == 4);
  CHECK(spec->layers[0].forward.at(13).value() == 1370);
  auto again = parse_model_spec(model_spec_to_json(*spec), "again.json");
  REQUIRE(again.ok());
  CHECK(*again == *spec);

  const std::pair<const char*, const char*> bad[] = {
      {R"({"name": "k", "layers": [{"name": "a", "backward": "1us", "forward": {"size_block": 0, "measured": {"1": "1us"}}}]})",
       "/layers/0/forward/size_block: 0: must be at least 1"},
      {R"({"name": "k", "layers": [{"name": "a", "backward": "1us", "forward": {"size_block": 4096, "measured": {"1": "1us"}}}]})",
       "/layers/0/forward/size_block: 4096: must be at most 1024"},
      {R"({"name": "k", "layers": [{"name": "a", "backward": "1us", "forward": {"size_block": 4, "per_sample": "1us"}}]})",
       "/layers/0/forward/size_block: 4: needs a 'measured' table"},
      {R"({"name": "k", "layers": [{"name": "a", "backward": "1us", "forward": "1us",
          "output_bytes": {"size_block": 4, "measured": {"1": "1KiB"}}}]})",
       "/layers/0/output_bytes/size_block"}};
  for (const auto& [text, message] : bad) {
    auto refused = parse_model_spec(text, "bad.json");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains(message));
  }
  ModelSpec unread = *spec;
  unread.layers[0].forward.size_block = 0;
  CHECK_THAT(check_model_spec(unread).error().message, Catch::Contains("forward: size_block must be from 1 to 1024"));
  unread.layers[0].forward = ScaledDuration{0, 100, {}, 4};
  CHECK_THAT(check_model_spec(unread).error().message, Catch::Contains("size_block needs a measured table"));
}

}  // namespace
}  // namespace pipeworks::sim
