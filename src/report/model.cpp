// Every figure of the capacity review, computed from the decoded records (report layer 2).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "detail/format.hpp"
#include "firstwork/report/report.hpp"

namespace firstwork::report {
namespace {

constexpr double kSecondsPerHour = 3600.0;

/// Order of the latency sections: recovery first, then reclaim, then the everyday latencies.
int metricRank(engine::HistogramKind k) {
  switch (k) {
    case engine::HistogramKind::ReconnectToFirstWork: return 0;
    case engine::HistogramKind::Recovery: return 1;
    case engine::HistogramKind::WorkerDisconnected: return 2;
    case engine::HistogramKind::ReclaimToFirstWork: return 3;
    case engine::HistogramKind::ReservationToFirstWork: return 4;
    case engine::HistogramKind::Stage: return 5;
    case engine::HistogramKind::ObservationLag: return 6;
  }
  return 7;
}

std::string metricName(engine::HistogramKind k) {
  std::string name(engine::histogramMetricName(k));
  const std::string prefix = "firstwork_";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

bool inPeriod(SystemTime t, const Period& p) { return p.from <= t && t < p.to; }

/// The device-class column of a GPU-hours row: the class, with its unit when that is not whole
/// GPUs ("nvidia.com/gpu.shared (share)", "nvidia.com/gpu.shared (gpu)" for the GPUs behind the
/// shares, "nvidia.com/mig-1g.10gb (mig)").
std::string unitRowLabel(const std::string& deviceClass, const std::string& unit) {
  if (unit.empty() || (unit == "gpu" && !deviceClass.ends_with(".shared"))) return deviceClass;
  return deviceClass + " (" + unit + ")";
}

/// When an incident happened, for ordering: its reconnection, else its disconnection.
SystemTime incidentTime(const engine::IncidentRecord& i) {
  if (i.reconnectedAt) return *i.reconnectedAt;
  if (i.disconnectedAt) return *i.disconnectedAt;
  return i.observedAt;
}

SystemTime reclaimTime(const engine::ReclaimRecord& r) { return r.queuedAt.value_or(r.startedAt); }

std::string workloadName(const engine::WorkloadRef& w) {
  return w.namespace_.empty() ? w.name : w.namespace_ + "/" + w.name;
}

RecoveryCurve recoveryCurve(const engine::IncidentRecord& inc, const Period& period,
                            const std::vector<records::StoredMilestone>& milestones) {
  const SystemTime r = *inc.reconnectedAt;
  const SystemTime end = inc.closedAt.value_or(std::max(r, period.to));
  RecoveryCurve c;
  c.endSeconds = toSeconds(end - r);
  // Where each (workload, cycle) of this worker began useful work, and when it ended.
  using Id = std::pair<std::string, std::string>;
  std::map<Id, std::pair<SystemTime, int64_t>> began;
  for (const auto& m : milestones) {
    if (m.milestone != "first_work" || m.executionCluster != inc.cluster) continue;
    if (m.eventTime < r || m.eventTime > end) continue;
    if (m.gpus <= 0) {
      ++c.workloadsWithoutGpus;
      continue;
    }
    began[{m.workload.uid, m.cycleId}] = {m.eventTime, m.gpus};
  }
  std::map<SystemTime, int64_t> steps;
  std::map<Id, SystemTime> ended;
  for (const auto& m : milestones) {
    if (m.milestone != "finished" && m.milestone != "evicted" && m.milestone != "preempted")
      continue;
    Id id{m.workload.uid, m.cycleId};
    auto b = began.find(id);
    if (b == began.end() || m.eventTime < b->second.first || m.eventTime > end) continue;
    auto [it, inserted] = ended.try_emplace(id, m.eventTime);
    if (!inserted) it->second = std::min(it->second, m.eventTime);
  }
  for (const auto& [id, b] : began) {
    steps[b.first] += b.second;
    if (auto e = ended.find(id); e != ended.end()) steps[e->second] -= b.second;
  }
  c.points.push_back({0, 0});
  int64_t gpus = 0;
  for (const auto& [t, d] : steps) {
    if (d == 0) continue;
    gpus += d;
    double s = toSeconds(t - r);
    if (c.points.back().seconds == s) c.points.back().gpus = gpus;
    else c.points.push_back({s, gpus});
  }
  return c;
}

}  // namespace

std::optional<double> percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return std::nullopt;
  // Nearest rank: the ceil(p/100 × n)-th smallest value (1-based).
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size()) - 1e-9));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

