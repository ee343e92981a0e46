#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/model/meta.hpp"

namespace firstwork::model {

enum class PodPhase : uint8_t { Unknown, Pending, Running, Succeeded, Failed };
enum class ContainerStateKind : uint8_t { None, Waiting, Running, Terminated };

/// status.containerStatuses[] (and initContainerStatuses[] with `init` set).
/// One per container of every tracked pod: 48 bytes (80 with std::optional times and the flags
/// apart, 56 with the message), so that a pod's usual one or two take a 48- or 96-byte block,
/// not a 64- or 112-byte one (bench/README.md, changes 76 and 89). waiting.message and
/// terminated.message are checked when decoded but not kept: nothing reads them (the stuck
/// causes read the reasons).
struct ContainerStatus {
  Interned name;
  Interned reason;          // waiting.reason or terminated.reason
  OptionalTime startedAt;   // running.startedAt or terminated.startedAt
  OptionalTime finishedAt;  // terminated.finishedAt
  int32_t restartCount = 0;
  int32_t exitCode = 0;
  bool init = false;
  bool ready = false;
  ContainerStateKind state = ContainerStateKind::None;
};

/// spec.resourceClaims[] joined with status.resourceClaimStatuses[] by name.
struct PodClaim {
  std::string name;
  std::string resourceClaimName;          // spec (pre-created claim)
  std::string resourceClaimTemplateName;  // spec (template)
  std::string generatedClaimName;         // status.resourceClaimStatuses[].resourceClaimName
};
/// The ResourceClaim a pod's claim resolves to: its resourceClaimName, else the claim generated
/// for it ("" until the pod's status names one).
inline std::string_view claimNameOf(const PodClaim& c) {
  return !c.resourceClaimName.empty() ? c.resourceClaimName : c.generatedClaimName;
}

/// What a record keeps of a pod's claim after the pod's event (the engine's pod records): the
/// pod's name for it and its template (a few names that repeat on every pod of a job: pooled),
/// and the ResourceClaim it resolves to (claimNameOf, read through claimName()). 48 bytes, where
/// a PodClaim's four strings take 128 and a heap block each past 15 characters (bench/README.md,
/// change 99).
struct PodClaimRef {
  Interned name;
  Interned templateName;  // resourceClaimTemplateName ("" for a pre-created claim)
  /// The ResourceClaim's name as given; or, for a claim generated under the name Kubernetes
  /// gives it ("<pod>-<pod's claim name>-" and a random suffix), kGeneratedMark and the suffix
  /// alone, inline where the whole name (the pod's and more) took a heap block of its own
  /// (bench/README.md, change 102). A name that begins with the mark (not a name Kubernetes
  /// accepts) is kept as none.
  ShortString claim;
  static constexpr char kGeneratedMark = '\x01';
  /// Room for every name claimName() rebuilds (a pod's name is at most 253 characters, a pod's
  /// claim name 63); longer generated names are kept whole.
  using NameBuffer = std::array<char, 384>;

  /// `podName`: the name of the pod whose claim `c` is.
  PodClaimRef(const PodClaim& c, std::string_view podName);
  /// The ResourceClaim it resolves to ("" until one is generated), for the pod `podName` it was
  /// made for; a generated claim's name is written into `buf`.
  std::string_view claimName(std::string_view podName, NameBuffer& buf) const;
  /// Whether claimName(podName) is `resourceClaim`.
  bool resolvesTo(std::string_view podName, std::string_view resourceClaim) const;
  bool operator==(const PodClaimRef&) const = default;
};

/// Built-in pod condition types nothing in firstwork reads, dropped when a pod is decoded: three
/// of the five conditions every running pod carries (32 bytes each, 150,000 pods at the largest
/// estates). PodScheduled and Ready are read (milestones, the Ready proxy, stuck causes), and
/// every other type is kept (DisruptionTarget, readiness gates, a usefulWork.podConditionType;
/// the configuration refuses these three there). A reader of one must take it off this list.
inline constexpr std::array<std::string_view, 3> kUnreadPodConditionTypes{
    "PodReadyToStartContainers", "Initialized", "ContainersReady"};

/// core/v1 Pod. 232 bytes: every list a CompactVector, and spec.schedulingGates and
/// status.startTime checked when decoded but not kept (nothing reads them), so that with the
/// other kinds a tracked object's block takes jemalloc's 256-byte class (bench/README.md,
/// change 80). A reader of another field must keep the kinds within 232 bytes (object_test).
struct Pod {
  ObjectMeta meta;
  Interned nodeName;
  PodPhase phase = PodPhase::Unknown;
  /// Requests summed over regular containers (max with init containers), extended resources only.
  /// A limit stands in for a missing request; sidecars (init containers with restartPolicy Always)
  /// add to the sum, as in the scheduler's pod request calculation.
  ResourceList requests;
  CompactVector<PodClaim> claims;
  BriefConditions conditions;                 // without kUnreadPodConditionTypes
  CompactVector<ContainerStatus> containers;  // containerStatuses, then initContainerStatuses
};

}  // namespace firstwork::model
