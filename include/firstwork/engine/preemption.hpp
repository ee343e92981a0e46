#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace firstwork::engine {

/// Why Kueue preempted a workload: the `Preempted` condition reason (design §5; reference §1.5).
enum class PreemptionReason : uint8_t {
  Unknown,
  InClusterQueue,
  InCohortReclamation,
  InCohortReclaimWhileBorrowing,
  InCohortFairSharing,
  InCohort,  // Kueue ≤ v0.7: any preemption "in the cohort" (before the reasons were split)
};
/// The condition reason string ("InClusterQueue", ..., "InCohort"); "" for Unknown.
std::string_view preemptionReasonName(PreemptionReason reason);
/// From a `Preempted` condition reason; Unknown for anything else.
PreemptionReason preemptionReasonFromCondition(std::string_view reason);
/// Reclaims are preemptions that take back quota lent to (or fairly owed by) another queue:
/// InCohortReclamation, InCohortReclaimWhileBorrowing, InCohortFairSharing, and the legacy
/// InCohort. InClusterQueue (priority inside one queue) is not a reclaim.
bool isReclaim(PreemptionReason reason);

/// What a Kueue preemption message says. Formats understood (reference §1.5), with or without
/// the `Previously: ` prefix that re-admission puts on reset conditions:
///   ≤ v0.7   Preempted to accommodate a workload (UID: <uid>) in the ClusterQueue|cohort
///   v0.8+    Preempted to accommodate a workload (UID: <uid>) due to <reason text>
///   v0.11+   Preempted to accommodate a workload (UID: <uid>, JobUID: <uid>) due to <reason text>
///   v0.15+   ... due to <reason text>; preemptor path: <path>; preemptee path: <path>
/// and the Preempted event's "; preemptor effective priority: ..." suffix.
struct PreemptionMessage {
  std::string preemptorUid;  // "" when the message says UNKNOWN
  std::string jobUid;        // "" when absent or UNKNOWN
  /// From the human-readable reason text; Unknown when the text is unknown or "UNKNOWN".
  PreemptionReason reason = PreemptionReason::Unknown;
  std::string reasonText;     // as written ("reclamation within the cohort", "cohort", ...)
  std::string preemptorPath;  // e.g. "/org-root/team-b-cq"
  std::string preempteePath;
  bool previously = false;    // the message was prefixed with "Previously: "
};

/// Parses a preemption message; nullopt when `message` is not one (no "Preempted to accommodate
/// a workload (UID: " part, or no closing parenthesis).
std::optional<PreemptionMessage> parsePreemptionMessage(std::string_view message);

}  // namespace firstwork::engine
