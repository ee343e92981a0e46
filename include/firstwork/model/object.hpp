#pragma once
#include <array>
#include <optional>
#include <string_view>
#include <variant>

#include "firstwork/model/dra.hpp"
#include "firstwork/model/kueue_objects.hpp"
#include "firstwork/model/node.hpp"
#include "firstwork/model/pod.hpp"
#include "firstwork/model/workload.hpp"

namespace firstwork::model {

/// Every kind firstwork watches (design §2).
enum class Kind : uint8_t {
  Workload,
  MultiKueueCluster,
  ClusterQueue,
  AdmissionCheck,
  MultiKueueConfig,
  Pod,
  ResourceClaim,
  ResourceSlice,
  Node,
};
inline constexpr size_t kKindCount = 9;

/// Static facts about a kind: where it is served and which versions we understand, best first.
struct KindInfo {
  Kind kind;
  std::string_view resource;  // plural, also the `resource` metric label
  std::string_view group;     // "" for the core group
  std::array<std::string_view, 3> versions;  // preference order; empty entries unused
  bool namespaced;
};

const KindInfo& kindInfo(Kind kind);
/// The API kind name ("Workload", "Pod", ...), as in an object's `kind` field.
std::string_view kindName(Kind kind);
/// Looks a kind up by its plural resource name ("workloads", "pods", ...).
std::optional<Kind> kindFromResource(std::string_view resource);
const std::array<KindInfo, kKindCount>& allKinds();

/// A decoded object of any watched kind.
using Object = std::variant<Workload, MultiKueueCluster, ClusterQueue, AdmissionCheck,
                            MultiKueueConfig, Pod, ResourceClaim, ResourceSlice, Node>;

const ObjectMeta& metaOf(const Object& object);
Kind kindOf(const Object& object);

}  // namespace firstwork::model
