// Reading durable records back: the restart path (open incidents, pending reclaims) and the
// capacity-review report. Typed field reads never throw: a field of the wrong type reads as absent.
#include <nlohmann/json.hpp>

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/records/records.hpp"

namespace firstwork::records {
namespace {

using nlohmann::json;

std::optional<SystemTime> timeField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  auto t = parseRfc3339(it->get<std::string>());
  if (!t.ok()) return std::nullopt;
  return *t;
}
std::string stringField(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::optional<double> numberField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}
int64_t integerField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return 0;
  return it->is_number_integer() ? it->get<int64_t>() : static_cast<int64_t>(it->get<double>());
}
bool boolField(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}
engine::WorkloadRef workloadFromJson(const json& j) {
  engine::WorkloadRef w;
  if (!j.is_object()) return w;
  w.cluster = stringField(j, "cluster");
  w.namespace_ = stringField(j, "namespace");
  w.name = stringField(j, "name");
  w.uid = stringField(j, "uid");
  w.clusterQueue = stringField(j, "cluster_queue");
  w.localQueue = stringField(j, "local_queue");
  return w;
}
/// The body as a JSON object, or a discarded value.
json parseObject(const std::string& body) {
  auto j = json::parse(body, nullptr, false);
  if (!j.is_object()) return json(json::value_t::discarded);
  return j;
}

}  // namespace

std::optional<engine::IncidentRecord> incidentFromJson(const std::string& body) {
  auto j = parseObject(body);
  if (j.is_discarded()) return std::nullopt;
  engine::IncidentRecord i;
  i.id = stringField(j, "id");
  i.cluster = stringField(j, "cluster");
  if (i.id.empty() || i.cluster.empty()) return std::nullopt;
  i.source = stringField(j, "source") == "probe" ? engine::IncidentSource::Probe
                                                 : engine::IncidentSource::MultiKueue;
  auto outcome = stringField(j, "outcome");
  i.outcome = outcome == "open"         ? engine::IncidentOutcome::Open
              : outcome == "recovering" ? engine::IncidentOutcome::Recovering
              : outcome == "recovered"  ? engine::IncidentOutcome::Recovered
                                        : engine::IncidentOutcome::Failed;
  i.disconnectedAt = timeField(j, "disconnected_at");
  i.reconnectedAt = timeField(j, "reconnected_at");
  i.disconnectReason = stringField(j, "disconnect_reason");
  i.usableGpus = integerField(j, "usable_gpus");
  i.demandGpus = integerField(j, "demand_gpus");
  i.firstDispatchedAt = timeField(j, "first_dispatched_at");
  i.firstRunningAt = timeField(j, "first_running_at");
  i.firstWorkAt = timeField(j, "first_work_at");
  i.lastProductiveAt = timeField(j, "last_productive_at");
  i.recoveredAt = timeField(j, "recovered_at");
  i.closedAt = timeField(j, "closed_at");
  i.strandedGpuSeconds = numberField(j, "stranded_gpu_seconds").value_or(0.0);
  if (auto cs = j.find("classes"); cs != j.end() && cs->is_array()) {
    for (const auto& c : *cs) {
      if (!c.is_object()) continue;
      engine::IncidentClassFigures f;
      f.deviceClass = stringField(c, "device_class");
      if (f.deviceClass.empty()) continue;
      f.unit = stringField(c, "unit");
      f.usable = integerField(c, "usable");
      f.demand = integerField(c, "demand");
      f.strandedSeconds = numberField(c, "stranded_seconds").value_or(0.0);
      f.unusableForBacklogSeconds = numberField(c, "unusable_for_backlog_seconds").value_or(0.0);
      f.physicalUnit = stringField(c, "physical_unit");
      f.physicalUsable = integerField(c, "physical_usable");
      f.physicalStrandedSeconds = numberField(c, "physical_stranded_seconds").value_or(0.0);
      i.classes.push_back(std::move(f));
    }
  }
  // Null while open; stores written before it was nullable hold 0 for an incident not closed.
  i.recoverySeconds = numberField(j, "recovery_seconds");
  if (!i.closedAt) i.recoverySeconds.reset();
  i.disconnectedSeconds = numberField(j, "disconnected_seconds");  // null: unknown, not 0
  i.excludedWorkloads = static_cast<int32_t>(integerField(j, "excluded_workloads"));
  i.failureReason = stringField(j, "failure_reason");
  if (auto t = timeField(j, "observed_at")) i.observedAt = *t;
  return i;
}

