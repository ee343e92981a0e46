// report.json: every figure in base units for programs.
#include <nlohmann/json.hpp>

#include "detail/plots.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/report/render.hpp"

namespace firstwork::report {
namespace {

using nlohmann::json;

json time(const std::optional<SystemTime>& t) { return t ? json(formatRfc3339(*t)) : json(nullptr); }
json num(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json periodJson(const Period& p) {
  return {{"from", formatRfc3339(p.from)}, {"to", formatRfc3339(p.to)}};
}

json workload(const engine::WorkloadRef& w) {
  // uids are left out: they identify objects of one run and change from run to run.
  return {{"namespace", w.namespace_}, {"name", w.name}, {"cluster_queue", w.clusterQueue}};
}

json incidentJson(const IncidentView& v, const std::string& plot) {
  const auto& i = v.record;
  json curve = nullptr;
  if (v.curve) {
    json points = json::array();
    for (const auto& p : v.curve->points) points.push_back({p.seconds, p.gpus});
    curve = {{"points", points},
             {"end_seconds", v.curve->endSeconds},
             {"workloads_without_gpus", v.curve->workloadsWithoutGpus},
             {"plot", plot}};
  }
  return {{"id", i.id},
          {"cluster", i.cluster},
          {"outcome", std::string(engine::incidentOutcomeName(i.outcome))},
          {"failure_reason", i.failureReason},
          {"disconnect_reason", i.disconnectReason},
          {"disconnected_at", time(i.disconnectedAt)},
          {"reconnected_at", time(i.reconnectedAt)},
          {"disconnected_seconds", num(i.disconnectedSeconds)},
          {"usable_gpus", i.usableGpus},
          {"demand_gpus", i.demandGpus},
          {"first_dispatched_at", time(i.firstDispatchedAt)},
          {"first_running_at", time(i.firstRunningAt)},
          {"first_work_at", time(i.firstWorkAt)},
          {"last_productive_at", time(i.lastProductiveAt)},
          {"recovered_at", time(i.recoveredAt)},
          {"closed_at", time(i.closedAt)},
          {"recovery_seconds", num(i.recoverySeconds)},
          {"stranded_gpu_seconds", i.strandedGpuSeconds},
          {"excluded_workloads", i.excludedWorkloads},
          {"reconnect_to_first_work_seconds", v.reconnectToFirstWork},
          {"typical_first_work_seconds", num(v.typicalFirstWork())},
          {"slowest_first_work_seconds", num(v.slowestFirstWork())},
          {"recovery_curve", curve}};
}

json reclaimJson(const ReclaimView& v) {
  const auto& c = v.record;
  json victims = json::array();
  for (const auto& x : c.victims)
    victims.push_back({{"workload", workload(x.workload)},
                       {"cluster", x.cluster},
                       {"reason", x.reason},
                       {"evicted_at", formatRfc3339(x.evictedAt)},
                       {"gpus", x.gpus},
                       {"work_since", time(x.workSince)},
                       {"interrupted_gpu_seconds", x.interruptedGpuSeconds}});
  return {{"cluster", c.cluster},
          {"cluster_queue", c.preemptor.clusterQueue},
          {"preemptor", workload(c.preemptor)},
          {"preemptor_gpus", v.preemptorGpus ? json(*v.preemptorGpus) : json(nullptr)},
          {"reason", c.reason},
          {"outcome", std::string(engine::reclaimOutcomeName(c.outcome))},
          {"queued_at", time(c.queuedAt)},
          {"started_at", formatRfc3339(c.startedAt)},
          {"first_work_at", time(c.firstWorkAt)},
          {"reclaim_to_first_work_seconds", num(c.reclaimToFirstWorkSeconds)},
          {"interrupted_gpu_seconds", c.interruptedGpuSeconds},
          {"victims", victims}};
}

json periodReportJson(const PeriodReport& r, const Options& o) {
  json incidents = json::array();
  json failed = json::array();
  for (size_t k = 0; k < r.incidents.size(); ++k) {
    incidents.push_back(incidentJson(r.incidents[k], detail::recoveryPlotName(k, r.incidents[k])));
    if (r.incidents[k].record.outcome == engine::IncidentOutcome::Failed)
      failed.push_back(r.incidents[k].record.id);
  }
  json gaps = json::array();
  for (const auto& g : r.telemetryGaps)
    gaps.push_back({{"cluster", g.cluster},
                    {"lost_at", time(g.disconnectedAt)},
                    {"regained_at", time(g.reconnectedAt)},
                    {"seconds", num(g.disconnectedSeconds)}});
  json reclaims = json::array();
  for (const auto& c : r.reclaims) reclaims.push_back(reclaimJson(c));
  json latency = json::array();
  for (const auto& g : r.latencies) {
    const bool p = g.hasPercentiles();
    json labels = json::object();
    for (const auto& [k, v] : {std::pair{"cluster", &g.cluster}, {"cluster_queue", &g.clusterQueue},
                               {"stage", &g.stage}, {"reason", &g.reason},
                               {"outcome", &g.outcome}, {"source", &g.source}})
      if (!v->empty()) labels[k] = *v;
    latency.push_back({{"metric", "firstwork_" + g.metric},
                       {"labels", labels},
                       {"count", g.seconds.size()},
                       {"p50_seconds", p ? num(g.p50()) : json(nullptr)},
                       {"p90_seconds", p ? num(g.p90()) : json(nullptr)},
                       {"p99_seconds", p ? num(g.p99()) : json(nullptr)},
                       {"max_seconds", num(g.max())},
                       {"observations_seconds", p ? json(nullptr) : json(g.seconds)}});
  }
  json use = json::array();
  for (const auto& u : r.gpuUse)
    use.push_back({{"cluster", u.cluster},
                   {"cluster_queue", u.clusterQueue},
                   {"device_class", u.deviceClass},
                   {"reserved_gpu_seconds", u.reserved},
                   {"allocated_gpu_seconds", u.allocated},
                   {"productive_gpu_seconds", u.productive}});
  json capacity = json::array();
  for (const auto& c : r.capacity)
    capacity.push_back({{"cluster", c.cluster},
                        {"device_class", c.deviceClass},
                        {"published_gpu_seconds", c.published},
                        {"usable_gpu_seconds", c.usable}});
  const auto& t = r.totals;
  return {{"period", periodJson(r.period)},
          {"incidents", incidents},
          {"failed_recoveries", failed},
          {"telemetry_gaps", gaps},
          {"reclaims", reclaims},
          {"latency", latency},
          {"gpu_seconds",
           {{"by_queue", use},
            {"capacity", capacity},
            {"totals",
             {{"reserved", t.reserved},
              {"allocated", t.allocated},
              {"productive", t.productive},
              {"published", t.published},
              {"usable", t.usable}}}}},
          {"cost_allocation",
           {{"note", "allocation of capacity, not cash"},
            {"currency", o.currency},
            {"ownership_cost", num(r.costs.ownershipCost)},
            {"cost_per_productive_gpu_hour", num(r.costs.costPerProductiveGpuHour)},
            {"allocated_capacity_value", num(r.costs.allocatedValue)}}},
          {"unreadable_records", r.unreadableRecords}};
}

json comparisonJson(const Comparison& c) {
  json incidents = json::array();
  for (const auto& i : c.incidents)
    incidents.push_back(
        {{"cluster", i.cluster},
         {"ordinal", i.ordinal},
         {"baseline_id", i.baseline ? json(i.baseline->record.id) : json(nullptr)},
         {"id", i.current ? json(i.current->record.id) : json(nullptr)},
         {"baseline_stranded_gpu_seconds",
          i.baseline ? json(i.baseline->record.strandedGpuSeconds) : json(nullptr)},
         {"stranded_gpu_seconds", i.current ? json(i.current->record.strandedGpuSeconds) : json(nullptr)},
         {"reduction_gpu_seconds", num(i.reduction)},
         {"reduction_percent", num(i.reductionPercent)},
         {"value", num(i.value)},
         {"baseline_typical_first_work_seconds",
          i.baseline ? num(i.baseline->typicalFirstWork()) : json(nullptr)},
         {"typical_first_work_seconds", i.current ? num(i.current->typicalFirstWork()) : json(nullptr)},
         {"baseline_slowest_first_work_seconds",
          i.baseline ? num(i.baseline->slowestFirstWork()) : json(nullptr)},
         {"slowest_first_work_seconds", i.current ? num(i.current->slowestFirstWork()) : json(nullptr)},
         {"callouts", i.callouts}});
  json reclaims = json::array();
  for (const auto& g : c.reclaimGroups)
    reclaims.push_back({{"cluster_queue", g.clusterQueue},
                        {"reason", g.reason},
                        {"baseline_count", g.baselineCount},
                        {"count", g.currentCount},
                        {"baseline_typical_seconds", num(g.typicalBefore)},
                        {"typical_seconds", num(g.typicalAfter)},
                        {"baseline_slowest_seconds", num(g.slowestBefore)},
                        {"slowest_seconds", num(g.slowestAfter)},
                        {"baseline_failed", g.failedBefore},
                        {"failed", g.failedAfter},
                        {"baseline_interrupted_gpu_seconds", g.interruptedBefore},
                        {"interrupted_gpu_seconds", g.interruptedAfter},
                        {"earlier_access_gpu_seconds", g.earlierAccessGpuSeconds},
                        {"value", num(g.value)},
                        {"callouts", g.callouts}});
  return {{"baseline_period", periodJson(c.baseline)},
          {"rule",
           "incidents: per worker, k-th by reconnection with k-th; reclaims: per cluster queue "
           "and reason, k-th by submission with k-th"},
          {"incidents", incidents},
          {"reclaims", reclaims},
          {"baseline_stranded_gpu_seconds", c.strandedBefore},
          {"stranded_gpu_seconds", c.strandedAfter},
          {"stranded_value", num(c.strandedValue)},
          {"callouts", c.callouts}};
}

}  // namespace

OutputFile renderJson(const Report& report) {
  const auto& o = report.options;
  json j = periodReportJson(report.current, o);
  j["options"] = {{"currency", o.currency},
                  {"ownership_cost_per_gpu_hour", num(o.ownershipCostPerGpuHour)},
                  {"rate_per_gpu_hour", num(o.ratePerGpuHour)}};
  if (report.baseline) j["baseline"] = periodReportJson(*report.baseline, o);
  j["comparison"] = report.comparison ? comparisonJson(*report.comparison) : json(nullptr);
  return {"report.json", j.dump(2) + "\n"};
}

}  // namespace firstwork::report
