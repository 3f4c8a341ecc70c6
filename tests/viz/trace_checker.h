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

// The rules, one group per method, over what the events say.
class TraceRules {
 public:
  using json = nlohmann::json;

  explicit TraceRules(TraceCheck& r) : r_(r) {}

  void fail(std::string e) {
    if (r_.errors.size() < 50) r_.errors.push_back(std::move(e));
  }

  void read_events(const json& events) {
    for (std::size_t i = 0; i < events.size(); ++i) read_event(events[i], "event " + std::to_string(i) + ": ");
  }

  // Every timeline (the process name before " / device ") is rebased to ts 0 on its own.
  void check_rebased() {
    if (min_ts_ > 0) fail("events are not rebased to ts 0");
    std::map<std::string, long long> group_min;
    for (const auto& [th, list] : slices_) {
      std::string label = process_label_[th.first];
      label = label.substr(0, label.rfind(" / device "));
      for (const Slice& s : list) {
        const auto it = group_min.find(label);
        group_min[label] = it == group_min.end() ? s.start : std::min(it->second, s.start);
      }
    }
    for (const auto& [label, m] : group_min) {
      if (m != 0) fail("timeline " + label + " does not start at ts 0");
    }
  }

  // One name per process; every thread in use has its process's and its own name and sort index.
  void check_metadata() {
    for (const auto& [pid, n] : process_names_) {
      if (n != 1) fail("pid " + std::to_string(pid) + " named more than once");
    }
    for (const Thread& th : used_) {
      const std::string id = std::to_string(th.first) + "/" + std::to_string(th.second);
      if (!process_names_.count(th.first) || !process_sorts_.count(th.first)) fail("no process metadata for pid " + id);
      if (!thread_names_.count(th) || !thread_sorts_.count(th)) fail("no thread metadata for " + id);
    }
  }

  // Slices on one thread neither share a start nor overlap.
  void check_slices() {
    for (auto& [th, list] : slices_) {
      std::sort(list.begin(), list.end(), [](const Slice& a, const Slice& b) { return a.start < b.start; });
      for (std::size_t i = 1; i < list.size(); ++i) {
        if (list[i].start == list[i - 1].start) fail("two slices share a start on one thread");
        if (list[i].start < list[i - 1].end) fail("slices overlap on one thread");
      }
    }
  }

  // Each flow: one s and one f, in time order, same cat and name, bp "e", both ends inside slices.
  void check_flows() {
    for (const auto& [id, list] : starts_) {
      const auto f = finishes_.find(id);
      const std::string flow = "flow " + std::to_string(id);
      if (list.size() != 1 || f == finishes_.end() || f->second.size() != 1) {
        fail("flow id " + std::to_string(id) + " is not exactly one s and one f");
        continue;
      }
      const FlowEnd& s = list[0];
      const FlowEnd& e = f->second[0];
      if (s.at > e.at) fail(flow + " finishes before it starts");
      if (s.cat != e.cat || s.name != e.name || s.name.empty()) fail(flow + " cat/name mismatch");
      if (!e.bp_e) fail(flow + " f without bp e");
      if (!inside(s.thread, s.at) || !inside(e.thread, e.at)) fail(flow + " end not strictly inside a slice");
    }
    for (const auto& [id, list] : finishes_) {
      if (!starts_.count(id)) fail("flow id " + std::to_string(id) + " has f without s");
    }
  }

 private:
  struct Slice {
    long long start, end;
  };
  using Thread = std::pair<long long, long long>;
  struct FlowEnd {
    Thread thread;
    long long at;
    std::string cat, name;
    bool bp_e;
  };