std::optional<engine::ReclaimRecord> reclaimFromJson(const std::string& body) {
  auto j = parseObject(body);
  if (j.is_discarded()) return std::nullopt;
  engine::ReclaimRecord r;
  r.id = stringField(j, "id");
  r.cluster = stringField(j, "cluster");
  auto started = timeField(j, "started_at");
  if (r.id.empty() || r.cluster.empty() || !started) return std::nullopt;
  r.startedAt = *started;
  const std::string outcome = stringField(j, "outcome");
  if (outcome == "pending") r.outcome = engine::ReclaimOutcome::Pending;
  else if (outcome == "completed") r.outcome = engine::ReclaimOutcome::Completed;
  else if (outcome == "failed") r.outcome = engine::ReclaimOutcome::Failed;
  else return std::nullopt;
  // The id is reclaim/<home cluster>/<preemptor uid>/<cycle id>.
  if (auto slash = r.id.rfind('/'); slash != std::string::npos) r.cycleId = r.id.substr(slash + 1);
  if (auto c = stringField(j, "cycle_id"); !c.empty()) r.cycleId = c;
  if (auto p = j.find("preemptor"); p != j.end()) r.preemptor = workloadFromJson(*p);
  if (r.preemptor.clusterQueue.empty()) r.preemptor.clusterQueue = stringField(j, "cluster_queue");
  r.reason = stringField(j, "reason");
  r.queuedAt = timeField(j, "queued_at");
  r.firstWorkAt = timeField(j, "first_work_at");
  r.reclaimToFirstWorkSeconds = numberField(j, "reclaim_to_first_work_seconds");
  r.interruptedGpuSeconds = numberField(j, "interrupted_gpu_seconds").value_or(0.0);
  if (auto t = timeField(j, "observed_at")) r.observedAt = *t;
  if (auto vs = j.find("victims"); vs != j.end() && vs->is_array()) {
    for (const auto& v : *vs) {
      if (!v.is_object()) continue;
      auto evicted = timeField(v, "evicted_at");
      if (!evicted) continue;
      engine::ReclaimVictim victim;
      if (auto w = v.find("workload"); w != v.end()) victim.workload = workloadFromJson(*w);
      if (victim.workload.uid.empty()) continue;  // cannot be matched to its workload again
      victim.cluster = stringField(v, "cluster");
      victim.reason = stringField(v, "reason");
      victim.evictedAt = *evicted;
      victim.gpus = integerField(v, "gpus");
      victim.workSince = timeField(v, "work_since");
      victim.interruptedGpuSeconds = numberField(v, "interrupted_gpu_seconds").value_or(0.0);
      victim.cycleId = stringField(v, "cycle_id");
      r.victims.push_back(std::move(victim));
    }
  }
  return r;
}

std::optional<StoredMilestone> milestoneFromJson(const std::string& body) {
  auto j = parseObject(body);
  if (j.is_discarded()) return std::nullopt;
  StoredMilestone m;
  if (auto w = j.find("workload"); w != j.end()) m.workload = workloadFromJson(*w);
  m.milestone = stringField(j, "milestone");
  auto t = timeField(j, "event_time");
  if (m.workload.uid.empty() || m.milestone.empty() || !t) return std::nullopt;
  m.eventTime = *t;
  m.cycleId = stringField(j, "cycle_id");
  m.executionCluster = stringField(j, "execution_cluster");
  m.signal = stringField(j, "signal");
  m.proxy = boolField(j, "proxy");
  m.reason = stringField(j, "reason");
  m.gpus = integerField(j, "gpus");
  return m;
}

