// libFuzzer target: the config loader (config::loadConfigFromStringDetailed) with the pure rules
// only (no file checks, so the result does not depend on this machine).
//
// Properties: every problem has a message; the Result form agrees with the detailed form; a
// config that loaded cleanly passes validateConfig() again (validation is a fixed point), has a
// parsable listen address and a usable shard (shardOwnsCluster is total on it).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "firstwork/config/config.hpp"
#include "firstwork/config/listen_address.hpp"
#include "fuzz_check.hpp"

using namespace firstwork;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view yaml(reinterpret_cast<const char*>(data), size);
  config::ValidateOptions pure;
  pure.checkFiles = false;
  config::ConfigLoad load = config::loadConfigFromStringDetailed(yaml, pure);
  for (const auto& p : load.problems) FW_FUZZ_CHECK(!p.message.empty());
  auto result = config::loadConfigFromString(yaml, pure);
  FW_FUZZ_CHECK(result.ok() == load.ok());
  if (!load.ok()) {
    FW_FUZZ_CHECK(result.error() == config::formatProblems(load.problems));
    return 0;
  }
  const config::Config& c = load.config;
  FW_FUZZ_CHECK(config::validateConfig(c, pure).empty());
  FW_FUZZ_CHECK(config::parseListenAddress(c.server.listen).ok());
  FW_FUZZ_CHECK(c.shard.count >= 1 && c.shard.index < c.shard.count);
  for (const auto& cluster : c.clusters) {
    FW_FUZZ_CHECK(!cluster.name.empty());
    (void)config::shardOwnsCluster(c.shard, cluster);
  }
  return 0;
}
