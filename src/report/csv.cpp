// CSV tables (RFC 4180), one file per table, for spreadsheets and further analysis.
#include <fmt/format.h>

#include "detail/format.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/report/render.hpp"

namespace firstwork::report {
namespace {

std::string field(std::string_view v) {
  if (v.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

/// A number without needless digits: up to three decimals, trailing zeros dropped.
std::string num(double v) {
  std::string s = detail::fixed(v, 3);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}
std::string num(const std::optional<double>& v) { return v ? num(*v) : ""; }
std::string time(const std::optional<SystemTime>& t) { return t ? formatRfc3339(*t) : ""; }
std::string hours(double gpuSeconds) { return num(gpuSeconds / 3600.0); }

class Csv {
 public:
  explicit Csv(const std::vector<std::string>& header) { row(header); }
  void row(const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) text_ += (i ? "," : "") + field(cells[i]);
    text_ += "\r\n";
  }
  std::string str() const { return text_; }

 private:
  std::string text_;
};

std::string workload(const engine::WorkloadRef& w) {
  return w.namespace_.empty() ? w.name : w.namespace_ + "/" + w.name;
}

}  // namespace

std::vector<OutputFile> renderCsv(const Report& report) {
  const auto& r = report.current;
  std::vector<OutputFile> files;

  Csv inc({"index", "cluster", "outcome", "failure_reason", "disconnected_at", "reconnected_at",
           "outage_seconds", "usable_gpus", "demand_gpus", "first_dispatched_at",
           "first_running_at", "first_work_at", "last_productive_at", "closed_at",
           "recovery_seconds", "stranded_gpu_seconds", "stranded_gpu_minutes", "workloads",
           "typical_first_work_seconds", "slowest_first_work_seconds"});
  for (size_t k = 0; k < r.incidents.size(); ++k) {
    const auto& v = r.incidents[k];
    const auto& i = v.record;
    inc.row({num(static_cast<double>(k + 1)), i.cluster,
             std::string(engine::incidentOutcomeName(i.outcome)), i.failureReason,
             time(i.disconnectedAt), time(i.reconnectedAt),
             num(i.disconnectedSeconds),
             num(static_cast<double>(i.usableGpus)), num(static_cast<double>(i.demandGpus)),
             time(i.firstDispatchedAt), time(i.firstRunningAt), time(i.firstWorkAt),
             time(i.lastProductiveAt), time(i.closedAt), num(i.recoverySeconds),
             num(i.strandedGpuSeconds), num(i.strandedGpuSeconds / 60.0),
             num(static_cast<double>(v.reconnectToFirstWork.size())), num(v.typicalFirstWork()),
             num(v.slowestFirstWork())});
  }
  files.push_back({"incidents.csv", inc.str()});

  Csv gaps({"cluster", "lost_at", "regained_at", "seconds"});
  for (const auto& g : r.telemetryGaps)
    gaps.row({g.cluster, time(g.disconnectedAt), time(g.reconnectedAt),
              num(g.disconnectedSeconds)});
  files.push_back({"telemetry_gaps.csv", gaps.str()});

  Csv rec({"index", "cluster", "cluster_queue", "preemptor", "reason", "outcome", "queued_at",
           "started_at", "first_work_at", "reclaim_to_first_work_seconds", "preemptor_gpus",
           "victims", "victim_gpus", "interrupted_gpu_seconds"});
  for (size_t k = 0; k < r.reclaims.size(); ++k) {
    const auto& v = r.reclaims[k];
    const auto& c = v.record;
    std::string victims;
    int64_t gpus = 0;
    for (const auto& x : c.victims) {
      victims += (victims.empty() ? "" : " ") + workload(x.workload);
      gpus += x.gpus;
    }
    rec.row({num(static_cast<double>(k + 1)), c.cluster, c.preemptor.clusterQueue,
             workload(c.preemptor), c.reason, std::string(engine::reclaimOutcomeName(c.outcome)),
             time(c.queuedAt), time(c.startedAt), time(c.firstWorkAt),
             num(c.reclaimToFirstWorkSeconds),
             v.preemptorGpus ? num(static_cast<double>(*v.preemptorGpus)) : "", victims,
             num(static_cast<double>(gpus)), num(c.interruptedGpuSeconds)});
  }
  files.push_back({"reclaims.csv", rec.str()});

  Csv lat({"metric", "cluster", "cluster_queue", "stage", "reason", "outcome", "source", "count",
           "p50_seconds", "p90_seconds", "p99_seconds", "max_seconds", "observations_seconds"});
  for (const auto& g : r.latencies) {
    const bool p = g.hasPercentiles();
    std::string all;
    if (!p)
      for (double s : g.seconds) all += (all.empty() ? "" : " ") + num(s);
    lat.row({"firstwork_" + g.metric, g.cluster, g.clusterQueue, g.stage, g.reason, g.outcome,
             g.source, num(static_cast<double>(g.seconds.size())), p ? num(g.p50()) : "",
             p ? num(g.p90()) : "", p ? num(g.p99()) : "", num(g.max()), all});
  }
  files.push_back({"latency.csv", lat.str()});

  Csv use({"cluster", "cluster_queue", "device_class", "reserved_gpu_hours", "allocated_gpu_hours",
           "productive_gpu_hours"});
  for (const auto& u : r.gpuUse)
    use.row({u.cluster, u.clusterQueue, u.deviceClass, hours(u.reserved), hours(u.allocated),
             hours(u.productive)});
  files.push_back({"gpu_hours.csv", use.str()});
  Csv cap({"cluster", "device_class", "published_gpu_hours", "usable_gpu_hours"});
  for (const auto& c : r.capacity)
    cap.row({c.cluster, c.deviceClass, hours(c.published), hours(c.usable)});
  files.push_back({"capacity.csv", cap.str()});

  if (report.comparison) {
    const auto& c = *report.comparison;
    Csv ci({"cluster", "ordinal", "baseline_reconnected_at", "reconnected_at",
            "baseline_stranded_gpu_seconds", "stranded_gpu_seconds", "reduction_gpu_seconds",
            "reduction_percent", "value", "baseline_typical_first_work_seconds",
            "typical_first_work_seconds", "baseline_slowest_first_work_seconds",
            "slowest_first_work_seconds", "baseline_outcome", "outcome", "callouts"});
    for (const auto& i : c.incidents) {
      auto b = i.baseline ? &*i.baseline : nullptr;
      auto a = i.current ? &*i.current : nullptr;
      std::string callouts;
      for (const auto& s : i.callouts) callouts += (callouts.empty() ? "" : "; ") + s;
      ci.row({i.cluster, num(static_cast<double>(i.ordinal)), b ? time(b->record.reconnectedAt) : "",
              a ? time(a->record.reconnectedAt) : "", b ? num(b->record.strandedGpuSeconds) : "",
              a ? num(a->record.strandedGpuSeconds) : "", num(i.reduction),
              num(i.reductionPercent), num(i.value), b ? num(b->typicalFirstWork()) : "",
              a ? num(a->typicalFirstWork()) : "", b ? num(b->slowestFirstWork()) : "",
              a ? num(a->slowestFirstWork()) : "",
              b ? std::string(engine::incidentOutcomeName(b->record.outcome)) : "",
              a ? std::string(engine::incidentOutcomeName(a->record.outcome)) : "", callouts});
    }
    files.push_back({"comparison_incidents.csv", ci.str()});
    Csv cr({"cluster_queue", "reason", "baseline_reclaims", "reclaims",
            "baseline_typical_seconds", "typical_seconds", "baseline_slowest_seconds",
            "slowest_seconds", "baseline_failed", "failed", "baseline_interrupted_gpu_seconds",
            "interrupted_gpu_seconds", "earlier_access_gpu_seconds", "value", "callouts"});
    for (const auto& g : c.reclaimGroups) {
      std::string callouts;
      for (const auto& s : g.callouts) callouts += (callouts.empty() ? "" : "; ") + s;
      cr.row({g.clusterQueue, g.reason, num(static_cast<double>(g.baselineCount)),
              num(static_cast<double>(g.currentCount)), num(g.typicalBefore), num(g.typicalAfter),
              num(g.slowestBefore), num(g.slowestAfter), num(static_cast<double>(g.failedBefore)),
              num(static_cast<double>(g.failedAfter)), num(g.interruptedBefore),
              num(g.interruptedAfter), num(g.earlierAccessGpuSeconds), num(g.value), callouts});
    }
    files.push_back({"comparison_reclaims.csv", cr.str()});
  }
  return files;
}

}  // namespace firstwork::report
