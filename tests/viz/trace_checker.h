// Checks a Chrome trace produced by viz against every rule chrome://tracing and Perfetto need
// (see viz/chrome_trace.h); tests run it on every trace they generate.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace pipeworks::viz::testing {

// Times compared as integer half-nanoseconds: the writer prints microseconds with at most
// four decimals, so llround(ts_us * 2000) is exact and sums need no tolerance.
inline long long half_ns(const nlohmann::json& us) { return std::llround(us.get<double>() * 2000.0); }

struct TraceCheck {
  std::vector<std::string> errors;
  nlohmann::json trace;
  bool ok() const { return errors.empty(); }
  std::string report() const {
    std::string all;
    for (const auto& e : errors) all += e + "\n";
    return all;
  }
};

inline TraceCheck check_chrome_trace(const std::string& text) {
  using nlohmann::json;
  TraceCheck r;
  auto fail = [&r](std::string e) {
    if (r.errors.size() < 50) r.errors.push_back(std::move(e));
  };
  r.trace = json::parse(text, nullptr, false);
  if (r.trace.is_discarded()) return TraceCheck{{"not valid JSON"}, {}};
  const json& t = r.trace;
  if (!t.is_object() || !t.contains("traceEvents") || !t["traceEvents"].is_array()) {
    fail("not the object form with a traceEvents array");
    return r;
  }
  if (t.value("displayTimeUnit", "") != "ns") fail("displayTimeUnit is not \"ns\"");

  struct Slice { long long start, end; };
  using Thread = std::pair<long long, long long>;
  std::map<long long, int> process_names, process_sorts;
  std::map<long long, std::string> process_label;
  std::map<Thread, int> thread_names, thread_sorts;
  std::map<Thread, std::vector<Slice>> slices;
  std::set<Thread> used;
  struct FlowEnd { Thread thread; long long at; std::string cat, name; bool bp_e; };
  std::map<long long, std::vector<FlowEnd>> starts, finishes;
  long long min_ts = -1;

  const json& events = t["traceEvents"];
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    const std::string where = "event " + std::to_string(i) + ": ";
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) { fail(where + "no ph"); continue; }
    const std::string ph = e["ph"];
    if (!e.contains("pid") || !e["pid"].is_number_integer() || !e.contains("tid") || !e["tid"].is_number_integer()) {
      fail(where + "pid/tid missing or not integers");
      continue;
    }
    if (!e.contains("name") || !e["name"].is_string()) fail(where + "name missing or not a string");
    const Thread th{e["pid"].get<long long>(), e["tid"].get<long long>()};
    if (ph == "M") {
      const std::string name = e.value("name", "");
      const json& args = e.value("args", json::object());
      if (name == "process_name" && args.contains("name") && args["name"].is_string()) {
        ++process_names[th.first];
        process_label[th.first] = args["name"];
      } else if (name == "process_sort_index" && args.contains("sort_index") && args["sort_index"].is_number_integer()) {
        ++process_sorts[th.first];
      } else if (name == "thread_name" && args.contains("name") && args["name"].is_string()) {
        ++thread_names[th];
      } else if (name == "thread_sort_index" && args.contains("sort_index") && args["sort_index"].is_number_integer()) {
        ++thread_sorts[th];
      } else {
        fail(where + "unexpected or malformed metadata");
      }
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number()) { fail(where + "ts missing or not a number"); continue; }
    const long long ts = half_ns(e["ts"]);
    if (ts < 0) fail(where + "negative ts");
    min_ts = min_ts < 0 ? ts : std::min(min_ts, ts);
    used.insert(th);
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number()) { fail(where + "dur missing or not a number"); continue; }
      const long long dur = half_ns(e["dur"]);
      if (dur <= 0) fail(where + "non-positive dur");
      slices[th].push_back(Slice{ts, ts + dur});
      const json& args = e.value("args", json::object());
      if (!args.contains("stage") || !args["stage"].is_number_integer() || !args.contains("microbatch") ||
          !args["microbatch"].is_number_integer() || !args.contains("kind") || !args["kind"].is_string()) {
        fail(where + "args lack integer stage/microbatch or string kind");
      }
      if (!e.contains("cat") || !e["cat"].is_string()) fail(where + "X without cat");
    } else if (ph == "s" || ph == "f") {
      if (!e.contains("id") || !e["id"].is_number_integer()) { fail(where + "flow id missing or not an integer"); continue; }
      if (!e.contains("cat") || !e["cat"].is_string()) { fail(where + "flow without cat"); continue; }
      FlowEnd fe{th, ts, e["cat"], e.value("name", ""), e.value("bp", "") == "e"};
      (ph == "s" ? starts : finishes)[e["id"].get<long long>()].push_back(fe);
    } else if (ph == "C") {
      const json& args = e.value("args", json::object());
      if (!args.is_object() || args.size() != 1 || !args.begin()->is_number()) fail(where + "counter needs exactly one numeric key");
    } else {
      fail(where + "unexpected ph " + ph);
    }
  }
  if (min_ts > 0) fail("events are not rebased to ts 0");
  // Each timeline (the process name before " / device ") is rebased on its own.
  std::map<std::string, long long> group_min;
  for (const auto& [th, list] : slices) {
    std::string label = process_label[th.first];
    label = label.substr(0, label.rfind(" / device "));
    for (const Slice& s : list) {
      const auto it = group_min.find(label);
      group_min[label] = it == group_min.end() ? s.start : std::min(it->second, s.start);
    }
  }
  for (const auto& [label, m] : group_min) {
    if (m != 0) fail("timeline " + label + " does not start at ts 0");
  }

  for (const auto& [pid, n] : process_names) {
    if (n != 1) fail("pid " + std::to_string(pid) + " named more than once");
  }
  for (const Thread& th : used) {
    const std::string id = std::to_string(th.first) + "/" + std::to_string(th.second);
    if (!process_names.count(th.first) || !process_sorts.count(th.first)) fail("no process metadata for pid " + id);
    if (!thread_names.count(th) || !thread_sorts.count(th)) fail("no thread metadata for " + id);
  }
  for (auto& [th, list] : slices) {
    std::sort(list.begin(), list.end(), [](const Slice& a, const Slice& b) { return a.start < b.start; });
    for (std::size_t i = 1; i < list.size(); ++i) {
      if (list[i].start == list[i - 1].start) fail("two slices share a start on one thread");
      if (list[i].start < list[i - 1].end) fail("slices overlap on one thread");
    }
  }
  auto inside = [&](const Thread& th, long long at) {
    const auto it = slices.find(th);
    if (it == slices.end()) return false;
    for (const Slice& s : it->second) {
      if (s.start < at && at < s.end) return true;
    }
    return false;
  };
  for (const auto& [id, list] : starts) {
    const auto f = finishes.find(id);
    if (list.size() != 1 || f == finishes.end() || f->second.size() != 1) {
      fail("flow id " + std::to_string(id) + " is not exactly one s and one f");
      continue;
    }
    const FlowEnd& s = list[0];
    const FlowEnd& e = f->second[0];
    if (s.at > e.at) fail("flow " + std::to_string(id) + " finishes before it starts");
    if (s.cat != e.cat || s.name != e.name || s.name.empty()) fail("flow " + std::to_string(id) + " cat/name mismatch");
    if (!e.bp_e) fail("flow " + std::to_string(id) + " f without bp e");
    if (!inside(s.thread, s.at) || !inside(e.thread, e.at)) fail("flow " + std::to_string(id) + " end not strictly inside a slice");
  }
  for (const auto& [id, list] : finishes) {
    if (!starts.count(id)) fail("flow id " + std::to_string(id) + " has f without s");
  }
  return r;
}

// Process names in sort order ("<timeline> / device <d>"), for layout assertions.
inline std::vector<std::string> process_names_in_order(const nlohmann::json& trace) {
  std::map<long long, std::string> names;
  std::map<long long, long long> sort;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") names[e["pid"].get<long long>()] = e["args"]["name"];
    if (e["name"] == "process_sort_index") sort[e["pid"].get<long long>()] = e["args"]["sort_index"];
  }
  std::vector<std::pair<long long, std::string>> order;
  for (const auto& [pid, name] : names) order.emplace_back(sort[pid], name);
  std::sort(order.begin(), order.end());
  std::vector<std::string> out;
  for (auto& [key, name] : order) out.push_back(name);
  return out;
}

}  // namespace pipeworks::viz::testing