  void read_event(const json& e, const std::string& where) {
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) return fail(where + "no ph");
    const std::string ph = e["ph"];
    if (!e.contains("pid") || !e["pid"].is_number_integer() || !e.contains("tid") || !e["tid"].is_number_integer()) {
      return fail(where + "pid/tid missing or not integers");
    }
    if (!e.contains("name") || !e["name"].is_string()) fail(where + "name missing or not a string");
    const Thread th{e["pid"].get<long long>(), e["tid"].get<long long>()};
    if (ph == "M") return read_metadata(e, th, where);
    if (!e.contains("ts") || !e["ts"].is_number()) return fail(where + "ts missing or not a number");
    const long long ts = half_ns(e["ts"]);
    if (ts < 0) fail(where + "negative ts");
    min_ts_ = min_ts_ < 0 ? ts : std::min(min_ts_, ts);
    used_.insert(th);
    if (ph == "X") return read_slice(e, th, ts, where);
    if (ph == "s" || ph == "f") return read_flow_end(e, th, ts, ph == "s", where);
    if (ph == "C") {
      const json& args = e.value("args", json::object());
      if (!args.is_object() || args.size() != 1 || !args.begin()->is_number()) {
        fail(where + "counter needs exactly one numeric key");
      }
      return;
    }
    fail(where + "unexpected ph " + ph);
  }

  void read_metadata(const json& e, const Thread& th, const std::string& where) {
    const std::string name = e.value("name", "");
    const json& args = e.value("args", json::object());
    if (name == "process_name" && args.contains("name") && args["name"].is_string()) {
      ++process_names_[th.first];
      process_label_[th.first] = args["name"];
    } else if (name == "process_sort_index" && args.contains("sort_index") && args["sort_index"].is_number_integer()) {
      ++process_sorts_[th.first];
    } else if (name == "thread_name" && args.contains("name") && args["name"].is_string()) {
      ++thread_names_[th];
    } else if (name == "thread_sort_index" && args.contains("sort_index") && args["sort_index"].is_number_integer()) {
      ++thread_sorts_[th];
    } else {
      fail(where + "unexpected or malformed metadata");
    }
  }

  void read_slice(const json& e, const Thread& th, long long ts, const std::string& where) {
    if (!e.contains("dur") || !e["dur"].is_number()) return fail(where + "dur missing or not a number");
    const long long dur = half_ns(e["dur"]);
    if (dur <= 0) fail(where + "non-positive dur");
    slices_[th].push_back(Slice{ts, ts + dur});
    const json& args = e.value("args", json::object());
    if (!args.contains("stage") || !args["stage"].is_number_integer() || !args.contains("microbatch") ||
        !args["microbatch"].is_number_integer() || !args.contains("kind") || !args["kind"].is_string()) {
      fail(where + "args lack integer stage/microbatch or string kind");
    }
    if (!e.contains("cat") || !e["cat"].is_string()) fail(where + "X without cat");
  }

  void read_flow_end(const json& e, const Thread& th, long long ts, bool start, const std::string& where) {
    if (!e.contains("id") || !e["id"].is_number_integer()) return fail(where + "flow id missing or not an integer");
    if (!e.contains("cat") || !e["cat"].is_string()) return fail(where + "flow without cat");
    FlowEnd fe{th, ts, e["cat"], e.value("name", ""), e.value("bp", "") == "e"};
    (start ? starts_ : finishes_)[e["id"].get<long long>()].push_back(fe);
  }

  bool inside(const Thread& th, long long at) const {
    const auto it = slices_.find(th);
    if (it == slices_.end()) return false;
    for (const Slice& s : it->second) {
      if (s.start < at && at < s.end) return true;
    }
    return false;
  }

  TraceCheck& r_;
  std::map<long long, int> process_names_, process_sorts_;
  std::map<long long, std::string> process_label_;
  std::map<Thread, int> thread_names_, thread_sorts_;
  std::map<Thread, std::vector<Slice>> slices_;
  std::set<Thread> used_;
  std::map<long long, std::vector<FlowEnd>> starts_, finishes_;
  long long min_ts_ = -1;
};

inline TraceCheck check_chrome_trace(const std::string& text) {
  TraceCheck r;
  r.trace = nlohmann::json::parse(text, nullptr, false);
  if (r.trace.is_discarded()) return TraceCheck{{"not valid JSON"}, {}};
  const nlohmann::json& t = r.trace;
  TraceRules rules(r);
  if (!t.is_object() || !t.contains("traceEvents") || !t["traceEvents"].is_array()) {
    rules.fail("not the object form with a traceEvents array");
    return r;
  }
  if (t.value("displayTimeUnit", "") != "ns") rules.fail("displayTimeUnit is not \"ns\"");
  rules.read_events(t["traceEvents"]);
  rules.check_rebased();
  rules.check_metadata();
  rules.check_slices();
  rules.check_flows();
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
