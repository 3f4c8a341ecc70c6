// The invalid-spec corpus: every file in tests/data/invalid_specs/ must fail to load with
// exactly the message listed for it in expected.txt ("<path>: <pointer>: <value>: <reason>").
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::sim {
namespace {

const std::string kDir = std::string(PIPEWORKS_TEST_DATA_DIR) + "/invalid_specs";

std::map<std::string, std::string> expectations() {
  std::map<std::string, std::string> out;
  std::ifstream in(kDir + "/expected.txt");
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab != std::string::npos) out[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return out;
}

TEST_CASE("every invalid spec fails with its expected message") {
  const auto expected = expectations();
  REQUIRE(expected.size() >= 30);
  std::size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    if (entry.path().extension() != ".json") continue;
    ++seen;
    const std::string name = entry.path().filename().string();
    INFO(name);
    const auto it = expected.find(name);
    REQUIRE(it != expected.end());
    const std::string path = entry.path().string();
    const bool is_model = name.rfind("model_", 0) == 0;
    const std::string message = is_model ? load_model_spec(path).error().message
                                          : load_cluster_spec(path).error().message;
    CHECK(message == path + ": " + it->second);
  }
  CHECK(seen == expected.size());
}

TEST_CASE("missing files are reported by path") {
  CHECK(load_model_spec("/nonexistent/model.json").error().message == "/nonexistent/model.json: cannot open: No such file or directory");
  CHECK(load_cluster_spec("/nonexistent/c.json").error().message == "/nonexistent/c.json: cannot open: No such file or directory");
}

}  // namespace
}  // namespace pipeworks::sim
