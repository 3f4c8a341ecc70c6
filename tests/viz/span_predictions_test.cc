// A measured span beside its prediction: the matching, the trace's args and the SVG's colours.
#include "viz/span_predictions.h"

#include <catch2/catch.hpp>

#include <string>

#include "gpipe_timeline.h"
#include "viz/chrome_trace.h"
#include "viz/kind_colors.h"
#include "viz/svg_gantt.h"

namespace pipeworks::viz {
namespace {

using testing::GpipeCosts;
using testing::make_gpipe_timeline;

// Predicted F = 1 ms, B = 2 ms; measured F = 1.25 ms, B = 1.6 ms: F predicted 20% low, B 25% high.
const sched::Timeline kPredicted = make_gpipe_timeline(2, 2, GpipeCosts{1'000'000, 2'000'000, 0, 1, 0}, "predicted");
const sched::Timeline kMeasured = make_gpipe_timeline(2, 2, GpipeCosts{1'250'000, 1'600'000, 0, 1, 0}, "measured");

TEST_CASE("each measured span gets the prediction of the same action and the relative error", "[viz]") {
  const SpanPredictions p = span_predictions(kPredicted, kMeasured);
  REQUIRE(p.size() == kMeasured.spans.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    REQUIRE(p[i].has_value());
    const bool forward = kMeasured.spans[i].action.kind == sched::ActionKind::kForward;
    CHECK(p[i]->predicted_ns == (forward ? 1'000'000 : 2'000'000));
    CHECK(p[i]->error == Approx(forward ? -0.2 : 0.25));
  }
  sched::Timeline fewer = kPredicted;
  fewer.spans.pop_back();
  const SpanPredictions partial = span_predictions(fewer, kMeasured);
  CHECK(std::count(partial.begin(), partial.end(), std::nullopt) == 1);
}

TEST_CASE("the trace's measured spans carry predicted_us and error_pct", "[viz]") {
  const std::vector<const sched::Timeline*> both{&kPredicted, &kMeasured};
  const std::string trace = chrome_trace_json(both, nullptr, {{}, span_predictions(kPredicted, kMeasured)});
  CHECK(trace.find(R"("kind":"F","predicted_us":1000,"error_pct":-20.0})") != std::string::npos);
  CHECK(trace.find(R"("kind":"B","predicted_us":2000,"error_pct":25.0})") != std::string::npos);
  // 8 measured spans annotated, the predicted timeline's 8 left as they were.
  std::size_t annotated = 0;
  for (auto at = trace.find("predicted_us"); at != std::string::npos; at = trace.find("predicted_us", at + 1)) ++annotated;
  CHECK(annotated == 8);
  CHECK(chrome_trace_json(both) == chrome_trace_json(both, nullptr, {}));
}

TEST_CASE("the SVG colours measured spans by their error and shows the scale", "[viz][svg]") {
  SvgOptions o;
  o.predictions = {{}, span_predictions(kPredicted, kMeasured)};
  const std::string svg = svg_gantt({&kPredicted, &kMeasured}, o);
  INFO(svg);
  CHECK(svg.find(R"(fill=")" + error_color(-0.2).fill + R"("><title>0F0: measured 1.25 ms, predicted 1 ms (-20.0%)</title>)") !=
        std::string::npos);
  CHECK(svg.find(R"(fill=")" + error_color(0.25).fill + R"("><title>1B1: measured 1.6 ms, predicted 2 ms (+25.0%)</title>)") !=
        std::string::npos);
  // The predicted panel keeps its kind colours.
  CHECK(svg.find(R"(fill=")" + kind_color(sched::ActionKind::kForward, 0, 2).fill + R"("><title>0F0</title>)") !=
        std::string::npos);
  CHECK(svg.find(">measured, predicted low -50%</text>") != std::string::npos);
  CHECK(svg.find(">+50% predicted high</text>") != std::string::npos);
  CHECK(error_color(-0.2).fill != error_color(0.2).fill);
  CHECK(error_color(-0.5).fill == error_color(-3.0).fill);  // saturates at -50%
  CHECK(svg_gantt({&kPredicted, &kMeasured}).find("predicted low") == std::string::npos);
}

}  // namespace
}  // namespace pipeworks::viz
