#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "firstwork/scenario/scenario.hpp"

using namespace firstwork::scenario;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> scenarioFiles() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(FIRSTWORK_SOURCE_DIR "/config/scenarios"))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("every scenario file loads and states expected figures", "[scenario]") {
  auto files = scenarioFiles();
  REQUIRE(files.size() >= 9);
  for (const auto& f : files) {
    INFO(f);
    auto sc = loadScenario(f);
    if (!sc) FAIL(sc.error());
    CHECK_FALSE(sc->description.empty());
    CHECK(sc->duration > Offset{0});
    CHECK_FALSE(sc->steps.empty());
    CHECK_FALSE(sc->expected.stated.empty());
  }
}
