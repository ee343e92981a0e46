#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/result.hpp"
#include "firstwork/engine/outputs.hpp"
#include "firstwork/records/records.hpp"

namespace firstwork::store {
class Store;
}

// The capacity review (design §9): what the store says about a period, summarised for people who
// decide about GPU capacity. Three layers, each pure on the previous one's output except the
// first: loadPeriod() reads and decodes the store, buildReport() computes every figure, and the
// renderers (render.hpp) turn the figures into Markdown, CSV, JSON and SVG.
namespace firstwork::report {

/// A half-open period [from, to).
struct Period {
  SystemTime from{};
  SystemTime to{};
};

/// The decoded records of one period.
struct PeriodData {
  Period period;
  /// Incidents (both sources) whose record time — the disconnection, else the reconnection —
  /// lies in the period; their latest version.
  std::vector<engine::IncidentRecord> incidents;
  /// Reclaims whose record time — the preemptor's submission, else the first eviction — lies in
  /// the period.
  std::vector<engine::ReclaimRecord> reclaims;
  /// Milestones from the period's start until its end or the end of the last incident or reclaim
  /// that began in it (recovery curves and reclaim sizes need what happens after `to`).
  std::vector<records::StoredMilestone> milestones;
  /// Histogram samples over the same span as the milestones (latency summaries use only those
  /// inside the period; an incident's own samples may end after it).
  std::vector<engine::Observation> observations;
  /// GPU-second periods overlapping the period.
  std::vector<records::GpuSecondsPeriod> gpuSeconds;
  /// Records whose body could not be decoded: skipped, counted, reported.
  int64_t unreadableRecords = 0;
};

/// Reads a period from the store. Without `from`/`to` the period reaches from the earliest to
/// just after the latest record in the store; an unbounded query of an empty store is an error
/// (there is no period to speak of).
Result<PeriodData> loadPeriod(store::Store& store, std::optional<SystemTime> from,
                              std::optional<SystemTime> to);

/// Money figures; every one is an allocation of capacity, never cash spent.
struct Options {
  std::optional<double> ownershipCostPerGpuHour;  // cost of owning one GPU for an hour
  std::optional<double> ratePerGpuHour;           // value of one GPU-hour
  std::string currency = "US$";
};

/// Nearest-rank percentile of ascending `sorted` (the smallest value that at least p % of the
/// observations do not exceed); nullopt when empty. p in (0, 100].
std::optional<double> percentile(const std::vector<double>& sorted, double p);

/// Percentiles are stated only from this many observations on; below it every observation is
/// listed with the maximum (design §9).
inline constexpr size_t kMinObservationsForPercentiles = 20;

/// The samples of one histogram label set in the period.
struct LatencySummary {
  std::string metric;  // without the `firstwork_` prefix, e.g. "reclaim_to_first_work_seconds"
  // The metric's labels (design §6); empty when the metric has no such label.
  std::string cluster;
  std::string clusterQueue;
  std::string stage;
  std::string reason;
  std::string outcome;
  std::string source;
  std::vector<double> seconds;  // ascending
  bool hasPercentiles() const { return seconds.size() >= kMinObservationsForPercentiles; }
  std::optional<double> p50() const;
  std::optional<double> p90() const;
  std::optional<double> p99() const;
  std::optional<double> max() const;
  /// "cluster=worker-1, stage=reconnect_to_dispatched": the non-empty labels.
  std::string labelText() const;
};

/// Productive GPUs on a worker against time since its reconnection: a step function, each point
/// holding from its time on. It counts the workloads that began useful work on that worker from
/// the reconnection to the incident's close (the capacity the recovery brought back), each with
/// its GPUs, until it ended.
struct RecoveryCurve {
  struct Point {
    double seconds = 0;  // since reconnection
    int64_t gpus = 0;
  };
  std::vector<Point> points;  // starts at {0, 0}
  double endSeconds = 0;      // close (or failure) time since reconnection
  /// Workloads whose first-work milestone carried no GPU count (left out of the curve).
  int64_t workloadsWithoutGpus = 0;
};

/// A reconnection incident with what the report derives from it.
struct IncidentView {
  engine::IncidentRecord record;
  /// reconnected → first_work of each workload of this incident, ascending.
  std::vector<double> reconnectToFirstWork;
  std::optional<double> typicalFirstWork() const;  // nearest-rank median
  std::optional<double> slowestFirstWork() const;  // maximum
  std::optional<RecoveryCurve> curve;              // when it reconnected
};

struct ReclaimView {
  engine::ReclaimRecord record;
  /// The preemptor's GPUs (from its milestones); unset when unknown.
  std::optional<int64_t> preemptorGpus;
};

/// GPU-seconds by state for one (cluster, cluster queue, device class).
struct GpuUse {
  std::string cluster;
  std::string clusterQueue;
  std::string deviceClass;
  double reserved = 0;
  double allocated = 0;
  double productive = 0;
};

/// Capacity GPU-seconds for one (cluster, device class).
struct GpuCapacity {
  std::string cluster;
  std::string deviceClass;
  double published = 0;  // devices that exist (owned)
  double usable = 0;
};

struct GpuTotals {
  double reserved = 0;
  double allocated = 0;
  double productive = 0;
  double published = 0;
  double usable = 0;
};

/// Cost allocation (not cash): set when the option it needs was given and the divisor is > 0.
struct CostFigures {
  std::optional<double> ownershipCost;               // owned GPU-hours × cost per GPU-hour
  std::optional<double> costPerProductiveGpuHour;    // ownershipCost / productive GPU-hours
  std::optional<double> allocatedValue;              // allocated GPU-hours × rate
};

/// Every figure of one period.
struct PeriodReport {
  Period period;
  std::vector<IncidentView> incidents;                // MultiKueue incidents, by reconnection
  std::vector<engine::IncidentRecord> telemetryGaps;  // the daemon's own outages (probe)
  std::vector<ReclaimView> reclaims;                  // by submission
  std::vector<LatencySummary> latencies;              // by metric, then labels
  std::vector<GpuUse> gpuUse;                         // by cluster, queue, class
  std::vector<GpuCapacity> capacity;                  // by cluster, class
  GpuTotals totals;
  CostFigures costs;
  int64_t unreadableRecords = 0;

