#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/engine/outputs.hpp"
#include "firstwork/store/store.hpp"

namespace firstwork::log {
class Redactor;
}

// The durable record vocabulary: what the daemon writes to the store (kinds, keys, JSON bodies)
// and how the API, the restart path and the capacity-review report read it back. One place for
// both directions, so a field renamed on one side cannot silently vanish on the other.
namespace firstwork::records {

/// Store kinds (the `kind` column) and what each one backs.
inline constexpr const char* kMilestoneKind = "milestone";      // /api/v1/workloads, report
inline constexpr const char* kObservationKind = "observation";  // histogram samples (dedupe), report
inline constexpr const char* kIncidentKind = "incident";        // /api/v1/incidents, report
inline constexpr const char* kIncidentClosedKind = "incident_closed";  // counted once
inline constexpr const char* kReclaimKind = "reclaim";          // /api/v1/reclaims, report
inline constexpr const char* kReclaimClosedKind = "reclaim_closed";    // counted once
inline constexpr const char* kDuplicateKind = "duplicate";      // duplicate executions
inline constexpr const char* kGpuSecondsKind = "gpu_seconds";   // GPU-seconds by state, report
inline constexpr const char* kOpenCycleKind = "open_cycle";     // restart: cycles not released
inline constexpr const char* kWorkerConnectionKind = "worker_connection";  // restart: Kueue's
                                                                         // view of each worker

/// What the exporter needs of a record besides the record itself, once the store confirms it is
/// new (every effect but None).
struct RecordEffect {
  engine::Observation observation;  // Effect::Observe (its key is the record's, not repeated here)
  std::string cluster;              // RecoveryClosed, Duplicate
  std::string clusterQueue;         // ReclaimClosed
  std::string reason;               // ReclaimClosed
  std::string outcome;              // RecoveryClosed, ReclaimClosed
  double strandedGpuSeconds = 0;    // RecoveryClosed (whole GPUs)
  std::vector<engine::IncidentClassFigures> classes;  // RecoveryClosed, per device class and unit
};

/// What one engine step writes: the records, and for each record what the exporter does with it
/// once the store confirms it is new. The detail is apart, and only there for an effect: most
/// records (milestones, open cycles) have none, and the first step after a sync of a large
/// estate holds a hundred thousand of them at once (bench/README.md, change 44).
struct PendingRecord {
  enum class Effect : uint8_t { None, Observe, RecoveryClosed, ReclaimClosed, Duplicate };
  store::Record record;
  Effect effect = Effect::None;
  std::unique_ptr<RecordEffect> detail;  // null exactly when effect is None