std::optional<double> LatencySummary::p50() const { return percentile(seconds, 50); }
std::optional<double> LatencySummary::p90() const { return percentile(seconds, 90); }
std::optional<double> LatencySummary::p99() const { return percentile(seconds, 99); }
std::optional<double> LatencySummary::max() const {
  if (seconds.empty()) return std::nullopt;
  return seconds.back();
}

std::string LatencySummary::labelText() const {
  std::string out;
  auto add = [&](const char* name, const std::string& v) {
    if (v.empty()) return;
    out += (out.empty() ? "" : ", ") + std::string(name) + "=" + v;
  };
  add("cluster", cluster);
  add("cluster_queue", clusterQueue);
  add("stage", stage);
  add("reason", reason);
  add("outcome", outcome);
  add("source", source);
  return out;
}

std::optional<double> IncidentView::typicalFirstWork() const {
  return percentile(reconnectToFirstWork, 50);
}
std::optional<double> IncidentView::slowestFirstWork() const {
  if (reconnectToFirstWork.empty()) return std::nullopt;
  return reconnectToFirstWork.back();
}

int64_t PeriodReport::recovered() const {
  return std::count_if(incidents.begin(), incidents.end(), [](const IncidentView& i) {
    return i.record.outcome == engine::IncidentOutcome::Recovered;
  });
}
int64_t PeriodReport::failed() const {
  return std::count_if(incidents.begin(), incidents.end(), [](const IncidentView& i) {
    return i.record.outcome == engine::IncidentOutcome::Failed;
  });
}
double PeriodReport::strandedGpuSeconds() const {
  double s = 0;
  for (const auto& i : incidents) s += i.record.strandedGpuSeconds;
  return s;
}
double PeriodReport::interruptedGpuSeconds() const {
  double s = 0;
  for (const auto& r : reclaims) s += r.record.interruptedGpuSeconds;
  return s;
}

