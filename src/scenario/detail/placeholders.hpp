#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/result.hpp"
#include "firstwork/scenario/scenario.hpp"

namespace firstwork::scenario::detail {

using Json = nlohmann::ordered_json;

/// One `{{...}}` inside a string of an object body:
///   {{t}} {{t+8m}} {{t-1h}}                 → RFC 3339 time at drill start + offset
///   {{uid:team-a/job-x-1a2b3}}              → metadata.uid of that Workload on the step's cluster
///   {{uid:Pod:team-a/p-0}} {{uid:Node:n-1}} → other kinds (cluster-scoped: no namespace)
///   {{uid:team-a/job-x-1a2b3@manager}}      → ... on another cluster
///   {{jobuid:team-a/train[@cluster]}}       → the (generated) UID of batch/v1 Job team-a/train
struct Placeholder {
  enum class Type { Time, Uid, JobUid };
  Type type = Type::Time;
  Offset offset{0};
  std::string kind;     // Uid only; default "Workload"
  std::string ns;
  std::string name;
  std::string cluster;  // "" = the step's cluster
};

Result<Placeholder> parsePlaceholder(std::string_view inner);
/// Every placeholder in `text`; an error for an unclosed `{{` or a malformed placeholder.
Result<std::vector<Placeholder>> scanPlaceholders(std::string_view text);
/// Every placeholder in the strings of `body` (errors are collected with their JSON path).
void collectPlaceholders(const Json& body, std::vector<Placeholder>& out,
                         std::vector<std::string>& errors, const std::string& path = "");

/// `{{t+8m}}` for an offset (the way generators write times).
std::string timeRef(Offset offset);

struct RenderContext {
  SystemTime drillStart;
  std::string cluster;  // the step's cluster
  /// UID of an object (nullopt when it does not exist).
  std::function<std::optional<std::string>(const std::string& cluster, const std::string& kind,
                                           const std::string& ns, const std::string& name)>
      uid;
  std::function<std::string(const std::string& cluster, const std::string& ns,
                            const std::string& name)>
      jobUid;
};

Result<std::string> renderString(std::string_view text, const RenderContext& ctx);
/// Renders every string value of `body` in place; stops at the first failure.
Status renderJson(Json& body, const RenderContext& ctx);

}  // namespace firstwork::scenario::detail