  /// The detail, made on first use.
  RecordEffect& setEffect(Effect e) {
    effect = e;
    if (!detail) detail = std::make_unique<RecordEffect>();
    return *detail;
  }
};

/// Turns engine outputs into durable records with JSON bodies (design §7 field names; times RFC
/// 3339 UTC, durations in seconds). Workload namespaces and names go through `redactor`. The
/// outputs are consumed: each kind of output is released once its records are made, so the
/// outputs and the records of a large step are not both held whole (pass an rvalue).
std::vector<PendingRecord> toRecords(engine::Outputs outputs, const log::Redactor& redactor);

/// JSON bodies, exposed for the API's live views (open incidents, pending reclaims).
std::string incidentJson(const engine::IncidentRecord& incident);
std::string reclaimJson(const engine::ReclaimRecord& reclaim, const log::Redactor& redactor);

// --- readers ----------------------------------------------------------------------------------
// Every reader is total: a malformed body or a field of the wrong type never throws; a body that
// lacks what identifies the record gives nullopt (the caller skips and counts it).

/// Parses an incident body written by incidentJson(). nullopt without id or cluster.
std::optional<engine::IncidentRecord> incidentFromJson(const std::string& body);

/// Parses a reclaim body written by reclaimJson(). Workload namespaces/names come back as stored
/// (possibly redacted hashes); the preemptor's cycle id is the id's last segment unless the body
/// carries `cycle_id`; victims' cycle ids come back when stored. nullopt for a body without id,
/// cluster, started_at or a known outcome; a malformed victim is skipped.
std::optional<engine::ReclaimRecord> reclaimFromJson(const std::string& body);

/// A milestone as stored (a row of a workload timeline). `milestone` is its name
/// (engine::milestoneName); `gpus` is 0 when the record predates the field or the workload's
/// devices were unknown.
struct StoredMilestone {
  engine::WorkloadRef workload;
  std::string cycleId;
  std::string milestone;
  SystemTime eventTime{};
  std::string executionCluster;
  std::string signal;
  bool proxy = false;
  std::string reason;
  int64_t gpus = 0;
};
/// nullopt without a workload uid, a milestone name or a valid event time.
std::optional<StoredMilestone> milestoneFromJson(const std::string& body);

/// An open admission cycle as stored (engine::OpenCycleRecord; its milestones are the milestone
/// records keyed ms/<cluster>/<uid>/<cycle id>/…). nullopt without workload cluster, uid or
/// cycle id.
std::optional<engine::OpenCycleRecord> openCycleFromJson(const std::string& body);

/// Kueue's last seen view of one worker as stored (engine::WorkerConnectionRecord, key
/// wc/<worker>). nullopt without worker, status ("True" or "False") or valid since.
std::optional<engine::WorkerConnectionRecord> workerConnectionFromJson(const std::string& body);

/// A histogram sample as stored (`key` is the record's key, not in the body). nullopt for an
/// unknown histogram name, or without seconds or event time.
std::optional<engine::Observation> observationFromJson(const std::string& key,
                                                       const std::string& body);

// --- GPU-seconds by state ---------------------------------------------------------------------

/// GPU-seconds accrued over one period for one label set. `state` is one of the
/// firstwork_gpu_seconds_total states (`reserved`, `allocated`, `productive`, with the workload's
/// cluster queue) or a capacity state integrated from firstwork_gpus (`published`, `usable`,
/// without queue).
struct GpuSecondsItem {
  std::string cluster;
  std::string clusterQueue;
  std::string deviceClass;
  /// The unit of the figure (firstwork_gpus `unit` label: gpu, mig, share, device, unknown); a
  /// share class has items in unit share and in the unit of the devices behind it. "" in records
  /// written before units existed. Never add items of different units.
  std::string unit;
  std::string state;
  double gpuSeconds = 0;
};

/// The GPU-seconds of every label set over [from, to), as the daemon measured them.
struct GpuSecondsPeriod {
  SystemTime from{};
  SystemTime to{};
  std::vector<GpuSecondsItem> items;
};

std::string gpuSecondsJson(const GpuSecondsPeriod& period);
/// nullopt without valid from < to; malformed items are skipped.
std::optional<GpuSecondsPeriod> gpuSecondsFromJson(const std::string& body);

/// Makes the daemon's GPU-second counters durable: the engine's cumulative
/// firstwork_gpu_seconds_total values (reserved, allocated, productive) and the integral of the
/// firstwork_gpus gauges `published` and `usable`, written as one `gpu_seconds` record per period
/// (increments since the previous record), so the report can sum them for any time range. The
/// figures are the live counters' own: they integrate at the daemon's steps, not at object event
/// times. Single-threaded (the event loop).
class GpuSecondsRecorder {
 public:
  /// `start`: when the engine began counting (the daemon's start); `period`: how much daemon
  /// time one record covers at most.
  explicit GpuSecondsRecorder(SystemTime start,
                              std::chrono::seconds period = std::chrono::seconds(60));
  /// Called with each snapshot (taken at `now`): integrates the capacity gauges since the
  /// previous call, and returns the period's record once `period` has passed since the last one
  /// (or at once with `flush`, e.g. at shutdown). Nothing is returned for a period without
  /// GPU-seconds.
  std::optional<store::Record> onSnapshot(const engine::Snapshot& snapshot, SystemTime now,
                                          bool flush = false);

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  // cluster, cluster queue, device class, unit, state
  std::chrono::seconds period_;
  SystemTime periodStart_;
  std::optional<SystemTime> lastCall_;
  std::map<Key, double> written_;        // cumulative engine counters at the last record
  std::map<Key, double> capacity_;       // capacity GPU-seconds integrated since the last record
  std::map<Key, int64_t> capacityNow_;   // capacity gauges at the last call
};

}  // namespace firstwork::records
