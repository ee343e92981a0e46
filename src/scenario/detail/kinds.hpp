#pragma once
#include <array>
#include <string_view>

namespace firstwork::scenario::detail {

/// A kind the simulated API server serves, and how scenarios address it.
struct KindInfo {
  std::string_view kind;
  std::string_view resource;    // plural, as ApiServer names resources
  std::string_view apiVersion;  // written when an object in a file omits it
  bool namespaced;
};

inline constexpr std::array<KindInfo, 9> kKinds{{
    {"Workload", "workloads", "kueue.x-k8s.io/v1beta2", true},
    {"MultiKueueCluster", "multikueueclusters", "kueue.x-k8s.io/v1beta2", false},
    {"ClusterQueue", "clusterqueues", "kueue.x-k8s.io/v1beta2", false},
    {"AdmissionCheck", "admissionchecks", "kueue.x-k8s.io/v1beta2", false},
    {"MultiKueueConfig", "multikueueconfigs", "kueue.x-k8s.io/v1beta2", false},
    {"Pod", "pods", "v1", true},
    {"Node", "nodes", "v1", false},
    {"ResourceClaim", "resourceclaims", "resource.k8s.io/v1", true},
    {"ResourceSlice", "resourceslices", "resource.k8s.io/v1", false},
}};

inline const KindInfo* findKind(std::string_view kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

}  // namespace firstwork::scenario::detail
