#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "detail/generators.hpp"
#include "detail/kinds.hpp"
#include "detail/naming.hpp"
#include "detail/placeholders.hpp"
#include "detail/yaml_reader.hpp"
#include "firstwork/core/utf8.hpp"
#include "firstwork/scenario/scenario.hpp"

namespace firstwork::scenario {

std::string_view clusterRoleName(ClusterRole role) {
  switch (role) {
    case ClusterRole::Manager: return "manager";
    case ClusterRole::Worker: return "worker";
    case ClusterRole::Standalone: return "standalone";
  }
  return "?";
}

std::string_view stepActionName(StepAction action) {
  switch (action) {
    case StepAction::Create: return "create";
    case StepAction::Update: return "update";
    case StepAction::Apply: return "apply";
    case StepAction::Patch: return "patch";
    case StepAction::Delete: return "delete";
    case StepAction::CutConnection: return "cut";
    case StepAction::RestoreConnection: return "restore";
  }
  return "?";
}

bool ExpectedFigures::states(std::string_view section) const {
  return std::find(stated.begin(), stated.end(), section) != stated.end();
}

const ScenarioCluster* Scenario::cluster(std::string_view clusterName) const {
  for (const auto& c : clusters)
    if (c.name == clusterName) return &c;
  return nullptr;
}

namespace {

using detail::GenContext;
using detail::GenStep;
using detail::Json;
using detail::MapReader;
using detail::Problems;

constexpr const char* kActionKeys[] = {"create", "update", "apply", "patch", "delete", "job", "nodes",
                                       "multikueue_cluster", "kueue_connection", "resource_slice",
                                       "cut_daemon_connection"};

using detail::objectKey;

// A plain object step (create/update/apply/patch/delete) → GenSteps.
void plainStep(const YAML::Node& entry, const char* action, const std::string& path, Offset at,
               const std::vector<ScenarioCluster>& clusters, Problems& problems, std::vector<GenStep>& out) {
  YAML::Node clusterNode = entry["cluster"];
  std::string cluster;
  if (!clusterNode.IsDefined()) {
    problems.add(entry, path + ".cluster", fmt::format("required for {}", action));
  } else {
    cluster = clusterNode.Scalar();
    if (std::none_of(clusters.begin(), clusters.end(), [&](const auto& c) { return c.name == cluster; }))
      problems.add(clusterNode, path + ".cluster", fmt::format("unknown cluster \"{}\" (not in clusters:)", cluster));
  }
  YAML::Node body = entry[action];
  std::string bodyPath = path + "." + action;
  std::string act(action);
  int64_t repeat = 1;
  if (entry["repeat"].IsDefined()) {
    try {
      repeat = entry["repeat"].as<int64_t>();
    } catch (const YAML::Exception&) {
      repeat = 0;
    }
    if (repeat < 1) {
      problems.add(entry["repeat"], path + ".repeat", "expected a positive integer");
      return;
    }
    if (act == "delete") {
      problems.add(entry["repeat"], path + ".repeat", "not supported for delete");
      return;
    }
  }
  if (!body.IsDefined() || !body.IsMap()) {
    problems.add(body.IsDefined() ? body : entry, bodyPath, "expected a mapping");
    return;
  }
  std::string kind, ns, name;
  Json json;
  if (act == "delete") {
    MapReader d(body, bodyPath, problems, {"kind", "namespace", "name"});
    kind = d.str("kind", true).value_or("");
    ns = d.str("namespace").value_or("");
    name = d.str("name", true).value_or("");
  } else {
    json = detail::yamlToJson(body);
    for (auto it = json.begin(); it != json.end(); ++it) {
      static const std::set<std::string> kTop{"apiVersion", "kind", "metadata", "spec", "status"};
      if (!kTop.count(it.key()))
        problems.add(body[it.key()], bodyPath + "." + it.key(),
                     "unknown top-level object key (allowed: apiVersion, kind, metadata, spec, status)");
    }
    if (json.contains("kind") && json["kind"].is_string()) kind = json["kind"].get<std::string>();
    else problems.add(body, bodyPath + ".kind", "required");
    if (json.contains("metadata") && json["metadata"].is_object()) {
      const Json& md = json["metadata"];
      if (md.contains("name") && md["name"].is_string()) name = md["name"].get<std::string>();
      if (md.contains("namespace") && md["namespace"].is_string()) ns = md["namespace"].get<std::string>();
    }
    if (name.empty()) problems.add(body, bodyPath + ".metadata.name", "required");
  }
  const detail::KindInfo* info = kind.empty() ? nullptr : detail::findKind(kind);
  if (!kind.empty() && !info) {
    std::string list;
    for (const auto& k : detail::kKinds) list += (list.empty() ? "" : ", ") + std::string(k.kind);
    problems.add(body["kind"].IsDefined() ? body["kind"] : body, bodyPath + ".kind",
                 fmt::format("kind \"{}\" is not served by the simulated API server (served: {})", kind, list));
    return;
  }
  if (!info || name.empty()) return;
  if (info->namespaced && ns.empty())
    problems.add(body, bodyPath + (act == "delete" ? ".namespace" : ".metadata.namespace"),
                 fmt::format("required: {} is namespaced", kind));
  if (!info->namespaced && !ns.empty())
    problems.add(body, bodyPath + (act == "delete" ? ".namespace" : ".metadata.namespace"),
                 fmt::format("{} is cluster-scoped: no namespace", kind));
  if (act != "delete" && act != "patch" && !json.contains("apiVersion")) {
    // Keep the key order Kubernetes prints: apiVersion first.
    Json withVersion{{"apiVersion", info->apiVersion}};
    for (auto it = json.begin(); it != json.end(); ++it) withVersion[it.key()] = it.value();
    json = std::move(withVersion);
  }
  StepAction sa = act == "create"  ? StepAction::Create
                  : act == "update" ? StepAction::Update
                  : act == "apply"  ? StepAction::Apply
                  : act == "patch"  ? StepAction::Patch
                                    : StepAction::Delete;
  for (int64_t i = 0; i < repeat; ++i) {
    Json b = json;
    std::string n = name, space = ns;
    if (entry["repeat"].IsDefined()) {
      detail::substituteIndex(b, i);
      n = detail::substituteIndex(n, "{i}", i);
      space = detail::substituteIndex(space, "{i}", i);
    }
    out.push_back(GenStep{at, cluster, sa, kind, space, n, std::move(b),
                          fmt::format("{} {} {}{}{}", act, kind, space, space.empty() ? "" : "/", n)});
  }
}

void parseEntryBody(const YAML::Node& entry, const std::string& path, bool setup,
                    const std::vector<ScenarioCluster>& clusters, Problems& problems, std::vector<GenStep>& out);

void parseEntry(const YAML::Node& entry, const std::string& path, bool setup,
                const std::vector<ScenarioCluster>& clusters, Problems& problems, std::vector<GenStep>& out) {
  size_t first = out.size();
  parseEntryBody(entry, path, setup, clusters, problems, out);
  for (size_t i = first; i < out.size(); ++i) out[i].what = path + ": " + out[i].what;
}

void parseEntryBody(const YAML::Node& entry, const std::string& path, bool setup,
                    const std::vector<ScenarioCluster>& clusters, Problems& problems, std::vector<GenStep>& out) {
  if (!entry.IsMap()) {
    problems.add(entry, path, "expected a mapping");
    return;
  }
  {
    MapReader keys(entry, path, problems,
                   {"at", "cluster", "create", "update", "apply", "patch", "delete", "repeat", "job", "nodes",
                    "multikueue_cluster", "kueue_connection", "resource_slice", "cut_daemon_connection"});
  }
  std::vector<std::string> actions;
  for (const char* a : kActionKeys)
    if (entry[a].IsDefined()) actions.emplace_back(a);
  if (actions.size() != 1) {
    std::string list;
    for (const char* a : kActionKeys) list += (list.empty() ? "" : ", ") + std::string(a);
    problems.add(entry, path,
                 actions.empty() ? fmt::format("no action (one of: {})", list)
                                 : fmt::format("more than one action ({} and {}); one per entry", actions[0], actions[1]));
    return;
  }
  const std::string& action = actions[0];
  Offset at{0};
  if (entry["at"].IsDefined()) {
    auto o = detail::offsetOf(entry["at"], path + ".at", problems);
    if (!o) return;
    at = *o;
  } else if (!setup) {
    problems.add(entry, path + ".at", "required in the timeline");
    return;
  }
  if (setup && at.count() > 0) {
    problems.add(entry["at"], path + ".at", "objects: describe the estate at the drill start, so at must be ≤ 0");
    return;
  }
  bool generator = action != "create" && action != "update" && action != "apply" && action != "patch" &&
                   action != "delete";
  if (generator && entry["cluster"].IsDefined())
    problems.add(entry["cluster"], path + ".cluster",
                 fmt::format("{} names its cluster(s) inside (cluster/manager/worker keys)", action));
  if (generator && entry["repeat"].IsDefined())
    problems.add(entry["repeat"], path + ".repeat", fmt::format("{} has its own count", action));
  if (!generator) {
    plainStep(entry, action.c_str(), path, at, clusters, problems, out);
    return;
  }
  size_t first = out.size();
  GenContext ctx{clusters, problems, path + "." + action, at, out};
  YAML::Node body = entry[action];
  if (action == "job") detail::expandJob(body, ctx);
  else if (action == "nodes") detail::expandNodes(body, ctx);
  else if (action == "multikueue_cluster") detail::expandMultiKueueCluster(body, ctx);
  else if (action == "kueue_connection") detail::expandKueueConnection(body, ctx);
  else if (action == "resource_slice") detail::expandResourceSlice(body, ctx);
  else if (action == "cut_daemon_connection") detail::expandCutConnection(body, ctx);
  if (setup) {
    for (size_t i = first; i < out.size(); ++i)
      if (out[i].at.count() > 0) {
        problems.add(body, path + "." + action,
                     fmt::format("{} happens after the drill start ({}); put this entry in the timeline",
                                 out[i].what, formatOffset(out[i].at)));
        out.resize(first);
        return;
      }
  }
}

// ---------------------------------------------------------------------------------------------
// Expected figures

std::string resolveWorkloadRef(const std::string& ref) {
  // "job:<namespace>/<job>" names the Workload of a generated Job.
  if (ref.rfind("job:", 0) == 0) {
    std::string rest = ref.substr(4);
    auto slash = rest.find('/');
    if (slash != std::string::npos)
      return rest.substr(0, slash + 1) + jobWorkloadName(rest.substr(0, slash), rest.substr(slash + 1));
  }
  return ref;
}

bool nearlyEqual(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

double seconds(Offset o) { return static_cast<double>(o.count()) / 1000.0; }

template <typename T, typename F>
void parseList(const YAML::Node& parent, const char* key, const std::string& path, Problems& problems,
               ExpectedFigures& fig, std::vector<T>& out, F parseOne) {
  YAML::Node list = parent[key];
  if (!list.IsDefined()) return;
  fig.stated.emplace_back(key);
  if (list.IsNull()) return;
  if (!list.IsSequence()) {
    problems.add(list, path + "." + key, "expected a list");
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    T item;
    if (parseOne(list[i], fmt::format("{}.{}[{}]", path, key, i), item)) out.push_back(std::move(item));
  }
}

bool oneOf(const MapReader& r, const char* key, const std::string& value, std::initializer_list<const char*> allowed) {
  if (std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return value == a; })) return true;
  std::string list;
  for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  r.fail(key, fmt::format("\"{}\" is not one of: {}", value, list));
  return false;
}

void checkCluster(const MapReader& r, const char* key, const std::string& name, const std::vector<ScenarioCluster>& clusters) {
  if (!name.empty() && std::none_of(clusters.begin(), clusters.end(), [&](const auto& c) { return c.name == name; }))
    r.fail(key, fmt::format("unknown cluster \"{}\" (not in clusters:)", name));
}

void parseExpected(const YAML::Node& node, const std::string& path, const std::vector<ScenarioCluster>& clusters,
                   Problems& problems, ExpectedFigures& fig) {
  MapReader top(node, path, problems,
                {"incidents", "stranded", "latencies", "reclaims", "interruptions", "stuck", "duplicates",
                 "reservations_without_capacity", "pools", "capacity", "gpus_at_end", "outages",
                 "comparisons"});
  if (!top.ok()) return;
  static const std::initializer_list<const char*> kPhases{"disconnected", "idle", "pending_start", "starting"};

  parseList(node, "incidents", path, problems, fig, fig.incidents, [&](const YAML::Node& n, const std::string& p, ExpectedIncident& x) {
    MapReader r(n, p, problems,
                {"cluster", "source", "disconnected_at", "reconnected_at", "first_dispatched_at", "first_running_at",
                 "first_work_at", "recovered_at", "usable_gpus", "demand_gpus", "stranded_gpu_seconds", "outcome",
                 "classes"});
    if (!r.ok()) return false;
    x.cluster = r.str("cluster", true).value_or("");
    checkCluster(r, "cluster", x.cluster, clusters);
    x.source = r.str("source").value_or("multikueue");
    oneOf(r, "source", x.source, {"multikueue", "probe"});
    x.disconnectedAt = r.offset("disconnected_at", true).value_or(Offset{0});
    x.reconnectedAt = r.offset("reconnected_at", true).value_or(Offset{0});
    x.firstDispatchedAt = r.offset("first_dispatched_at");
    x.firstRunningAt = r.offset("first_running_at");
    x.firstWorkAt = r.offset("first_work_at");
    x.recoveredAt = r.offset("recovered_at");
    x.usableGpus = r.number("usable_gpus", true).value_or(0);
    x.demandGpus = r.number("demand_gpus", true).value_or(0);
    x.strandedGpuSeconds = r.number("stranded_gpu_seconds", true).value_or(0);
    x.outcome = r.str("outcome", true).value_or("");
    oneOf(r, "outcome", x.outcome, {"recovered", "failed"});
    if (x.reconnectedAt < x.disconnectedAt) r.fail("reconnected_at", "is before disconnected_at");
    if (x.recoveredAt && *x.recoveredAt < x.reconnectedAt) r.fail("recovered_at", "is before reconnected_at");
    if (x.outcome == "recovered" && !x.recoveredAt) r.fail("recovered_at", "required when the outcome is recovered");
    ExpectedFigures unused;
    double wholeGpus = 0;
    bool anyGpu = false;
    parseList(n, "classes", p, problems, unused, x.classes,
              [&](const YAML::Node& cn, const std::string& cp, ExpectedIncidentClass& c) {
                MapReader cr(cn, cp, problems,
                             {"device_class", "unit", "usable", "demand", "stranded_seconds", "physical_unit",
                              "physical_usable", "physical_stranded_seconds", "unusable_for_backlog_seconds"});
                if (!cr.ok()) return false;
                c.deviceClass = cr.str("device_class", true).value_or("");
                c.unit = cr.str("unit", true).value_or("");
                oneOf(cr, "unit", c.unit, {"gpu", "mig", "share", "device"});
                c.usable = cr.number("usable");
                c.demand = cr.number("demand");
                c.strandedSeconds = cr.number("stranded_seconds", true).value_or(0);
                c.physicalUnit = cr.str("physical_unit").value_or("");
                c.physicalUsable = cr.number("physical_usable");
                c.physicalStrandedSeconds = cr.number("physical_stranded_seconds");
                c.unusableForBacklogSeconds = cr.number("unusable_for_backlog_seconds");
                if (c.unit == "share" && (c.physicalUnit.empty() || !c.physicalStrandedSeconds))
                  cr.fail("physical_unit", "a share class states the devices behind it (physical_unit, "
                                           "physical_stranded_seconds)");
                if (c.unit != "share" && !c.physicalUnit.empty())
                  cr.fail("physical_unit", "only share classes have devices behind them");
                if (c.unit == "gpu") {
                  anyGpu = true;
                  wholeGpus += c.strandedSeconds;
                }
                return true;
              });
    // The headline adds whole-GPU classes only (docs/metrics.md): the file must agree with itself.
    if (anyGpu && !nearlyEqual(x.strandedGpuSeconds, wholeGpus))
      r.fail("stranded_gpu_seconds", fmt::format("{} ≠ Σ stranded_seconds of the classes in unit gpu = {}",
                                                 x.strandedGpuSeconds, wholeGpus));
    return true;
  });
  parseList(node, "stranded", path, problems, fig, fig.stranded, [&](const YAML::Node& n, const std::string& p, ExpectedStranded& x) {
    MapReader r(n, p, problems, {"cluster", "device_class", "phase", "gpu_seconds"});
    if (!r.ok()) return false;
    x.cluster = r.str("cluster", true).value_or("");
    checkCluster(r, "cluster", x.cluster, clusters);
    x.deviceClass = r.str("device_class", true).value_or("");
    x.phase = r.str("phase", true).value_or("");
    oneOf(r, "phase", x.phase, kPhases);
    x.gpuSeconds = r.number("gpu_seconds", true).value_or(0);
    return true;
  });
  parseList(node, "latencies", path, problems, fig, fig.latencies, [&](const YAML::Node& n, const std::string& p, ExpectedLatency& x) {
    MapReader r(n, p, problems, {"metric", "cluster", "cluster_queue", "stage", "reason", "outcome", "source", "count", "seconds", "at_least"});
    if (!r.ok()) return false;
    x.metric = r.str("metric", true).value_or("");
    oneOf(r, "metric", x.metric,
          {"reservation_to_first_work_seconds", "reclaim_to_first_work_seconds", "reconnect_to_first_work_seconds",
           "stage_seconds", "recovery_seconds", "worker_disconnected_seconds"});
    x.cluster = r.str("cluster").value_or("");
    checkCluster(r, "cluster", x.cluster, clusters);
    x.clusterQueue = r.str("cluster_queue").value_or("");
    x.stage = r.str("stage").value_or("");
    if (x.metric == "stage_seconds") {
      if (x.stage.empty()) r.fail("stage", "required for stage_seconds");
      else oneOf(r, "stage", x.stage,
                 {"queued_to_reserved", "reserved_to_dispatched", "reconnect_to_dispatched", "dispatched_to_scheduled",
                  "reserved_to_scheduled", "scheduled_to_running", "running_to_first_work", "evicted_to_released"});
    } else if (!x.stage.empty()) {
      r.fail("stage", "only for stage_seconds");
    }
    x.reason = r.str("reason").value_or("");
    x.outcome = r.str("outcome").value_or("");
    x.source = r.str("source").value_or("");
    x.count = static_cast<int>(r.integer("count", true, 1).value_or(1));
    x.seconds = r.number("seconds", true).value_or(0);
    x.atLeast = r.boolean("at_least").value_or(false);
    return true;
  });
  parseList(node, "reclaims", path, problems, fig, fig.reclaims, [&](const YAML::Node& n, const std::string& p, ExpectedReclaim& x) {
    MapReader r(n, p, problems,
                {"cluster", "cluster_queue", "preemptor", "reason", "queued_at", "first_work_at",
                 "reclaim_to_first_work_seconds", "victims", "interrupted_gpu_seconds", "outcome"});
    if (!r.ok()) return false;
    x.cluster = r.str("cluster", true).value_or("");
    checkCluster(r, "cluster", x.cluster, clusters);
    x.clusterQueue = r.str("cluster_queue", true).value_or("");
    x.preemptor = resolveWorkloadRef(r.str("preemptor", true).value_or(""));
    x.reason = r.str("reason", true).value_or("");
    oneOf(r, "reason", x.reason, {"InCohortReclamation", "InCohortReclaimWhileBorrowing", "InCohortFairSharing"});
    x.queuedAt = r.offset("queued_at", true).value_or(Offset{0});
    x.firstWorkAt = r.offset("first_work_at");
    x.reclaimToFirstWorkSeconds = r.number("reclaim_to_first_work_seconds", true).value_or(0);
    for (auto& v : r.strings("victims")) x.victims.push_back(resolveWorkloadRef(v));
    x.interruptedGpuSeconds = r.number("interrupted_gpu_seconds", true).value_or(0);
    x.outcome = r.str("outcome", true).value_or("");
    oneOf(r, "outcome", x.outcome, {"completed", "failed"});
    if (x.firstWorkAt && !nearlyEqual(x.reclaimToFirstWorkSeconds, seconds(*x.firstWorkAt - x.queuedAt)))
      r.fail("reclaim_to_first_work_seconds",
             fmt::format("{} ≠ first_work_at − queued_at = {} s", x.reclaimToFirstWorkSeconds, seconds(*x.firstWorkAt - x.queuedAt)));
    return true;
  });
  parseList(node, "interruptions", path, problems, fig, fig.interruptions,
            [&](const YAML::Node& n, const std::string& p, ExpectedInterruption& x) {
              MapReader r(n, p, problems,
                          {"cluster", "cluster_queue", "workload", "reason", "gpus", "evicted_at", "work_since", "gpu_seconds"});
              if (!r.ok()) return false;
              x.cluster = r.str("cluster", true).value_or("");
              checkCluster(r, "cluster", x.cluster, clusters);
              x.clusterQueue = r.str("cluster_queue", true).value_or("");
              x.workload = resolveWorkloadRef(r.str("workload", true).value_or(""));
              x.reason = r.str("reason", true).value_or("");
              x.gpus = r.number("gpus", true).value_or(0);
              x.evictedAt = r.offset("evicted_at", true).value_or(Offset{0});
              x.workSince = r.offset("work_since", true).value_or(Offset{0});
              x.gpuSeconds = r.number("gpu_seconds", true).value_or(0);
              double want = x.gpus * seconds(x.evictedAt - x.workSince);
              if (!nearlyEqual(x.gpuSeconds, want))
                r.fail("gpu_seconds", fmt::format("{} ≠ gpus × (evicted_at − work_since) = {}", x.gpuSeconds, want));
              return true;
            });
  parseList(node, "stuck", path, problems, fig, fig.stuck, [&](const YAML::Node& n, const std::string& p, ExpectedStuck& x) {
    MapReader r(n, p, problems, {"cluster", "cluster_queue", "workload", "reason", "since", "until"});
    if (!r.ok()) return false;
    x.cluster = r.str("cluster", true).value_or("");
    checkCluster(r, "cluster", x.cluster, clusters);
    x.clusterQueue = r.str("cluster_queue", true).value_or("");
    x.workload = resolveWorkloadRef(r.str("workload", true).value_or(""));
    x.reason = r.str("reason", true).value_or("");
    oneOf(r, "reason", x.reason,
          {"image_pull", "crash_loop", "config_error", "unschedulable", "pods_pending", "no_first_work"});
    x.since = r.offset("since", true).value_or(Offset{0});
    x.until = r.offset("until");
    return true;
  });
  parseList(node, "duplicates", path, problems, fig, fig.duplicates, [&](const YAML::Node& n, const std::string& p, ExpectedDuplicate& x) {
    MapReader r(n, p, problems, {"workload", "clusters", "from", "until", "gpus"});
    if (!r.ok()) return false;
    x.workload = resolveWorkloadRef(r.str("workload", true).value_or(""));
    x.clusters = r.strings("clusters");
    for (const auto& c : x.clusters) checkCluster(r, "clusters", c, clusters);
    if (x.clusters.size() < 2) r.fail("clusters", "a duplicate runs on at least two clusters");
    x.from = r.offset("from", true).value_or(Offset{0});
    x.until = r.offset("until");
    x.gpus = r.number("gpus", true).value_or(0);
    return true;
  });
  parseList(node, "reservations_without_capacity", path, problems, fig, fig.reservationsWithoutCapacity,
            [&](const YAML::Node& n, const std::string& p, ExpectedReservationWithoutCapacity& x) {
              MapReader r(n, p, problems, {"cluster", "device_class", "workload", "at", "requested", "usable_free"});
              if (!r.ok()) return false;
              x.cluster = r.str("cluster", true).value_or("");
              checkCluster(r, "cluster", x.cluster, clusters);
              x.deviceClass = r.str("device_class", true).value_or("");
              x.workload = resolveWorkloadRef(r.str("workload", true).value_or(""));
              x.at = r.offset("at", true).value_or(Offset{0});
              x.requested = r.number("requested", true).value_or(0);
              x.usableFree = r.number("usable_free", true).value_or(0);
              if (x.usableFree >= x.requested) r.fail("usable_free", "is not fewer than requested: nothing to flag");
              return true;
            });
  parseList(node, "pools", path, problems, fig, fig.pools, [&](const YAML::Node& n, const std::string& p, ExpectedPool& x) {
    MapReader r(n, p, problems, {"cluster", "driver", "pool", "phases", "incomplete_seconds"});
    if (!r.ok()) return false;
    x.cluster = r.str("cluster", true).value_or("");
    checkCluster(r, "cluster", x.cluster, clusters);
    x.driver = r.str("driver", true).value_or("");
    x.pool = r.str("pool", true).value_or("");
    x.incompleteSeconds = r.number("incomplete_seconds", true).value_or(0);
    YAML::Node phases = r.child("phases");
    if (!phases.IsDefined() || !phases.IsSequence() || phases.size() == 0) {
      r.fail("phases", "required: a list of {from, state}");
      return false;
    }
    for (size_t i = 0; i < phases.size(); ++i) {
      MapReader ph(phases[i], fmt::format("{}.phases[{}]", p, i), problems, {"from", "state"});
      if (!ph.ok()) continue;
      ExpectedPool::Phase phase;
      phase.from = ph.offset("from", true).value_or(Offset{0});
      phase.state = ph.str("state", true).value_or("");
      oneOf(ph, "state", phase.state, {"complete", "incomplete", "stale"});
      if (!x.phases.empty() && phase.from <= x.phases.back().from) ph.fail("from", "phases must be in time order");
      x.phases.push_back(phase);
    }
    return true;
  });
  parseList(node, "capacity", path, problems, fig, fig.capacity, [&](const YAML::Node& n, const std::string& p, ExpectedCapacity& x) {
    MapReader r(n, p, problems, {"cluster", "device_class", "at", "usable", "unavailable"});
    if (!r.ok()) return false;
    x.cluster = r.str("cluster", true).value_or("");
    checkCluster(r, "cluster", x.cluster, clusters);
    x.deviceClass = r.str("device_class", true).value_or("");
    x.at = r.offset("at", true).value_or(Offset{0});
    x.usable = r.number("usable", true).value_or(0);
    x.unavailable = r.number("unavailable", true).value_or(0);
    return true;
  });
  parseList(node, "gpus_at_end", path, problems, fig, fig.gpusAtEnd, [&](const YAML::Node& n, const std::string& p, ExpectedGpus& x) {
    MapReader r(n, p, problems, {"cluster", "device_class", "unit", "state", "value"});
    if (!r.ok()) return false;
    x.cluster = r.str("cluster", true).value_or("");
    checkCluster(r, "cluster", x.cluster, clusters);
    x.deviceClass = r.str("device_class", true).value_or("");
    x.unit = r.str("unit", true).value_or("");
    oneOf(r, "unit", x.unit, {"gpu", "mig", "share", "device", "unknown"});
    x.state = r.str("state", true).value_or("");
    oneOf(r, "state", x.state,
          {"published", "usable", "unavailable", "allocated", "productive", "unusable_for_backlog"});
    x.value = r.number("value", true).value_or(0);
    return true;
  });
  parseList(node, "outages", path, problems, fig, fig.outages, [&](const YAML::Node& n, const std::string& p, ExpectedOutage& x) {
    MapReader r(n, p, problems, {"cluster", "source", "from", "until", "seconds", "at_least"});
    if (!r.ok()) return false;
    x.cluster = r.str("cluster", true).value_or("");
    checkCluster(r, "cluster", x.cluster, clusters);
    x.source = r.str("source", true).value_or("");
    oneOf(r, "source", x.source, {"multikueue", "probe"});
    x.from = r.offset("from", true).value_or(Offset{0});
    x.until = r.offset("until", true).value_or(Offset{0});
    x.seconds = r.number("seconds", true).value_or(0);
    x.atLeast = r.boolean("at_least").value_or(false);
    if (!nearlyEqual(x.seconds, seconds(x.until - x.from)))
      r.fail("seconds", fmt::format("{} ≠ until − from = {} s", x.seconds, seconds(x.until - x.from)));
    return true;
  });
  parseList(node, "comparisons", path, problems, fig, fig.comparisons, [&](const YAML::Node& n, const std::string& p, ExpectedComparison& x) {
    MapReader r(n, p, problems, {"baseline", "figure", "baseline_value", "value", "reduction", "reduction_percent"});
    if (!r.ok()) return false;
    x.baseline = r.str("baseline", true).value_or("");
    x.figure = r.str("figure", true).value_or("");
    x.baselineValue = r.number("baseline_value", true).value_or(0);
    x.value = r.number("value", true).value_or(0);
    x.reduction = r.number("reduction", true).value_or(0);
    x.reductionPercent = r.number("reduction_percent", true).value_or(0);
    if (!nearlyEqual(x.reduction, x.baselineValue - x.value))
      r.fail("reduction", fmt::format("{} ≠ baseline_value − value = {}", x.reduction, x.baselineValue - x.value));
    if (x.baselineValue != 0 && std::fabs(x.reductionPercent - 100.0 * x.reduction / x.baselineValue) > 0.05)
      r.fail("reduction_percent", fmt::format("{} ≠ 100 × reduction / baseline_value = {:.2f}", x.reductionPercent,
                                              100.0 * x.reduction / x.baselineValue));
    return true;
  });
}

// Walks the steps in play order and checks every target and {{uid:...}} reference exists when the
// step runs, so a file cannot patch an object before it is created.
void checkExistence(const std::vector<Step>& steps, const std::vector<GenStep>& gen, Problems& problems) {
  std::set<std::string> exists;
  std::set<std::string> cut;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    std::string where = s.origin;
    if (s.action == StepAction::CutConnection || s.action == StepAction::RestoreConnection) {
      bool isCut = cut.count(s.cluster) > 0;
      if (s.action == StepAction::CutConnection && isCut)
        problems.add(where, fmt::format("the connection to {} is already cut at {}", s.cluster, formatOffset(s.at)));
      if (s.action == StepAction::CutConnection) cut.insert(s.cluster);
      else cut.erase(s.cluster);
      continue;
    }
    std::vector<detail::Placeholder> refs;
    std::vector<std::string> errors;
    detail::collectPlaceholders(gen[i].body, refs, errors);
    for (const auto& e : errors) problems.add(where, e);
    for (const auto& ref : refs) {
      if (ref.type != detail::Placeholder::Type::Uid) continue;
      std::string key = objectKey(ref.cluster.empty() ? s.cluster : ref.cluster, ref.kind, ref.ns, ref.name);
      bool self = key == objectKey(s.cluster, s.kind, s.ns, s.name);
      if (!exists.count(key) && !(self && s.action != StepAction::Create))
        problems.add(where, fmt::format("{{{{uid:...}}}} refers to {} which does not exist at {}", key, formatOffset(s.at)));
    }
    std::string key = objectKey(s.cluster, s.kind, s.ns, s.name);
    switch (s.action) {
      case StepAction::Create:
        if (exists.count(key)) problems.add(where, fmt::format("{} already exists at {}", key, formatOffset(s.at)));
        exists.insert(key);
        break;
      case StepAction::Apply:
        exists.insert(key);
        break;
      case StepAction::Update:
      case StepAction::Patch:
        if (!exists.count(key))
          problems.add(where, fmt::format("{} does not exist at {} ({})", key, formatOffset(s.at), stepActionName(s.action)));
        break;
      case StepAction::Delete:
        if (!exists.count(key)) problems.add(where, fmt::format("{} does not exist at {} (delete)", key, formatOffset(s.at)));
        exists.erase(key);
        break;
      default:
        break;
    }
  }
}