std::optional<engine::OpenCycleRecord> openCycleFromJson(const std::string& body) {
  auto j = parseObject(body);
  if (j.is_discarded()) return std::nullopt;
  engine::OpenCycleRecord c;
  if (auto w = j.find("workload"); w != j.end()) c.workload = workloadFromJson(*w);
  c.cycleId = stringField(j, "cycle_id");
  if (c.workload.cluster.empty() || c.workload.uid.empty() || c.cycleId.empty()) return std::nullopt;
  c.key = "oc/" + c.workload.cluster + "/" + c.workload.uid + "/" + c.cycleId;
  c.workSince = timeField(j, "work_since");
  c.observedAt = timeField(j, "observed_at").value_or(SystemTime{});
  return c;
}

std::optional<engine::WorkerConnectionRecord> workerConnectionFromJson(const std::string& body) {
  auto j = parseObject(body);
  if (j.is_discarded()) return std::nullopt;
  engine::WorkerConnectionRecord c;
  c.worker = stringField(j, "worker");
  const std::string status = stringField(j, "status");
  auto since = timeField(j, "since");
  if (c.worker.empty() || (status != "True" && status != "False") || !since) return std::nullopt;
  c.active = status == "True";
  c.since = *since;
  c.managementCluster = stringField(j, "management_cluster");
  c.reason = stringField(j, "reason");
  c.observedAt = timeField(j, "observed_at").value_or(SystemTime{});
  return c;
}

std::optional<engine::Observation> observationFromJson(const std::string& key,
                                                       const std::string& body) {
  auto j = parseObject(body);
  if (j.is_discarded()) return std::nullopt;
  engine::Observation o;
  const std::string name = stringField(j, "histogram");
  bool known = false;
  for (size_t i = 0; i < engine::kHistogramKindCount && !known; ++i) {
    auto kind = static_cast<engine::HistogramKind>(i);
    if (engine::histogramMetricName(kind) == name) {
      o.histogram = kind;
      known = true;
    }
  }
  auto seconds = numberField(j, "seconds");
  auto t = timeField(j, "event_time");
  if (!known || !seconds || !t) return std::nullopt;
  o.key = key;
  o.seconds = *seconds;
  o.eventTime = *t;
  o.cluster = stringField(j, "cluster");
  o.clusterQueue = stringField(j, "cluster_queue");
  o.stage = stringField(j, "stage");
  o.reason = stringField(j, "reason");
  o.outcome = stringField(j, "outcome");
  o.source = stringField(j, "source");
  o.resource = stringField(j, "resource");
  if (auto obs = timeField(j, "observed_at")) o.observedAt = *obs;
  return o;
}

std::optional<GpuSecondsPeriod> gpuSecondsFromJson(const std::string& body) {
  auto j = parseObject(body);
  if (j.is_discarded()) return std::nullopt;
  auto from = timeField(j, "from");
  auto to = timeField(j, "to");
  if (!from || !to || !(*from < *to)) return std::nullopt;
  GpuSecondsPeriod p{*from, *to, {}};
  if (auto items = j.find("items"); items != j.end() && items->is_array()) {
    for (const auto& i : *items) {
      if (!i.is_object()) continue;
      auto secs = numberField(i, "gpu_seconds");
      GpuSecondsItem item{stringField(i, "cluster"), stringField(i, "cluster_queue"),
                          stringField(i, "device_class"), stringField(i, "unit"),
                          stringField(i, "state"), secs.value_or(0.0)};
      if (!secs || item.state.empty() || item.cluster.empty()) continue;
      p.items.push_back(std::move(item));
    }
  }
  return p;
}

}  // namespace firstwork::records
