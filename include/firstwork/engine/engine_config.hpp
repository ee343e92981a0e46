#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "firstwork/inventory/inventory.hpp"

namespace firstwork::engine {

/// What a configured cluster is to the estate (design §2).
enum class ClusterRole : uint8_t {
  Management,  // Kueue manager: Workloads, MultiKueueClusters, ClusterQueues, AdmissionChecks, ...
  Worker,      // MultiKueue worker: Workload copies, Pods, ResourceClaims, ResourceSlices, Nodes
  Standalone,  // Kueue without MultiKueue: Workloads, Pods, ResourceClaims, ResourceSlices, Nodes
};
/// "management" | "worker" | "standalone".
std::string_view clusterRoleName(ClusterRole role);

struct ClusterConfig {
  std::string name;  // the `cluster` label value
  ClusterRole role = ClusterRole::Standalone;
  /// Workers: the name of this cluster's MultiKueueCluster object on the manager. Empty means the
  /// same as `name`.
  std::string multiKueueClusterName;
};

/// Which useful-work signals count (design §4). The annotation is always read when enabled; the
/// other signals are opt-in.
struct UsefulWorkConfig {
  /// Pod annotation `firstwork.dev/first-work-at` (RFC 3339), and `firstwork.dev/last-checkpoint-at`.
  bool annotation = true;
  /// A pod condition type whose lastTransitionTime (when True) is the signal, e.g. a readiness
  /// gate `firstwork.dev/FirstWork`. Empty: not used.
  std::string podConditionType;
  /// Signals fed through MilestoneEngine::onUsefulWorkSignal (e.g. the PromQL probe).
  bool external = true;
  /// Fallback, off by default: the pod's `Ready` condition; always labelled as a proxy.
  bool readyProxy = false;
};

/// How the DRA ResourceClaimTemplate of a podset maps to devices. Templates are not watched, so
/// the engine learns the mapping from the first generated claim it sees for a pod of that template
/// (its requests name the DeviceClass and count); this entry pins it up front so that demand is
/// known before any pod exists.
struct ClaimTemplateMapping {
  std::string namespace_;  // empty: any namespace
  std::string name;        // ResourceClaimTemplate name
  std::string deviceClassName;
  int64_t count = 1;       // devices per pod
};

/// Configuration of the milestone engine. Defaults follow design §4/§5.
struct EngineConfig {
  std::vector<ClusterConfig> clusters;
  UsefulWorkConfig usefulWork;
  /// A reconnection incident fails when stranded devices on the worker have not returned to 0
  /// within this time after `reconnected`.
  std::chrono::seconds recoveryBudget{std::chrono::minutes(30)};
  /// A workload admitted this long without useful work is stuck (and classified by reason).
  std::chrono::seconds stuckAfter{std::chrono::minutes(10)};
  /// A reclaim fails when its preemptor has no useful work this long after the first victim was
  /// evicted.
  std::chrono::seconds reclaimBudget{std::chrono::minutes(30)};
  /// A container restarted at least this many times counts as crash looping even while running.
  int32_t crashLoopRestarts = 3;
  /// Event-time history kept for incident integrals and late events (never less than what open
  /// incidents and pending reclaims need).
  std::chrono::seconds timelineRetention{std::chrono::hours(6)};
  /// Deleted workloads and pods are forgotten this long after their deletion.
  std::chrono::seconds deletedRetention{std::chrono::hours(1)};
  std::vector<ClaimTemplateMapping> claimTemplates;
  /// Passed through to the capacity inventory (device classes, extended resources, taints).
  inventory::InventoryConfig inventory;
};

}  // namespace firstwork::engine