Result<Scenario> loadFromNode(const YAML::Node& root, Problems& problems, const std::string& sourceName,
                              const std::string& expectedName) {
  Scenario sc;
  sc.sourcePath = sourceName;
  MapReader top(root, "scenario", problems,
                {"name", "description", "clusters", "duration", "objects", "timeline", "expected"});
  if (!top.ok()) return makeError(problems.summary());
  sc.name = top.str("name", true).value_or("");
  if (!expectedName.empty() && !sc.name.empty() && sc.name != expectedName)
    top.fail("name", fmt::format("\"{}\" differs from the file name \"{}\"", sc.name, expectedName));
  sc.description = top.str("description", true).value_or("");
  if (auto d = top.offset("duration", true)) sc.duration = *d;
  if (sc.duration.count() <= 0 && top.has("duration")) top.fail("duration", "must be positive");

  YAML::Node clusters = top.child("clusters");
  if (!clusters.IsDefined() || !clusters.IsSequence() || clusters.size() == 0) {
    top.fail("clusters", "required: a list of {name, role}");
  } else {
    for (size_t i = 0; i < clusters.size(); ++i) {
      MapReader c(clusters[i], fmt::format("clusters[{}]", i), problems, {"name", "role", "multikueue_cluster"});
      if (!c.ok()) continue;
      ScenarioCluster cl;
      cl.name = c.str("name", true).value_or("");
      std::string role = c.str("role", true).value_or("");
      if (role == "manager") cl.role = ClusterRole::Manager;
      else if (role == "worker") cl.role = ClusterRole::Worker;
      else if (role == "standalone") cl.role = ClusterRole::Standalone;
      else if (!role.empty()) c.fail("role", "expected manager, worker or standalone");
      cl.multikueueCluster = c.str("multikueue_cluster").value_or(cl.name);
      if (cl.role != ClusterRole::Worker && c.has("multikueue_cluster")) c.fail("multikueue_cluster", "only for workers");
      if (sc.cluster(cl.name)) c.fail("name", fmt::format("duplicate cluster \"{}\"", cl.name));
      sc.clusters.push_back(cl);
    }
    size_t managers = std::count_if(sc.clusters.begin(), sc.clusters.end(),
                                    [](const auto& c) { return c.role == ClusterRole::Manager; });
    bool workers = std::any_of(sc.clusters.begin(), sc.clusters.end(),
                               [](const auto& c) { return c.role == ClusterRole::Worker; });
    if (managers > 1) top.fail("clusters", "at most one manager");
    if (workers && managers == 0) top.fail("clusters", "workers need a manager (or use role standalone)");
  }

  std::vector<GenStep> setupGen, timelineGen;
  for (const char* section : {"objects", "timeline"}) {
    YAML::Node list = top.child(section);
    bool setup = std::string(section) == "objects";
    if (!list.IsDefined() || list.IsNull()) {
      if (!setup) top.fail("timeline", "required");
      continue;
    }
    if (!list.IsSequence()) {
      top.fail(section, "expected a list");
      continue;
    }
    for (size_t i = 0; i < list.size(); ++i)
      parseEntry(list[i], fmt::format("{}[{}]", section, i), setup, sc.clusters, problems, setup ? setupGen : timelineGen);
  }
  if (!top.has("expected")) top.fail("expected", "required: the figures the daemon must report");
  else parseExpected(top.child("expected"), "expected", sc.clusters, problems, sc.expected);
  if (top.has("expected") && sc.expected.stated.empty()) top.fail("expected", "states no figures");

  // Origins carry the entry path; keep them as the Step origin.
  auto stable = [](std::vector<GenStep>& v) {
    std::stable_sort(v.begin(), v.end(), [](const GenStep& a, const GenStep& b) { return a.at < b.at; });
  };
  stable(setupGen);
  stable(timelineGen);
  std::vector<GenStep> all;
  all.reserve(setupGen.size() + timelineGen.size());
  for (auto& g : setupGen) all.push_back(std::move(g));
  size_t setupCount = all.size();
  for (auto& g : timelineGen) all.push_back(std::move(g));
  for (size_t i = 0; i < all.size(); ++i) {
    GenStep& g = all[i];
    Step s;
    s.at = g.at;
    s.cluster = g.cluster;
    s.action = g.action;
    s.kind = g.kind;
    if (const auto* info = detail::findKind(g.kind)) s.resource = std::string(info->resource);
    s.ns = g.ns;
    s.name = g.name;
    s.body = g.body.is_null() ? "" : g.body.dump();
    s.origin = g.what;
    s.setup = i < setupCount;
    if (sc.duration.count() > 0 && s.at > sc.duration)
      problems.add(s.origin, fmt::format("at {} is after the drill's duration {}", formatOffset(s.at), formatOffset(sc.duration)));
    sc.steps.push_back(std::move(s));
  }
  checkExistence(sc.steps, all, problems);
  if (!problems.empty()) return makeError(problems.summary());
  return sc;
}

}  // namespace