  int64_t recovered() const;
  int64_t failed() const;  // failed incidents (the open and recovering ones are neither)
  double strandedGpuSeconds() const;
  double interruptedGpuSeconds() const;  // over reclaims
};

/// One incident of the period against its baseline counterpart (either may be missing).
struct IncidentComparison {
  std::string cluster;
  size_t ordinal = 0;  // k-th incident of this worker in its period, from 1
  std::optional<IncidentView> baseline;
  std::optional<IncidentView> current;
  /// baseline − current stranded GPU-seconds (positive: fewer stranded now); both present only.
  std::optional<double> reduction;
  std::optional<double> reductionPercent;  // of the baseline's; unset when it was 0
  std::optional<double> value;             // reduction in GPU-hours × rate
  std::vector<std::string> callouts;       // slower tail, new failure, more stranded, unmatched
};

/// One reclaim against its baseline counterpart.
struct ReclaimComparison {
  std::string clusterQueue;
  std::string reason;
  size_t ordinal = 0;  // k-th reclaim of this (queue, reason) in its period, from 1
  std::optional<ReclaimView> baseline;
  std::optional<ReclaimView> current;
  /// (baseline − current time to first work) × the preemptor's GPUs: GPU-seconds of earlier
  /// (positive) or later access. Both present with times and GPUs only.
  std::optional<double> earlierAccessGpuSeconds;
};

/// The reclaims of one (queue, reason), before and after.
struct ReclaimGroupComparison {
  std::string clusterQueue;
  std::string reason;
  size_t baselineCount = 0;
  size_t currentCount = 0;
  std::optional<double> typicalBefore, typicalAfter;  // nearest-rank median time to first work
  std::optional<double> slowestBefore, slowestAfter;
  double interruptedBefore = 0;  // victims' lost GPU-seconds
  double interruptedAfter = 0;
  size_t failedBefore = 0;
  size_t failedAfter = 0;
  double earlierAccessGpuSeconds = 0;  // sum over the pairs that have it
  std::optional<double> value;         // earlier access in GPU-hours × rate
  std::vector<std::string> callouts;
};

struct Comparison {
  Period baseline;
  std::vector<IncidentComparison> incidents;  // by worker, then ordinal
  std::vector<ReclaimComparison> reclaims;    // by queue, reason, ordinal
  std::vector<ReclaimGroupComparison> reclaimGroups;
  double strandedBefore = 0;  // over all MultiKueue incidents of each period
  double strandedAfter = 0;
  std::optional<double> strandedValue;  // (before − after) in GPU-hours × rate
  /// Every callout of the comparison, in order: slower tails and new failures are stated even
  /// when the typical figures improved.
  std::vector<std::string> callouts;
};

struct Report {
  Options options;
  PeriodReport current;
  std::optional<PeriodReport> baseline;
  std::optional<Comparison> comparison;
};

/// Computes every figure of a period.
PeriodReport buildPeriodReport(const PeriodData& data, const Options& options);

/// Pairs the two periods drill by drill. Matching rule: MultiKueue incidents are grouped by
/// worker and ordered by reconnection (disconnection when they never reconnected); the k-th of
/// the baseline is compared with the k-th of the period. Reclaims are grouped by the preemptor's
/// cluster queue and reason and ordered by submission (then first eviction, then preemptor
/// namespace/name); again k-th with k-th. What has no counterpart is listed on its own.
Comparison compare(const PeriodReport& baseline, const PeriodReport& current,
                   const Options& options);

/// The whole report: the period, and with a baseline its comparison.
Report buildReport(const PeriodData& current, const PeriodData* baseline, const Options& options);

}  // namespace firstwork::report
