#pragma once
#include <string>
#include <vector>

#include "firstwork/engine/outputs.hpp"
#include "firstwork/store/store.hpp"

namespace firstwork::log {
class Redactor;
}

namespace firstwork::app {

/// Store kinds (the `kind` column) and the API resource each one backs.
inline constexpr const char* kMilestoneKind = "milestone";      // /api/v1/workloads
inline constexpr const char* kObservationKind = "observation";  // histogram samples (dedupe)
inline constexpr const char* kIncidentKind = "incident";        // /api/v1/incidents
inline constexpr const char* kIncidentClosedKind = "incident_closed";  // counted once
inline constexpr const char* kReclaimKind = "reclaim";          // /api/v1/reclaims
inline constexpr const char* kReclaimClosedKind = "reclaim_closed";    // counted once
inline constexpr const char* kDuplicateKind = "duplicate";      // duplicate executions

/// What one engine step writes: the records, and for each record what the exporter does with it
/// once the store confirms it is new.
struct PendingRecord {
  enum class Effect : uint8_t { None, Observe, RecoveryClosed, ReclaimClosed, Duplicate };
  store::Record record;
  Effect effect = Effect::None;
  engine::Observation observation;  // Effect::Observe
  std::string cluster;              // RecoveryClosed, Duplicate
  std::string clusterQueue;         // ReclaimClosed
  std::string reason;               // ReclaimClosed
  std::string outcome;              // RecoveryClosed, ReclaimClosed
  double strandedGpuSeconds = 0;    // RecoveryClosed
};

/// Turns engine outputs into durable records with JSON bodies (design §7 field names; times RFC
/// 3339 UTC, durations in seconds). Workload namespaces and names go through `redactor`.
std::vector<PendingRecord> toRecords(const engine::Outputs& outputs, const log::Redactor& redactor);

/// JSON bodies, exposed for the API's live views (open incidents, pending reclaims).
std::string incidentJson(const engine::IncidentRecord& incident);
std::string reclaimJson(const engine::ReclaimRecord& reclaim, const log::Redactor& redactor);

}  // namespace firstwork::app
