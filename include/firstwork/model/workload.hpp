#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "firstwork/model/meta.hpp"

namespace firstwork::model {

/// A DRA claim a podSet's pod template asks for (spec.resourceClaims[] of the template).
struct PodSetClaim {
  std::string name;                       // the pod-level claim name
  std::string resourceClaimTemplateName;  // set for template claims (the only kind Kueue accounts)
  std::string resourceClaimName;          // set for pre-created claims
};

/// status.resourceRequests[] (non-admitted workloads): what a podset asks for in total, including the
/// logical DRA resources Kueue maps device classes to. Core resources (cpu, memory, ...) are dropped.
struct PodSetResources {
  std::string name;
  ResourceList resources;  // milli-units, total for the podset
};

/// spec.podSets[] of a Workload, reduced to what capacity and demand need.
struct PodSet {
  std::string name;
  int32_t count = 1;
  /// Per-pod requests summed over containers (limits used where a request is absent), only
  /// extended resources (names containing '/'), e.g. {"nvidia.com/gpu", 1000}.
  ResourceList perPodRequests;
  std::vector<PodSetClaim> claims;
};

/// status.admission.podSetAssignments[].
struct PodSetAssignment {
  std::string name;
  int32_t count = 0;
  /// resource → ResourceFlavor and the podset's total (per-pod × count). Both keep only device
  /// resources: extended resources and logical DRA names, not cpu/memory/ephemeral-storage/pods/hugepages.
  KeyValues flavors;
  ResourceList resourceUsage;
};

enum class CheckState : uint8_t { Unknown, Pending, Ready, Retry, Rejected };

/// status.admissionChecks[].
struct AdmissionCheckStatus {
  Interned name;
  CheckState state = CheckState::Unknown;
  std::optional<SystemTime> lastTransitionTime;
  std::string message;
};

/// kueue.x-k8s.io Workload (v1beta2; v1beta1 decoded into the same struct).
struct Workload {
  ObjectMeta meta;
  Interned apiVersion;  // "kueue.x-k8s.io/v1beta2" or ".../v1beta1"
  Interned queueName;
  int32_t priority = 0;
  /// v1beta2 spec.priorityClassRef.name, v1beta1 spec.priorityClassName; empty when unset.
  Interned priorityClassName;
  bool active = true;
  std::vector<PodSet> podSets;
  std::vector<Condition> conditions;
  /// status.admission.clusterQueue; empty when there is no admission.
  Interned admissionClusterQueue;
  std::vector<PodSetAssignment> podSetAssignments;
  std::vector<AdmissionCheckStatus> admissionChecks;
  Interned clusterName;                          // MultiKueue: worker that admitted it
  std::vector<std::string> nominatedClusterNames;  // MultiKueue: candidates
  int32_t accumulatedPastExecutionTimeSeconds = 0;  // v1beta1: accumulatedPastExexcutionTimeSeconds
  int32_t requeueCount = 0;                         // status.requeueState.count
  std::vector<PodSetResources> resourceRequests;    // status.resourceRequests (not yet admitted)
};

}  // namespace firstwork::model
