// The checkers every SVG and trace test leans on (xml_checker.h, trace_checker.h) refuse each
// kind of problem they name: a checker that passes everything would let every picture pass.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "trace_checker.h"
#include "xml_checker.h"

using namespace pipeworks::viz::testing;

TEST_CASE("xml checker: well-formed SVG passes, each malformation is named") {
  CHECK(xml_error("<?xml version=\"1.0\"?>\n<svg a=\"1\" b='2'><g><!-- c --><text>x &amp; &#38;</text></g><p/></svg>")
            .empty());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"<?xml version=\"1.0\"", "unterminated XML declaration"},
      {"<svg>\x01</svg>", "control character"},
      {"<svg>&nbsp;</svg>", "bad entity or text outside the root"},
      {"x<svg/>", "text outside the root"},
      {"<svg>></svg>", "raw '>' in text"},
      {"<svg><!-- </svg>", "unterminated comment"},
      {"<svg></svg x>", "bad end tag"},
      {"<svg><g></svg>", "mismatched end tag </svg>"},
      {"<svg></svg><svg/>", "second root element"},
      {"<svg a=\"1\" a=\"2\"/>", "bad or repeated attribute in <svg>"},
      {"<svg a/>", "attribute without value"},
      {"<svg a=1/>", "unquoted attribute"},
      {"<svg a=\"<\"/>", "'<' in attribute"},
      {"<svg a=\"&x;\"/>", "bad entity in attribute"},
      {"<svg a=\"1", "unterminated attribute"},
      {"<svg", "unterminated tag"},
      {"<svg><g>", "unclosed element <g>"},
      {"", "no root element"},
  };
  for (const auto& [xml, problem] : bad) {
    INFO(xml);
    CHECK_THAT(xml_error(xml), Catch::StartsWith(problem));
  }
}

namespace {

// A valid trace: one process and thread with their metadata, two slices and a flow between them.
std::string trace_with(const std::string& extra_event) {
  const std::string meta =
      R"({"ph":"M","pid":1,"tid":1,"name":"process_name","args":{"name":"t / device 0"}},)"
      R"({"ph":"M","pid":1,"tid":1,"name":"process_sort_index","args":{"sort_index":0}},)"
      R"({"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"compute"}},)"
      R"({"ph":"M","pid":1,"tid":1,"name":"thread_sort_index","args":{"sort_index":0}},)";
  const std::string slices =
      R"({"ph":"X","pid":1,"tid":1,"name":"F0","cat":"F","ts":0,"dur":1,"args":{"stage":0,"microbatch":0,"kind":"F"}},)"
      R"({"ph":"X","pid":1,"tid":1,"name":"B0","cat":"B","ts":2,"dur":1,"args":{"stage":0,"microbatch":0,"kind":"B"}},)"
      R"({"ph":"s","pid":1,"tid":1,"name":"d","cat":"dep","id":7,"ts":0.5},)"
      R"({"ph":"f","pid":1,"tid":1,"name":"d","cat":"dep","id":7,"ts":2.5,"bp":"e"})";
  return R"({"displayTimeUnit":"ns","traceEvents":[)" + meta + slices + extra_event + "]}";
}

}  // namespace

TEST_CASE("trace checker: a valid trace passes, each broken rule is named") {
  INFO(check_chrome_trace(trace_with("")).report());
  CHECK(check_chrome_trace(trace_with("")).ok());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"(,{"pid":1,"tid":1,"name":"x"})", "no ph"},
      {R"(,{"ph":"X","name":"x"})", "pid/tid missing or not integers"},
      {R"(,{"ph":"X","pid":1,"tid":1,"name":"x","cat":"F","dur":1})", "ts missing or not a number"},
      {R"(,{"ph":"X","pid":1,"tid":1,"name":"x","cat":"F","ts":5})", "dur missing or not a number"},
      {R"(,{"ph":"X","pid":1,"tid":1,"name":"x","cat":"F","ts":5,"dur":1,"args":{}})", "args lack integer"},
      {R"(,{"ph":"X","pid":1,"tid":1,"name":"x","cat":"F","ts":0.5,"dur":1,"args":{"stage":0,"microbatch":0,"kind":"F"}})",
       "slices overlap on one thread"},
      {R"(,{"ph":"X","pid":1,"tid":2,"name":"x","cat":"F","ts":5,"dur":1,"args":{"stage":0,"microbatch":0,"kind":"F"}})",
       "no thread metadata for 1/2"},
      {R"(,{"ph":"M","pid":1,"tid":1,"name":"bogus"})", "unexpected or malformed metadata"},
      {R"(,{"ph":"C","pid":1,"tid":1,"name":"mem","ts":1,"args":{"a":1,"b":2}})", "counter needs exactly one numeric key"},
      {R"(,{"ph":"Q","pid":1,"tid":1,"name":"x","ts":1})", "unexpected ph Q"},
      {R"(,{"ph":"f","pid":1,"tid":1,"name":"d","cat":"dep","id":9,"ts":2.5,"bp":"e"})", "flow id 9 has f without s"},
  };
  for (const auto& [event, problem] : bad) {
    const TraceCheck r = check_chrome_trace(trace_with(event));
    INFO(event << "\n" << r.report());
    CHECK_THAT(r.report(), Catch::Contains(problem));
  }
  CHECK_THAT(check_chrome_trace(R"({"traceEvents":[]})").report(), Catch::Contains("displayTimeUnit is not"));
}
