// SVG Gantt chart: golden output for a small GPipe case, well-formed XML for every chart the
// tests draw, closed-form title numbers, units, escaping and label placement at K=64, M=256.
// PIPEWORKS_UPDATE_GOLDEN=1 rewrites the golden file instead of comparing.
#include "viz/svg_gantt.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <cstdio>
#include <map>
#include <regex>
#include <string_view>

#include "golden_file.h"
#include "gpipe_timeline.h"
#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/engine/simulator.h"
#include "xml_checker.h"

namespace pipeworks::viz {
namespace {

using testing::GpipeCosts;
using testing::make_gpipe_timeline;

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string well_formed_svg(const std::vector<const sched::Timeline*>& tls, const SvgOptions& o = {}) {
  const std::string svg = svg_gantt(tls, o);
  INFO(svg.substr(0, 2000));
  REQUIRE(testing::xml_error(svg).empty());
  // Self-contained: no scripts, no links, no external references.
  CHECK(svg.find("<script") == std::string::npos);
  CHECK(svg.find("href") == std::string::npos);
  CHECK(count_of(svg, "url(") == count_of(svg, "url(#"));  // fills from the file's own <defs> only
  CHECK(svg.find("http") == svg.find("http://www.w3.org/2000/svg"));
  return svg;
}

struct Label {
  double x, width;
  std::string text;
};

// Monospace action labels grouped by their row (y), each with its estimated extent.
std::map<std::string, std::vector<Label>> action_labels(const std::string& svg) {
  static const std::regex re(
      R"re(<text x="([0-9.]+)" y="([0-9.]+)" font-size="([0-9]+)" font-family="DejaVu Sans Mono[^>]*>([^<]*)</text>)re");
  std::map<std::string, std::vector<Label>> rows;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    const double font = std::stod(m[3]);
    rows[m[2]].push_back(Label{std::stod(m[1]), static_cast<double>(m[4].length()) * font * 0.6, m[4]});
  }
  return rows;
}

TEST_CASE("golden SVG for GPipe K=4, M=4", "[viz][svg]") {
  const auto tl = make_gpipe_timeline(4, 4, GpipeCosts{1'000'000, 2'000'000, 100'000, 1 << 20, 0});
  const std::string svg = well_formed_svg({&tl});
  const std::string path = std::string(PIPEWORKS_TEST_DATA_DIR) + "/golden/gpipe_k4_m4.svg";
  test::check_golden_file(svg, path);
}

TEST_CASE("title numbers match the GPipe closed forms", "[viz][svg]") {
  // Unit costs: makespan (M+K-1)(F+B) = 7 x 2 ms, bubble (K-1)/(M+K-1) = 3/7.
  const auto tl = make_gpipe_timeline(4, 4);
  const std::string svg = well_formed_svg({&tl});
  CHECK(svg.find("predicted — makespan 14 ms · bubble 42.9% · 4 devices × 4 micro-batches") != std::string::npos);
  CHECK(svg.find("<title>Pipeline schedule: predicted</title>") != std::string::npos);
  CHECK(svg.find("time (ms)") != std::string::npos);
  for (const std::string label : {">F0<", ">F3<", ">B0<", ">B3<", ">device 3<"}) CHECK(svg.find(label) != std::string::npos);
  // 2KM compute actions and the legend's M micro-batch cells, each with a tooltip; no transfers
  // were given, so no thin strips.
  std::size_t tooltips = 0;
  for (std::size_t at = svg.find("</title></rect>"); at != std::string::npos; at = svg.find("</title></rect>", at + 1)) ++tooltips;
  CHECK(tooltips == 32 + 4);
  CHECK(count_of(svg, "<title>micro-batch ") == 4);
  CHECK(svg.find("send (thin)") == std::string::npos);
}

TEST_CASE("the axis unit follows the time range", "[viz][svg]") {
  const auto us = make_gpipe_timeline(2, 4, GpipeCosts{1'000, 1'000, 0, 1, 0});
  CHECK(well_formed_svg({&us}).find("time (\xC2\xB5s)") != std::string::npos);
  const auto s = make_gpipe_timeline(2, 4, GpipeCosts{1'000'000'000, 2'000'000'000, 0, 1, 0});
  const std::string svg_s = well_formed_svg({&s});
  CHECK(svg_s.find("time (s)") != std::string::npos);
  CHECK(svg_s.find("makespan 15 s") != std::string::npos);
}

TEST_CASE("several timelines stack on one time scale, names are escaped", "[viz][svg]") {
  const auto predicted = make_gpipe_timeline(4, 8, GpipeCosts{1'000'000, 2'000'000, 100'000, 1, 0}, "predicted");
  const auto measured = make_gpipe_timeline(4, 8, GpipeCosts{1'100'000, 2'300'000, 150'000, 1, 5'000},
                                            "measured <\"run\" & 'co'>\n\x01 \xFF \xE2\x9C\x93");
  const std::string svg = well_formed_svg({&predicted, &measured});
  const auto p = svg.find("predicted — makespan");
  const auto m = svg.find("measured &lt;&quot;run&quot; &amp; &apos;co&apos;&gt;   \xEF\xBF\xBD \xE2\x9C\x93 — makespan");
  REQUIRE(p != std::string::npos);
  REQUIRE(m != std::string::npos);
  CHECK(p < m);
  CHECK(svg.find("<title>Pipeline schedule: predicted vs measured") != std::string::npos);
  CHECK(svg.find("send (thin)") != std::string::npos);
}

TEST_CASE("labels never overlap, from K=2 M=4 to K=64 M=256", "[viz][svg]") {
  for (const auto& [k, m] : std::vector<std::pair<int, int>>{{2, 4}, {4, 8}, {16, 64}, {64, 256}}) {
    const auto tl = make_gpipe_timeline(k, m, GpipeCosts{1'000'000, 2'000'000, 100'000, 1, 0});
    for (const int width : {400, 1200, 4000}) {
      SvgOptions o;
      o.width_px = width;
      const std::string svg = well_formed_svg({&tl}, o);
      std::size_t labels = 0;
      for (auto& [y, row] : action_labels(svg)) {
        std::sort(row.begin(), row.end(), [](const Label& a, const Label& b) { return a.x < b.x; });
        for (std::size_t i = 1; i < row.size(); ++i) {
          INFO("K=" << k << " M=" << m << " width " << width << " y " << y << ": " << row[i - 1].text << " / " << row[i].text);
          CHECK(row[i - 1].x + row[i - 1].width / 2 < row[i].x - row[i].width / 2);
        }
        labels += row.size();
      }
      if (k == 2 && width >= 1200) CHECK(labels == 2 * 2 * 4);  // every action labelled
    }
  }
}

TEST_CASE("virtual stages: rows name their stages, a device's later stages are hatched, the legend says so",
          "[viz][svg]") {
  // ZB-V, 8 stages on 4 devices: device d runs stages d and 7-d; 8 micro-batches, each stage
  // F, I and W once per micro-batch.
  auto schedule = sched::generate(sched::ScheduleKind::kZbV, sched::ScheduleShape{8, 8, {}});
  REQUIRE(schedule.ok());
  auto lowered = sched::lower_comm(*schedule);
  REQUIRE(lowered.ok());
  sim::CostModel costs = sim::uniform_cost_model(8, 1'000'000, 2'000'000);
  for (sim::StageCost& c : costs.stages) c.backward_input_ns = c.backward_weight_ns = 1'000'000;
  auto result = sim::simulate(*lowered, costs, sim::SimOptions{});
  REQUIRE(result.ok());
  result->timeline.name = "zb-v";
  const std::string svg = well_formed_svg({&result->timeline});
  CHECK(count_of(svg, "<defs>") == 1);
  for (const char* label : {">d0 s0,7<", ">d1 s1,6<", ">d2 s2,5<", ">d3 s3,4<"}) CHECK(count_of(svg, label) == 1);
  // One hatching over every action of stages 4..7 (each the 2nd stage of its device): 3 kinds x 8
  // micro-batches x 4 stages, and one in the legend.
  CHECK(count_of(svg, "fill=\"url(#stage-mark-1)\"") == 3 * 8 * 4 + 1);
  CHECK(count_of(svg, "url(#stage-mark-2)") == 0);
  CHECK(count_of(svg, ">device's 1st stage<") == 1);
  CHECK(count_of(svg, ">2nd stage<") == 1);
  CHECK(count_of(svg, ">I backward-input<") == 1);
  CHECK(count_of(svg, ">W backward-weight<") == 1);
}

TEST_CASE("looped BFS with 3 stages a device: three marks, one stage a device: none", "[viz][svg]") {
  auto schedule = sched::generate(sched::ScheduleKind::kLoopedBfs, sched::ScheduleShape{6, 4, {}}, 3);
  REQUIRE(schedule.ok());
  auto result = sim::simulate(*schedule, sim::uniform_cost_model(6, 1'000'000, 2'000'000), sim::SimOptions{});
  REQUIRE(result.ok());
  const std::string svg = well_formed_svg({&result->timeline});
  // Device 0 runs stages 0, 2, 4; device 1 runs 1, 3, 5 (stage s on device s mod 2).
  CHECK(count_of(svg, ">d0 s0,2,4<") == 1);
  CHECK(count_of(svg, ">d1 s1,3,5<") == 1);
  CHECK(count_of(svg, "fill=\"url(#stage-mark-1)\"") == 2 * 2 * 4 + 1);
  CHECK(count_of(svg, "fill=\"url(#stage-mark-2)\"") == 2 * 2 * 4 + 1);
  CHECK(count_of(svg, ">3rd stage<") == 1);
  const auto gpipe = make_gpipe_timeline(4, 4);
  const std::string plain = well_formed_svg({&gpipe});
  CHECK(count_of(plain, "<defs>") == 0);
  CHECK(count_of(plain, "stage-mark") == 0);
  CHECK(count_of(plain, ">device 3<") == 1);
}

TEST_CASE("empty and malformed timelines still draw well-formed SVG", "[viz][svg]") {
  well_formed_svg({});
  well_formed_svg({nullptr});
  sched::Timeline bad;
  bad.name = "bad";
  bad.num_devices = 2;
  bad.spans = {sched::Span{-1, sched::Lane::kCompute, sched::Action{0, sched::ActionKind::kForward, 0}, 0, 10},
               sched::Span{1, sched::Lane::kCompute, sched::Action{0, sched::ActionKind::kBackward, 9}, 5, 5},
               sched::Span{1, sched::Lane::kCompute, sched::Action{0, sched::ActionKind::kBackward, 1}, 8, 4},
               sched::Span{3, sched::Lane::kCompute, sched::Action{3, sched::ActionKind::kRecompute, -7}, 0, 3}};
  const std::string svg = well_formed_svg({&bad});
  CHECK(svg.find(">device 3<") != std::string::npos);
  SvgOptions tiny;
  tiny.width_px = -5;
  tiny.row_height_px = 100000;
  well_formed_svg({&bad}, tiny);
}

TEST_CASE("write_svg writes the chart and reports bad paths", "[viz][svg]") {
  const auto tl = make_gpipe_timeline(2, 2);
  const std::string path = std::string(PIPEWORKS_BINARY_DIR) + "/viz_svg_test.svg";
  REQUIRE(write_svg(path, {&tl}).ok());
  CHECK(test::read_text_file(path) == svg_gantt({&tl}));
  std::remove(path.c_str());
  CHECK_FALSE(write_svg("/nonexistent-dir/x/chart.svg", {&tl}).ok());
}

// Hidden: regenerates the pictures in docs/ (run with the tag [.render]).
TEST_CASE("render docs/gpipe_k4_m8.svg and a K=64 M=256 chart", "[.render]") {
  const std::string docs = std::string(PIPEWORKS_TEST_DATA_DIR) + "/../../docs";
  const auto small = make_gpipe_timeline(4, 8, GpipeCosts{1'000'000, 2'000'000, 100'000, 1 << 20, 0}, "GPipe K=4 M=8");
  SvgOptions o;
  o.width_px = 1400;
  REQUIRE(write_svg(docs + "/gpipe_k4_m8.svg", {&small}, o).ok());
  const auto big = make_gpipe_timeline(64, 256, GpipeCosts{1'000'000, 2'000'000, 100'000, 1 << 20, 0}, "GPipe K=64 M=256");
  REQUIRE(write_svg(std::string(PIPEWORKS_BINARY_DIR) + "/gpipe_k64_m256.svg", {&big}, o).ok());
  const auto measured = make_gpipe_timeline(4, 8, GpipeCosts{1'100'000, 2'300'000, 150'000, 1 << 20, 0}, "measured");
  const auto predicted = make_gpipe_timeline(4, 8, GpipeCosts{1'000'000, 2'000'000, 100'000, 1 << 20, 0}, "predicted");
  REQUIRE(write_svg(std::string(PIPEWORKS_BINARY_DIR) + "/gpipe_two.svg", {&predicted, &measured}, o).ok());
}


TEST_CASE("at K = 16, M = 128 rows name stages and layers, shades have a legend, transfers stay visible",
          "[viz][svg]") {
  // Transfers of 1 us against a 1.2 s makespan: 0.001 px wide at scale, drawn 1.5 px.
  const auto tl = make_gpipe_timeline(16, 128, GpipeCosts{1'000'000, 2'000'000, 1'000, 1, 0});
  SvgOptions o;
  o.title = "gpt on 16 GPUs: gpipe, K=16, M=128, batch 512, recompute off (predicted)";
  for (int s = 0; s < 16; ++s) o.stage_layers.push_back(fmt::format("[{},{})", 3 * s, 3 * s + 3));
  const std::string svg = well_formed_svg({&tl}, o);
  CHECK(svg.find(">gpt on 16 GPUs: gpipe, K=16, M=128, batch 512, recompute off (predicted)</text>") != std::string::npos);
  for (const std::string label : {">d0 s0 [0,3)<", ">d9 s9 [27,30)<", ">d15 s15 [45,48)<"}) {
    CHECK(svg.find(label) != std::string::npos);
  }
  // The legend reads a shade as a micro-batch: 12 cells from micro-batch 0 to 127.
  CHECK(count_of(svg, "<title>micro-batch ") == 12);
  CHECK(svg.find("<title>micro-batch 0</title>") != std::string::npos);
  CHECK(svg.find("<title>micro-batch 127</title>") != std::string::npos);
  CHECK(svg.find(">micro-batch 0</text>") != std::string::npos);
  CHECK(svg.find(">127</text>") != std::string::npos);
  // Every transfer strip is at least 1.5 px wide; there are 2 x 15 x 128 of them.
  std::size_t strips = 0;
  for (std::size_t at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) {
    const std::string_view title(svg.data() + at + 7, 6);
    if (title.find("SEND") == std::string_view::npos && title.find("RECV") == std::string_view::npos) continue;
    const std::size_t w = svg.rfind(R"( width=")", at);
    CHECK(std::stod(svg.substr(w + 8, 8)) >= 1.5);
    ++strips;
  }
  CHECK(strips == 2 * 2 * 15 * 128);
  // The label column is as wide as the longest label ("d15 s15 [45,48)", 15 characters at 11 px).
  CHECK(svg.find(R"(<text x="107" y=")") != std::string::npos);
}

}  // namespace
}  // namespace pipeworks::viz