PeriodReport buildPeriodReport(const PeriodData& data, const Options& options) {
  PeriodReport rep;
  rep.period = data.period;
  rep.unreadableRecords = data.unreadableRecords;

  // --- incidents -----------------------------------------------------------------------------
  for (const auto& i : data.incidents) {
    if (i.source == engine::IncidentSource::Probe) {
      rep.telemetryGaps.push_back(i);
      continue;
    }
    IncidentView v;
    v.record = i;
    const std::string prefix = "obs/reconnect_to_first_work/" + i.id + "/";
    for (const auto& o : data.observations)
      if (o.histogram == engine::HistogramKind::ReconnectToFirstWork && o.key.rfind(prefix, 0) == 0)
        v.reconnectToFirstWork.push_back(o.seconds);
    std::sort(v.reconnectToFirstWork.begin(), v.reconnectToFirstWork.end());
    if (i.reconnectedAt) v.curve = recoveryCurve(i, data.period, data.milestones);
    rep.incidents.push_back(std::move(v));
  }
  std::sort(rep.incidents.begin(), rep.incidents.end(), [](const auto& a, const auto& b) {
    return std::tuple(incidentTime(a.record), a.record.cluster, a.record.id) <
           std::tuple(incidentTime(b.record), b.record.cluster, b.record.id);
  });
  std::sort(rep.telemetryGaps.begin(), rep.telemetryGaps.end(), [](const auto& a, const auto& b) {
    return std::tuple(incidentTime(a), a.cluster, a.id) < std::tuple(incidentTime(b), b.cluster, b.id);
  });

  // --- reclaims ------------------------------------------------------------------------------
  for (const auto& r : data.reclaims) {
    ReclaimView v;
    v.record = r;
    for (const auto& m : data.milestones) {
      if (m.workload.uid == r.preemptor.uid && m.cycleId == r.cycleId && m.gpus > 0) {
        v.preemptorGpus = m.gpus;
        break;
      }
    }
    rep.reclaims.push_back(std::move(v));
  }
  std::sort(rep.reclaims.begin(), rep.reclaims.end(), [](const auto& a, const auto& b) {
    return std::tuple(reclaimTime(a.record), a.record.startedAt, workloadName(a.record.preemptor),
                      a.record.id) < std::tuple(reclaimTime(b.record), b.record.startedAt,
                                                workloadName(b.record.preemptor), b.record.id);
  });

  // --- latency summaries ---------------------------------------------------------------------
  using LatencyKey = std::tuple<int, std::string, std::string, std::string, std::string,
                                std::string, std::string, std::string>;
  std::map<LatencyKey, LatencySummary> groups;
  for (const auto& o : data.observations) {
    if (o.histogram == engine::HistogramKind::ObservationLag || !inPeriod(o.eventTime, data.period))
      continue;
    LatencyKey key{metricRank(o.histogram), metricName(o.histogram), o.cluster, o.clusterQueue,
                   o.stage, o.reason, o.outcome, o.source};
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted)
      it->second = LatencySummary{metricName(o.histogram), o.cluster, o.clusterQueue, o.stage,
                                  o.reason, o.outcome, o.source, {}};
    it->second.seconds.push_back(o.seconds);
  }
  for (auto& [key, g] : groups) {
    std::sort(g.seconds.begin(), g.seconds.end());
    rep.latencies.push_back(std::move(g));
  }

  // --- GPU-hours -----------------------------------------------------------------------------
  // A recorded period that straddles a bound counts with the share of it inside (the counters
  // accrue evenly enough within one minute).
  std::map<std::tuple<std::string, std::string, std::string>, GpuUse> use;
  std::map<std::pair<std::string, std::string>, GpuCapacity> capacity;
  for (const auto& p : data.gpuSeconds) {
    SystemTime a = std::max(p.from, data.period.from);
    SystemTime b = std::min(p.to, data.period.to);
    if (!(a < b)) continue;
    const double share = toSeconds(b - a) / toSeconds(p.to - p.from);
    for (const auto& item : p.items) {
      const double secs = item.gpuSeconds * share;
      // Units are never added (docs/metrics.md): a row per device class and unit, labelled with
      // the unit unless it is the whole GPUs of a class that is not shared; the totals (and the
      // costs per GPU-hour) count whole GPUs only ("" = records written before units).
      const std::string shown = unitRowLabel(item.deviceClass, item.unit);
      const bool wholeGpus = item.unit.empty() || item.unit == "gpu";
      if (item.state == "published" || item.state == "usable") {
        auto& c = capacity[{item.cluster, shown}];
        c.cluster = item.cluster;
        c.deviceClass = shown;
        (item.state == "published" ? c.published : c.usable) += secs;
        if (wholeGpus) (item.state == "published" ? rep.totals.published : rep.totals.usable) += secs;
        continue;
      }
      double GpuUse::*field = item.state == "reserved"    ? &GpuUse::reserved
                              : item.state == "allocated" ? &GpuUse::allocated
                              : item.state == "productive" ? &GpuUse::productive
                                                           : nullptr;
      double GpuTotals::*total = item.state == "reserved"    ? &GpuTotals::reserved
                                 : item.state == "allocated" ? &GpuTotals::allocated
                                 : item.state == "productive" ? &GpuTotals::productive
                                                              : nullptr;
      if (field == nullptr) continue;  // a state this build does not know
      auto& u = use[{item.cluster, item.clusterQueue, shown}];
      u.cluster = item.cluster;
      u.clusterQueue = item.clusterQueue;
      u.deviceClass = shown;
      u.*field += secs;
      if (wholeGpus) rep.totals.*total += secs;
    }
  }
  for (auto& [k, u] : use) rep.gpuUse.push_back(std::move(u));
  for (auto& [k, c] : capacity) rep.capacity.push_back(std::move(c));

  // --- cost allocation -----------------------------------------------------------------------
  if (options.ownershipCostPerGpuHour && rep.totals.published > 0) {
    rep.costs.ownershipCost = rep.totals.published / kSecondsPerHour * *options.ownershipCostPerGpuHour;
    if (rep.totals.productive > 0)
      rep.costs.costPerProductiveGpuHour =
          *rep.costs.ownershipCost / (rep.totals.productive / kSecondsPerHour);
  }
  if (options.ratePerGpuHour)
    rep.costs.allocatedValue = rep.totals.allocated / kSecondsPerHour * *options.ratePerGpuHour;
  return rep;
}