Result<Scenario> loadScenarioFromString(std::string_view yaml, std::string_view sourceName) {
  return [&]() -> Result<Scenario> {
    Problems problems{std::string(sourceName)};
    // Every string of a scenario ends up in JSON (object bodies), whose writer throws on bytes
    // that are not UTF-8; refuse such a file here, naming where.
    if (size_t bad = firstInvalidUtf8(yaml); bad != std::string_view::npos) {
      auto line = std::count(yaml.begin(), yaml.begin() + static_cast<std::ptrdiff_t>(bad), '\n') + 1;
      problems.add(fmt::format("line {}", line),
                   fmt::format("not valid UTF-8 (byte 0x{:02x} at offset {})",
                               static_cast<unsigned char>(yaml[bad]), bad));
      return makeError(problems.summary());
    }
    YAML::Node root;
    try {
      root = YAML::Load(std::string(yaml));
    } catch (const YAML::Exception& e) {
      problems.add(fmt::format("line {}", e.mark.line + 1), e.msg);
      return makeError(problems.summary());
    }
    std::string expectedName;
    if (sourceName.size() > 5 && sourceName.substr(sourceName.size() - 5) == ".yaml")
      expectedName = std::filesystem::path(std::string(sourceName)).stem().string();
    return loadFromNode(root, problems, std::string(sourceName), expectedName);
  }();
}

Result<Scenario> loadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return makeError(fmt::format("{}: cannot read the scenario file", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return loadScenarioFromString(buffer.str(), path);
}

}  // namespace firstwork::scenario
