#include "firstwork/model/object.hpp"

#include <fmt/format.h>

#include "detail/decoders.hpp"

namespace firstwork::model {
namespace {

constexpr std::string_view kKueue = "kueue.x-k8s.io";
constexpr std::string_view kResource = "resource.k8s.io";

// Indexed by Kind; the order is checked below.
constexpr std::array<KindInfo, kKindCount> kKinds = {{
    {Kind::Workload, "workloads", kKueue, {"v1beta2", "v1beta1", ""}, true},
    {Kind::MultiKueueCluster, "multikueueclusters", kKueue, {"v1beta2", "v1beta1", ""}, false},
    {Kind::ClusterQueue, "clusterqueues", kKueue, {"v1beta2", "v1beta1", ""}, false},
    {Kind::AdmissionCheck, "admissionchecks", kKueue, {"v1beta2", "v1beta1", ""}, false},
    {Kind::MultiKueueConfig, "multikueueconfigs", kKueue, {"v1beta2", "v1beta1", ""}, false},
    {Kind::Pod, "pods", "", {"v1", "", ""}, true},
    {Kind::ResourceClaim, "resourceclaims", kResource, {"v1", "v1beta2", "v1beta1"}, true},
    {Kind::ResourceSlice, "resourceslices", kResource, {"v1", "v1beta2", "v1beta1"}, false},
    {Kind::Node, "nodes", "", {"v1", "", ""}, false},
}};

constexpr std::array<std::string_view, kKindCount> kKindNames = {
    "Workload", "MultiKueueCluster", "ClusterQueue",  "AdmissionCheck", "MultiKueueConfig",
    "Pod",      "ResourceClaim",     "ResourceSlice", "Node",
};

constexpr bool tableInKindOrder() {
  for (size_t i = 0; i < kKinds.size(); ++i) {
    if (static_cast<size_t>(kKinds[i].kind) != i) return false;
  }
  return true;
}
static_assert(tableInKindOrder(), "kKinds must be indexed by Kind");
// kindOf() relies on the variant listing the kinds in enum order.
static_assert(std::variant_size_v<Object> == kKindCount);
static_assert(std::is_same_v<std::variant_alternative_t<0, Object>, Workload>);
static_assert(std::is_same_v<std::variant_alternative_t<1, Object>, MultiKueueCluster>);
static_assert(std::is_same_v<std::variant_alternative_t<2, Object>, ClusterQueue>);
static_assert(std::is_same_v<std::variant_alternative_t<3, Object>, AdmissionCheck>);
static_assert(std::is_same_v<std::variant_alternative_t<4, Object>, MultiKueueConfig>);
static_assert(std::is_same_v<std::variant_alternative_t<5, Object>, Pod>);
static_assert(std::is_same_v<std::variant_alternative_t<6, Object>, ResourceClaim>);
static_assert(std::is_same_v<std::variant_alternative_t<7, Object>, ResourceSlice>);
static_assert(std::is_same_v<std::variant_alternative_t<8, Object>, Node>);

}  // namespace

const KindInfo& kindInfo(Kind kind) { return kKinds[static_cast<size_t>(kind)]; }

std::string_view kindName(Kind kind) { return kKindNames[static_cast<size_t>(kind)]; }

std::optional<Kind> kindFromResource(std::string_view resource) {
  for (const auto& k : kKinds) {
    if (k.resource == resource) return k.kind;
  }
  return std::nullopt;
}

const std::array<KindInfo, kKindCount>& allKinds() { return kKinds; }

const ObjectMeta& metaOf(const Object& object) {
  return std::visit([](const auto& o) -> const ObjectMeta& { return o.meta; }, object);
}

Kind kindOf(const Object& object) { return static_cast<Kind>(object.index()); }

namespace detail {

bool checkKind(Ctx& c, od::value& v, Kind kind) {
  std::string_view s;
  bool present = false;
  if (!getString(c, v, s, &present)) return false;
  if (present && !s.empty() && s != kindName(kind)) {
    return c.fail(fmt::format("expected {}, got \"{}\"", kindName(kind), truncateUtf8(s, 64)));
  }
  return true;
}

bool requireIdentity(Ctx& c, const ObjectMeta& meta) {
  if (meta.name.empty()) {
    c.path = "metadata.name";
    return c.fail("missing");
  }
  if (meta.uid.empty()) {
    c.path = "metadata.uid";
    return c.fail("missing");
  }
  return true;
}

bool readObject(Ctx& c, od::value& v, Kind kind, Object& out) {
  switch (kind) {
    case Kind::Workload:
      return readWorkload(c, v, out.emplace<Workload>());
    case Kind::MultiKueueCluster:
      return readMultiKueueCluster(c, v, out.emplace<MultiKueueCluster>());
    case Kind::ClusterQueue:
      return readClusterQueue(c, v, out.emplace<ClusterQueue>());
    case Kind::AdmissionCheck:
      return readAdmissionCheck(c, v, out.emplace<AdmissionCheck>());
    case Kind::MultiKueueConfig:
      return readMultiKueueConfig(c, v, out.emplace<MultiKueueConfig>());
    case Kind::Pod:
      return readPod(c, v, out.emplace<Pod>());
    case Kind::ResourceClaim:
      return readResourceClaim(c, v, out.emplace<ResourceClaim>());
    case Kind::ResourceSlice:
      return readResourceSlice(c, v, out.emplace<ResourceSlice>());
    case Kind::Node:
      return readNode(c, v, out.emplace<Node>());
  }
  return c.fail("unknown kind");
}

}  // namespace detail
}  // namespace firstwork::model