Comparison compare(const PeriodReport& baseline, const PeriodReport& current,
                   const Options& options) {
  using detail::duration;
  using detail::gpuMinutes;
  Comparison cmp;
  cmp.baseline = baseline.period;
  auto value = [&](double gpuSeconds) -> std::optional<double> {
    if (!options.ratePerGpuHour) return std::nullopt;
    return gpuSeconds / kSecondsPerHour * *options.ratePerGpuHour;
  };

  // --- incidents: k-th of a worker against k-th of the same worker ----------------------------
  std::map<std::string, std::pair<std::vector<const IncidentView*>, std::vector<const IncidentView*>>>
      byWorker;
  for (const auto& i : baseline.incidents) byWorker[i.record.cluster].first.push_back(&i);
  for (const auto& i : current.incidents) byWorker[i.record.cluster].second.push_back(&i);
  for (const auto& [worker, lists] : byWorker) {
    const auto& [before, after] = lists;
    for (size_t k = 0; k < std::max(before.size(), after.size()); ++k) {
      IncidentComparison c;
      c.cluster = worker;
      c.ordinal = k + 1;
      if (k < before.size()) c.baseline = *before[k];
      if (k < after.size()) c.current = *after[k];
      const std::string who = fmt::format("{} incident {}", worker, k + 1);
      const bool failedNow =
          c.current && c.current->record.outcome == engine::IncidentOutcome::Failed;
      const bool failedBefore =
          c.baseline && c.baseline->record.outcome == engine::IncidentOutcome::Failed;
      if (c.baseline && c.current) {
        const double b = c.baseline->record.strandedGpuSeconds;
        const double a = c.current->record.strandedGpuSeconds;
        c.reduction = b - a;
        if (b > 0) c.reductionPercent = (b - a) / b * 100.0;
        c.value = value(b - a);
        if (failedNow && !failedBefore)
          c.callouts.push_back(fmt::format("{}: NEW FAILURE — the recovery failed ({}), the "
                                           "baseline's recovered",
                                           who, c.current->record.failureReason));
        auto sb = c.baseline->slowestFirstWork(), sa = c.current->slowestFirstWork();
        if (sb && sa && *sa > *sb)
          c.callouts.push_back(fmt::format(
              "{}: SLOWER TAIL — slowest reconnection to first work {} → {} (typical {} → {})",
              who, duration(*sb), duration(*sa), duration(c.baseline->typicalFirstWork()),
              duration(c.current->typicalFirstWork())));
        if (a > b)
          c.callouts.push_back(fmt::format("{}: MORE STRANDED — {} → {} GPU-minutes", who,
                                           gpuMinutes(b), gpuMinutes(a)));
      } else if (c.current) {
        c.callouts.push_back(fmt::format("{}: no baseline counterpart{}", who,
                                         failedNow ? " — NEW FAILURE: the recovery failed" : ""));
      } else {
        c.callouts.push_back(fmt::format("{}: only in the baseline", who));
      }
      for (const auto& s : c.callouts) cmp.callouts.push_back(s);
      cmp.incidents.push_back(std::move(c));
    }
  }
  cmp.strandedBefore = baseline.strandedGpuSeconds();
  cmp.strandedAfter = current.strandedGpuSeconds();
  cmp.strandedValue = value(cmp.strandedBefore - cmp.strandedAfter);

  // --- reclaims: k-th of a (queue, reason) against k-th ---------------------------------------
  using GroupKey = std::pair<std::string, std::string>;
  std::map<GroupKey, std::pair<std::vector<const ReclaimView*>, std::vector<const ReclaimView*>>>
      groups;
  for (const auto& r : baseline.reclaims)
    groups[{r.record.preemptor.clusterQueue, r.record.reason}].first.push_back(&r);
  for (const auto& r : current.reclaims)
    groups[{r.record.preemptor.clusterQueue, r.record.reason}].second.push_back(&r);
  for (const auto& [key, lists] : groups) {
    const auto& [before, after] = lists;
    ReclaimGroupComparison g;
    g.clusterQueue = key.first;
    g.reason = key.second;
    g.baselineCount = before.size();
    g.currentCount = after.size();
    std::vector<double> tb, ta;
    for (const auto* r : before) {
      if (r->record.reclaimToFirstWorkSeconds) tb.push_back(*r->record.reclaimToFirstWorkSeconds);
      g.interruptedBefore += r->record.interruptedGpuSeconds;
      g.failedBefore += r->record.outcome == engine::ReclaimOutcome::Failed;
    }
    for (const auto* r : after) {
      if (r->record.reclaimToFirstWorkSeconds) ta.push_back(*r->record.reclaimToFirstWorkSeconds);
      g.interruptedAfter += r->record.interruptedGpuSeconds;
      g.failedAfter += r->record.outcome == engine::ReclaimOutcome::Failed;
    }
    std::sort(tb.begin(), tb.end());
    std::sort(ta.begin(), ta.end());
    g.typicalBefore = percentile(tb, 50);
    g.typicalAfter = percentile(ta, 50);
    if (!tb.empty()) g.slowestBefore = tb.back();
    if (!ta.empty()) g.slowestAfter = ta.back();
    for (size_t k = 0; k < std::max(before.size(), after.size()); ++k) {
      ReclaimComparison c;
      c.clusterQueue = key.first;
      c.reason = key.second;
      c.ordinal = k + 1;
      if (k < before.size()) c.baseline = *before[k];
      if (k < after.size()) c.current = *after[k];
      if (c.baseline && c.current && c.baseline->record.reclaimToFirstWorkSeconds &&
          c.current->record.reclaimToFirstWorkSeconds) {
        auto gpus = c.current->preemptorGpus ? c.current->preemptorGpus : c.baseline->preemptorGpus;
        if (gpus) {
          c.earlierAccessGpuSeconds = (*c.baseline->record.reclaimToFirstWorkSeconds -
                                       *c.current->record.reclaimToFirstWorkSeconds) *
                                      static_cast<double>(*gpus);
          g.earlierAccessGpuSeconds += *c.earlierAccessGpuSeconds;
        }
      }
      cmp.reclaims.push_back(std::move(c));
    }
    g.value = value(g.earlierAccessGpuSeconds);
    const std::string who = fmt::format("reclaims of {} ({})", g.clusterQueue, g.reason);
    if (g.failedAfter > g.failedBefore)
      g.callouts.push_back(fmt::format("{}: NEW FAILURE — {} failed, {} in the baseline", who,
                                       g.failedAfter, g.failedBefore));
    if (g.slowestBefore && g.slowestAfter && *g.slowestAfter > *g.slowestBefore)
      g.callouts.push_back(fmt::format(
          "{}: SLOWER TAIL — slowest submission to first work {} → {} (typical {} → {})", who,
          duration(*g.slowestBefore), duration(*g.slowestAfter), duration(g.typicalBefore),
          duration(g.typicalAfter)));
    if (g.interruptedAfter > g.interruptedBefore)
      g.callouts.push_back(fmt::format("{}: MORE INTERRUPTED WORK — {} → {} GPU-minutes", who,
                                       gpuMinutes(g.interruptedBefore),
                                       gpuMinutes(g.interruptedAfter)));
    if (before.size() != after.size())
      g.callouts.push_back(fmt::format("{}: {} in the baseline, {} now; the extra ones have no "
                                       "counterpart",
                                       who, before.size(), after.size()));
    for (const auto& s : g.callouts) cmp.callouts.push_back(s);
    cmp.reclaimGroups.push_back(std::move(g));
  }
  return cmp;
}

Report buildReport(const PeriodData& current, const PeriodData* baseline, const Options& options) {
  Report r;
  r.options = options;
  r.current = buildPeriodReport(current, options);
  if (baseline) {
    r.baseline = buildPeriodReport(*baseline, options);
    r.comparison = compare(*r.baseline, r.current, options);
  }
  return r;
}

}  // namespace firstwork::report
