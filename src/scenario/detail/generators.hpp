#pragma once
#include <string>
#include <vector>

#include "detail/yaml_reader.hpp"
#include "firstwork/scenario/scenario.hpp"

namespace firstwork::scenario::detail {

/// One primitive step produced by a generator (the loader turns it into a `Step`).
struct GenStep {
  Offset at{0};
  std::string cluster;
  StepAction action = StepAction::Create;
  std::string kind;
  std::string ns;
  std::string name;
  Json body;
  std::string what;  // e.g. "pod train-0-0-b2x4k running"
};

struct GenContext {
  const std::vector<ScenarioCluster>& clusters;
  Problems& problems;
  std::string path;  // e.g. "timeline[3].job"
  Offset at{0};      // the entry's `at`
  std::vector<GenStep>& out;

  const ScenarioCluster* cluster(const std::string& name) const;
  const ScenarioCluster* manager() const;
};

// Each reads the generator's mapping (the value under its key) and appends steps to ctx.out.
// The expansions are documented in config/scenarios/README.md.
void expandJob(const YAML::Node& node, GenContext& ctx);
void expandNodes(const YAML::Node& node, GenContext& ctx);
void expandMultiKueueCluster(const YAML::Node& node, GenContext& ctx);
void expandKueueConnection(const YAML::Node& node, GenContext& ctx);
void expandResourceSlice(const YAML::Node& node, GenContext& ctx);
void expandCutConnection(const YAML::Node& node, GenContext& ctx);

/// Replaces every "{i}" in the string values (and in `name` patterns) with `i`.
void substituteIndex(Json& body, int64_t i);
std::string substituteIndex(std::string text, const char* token, int64_t i);

/// Kubernetes quantity "<integer><suffix>" times n ("32Gi" × 4 = "128Gi").
Result<std::string> multiplyQuantity(const std::string& quantity, int64_t n);

}  // namespace firstwork::scenario::detail
