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
  CompactVector<PodSetClaim> claims;
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

/// Workload status that most Workloads do not carry: set before admission (MultiKueue's
/// candidates, the pending requests) or after an eviction (requeue count, past execution time).
struct WorkloadRareStatus {
  std::vector<std::string> nominatedClusterNames;  // MultiKueue: candidates
  std::vector<PodSetResources> resourceRequests;   // status.resourceRequests (not yet admitted)
  int32_t accumulatedPastExecutionTimeSeconds = 0;  // v1beta1: accumulatedPastExexcutionTimeSeconds
  int32_t requeueCount = 0;                         // status.requeueState.count
  bool empty() const {
    return nominatedClusterNames.empty() && resourceRequests.empty() &&
           accumulatedPastExecutionTimeSeconds == 0 && requeueCount == 0;
  }
};

/// Where a Workload is admitted: status.admission (its ClusterQueue and podset assignments)
/// and, with MultiKueue, status.clusterName (the worker that admitted it). Boxed in the
/// Workload, which is 24 bytes smaller for it (change 80); a pending Workload carries none.
struct WorkloadAdmission {
  /// status.admission.clusterQueue; empty when there is no admission.
  Interned clusterQueue;
  CompactVector<PodSetAssignment> podSetAssignments;
  Interned clusterName;  // MultiKueue: worker that admitted it
  bool empty() const {
    return clusterQueue.empty() && podSetAssignments.empty() && clusterName.empty();
  }
};

/// kueue.x-k8s.io Workload (v1beta2; v1beta1 decoded into the same struct). With the other
/// kinds at most 232 bytes, so that a tracked object's block (the variant's index and the
/// shared_ptr control block with it) takes jemalloc's 256-byte size class (change 80); at 296
/// bytes it took the 320-byte one, at 360 the 384-byte one: 64 bytes more for every object of
/// every kind (bench/README.md, changes 57, 72 and 80). apiVersion and spec.priorityClassName
/// (priorityClassRef) are checked when decoded but not kept: nothing reads them.
struct Workload {
  ObjectMeta meta;
  Interned queueName;
  int32_t priority = 0;
  bool active = true;
  CompactVector<PodSet> podSets;
  Conditions conditions;
  CompactVector<AdmissionCheckStatus> admissionChecks;  // 16 bytes (change 72)
  /// Allocated only when one of its fields is set (the decoder leaves it empty otherwise).
  Boxed<WorkloadAdmission> admission;
  /// Allocated only when one of its fields is set (the decoder leaves it empty otherwise).
  Boxed<WorkloadRareStatus> rareStatus;
};

}  // namespace firstwork::model
