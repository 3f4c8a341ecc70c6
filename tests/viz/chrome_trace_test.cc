// Chrome trace output: layout, exact times, repairs of bad producer spans, escaping, files.
// Every generated trace goes through the rule checker in trace_checker.h.
#include "viz/chrome_trace.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "gpipe_timeline.h"
#include "trace_checker.h"

namespace pipeworks::viz {
namespace {

using nlohmann::json;
using sched::Action;
using sched::ActionKind;
using sched::Lane;
using sched::Span;
using testing::GpipeCosts;
using testing::TraceCheck;
using testing::make_gpipe_timeline;

TraceCheck checked(const std::vector<const sched::Timeline*>& tls, ChromeTraceCounts* counts = nullptr) {
  TraceCheck r = testing::check_chrome_trace(chrome_trace_json(tls, counts));
  INFO(r.report());
  REQUIRE(r.ok());
  return r;
}

std::vector<json> events_with(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

const json* find_slice(const json& trace, const std::string& name, long long pid) {
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == name && e["pid"] == pid) return &e;
  }
  return nullptr;
}

TEST_CASE("gpipe K=4 M=4 trace has one process per device, slices, flows and counters", "[viz][chrome]") {
  const GpipeCosts costs{1'000'000, 2'000'000, 100'000, 4096, 0};
  const auto tl = make_gpipe_timeline(4, 4, costs);
  ChromeTraceCounts counts;
  const TraceCheck r = checked({&tl}, &counts);
  CHECK(testing::process_names_in_order(r.trace) ==
        std::vector<std::string>{"predicted / device 0", "predicted / device 1", "predicted / device 2",
                                 "predicted / device 3"});
  // 2KM compute spans + 2 lanes x 2 directions x (K-1)M transfers.
  CHECK(events_with(r.trace, "X").size() == 32 + 48);
  CHECK(events_with(r.trace, "s").size() == 24);
  CHECK(events_with(r.trace, "f").size() == 24);
  CHECK(events_with(r.trace, "C").size() == 4 * 9);  // 1 + 2M samples per device
  CHECK(counts.clipped_spans == 0);
  CHECK(counts.dropped_spans == 0);
  CHECK(counts.dropped_flows == 0);
  // 4 processes x (2 process + 3 lanes x 2 thread metadata) + the events above.
  CHECK(counts.events == 4 * 8 + 80 + 48 + 36);

  // F(1,2) starts at 1(F+C) + 2F = 3.1 ms; B(0,3) at t0 + 3(B+C) + 3B = 7.3 + 6.3 + 6 ms.
  const json* f12 = find_slice(r.trace, "1F2", 2);
  REQUIRE(f12 != nullptr);
  CHECK((*f12)["ts"].get<double>() == 3100.0);
  CHECK((*f12)["dur"].get<double>() == 1000.0);
  CHECK((*f12)["cat"] == "compute");
  CHECK((*f12)["args"] == json{{"stage", 1}, {"microbatch", 2}, {"kind", "F"}});
  const json* b03 = find_slice(r.trace, "0B3", 1);
  REQUIRE(b03 != nullptr);
  CHECK((*b03)["ts"].get<double>() == 19600.0);
  CHECK((*b03)["dur"].get<double>() == 2000.0);
  const auto stats = sched::compute_stats(tl);
  CHECK(stats.makespan_ns == 3 * (1'000'000 + 2'000'000 + 200'000) + 4 * 3'000'000);

  // Flow ends sit in the middle of 0.1 ms transfers: SEND_F of 0F0 is [1, 1.1] ms.
  const auto s_events = events_with(r.trace, "s");
  CHECK(s_events[0]["ts"].get<double>() == 1050.0);
  CHECK(s_events[0]["name"] == "activation");
  CHECK(s_events[0]["cat"] == "transfer");
  // Counters carry one key.
  for (const auto& c : events_with(r.trace, "C")) CHECK(c["args"].size() == 1);
}

TEST_CASE("two timelines are separate groups in the same device order, each rebased to 0", "[viz][chrome]") {
  const auto predicted = make_gpipe_timeline(3, 4, GpipeCosts{1'000'000, 1'000'000, 50'000, 1024, 0}, "predicted");
  const auto measured =
      make_gpipe_timeline(3, 4, GpipeCosts{1'000'321, 1'100'007, 61'003, 1024, 987'654'321}, "measured");
  const TraceCheck r = checked({&predicted, &measured});
  CHECK(testing::process_names_in_order(r.trace) ==
        std::vector<std::string>{"predicted / device 0", "predicted / device 1", "predicted / device 2",
                                 "measured / device 0", "measured / device 1", "measured / device 2"});
  // measured 1F1 starts 1(F+C) + F after its own first span: 1061.324 + 1000.321 us.
  const json* f11 = find_slice(r.trace, "1F1", 5);
  REQUIRE(f11 != nullptr);
  CHECK(f11->at("ts").get<double>() == Approx(2061.645).epsilon(1e-12));
  CHECK(f11->at("dur").get<double>() == Approx(1000.321).epsilon(1e-12));
  std::set<long long> ids;
  for (const auto& s : events_with(r.trace, "s")) ids.insert(s["id"].get<long long>());
  CHECK(ids.size() == 2 * 2 * 2 * 4);
}

TEST_CASE("adversarial timeline names are escaped and still valid", "[viz][chrome]") {
  const std::string name = "q\"uote \\back\nnew\ttab \x01 </script> \xE6\xB5\x8B\xE9\x87\x8F \xE2\x9C\x93";
  auto tl = make_gpipe_timeline(2, 2, GpipeCosts{1000, 1000, 10, 1, 0}, name);
  const TraceCheck r = checked({&tl});
  CHECK(testing::process_names_in_order(r.trace)[0] == name + " / device 0");

  tl.name = "bad utf8 \xFF\xFE end";
  const TraceCheck bad = checked({&tl});
  CHECK(testing::process_names_in_order(bad.trace)[1] == "bad utf8 \xEF\xBF\xBD\xEF\xBF\xBD end / device 1");
}

TEST_CASE("touching, overlapping and empty spans on one lane are clipped or dropped", "[viz][chrome]") {
  // Given on device 0 compute:   drawn as:
  //   a [0,10)                   [0,10)
  //   b [5,15)                   [10,15)  clipped
  //   c [6,8)                    dropped  (covered by a)
  //   d [15,20)                  [15,20)  touching is fine
  //   e [20,20) f [30,25)        dropped  (no duration)
  //   g [40,50) h [40,45)        h [40,45), g clipped to [45,50)
  sched::Timeline tl;
  tl.name = "bad producer";
  tl.num_devices = 2;
  auto span = [](int dev, Lane lane, ActionKind k, int mb, long long a, long long b) {
    return Span{dev, lane, Action{0, k, mb}, a, b};
  };
  tl.spans = {span(0, Lane::kCompute, ActionKind::kForward, 0, 0, 10),   span(0, Lane::kCompute, ActionKind::kForward, 1, 5, 15),
              span(0, Lane::kCompute, ActionKind::kForward, 2, 6, 8),    span(0, Lane::kCompute, ActionKind::kForward, 3, 15, 20),
              span(0, Lane::kCompute, ActionKind::kForward, 4, 20, 20),  span(0, Lane::kCompute, ActionKind::kForward, 5, 30, 25),
              span(0, Lane::kCompute, ActionKind::kBackward, 6, 40, 50), span(0, Lane::kCompute, ActionKind::kBackward, 7, 40, 45),
              span(0, Lane::kSend, ActionKind::kSendF, 0, 10, 11),       span(1, Lane::kRecv, ActionKind::kRecvF, 0, 10, 11),
              span(1, Lane::kRecv, ActionKind::kRecvF, 1, 100, 200),     span(0, Lane::kSend, ActionKind::kSendF, 1, 180, 190)};
  tl.flows = {{8, 9}, {11, 10}, {2, 9}, {8, 99}, {9, 8}};
  ChromeTraceCounts counts;
  const TraceCheck r = checked({&tl}, &counts);
  CHECK(counts.clipped_spans == 2);
  CHECK(counts.dropped_spans == 3);
  // {2,9}: span 2 was dropped; {8,99}: index out of range. {9,8} names the spans the wrong way
  // round, but both are drawn and both middles are 10.5 ns, so it is drawn.
  CHECK(counts.dropped_flows == 2);
  std::vector<std::pair<double, double>> compute;
  for (const auto& e : events_with(r.trace, "X")) {
    if (e["cat"] == "compute") compute.emplace_back(e["ts"].get<double>(), e["dur"].get<double>());
  }
  const std::vector<std::pair<double, double>> expected = {{0, 0.01}, {0.01, 0.005}, {0.015, 0.005}, {0.04, 0.005}, {0.045, 0.005}};
  CHECK(compute == expected);
  // Flow {11,10}: the receive [100,200) is posted before the send [180,190); the middles would
  // point backwards, so the ends move to 180.5 ns and 199.5 ns.
  const auto s_events = events_with(r.trace, "s");
  const auto f_events = events_with(r.trace, "f");
  REQUIRE(s_events.size() == 3);
  CHECK(s_events[0]["ts"].get<double>() == 0.0105);
  CHECK(s_events[1]["ts"].get<double>() == 0.1805);
  CHECK(f_events[1]["ts"].get<double>() == 0.1995);
}

TEST_CASE("memory samples before the first span collapse to ts 0, odd devices get processes", "[viz][chrome]") {
  sched::Timeline tl;
  tl.name = "mem";
  tl.num_devices = 1;
  tl.spans = {Span{0, Lane::kCompute, Action{0, ActionKind::kForward, 0}, 100, 200},
              Span{-3, Lane::kCompute, Action{1, ActionKind::kForward, 0}, 150, 250},
              Span{7, Lane::kCompute, Action{2, ActionKind::kRecompute, 0}, 150, 151}};
  tl.memory = {{0, 10, 1}, {0, 50, 2}, {0, 150, 3}, {7, 100, 4}, {7, 90, 5}};
  const TraceCheck r = checked({&tl});
  CHECK(testing::process_names_in_order(r.trace) ==
        std::vector<std::string>{"mem / device -3", "mem / device 0", "mem / device 7"});
  std::vector<std::pair<double, long long>> mem;
  for (const auto& c : events_with(r.trace, "C")) mem.emplace_back(c["ts"].get<double>(), c["args"]["bytes"].get<long long>());
  const std::vector<std::pair<double, long long>> expected = {{0, 2}, {0.05, 3}, {0, 4}};
  CHECK(mem == expected);
}

TEST_CASE("empty input, null timelines and ns-precision times", "[viz][chrome]") {
  const TraceCheck empty = checked({});
  CHECK(empty.trace["traceEvents"].empty());
  sched::Timeline none;
  const TraceCheck nulls = checked({nullptr, &none});
  CHECK(nulls.trace["traceEvents"].empty());

  sched::Timeline tl;
  tl.name = "tiny";
  tl.num_devices = 1;
  tl.spans = {Span{0, Lane::kCompute, Action{0, ActionKind::kForward, 0}, 1'000'000'000'001, 1'000'000'000'002},
              Span{0, Lane::kCompute, Action{0, ActionKind::kForward, 1}, 1'000'000'123'457, 1'000'000'124'000}};
  const TraceCheck r = checked({&tl});
  const auto x = events_with(r.trace, "X");
  CHECK(x[0]["ts"].get<double>() == 0.0);
  CHECK(x[0]["dur"].get<double>() == 0.001);
  CHECK(x[1]["ts"].get<double>() == 123.456);
  CHECK(x[1]["dur"].get<double>() == 0.543);
}

TEST_CASE("write_chrome_trace streams the same text to a file and reports bad paths", "[viz][chrome]") {
  const auto tl = make_gpipe_timeline(4, 8, GpipeCosts{1'000'000, 2'000'000, 100'000, 1, 0});
  const std::string path = std::string(PIPEWORKS_BINARY_DIR) + "/viz_chrome_trace_test.json";
  REQUIRE(write_chrome_trace(path, {&tl}).ok());
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == chrome_trace_json({&tl}));
  std::remove(path.c_str());

  const auto bad = write_chrome_trace("/nonexistent-dir/x/trace.json", {&tl});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("/nonexistent-dir/x/trace.json") != std::string::npos);
}

}  // namespace
}  // namespace pipeworks::viz

namespace pipeworks::viz {
namespace {

TEST_CASE("the trace checker rejects traces that break the rules", "[viz][chrome]") {
  const std::string meta =
      R"({"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"t / device 0"}},)"
      R"({"ph":"M","name":"process_sort_index","pid":1,"tid":0,"args":{"sort_index":1}},)"
      R"({"ph":"M","name":"thread_name","pid":1,"tid":3,"args":{"name":"compute"}},)"
      R"({"ph":"M","name":"thread_sort_index","pid":1,"tid":3,"args":{"sort_index":0}},)";
  const std::string args = R"("args":{"stage":0,"microbatch":0,"kind":"F"})";
  auto trace = [&](const std::string& events) {
    return R"({"traceEvents":[)" + meta + events + R"(],"displayTimeUnit":"ns"})";
  };
  auto x = [&](const std::string& ts, const std::string& dur, int tid = 3) {
    return R"({"ph":"X","name":"0F0","cat":"compute","pid":1,"tid":)" + std::to_string(tid) + R"(,"ts":)" + ts +
           R"(,"dur":)" + dur + "," + args + "}";
  };
  CHECK(testing::check_chrome_trace(trace(x("0", "1") + "," + x("1", "1"))).ok());
  CHECK_FALSE(testing::check_chrome_trace(trace(x("0", "2") + "," + x("1", "1"))).ok());    // overlap
  CHECK_FALSE(testing::check_chrome_trace(trace(x("0", "2") + "," + x("0", "1"))).ok());    // shared start
  CHECK_FALSE(testing::check_chrome_trace(trace(x("1", "1"))).ok());                        // not rebased
  CHECK_FALSE(testing::check_chrome_trace(trace(x("\"0\"", "1"))).ok());                    // string ts
  CHECK_FALSE(testing::check_chrome_trace(trace(x("0", "1", 4))).ok());                     // unnamed thread
  CHECK_FALSE(testing::check_chrome_trace(trace(x("0", "1") + R"(,{"ph":"C","name":"memory","pid":1,"tid":3,"ts":0,"args":{"a":1,"b":2}})")).ok());
  const std::string s = R"({"ph":"s","name":"a","cat":"t","id":1,"pid":1,"tid":3,"ts":)";
  const std::string f = R"({"ph":"f","name":"a","cat":"t","id":1,"pid":1,"tid":3,"bp":"e","ts":)";
  CHECK(testing::check_chrome_trace(trace(x("0", "2") + "," + s + "0.5}," + f + "1.5}")).ok());
  CHECK_FALSE(testing::check_chrome_trace(trace(x("0", "2") + "," + s + "0}," + f + "1.5}")).ok());   // on the edge
  CHECK_FALSE(testing::check_chrome_trace(trace(x("0", "2") + "," + s + "1.5}," + f + "0.5}")).ok()); // f before s
  CHECK_FALSE(testing::check_chrome_trace(trace(x("0", "2") + "," + s + "0.5}")).ok());               // no f
  CHECK_FALSE(testing::check_chrome_trace("{\"traceEvents\":[").ok());
}

}  // namespace
}  // namespace pipeworks::viz
