// libFuzzer target: the scenario loader (scenario::loadScenarioFromString), which expands the drill
// files of config/scenarios (and any the operator writes for `firstworkd demo`) into API steps.
//
// Properties (scenario.hpp): setup steps come first, timeline steps are sorted by `at` and lie
// at or before `duration` (negative offsets are allowed: before the drill); every step names a cluster the scenario declares; object steps carry a
// kind, a resource and a name.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "firstwork/scenario/scenario.hpp"
#include "fuzz_check.hpp"

using namespace firstwork;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view yaml(reinterpret_cast<const char*>(data), size);
  auto s = scenario::loadScenarioFromString(yaml, "fuzz.yaml");
  if (!s.ok()) {
    FW_FUZZ_CHECK(!s.error().empty());
    return 0;
  }
  bool inSetup = true;
  scenario::Offset previous = scenario::Offset::min();
  for (const auto& step : s->steps) {
    FW_FUZZ_CHECK(s->cluster(step.cluster) != nullptr);
    if (!step.setup) inSetup = false;
    FW_FUZZ_CHECK(!step.setup || inSetup);
    if (!step.setup) {
      FW_FUZZ_CHECK(step.at >= previous);
      FW_FUZZ_CHECK(step.at <= s->duration);
      previous = step.at;
    }
    bool connection = step.action == scenario::StepAction::CutConnection ||
                      step.action == scenario::StepAction::RestoreConnection;
    if (!connection) {
      FW_FUZZ_CHECK(!step.kind.empty() && !step.resource.empty() && !step.name.empty());
    }
  }
  return 0;
}
