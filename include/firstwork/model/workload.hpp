#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "firstwork/model/meta.hpp"

namespace firstwork::model {

/// A DRA claim a podSet's pod template asks for (spec.resourceClaims[] of the template). 48
/// bytes, as a pod's PodClaimRef, where three std::strings took 96: a claim's name and its
/// template are the same few names on every Workload of a job kind (pooled), a pre-created
/// claim's name is inline up to 30 characters (bench/README.md, change 106).
struct PodSetClaim {
  Interned name;                       // the pod-level claim name
  Interned resourceClaimTemplateName;  // set for template claims (the only kind Kueue accounts)
  ShortString resourceClaimName;       // set for pre-created claims
};

/// status.resourceRequests[] (non-admitted workloads): what a podset asks for in total, including the
/// logical DRA resources Kueue maps device classes to. Core resources (cpu, memory, ...) are dropped.
struct PodSetResources {
  std::string name;
  ResourceList resources;  // milli-units, total for the podset
};

/// spec.podSets[] of a Workload, reduced to what capacity and demand need. 48 bytes (72 with its
/// name a std::string; change 106): a podset's name is one of a job kind's few ("main",
/// "launcher", "worker"), pooled.
struct PodSet {
  Interned name;
  int32_t count = 1;
  /// Per-pod requests summed over containers (limits used where a request is absent), only
  /// extended resources (names containing '/'), e.g. {"nvidia.com/gpu", 1000}.
  ResourceList perPodRequests;
  CompactVector<PodSetClaim> claims;
};

/// status.admission.podSetAssignments[]: the podset's name and the count admitted, which the
/// engine reads (a podset's demand is its per-pod requests times that count). Its flavors and
/// resourceUsage are checked when decoded but not kept: nothing reads them, and they took two
/// heap blocks a Workload (48 and 16 bytes) and 32 bytes of the assignment's 72 (change 106).
struct PodSetAssignment {
  Interned name;
  int32_t count = 0;
};
static_assert(sizeof(void*) != 8 || (sizeof(PodSetClaim) <= 48 && sizeof(PodSet) <= 48 &&
                                     sizeof(PodSetAssignment) <= 16),
              "a Workload's podset lists past their size (change 106)");

enum class CheckState : uint8_t { Unknown, Pending, Ready, Retry, Rejected };

/// status.admissionChecks[]. 32 bytes (64 with an std::optional time and a std::string message,
/// whose text took a heap block of its own: change 106). The message is pooled when at most
/// kPooledMessageBytes long, as a condition's: MultiKueue's check says the same "The workload was
/// admitted on \"<worker>\"" on every Workload a worker admitted.
struct AdmissionCheckStatus {
  Interned name;
  CheckState state = CheckState::Unknown;
  OptionalTime lastTransitionTime;
  Interned message;
};
static_assert(sizeof(void*) != 8 || sizeof(AdmissionCheckStatus) <= 32,
              "AdmissionCheckStatus past 32 bytes (change 106)");

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
