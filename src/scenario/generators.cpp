// Generators: the shorthands of scenario files (`job:`, `nodes:`, `multikueue_cluster:`,
// `kueue_connection:`, `resource_slice:`, `cut_daemon_connection:`) expanded into primitive
// create/patch/delete steps whose bodies are shaped exactly like the objects Kubernetes and Kueue
// write (see /work/shared/fixtures/k8s and reference/k8s-objects.md §1.4–§1.7, §2, §2.5). Every
// string that Kueue or the kubelet writes is spelled here as they spell it; comments name the
// source where the shape is not obvious.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "detail/generators.hpp"
#include "detail/naming.hpp"

namespace firstwork::scenario::detail {

const ScenarioCluster* GenContext::cluster(const std::string& name) const {
  for (const auto& c : clusters)
    if (c.name == name) return &c;
  return nullptr;
}

const ScenarioCluster* GenContext::manager() const {
  for (const auto& c : clusters)
    if (c.role == ClusterRole::Manager) return &c;
  return nullptr;
}

std::string substituteIndex(std::string text, const char* token, int64_t i) {
  std::string t(token);
  size_t pos = 0;
  std::string value = std::to_string(i);
  while ((pos = text.find(t, pos)) != std::string::npos) {
    text.replace(pos, t.size(), value);
    pos += value.size();
  }
  return text;
}

void substituteIndex(Json& body, int64_t i) {
  if (body.is_string()) {
    body = substituteIndex(body.get<std::string>(), "{i}", i);
  } else if (body.is_object()) {
    Json copy = Json::object();
    for (auto it = body.begin(); it != body.end(); ++it) {
      Json v = it.value();
      substituteIndex(v, i);
      copy[substituteIndex(it.key(), "{i}", i)] = std::move(v);
    }
    body = std::move(copy);
  } else if (body.is_array()) {
    for (auto& v : body) substituteIndex(v, i);
  }
}

Result<std::string> multiplyQuantity(const std::string& quantity, int64_t n) {
  size_t digits = 0;
  while (digits < quantity.size() && quantity[digits] >= '0' && quantity[digits] <= '9') ++digits;
  std::string suffix = quantity.substr(digits);
  static const char* kSuffixes[] = {"", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti", "Pi"};
  bool knownSuffix = std::any_of(std::begin(kSuffixes), std::end(kSuffixes),
                                 [&](const char* s) { return suffix == s; });
  if (digits == 0 || digits > 12 || !knownSuffix)
    return makeError(fmt::format("\"{}\" is not an integer quantity such as 8, 500m or 64Gi", quantity));
  return fmt::format("{}{}", std::stoll(quantity.substr(0, digits)) * n, suffix);
}

namespace {

constexpr const char* kFirstWorkAnnotation = "firstwork.dev/first-work-at";
constexpr const char* kCheckpointAnnotation = "firstwork.dev/last-checkpoint-at";

Json workloadCondition(const std::string& type, const std::string& status, const std::string& reason,
                       const std::string& message, Offset at) {
  return Json{{"type", type},
              {"status", status},
              {"reason", reason},
              {"message", message},
              {"observedGeneration", 1},
              {"lastTransitionTime", timeRef(at)}};
}

// Pod conditions carry lastProbeTime: null and no observedGeneration (fixtures pod-*.yaml).
Json podCondition(const std::string& type, const std::string& status, Offset at,
                  const std::string& reason = "", const std::string& message = "") {
  Json c{{"type", type}, {"status", status}, {"lastProbeTime", nullptr}, {"lastTransitionTime", timeRef(at)}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  return c;
}

Json statusPatch(Json status) { return Json{{"status", std::move(status)}}; }

struct Waiting {
  Offset at{0};
  std::string reason;
  std::string message;
};

struct PodPlan {
  int index = 0;
  std::string name;
  std::string node;  // "" when placement is not given
  int slot = 0;      // slot on its node (for DRA device numbering)
  Offset created{0};
  std::optional<Offset> scheduled;  // nullopt: never scheduled
  std::string unschedulableMessage;
  std::vector<Waiting> waiting;
  std::optional<Offset> running;
  std::optional<Offset> firstWork;
  std::vector<Offset> checkpoints;
  std::string claimName;  // DRA
};

struct Preemption {
  Offset at{0};
  Offset released{0};
  std::string reason;
  std::string preemptorNs;
  std::string preemptorJob;       // empty when preemptor_workload is given
  std::string preemptorWorkload;  // Workload name
  std::string preemptorPath;
  std::string preempteePath;
};

struct DraSpec {
  std::string deviceClass = "gpu.nvidia.com";
  std::string driver = "gpu.nvidia.com";
  std::string claimTemplate;
  std::string claimName = "gpus";  // the pod-level claim name
  std::string pool = "{node}";
  std::string device = "gpu-{d}";
  std::string quotaResource;  // logical resource in ClusterQueues/admission (Kueue deviceClassMappings)
  std::string selector;       // CEL selector of the request (e.g. a MIG profile), empty: none
};

// What every replica of one `job:` entry shares.
struct JobSpec {
  std::string namePattern;
  std::string workloadNamePattern;
  int64_t count = 1;
  int64_t indexFrom = 0;
  std::string ns;
  std::string queue;
  std::string clusterQueue;
  std::string workerClusterQueue;
  std::string admissionCheck = "multikueue-ac";
  std::string flavor = "default-flavor";
  const ScenarioCluster* manager = nullptr;
  const ScenarioCluster* worker = nullptr;
  bool workerCopyOnly = false;
  std::string origin = "multikueue";
  int64_t pods = 1;
  int64_t gpusPerPod = 1;
  std::string gpuResource = "nvidia.com/gpu";
  std::string cpuPerPod = "4";
  std::string memoryPerPod = "32Gi";
  std::string image = "registry.example.com/train:1.0";
  std::string container = "trainer";
  int64_t priority = 0;
  std::string priorityClass;
  std::optional<DraSpec> dra;
  std::string nodePattern;
  int64_t podsPerNode = 1;
  int64_t firstSlot = 0;
  std::string pendingReason = "WaitingForQuota";
  std::string pendingMessage;
  Offset created{0};
  std::optional<Offset> reserved;  // nullopt: never
  std::optional<Offset> dispatched;
  std::optional<Offset> admitted;
  std::optional<Offset> podsCreated;
  std::optional<Offset> scheduled;
  bool neverScheduled = false;
  std::string unschedulableMessage;
  std::vector<Waiting> waiting;
  std::optional<Offset> running;
  std::optional<Offset> firstWork;
  std::vector<Offset> checkpoints;
  std::optional<Offset> finished;
  std::optional<Offset> workerDeleted;
  std::optional<Preemption> preempted;
  struct Override {
    int64_t pod = 0;
    std::optional<Offset> scheduled;
    bool neverScheduled = false;
    std::optional<std::string> unschedulableMessage;
    std::optional<std::vector<Waiting>> waiting;
    std::optional<Offset> running;
    bool neverRunning = false;
    std::optional<Offset> firstWork;
    bool noFirstWork = false;
    std::optional<std::vector<Offset>> checkpoints;
  };
  std::vector<Override> overrides;
};

// Either an offset or the word "never".
struct MaybeOffset {
  bool given = false;
  bool never = false;
  Offset value{0};
};

MaybeOffset maybeOffset(const MapReader& r, const char* key) {
  MaybeOffset m;
  YAML::Node n = r.child(key);
  if (!n.IsDefined() || n.IsNull()) return m;
  m.given = true;
  if (n.IsScalar() && n.Scalar() == "never") {
    m.never = true;
    return m;
  }
  if (auto o = offsetOf(n, r.pathOf(key), r.problems())) m.value = *o;
  return m;
}

std::vector<Waiting> readWaiting(const MapReader& r, const char* key) {
  std::vector<Waiting> out;
  YAML::Node n = r.child(key);
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence()) {
    r.fail(key, "expected a list of {at, reason, message}");
    return out;
  }
  for (size_t i = 0; i < n.size(); ++i) {
    MapReader w(n[i], fmt::format("{}[{}]", r.pathOf(key), i), r.problems(), {"at", "reason", "message"});
    if (!w.ok()) continue;
    Waiting item;
    if (auto at = w.offset("at", true)) item.at = *at;
    if (auto reason = w.str("reason", true)) item.reason = *reason;
    item.message = w.str("message").value_or("");
    out.push_back(std::move(item));
  }
  return out;
}

// Default kubelet messages for the waiting reasons a scenario is likely to use
// (pkg/kubelet/images/types.go, fixtures pod-waiting-*.yaml).
std::string defaultWaitingMessage(const std::string& reason, const std::string& image) {
  if (reason == "ErrImagePull")
    return fmt::format("rpc error: code = NotFound desc = failed to pull and unpack image \"{}\": not found",
                       image);
  if (reason == "ImagePullBackOff") return fmt::format("Back-off pulling image \"{}\"", image);
  if (reason == "InvalidImageName")
    return fmt::format("Failed to apply default image tag \"{}\": couldn't parse image name \"{}\": "
                       "invalid reference format",
                       image, image);
  return "";
}

std::string humanPreemptionReason(const std::string& reason) {
  // pkg/scheduler/preemption/preemption.go HumanReadablePreemptionReasons
  if (reason == "InClusterQueue") return "prioritization in the ClusterQueue";
  if (reason == "InCohortReclamation") return "reclamation within the cohort";
  if (reason == "InCohortFairSharing") return "Fair Sharing within the cohort";
  if (reason == "InCohortReclaimWhileBorrowing") return "reclamation within the cohort while borrowing";
  return "";
}

std::string imageRepository(const std::string& image) {
  auto at = image.find('@');
  if (at != std::string::npos) return image.substr(0, at);
  auto colon = image.rfind(':');
  auto slash = image.rfind('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) return image.substr(0, colon);
  return image;
}

class JobExpander {
 public:
  JobExpander(const JobSpec& spec, GenContext& ctx) : s_(spec), ctx_(ctx) {}

  void expandReplica(int64_t i) {
    job_ = substituteIndex(s_.namePattern, "{i}", i);
    workload_ = s_.workloadNamePattern.empty() ? jobWorkloadName(s_.ns, job_)
                                               : substituteIndex(s_.workloadNamePattern, "{i}", i);
    replica_ = i - s_.indexFrom;
    label_ = s_.count > 1 ? fmt::format(" (i={})", i) : "";
    planPods();

    const std::string wlCluster = s_.manager ? s_.manager->name : s_.worker->name;
    // 1. The Workload where quota is reserved (the manager's, or the worker's for a
    //    single-cluster job), or the worker copy alone.
    if (s_.workerCopyOnly) {
      emitCreate(s_.created, s_.worker->name, "Workload", workload_, workerCopy(s_.created), "worker copy created");
      emitPatch(*s_.admitted, s_.worker->name, "Workload", workload_, workerAdmission(*s_.admitted),
                "worker copy admitted");
    } else {
      emitCreate(s_.created, wlCluster, "Workload", workload_, primaryWorkload(), "workload created");
      if (s_.reserved) {
        emitPatch(*s_.reserved, wlCluster, "Workload", workload_, reservation(*s_.reserved), "quota reserved");
      }
      if (s_.manager && s_.dispatched) {
        if (*s_.admitted > *s_.dispatched) {
          emitPatch(*s_.dispatched, wlCluster, "Workload", workload_,
                    statusPatch(Json{{"nominatedClusterNames", Json::array({s_.worker->multikueueCluster})}}),
                    "nominated");
        }
        emitCreate(*s_.dispatched, s_.worker->name, "Workload", workload_, workerCopy(*s_.dispatched),
                   "dispatched: worker copy created");
        emitPatch(*s_.admitted, s_.worker->name, "Workload", workload_, workerAdmission(*s_.admitted),
                  "worker copy admitted");
        emitPatch(*s_.admitted, wlCluster, "Workload", workload_, managerAdmitted(*s_.admitted),
                  "admitted on the worker");
      }
    }
    if (!podsExist()) return;

    // 2. Pods (and their DRA claims) on the worker.
    for (const auto& p : pods_) emitPod(p);

    // 3. Workload-level consequences of the pods.
    std::optional<Offset> allRunning = allPodsRunning();
    const std::string& runCluster = s_.worker->name;
    const bool hasWorkerCopy = s_.manager || s_.workerCopyOnly;
    if (allRunning && (!s_.preempted || *allRunning <= s_.preempted->at)) {
      Json ready = statusPatch(Json{{"conditions", Json::array({workloadCondition(
                                                        "PodsReady", "True", "Started",
                                                        "All pods reached readiness and the workload is running",
                                                        *allRunning)})}});
      emitPatch(*allRunning, runCluster, "Workload", workload_, ready, "pods ready");
      if (s_.manager && hasWorkerCopy) emitPatch(*allRunning, s_.manager->name, "Workload", workload_, ready, "pods ready (mirrored)");
    }
    if (s_.finished) emitFinished(*s_.finished);
    if (s_.preempted) emitPreemption(*s_.preempted);
    if (s_.workerDeleted) {
      // MultiKueue garbage collection of a worker copy: the remote Job goes, its pods (and their
      // claims) with it, then the remote Workload.
      for (const auto& p : pods_) {
        if (s_.dra) emitDelete(*s_.workerDeleted, s_.worker->name, "ResourceClaim", p.claimName, "claim " + p.claimName + " deleted");
        emitDelete(*s_.workerDeleted, s_.worker->name, "Pod", p.name, "pod " + p.name + " deleted");
      }
      emitDelete(*s_.workerDeleted, s_.worker->name, "Workload", workload_, "worker copy deleted");
    }
  }

 private:
  bool podsExist() const { return s_.podsCreated.has_value(); }

  void planPods() {
    pods_.clear();
    if (!s_.podsCreated) return;
    for (int64_t j = 0; j < s_.pods; ++j) {
      PodPlan p;
      p.index = static_cast<int>(j);
      p.name = fmt::format("{}-{}-{}", job_, j, nameSuffix(fmt::format("{}/{}/{}/{}", s_.worker->name, s_.ns, job_, j)));
      int64_t slotIndex = s_.firstSlot + replica_ * s_.pods + j;
      if (!s_.nodePattern.empty()) {
        p.node = substituteIndex(s_.nodePattern, "{n}", slotIndex / s_.podsPerNode);
        p.slot = static_cast<int>(slotIndex % s_.podsPerNode);
      }
      p.created = *s_.podsCreated;
      p.scheduled = s_.neverScheduled ? std::nullopt : std::optional<Offset>(s_.scheduled.value_or(p.created));
      p.unschedulableMessage = s_.unschedulableMessage;
      p.waiting = s_.waiting;
      p.running = s_.running;
      p.firstWork = s_.firstWork;
      p.checkpoints = s_.checkpoints;
      for (const auto& o : s_.overrides) {
        if (o.pod != j) continue;
        if (o.neverScheduled) p.scheduled.reset();
        if (o.scheduled) p.scheduled = *o.scheduled;
        if (o.unschedulableMessage) p.unschedulableMessage = *o.unschedulableMessage;
        if (o.waiting) p.waiting = *o.waiting;
        if (o.neverRunning) p.running.reset();
        if (o.running) p.running = *o.running;
        if (o.noFirstWork) p.firstWork.reset();
        if (o.firstWork) p.firstWork = *o.firstWork;
        if (o.checkpoints) p.checkpoints = *o.checkpoints;
      }
      if (!p.scheduled) p.running.reset();
      if (!p.running) p.firstWork.reset();
      if (s_.dra) p.claimName = fmt::format("{}-{}-{}", p.name, s_.dra->claimName, nameSuffix(p.name + "/claim"));
      pods_.push_back(std::move(p));
    }
  }

  std::optional<Offset> allPodsRunning() const {
    Offset latest{INT64_MIN};
    for (const auto& p : pods_) {
      if (!p.running) return std::nullopt;
      latest = std::max(latest, *p.running);
    }
    if (pods_.empty()) return std::nullopt;
    return latest;
  }

  // --- Workload bodies ---------------------------------------------------------------------

  std::string gpuQuotaResource() const { return s_.dra ? s_.dra->quotaResource : s_.gpuResource; }

  Json podTemplateSpec() const {
    Json resources;
    Json requests{{"cpu", s_.cpuPerPod}, {"memory", s_.memoryPerPod}};
    if (s_.dra) {
      resources["claims"] = Json::array({Json{{"name", s_.dra->claimName}}});
      resources["requests"] = requests;
    } else {
      requests[s_.gpuResource] = std::to_string(s_.gpusPerPod);
      resources["requests"] = requests;
      resources["limits"] = Json{{s_.gpuResource, std::to_string(s_.gpusPerPod)}};
    }
    Json spec{{"restartPolicy", "Never"},
              {"containers", Json::array({Json{{"name", s_.container}, {"image", s_.image}, {"resources", resources}}})}};
    if (s_.dra)
      spec["resourceClaims"] = Json::array(
          {Json{{"name", s_.dra->claimName}, {"resourceClaimTemplateName", s_.dra->claimTemplate}}});
    return spec;
  }

  Json workloadSpec() const {
    Json spec{{"active", true}, {"queueName", s_.queue}, {"priority", s_.priority}};
    if (!s_.priorityClass.empty())
      spec["priorityClassRef"] = Json{{"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", s_.priorityClass}};
    spec["podSets"] = Json::array(
        {Json{{"name", "main"}, {"count", s_.pods}, {"template", Json{{"metadata", Json::object()}, {"spec", podTemplateSpec()}}}}});
    return spec;
  }

  Json totals() const {
    Json t{{"cpu", multiplyQuantity(s_.cpuPerPod, s_.pods).value()},
           {"memory", multiplyQuantity(s_.memoryPerPod, s_.pods).value()}};
    t[gpuQuotaResource()] = std::to_string(s_.gpusPerPod * s_.pods);
    return t;
  }

  Json admission(const std::string& clusterQueue) const {
    Json flavors{{"cpu", s_.flavor}, {"memory", s_.flavor}};
    flavors[gpuQuotaResource()] = s_.flavor;
    return Json{{"clusterQueue", clusterQueue},
                {"podSetAssignments",
                 Json::array({Json{{"name", "main"}, {"count", s_.pods}, {"flavors", flavors}, {"resourceUsage", totals()}}})}};
  }

  Json workloadMeta(Offset created, bool workerCopy) const {
    Json meta{{"name", workload_},
              {"namespace", s_.ns},
              {"generation", 1},
              {"creationTimestamp", timeRef(created)},
              {"finalizers", Json::array({"kueue.x-k8s.io/resource-in-use"})}};
    if (workerCopy) {
      // cloneForCreate: same labels minus kueue.x-k8s.io/job-uid, plus the origin label; no
      // ownerReferences (the remote Job is created later and owns nothing here).
      meta["labels"] = Json{{"kueue.x-k8s.io/multikueue-origin", s_.origin}};
    } else {
      std::string jobUid = fmt::format("{{{{jobuid:{}/{}}}}}", s_.ns, job_);
      meta["labels"] = Json{{"kueue.x-k8s.io/job-uid", jobUid}};
      meta["ownerReferences"] = Json::array({Json{{"apiVersion", "batch/v1"},
                                                  {"blockOwnerDeletion", true},
                                                  {"controller", true},
                                                  {"kind", "Job"},
                                                  {"name", job_},
                                                  {"uid", jobUid}}});
    }
    return meta;
  }

  Json primaryWorkload() const {
    Json status = Json::object();
    bool pendingAtCreation = !s_.reserved || *s_.reserved > s_.created;
    if (pendingAtCreation) {
      std::string message = s_.pendingMessage;
      if (message.empty())
        message = fmt::format("couldn't assign flavors to pod set main: insufficient unused quota for {} in "
                              "flavor {}, {} more needed",
                              gpuQuotaResource(), s_.flavor, s_.gpusPerPod * s_.pods);
      status["conditions"] = Json::array({workloadCondition("QuotaReserved", "False", s_.pendingReason, message, s_.created)});
      status["resourceRequests"] = Json::array({Json{{"name", "main"}, {"resources", totals()}}});
    }
    return Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                {"kind", "Workload"},
                {"metadata", workloadMeta(s_.created, false)},
                {"spec", workloadSpec()},
                {"status", status}};
  }

  Json workerCopy(Offset at) const {
    return Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                {"kind", "Workload"},
                {"metadata", workloadMeta(at, true)},
                {"spec", workloadSpec()},
                {"status", Json::object()}};
  }

  Json reservation(Offset at) const {
    Json conditions = Json::array();
    conditions.push_back(workloadCondition("QuotaReserved", "True", "QuotaReserved",
                                           "Quota reserved in ClusterQueue " + s_.clusterQueue, at));
    Json status{{"admission", admission(s_.clusterQueue)}, {"resourceRequests", nullptr}};
    if (s_.manager) {
      // Reserved on the manager, MultiKueue admission check still Pending (not admitted yet).
      conditions.push_back(workloadCondition("Admitted", "False", "UnsatisfiedAdmissionChecks",
                                             "The workload has not all checks ready", at));
      status["admissionChecks"] = Json::array(
          {Json{{"name", s_.admissionCheck}, {"state", "Pending"}, {"message", ""}, {"lastTransitionTime", timeRef(at)}}});
    } else {
      conditions.push_back(workloadCondition("Admitted", "True", "Admitted", "The workload is admitted", at));
      conditions.push_back(workloadCondition("PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded", at));
    }
    status["conditions"] = conditions;
    return statusPatch(status);
  }

  Json workerAdmission(Offset at) const {
    return statusPatch(Json{
        {"admission", admission(s_.workerClusterQueue)},
        {"conditions", Json::array({workloadCondition("QuotaReserved", "True", "QuotaReserved",
                                                      "Quota reserved in ClusterQueue " + s_.workerClusterQueue, at),
                                    workloadCondition("Admitted", "True", "Admitted", "The workload is admitted", at),
                                    workloadCondition("PodsReady", "False", "WaitForStart",
                                                      "Not all pods are ready or succeeded", at)})}});
  }

  Json managerAdmitted(Offset at) const {
    // syncAdmittingRemoteState (v0.19+ message), status.clusterName set, nominations cleared.
    return statusPatch(Json{
        {"nominatedClusterNames", nullptr},
        {"clusterName", s_.worker->multikueueCluster},
        {"admissionChecks", Json::array({Json{{"name", s_.admissionCheck},
                                              {"state", "Ready"},
                                              {"message", fmt::format("The workload was admitted on \"{}\"",
                                                                      s_.worker->multikueueCluster)},
                                              {"lastTransitionTime", timeRef(at)}}})},
        {"conditions", Json::array({workloadCondition("Admitted", "True", "Admitted", "The workload is admitted", at),
                                    workloadCondition("PodsReady", "False", "WaitForStart",
                                                      "Not all pods are ready or succeeded", at)})}});
  }

  // --- Pods -------------------------------------------------------------------------------

  std::string workerJobUid() const { return fmt::format("{{{{jobuid:{}/{}}}}}", s_.ns, job_); }

  Json containerStatus(const PodPlan& p, const Json& state, bool ready) const {
    bool started = state.contains("running");
    Json cs{{"name", s_.container}, {"image", s_.image}};
    cs["imageID"] = started || state.contains("terminated")
                        ? imageRepository(s_.image) + "@sha256:" + hexDigits(s_.image, 64)
                        : "";
    if (started || state.contains("terminated")) cs["containerID"] = "containerd://" + hexDigits(p.name + "/container", 64);
    cs["ready"] = ready;
    cs["started"] = started;
    cs["restartCount"] = 0;
    cs["lastState"] = Json::object();
    cs["state"] = state;
    return cs;
  }

  std::string notReadyMessage() const { return fmt::format("containers with unready status: [{}]", s_.container); }

  Json scheduledStatus(const PodPlan& p, Offset at) const {
    Json status{{"phase", "Pending"},
                {"hostIP", fmt::format("10.0.{}.{}", 1 + fnv1a(p.node) % 200, 10 + fnv1a(p.node + "/h") % 200)},
                {"startTime", timeRef(at)},
                {"conditions", Json::array({podCondition("PodReadyToStartContainers", "True", at),
                                            podCondition("Initialized", "True", at),
                                            podCondition("Ready", "False", at, "ContainersNotReady", notReadyMessage()),
                                            podCondition("ContainersReady", "False", at, "ContainersNotReady", notReadyMessage()),
                                            podCondition("PodScheduled", "True", at)})},
                {"containerStatuses",
                 Json::array({containerStatus(p, Json{{"waiting", Json{{"reason", "ContainerCreating"}}}}, false)})}};
    return status;
  }

  Json podBody(const PodPlan& p) const {
    Json labels{{"batch.kubernetes.io/controller-uid", workerJobUid()},
                {"batch.kubernetes.io/job-completion-index", std::to_string(p.index)},
                {"batch.kubernetes.io/job-name", job_},
                {"controller-uid", workerJobUid()},
                {"job-name", job_},
                {"kueue.x-k8s.io/podset", "main"},
                {"kueue.x-k8s.io/cluster-queue-name", s_.manager || s_.workerCopyOnly ? s_.workerClusterQueue : s_.clusterQueue},
                {"kueue.x-k8s.io/local-queue-name", s_.queue}};
    if (s_.manager || s_.workerCopyOnly) labels["kueue.x-k8s.io/multikueue-worker-workload-pod"] = "true";
    Json meta{{"name", p.name},
              {"generateName", fmt::format("{}-{}-", job_, p.index)},
              {"namespace", s_.ns},
              {"creationTimestamp", timeRef(p.created)},
              {"labels", labels},
              {"annotations", Json{{"batch.kubernetes.io/job-completion-index", std::to_string(p.index)},
                                   {"kueue.x-k8s.io/workload", workload_}}},
              {"ownerReferences", Json::array({Json{{"apiVersion", "batch/v1"},
                                                    {"blockOwnerDeletion", true},
                                                    {"controller", true},
                                                    {"kind", "Job"},
                                                    {"name", job_},
                                                    {"uid", workerJobUid()}}})}};
    Json spec = podTemplateSpec();
    spec["schedulerName"] = "default-scheduler";
    bool scheduledNow = p.scheduled && *p.scheduled == p.created;
    if (scheduledNow) spec["nodeName"] = p.node;
    Json status;
    if (scheduledNow) {
      status = scheduledStatus(p, p.created);
    } else {
      status = Json{{"phase", "Pending"},
                    {"conditions", Json::array({podCondition("PodScheduled", "False", p.created, "Unschedulable",
                                                             p.unschedulableMessage)})}};
    }
    status["qosClass"] = "Burstable";
    if (s_.dra)
      status["resourceClaimStatuses"] = Json::array({Json{{"name", s_.dra->claimName}, {"resourceClaimName", p.claimName}}});
    return Json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", spec}, {"status", status}};
  }

  Json claimBody(const PodPlan& p) const {
    std::string podUid = fmt::format("{{{{uid:Pod:{}/{}}}}}", s_.ns, p.name);
    return Json{{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceClaim"},
                {"metadata", Json{{"name", p.claimName},
                                  {"generateName", fmt::format("{}-{}-", p.name, s_.dra->claimName)},
                                  {"namespace", s_.ns},
                                  {"creationTimestamp", timeRef(p.created)},
                                  {"annotations", Json{{"resource.kubernetes.io/pod-claim-name", s_.dra->claimName}}},
                                  {"ownerReferences", Json::array({Json{{"apiVersion", "v1"},
                                                                        {"blockOwnerDeletion", true},
                                                                        {"controller", true},
                                                                        {"kind", "Pod"},
                                                                        {"name", p.name},
                                                                        {"uid", podUid}}})}}},
                {"spec", Json{{"devices", Json{{"requests", Json::array({Json{
                                                                {"name", s_.dra->claimName},
                                                                {"exactly", claimRequest()}}})}}}}},
                {"status", Json::object()}};
  }

  Json claimRequest() const {
    Json exactly{{"allocationMode", "ExactCount"}, {"count", s_.gpusPerPod}, {"deviceClassName", s_.dra->deviceClass}};
    if (!s_.dra->selector.empty()) {
      exactly["selectors"] = Json::array({Json{{"cel", Json{{"expression", s_.dra->selector}}}}});
    }
    return exactly;
  }

  Json claimAllocation(const PodPlan& p, Offset at) const {
    std::string pool = s_.dra->pool;
    if (auto pos = pool.find("{node}"); pos != std::string::npos) pool.replace(pos, 6, p.node);
    Json results = Json::array();
    for (int64_t m = 0; m < s_.gpusPerPod; ++m) {
      int64_t d = p.slot * s_.gpusPerPod + m;
      results.push_back(Json{{"device", substituteIndex(s_.dra->device, "{d}", d)},
                             {"driver", s_.dra->driver},
                             {"pool", pool},
                             {"request", s_.dra->claimName}});
    }
    return statusPatch(Json{
        {"allocation",
         Json{{"allocationTimestamp", timeRef(at)},
              {"devices", Json{{"results", results}}},
              {"nodeSelector",
               Json{{"nodeSelectorTerms",
                     Json::array({Json{{"matchFields", Json::array({Json{{"key", "metadata.name"},
                                                                         {"operator", "In"},
                                                                         {"values", Json::array({p.node})}}})}}})}}}}},
        {"reservedFor", Json::array({Json{{"name", p.name},
                                          {"resource", "pods"},
                                          {"uid", fmt::format("{{{{uid:Pod:{}/{}}}}}", s_.ns, p.name)}}})}});
  }

  void emitPod(const PodPlan& p) {
    const std::string& wc = s_.worker->name;
    std::string podWhat = "pod " + p.name;
    emitCreate(p.created, wc, "Pod", p.name, podBody(p), podWhat + " created");
    if (s_.dra) {
      emitCreate(p.created, wc, "ResourceClaim", p.claimName, claimBody(p), "claim " + p.claimName + " created");
      if (p.scheduled)
        emitPatch(*p.scheduled, wc, "ResourceClaim", p.claimName, claimAllocation(p, *p.scheduled),
                  "claim " + p.claimName + " allocated");
    }
    if (p.scheduled && *p.scheduled > p.created) {
      Json patch = statusPatch(scheduledStatus(p, *p.scheduled));
      patch["spec"] = Json{{"nodeName", p.node}};
      emitPatch(*p.scheduled, wc, "Pod", p.name, patch, podWhat + " scheduled");
    }
    for (const auto& w : p.waiting) {
      std::string message = w.message.empty() ? defaultWaitingMessage(w.reason, s_.image) : w.message;
      Json waiting{{"reason", w.reason}};
      if (!message.empty()) waiting["message"] = message;
      emitPatch(w.at, wc, "Pod", p.name,
                statusPatch(Json{{"containerStatuses", Json::array({containerStatus(p, Json{{"waiting", waiting}}, false)})}}),
                podWhat + " waiting " + w.reason);
    }
    if (p.running) {
      Offset r = *p.running;
      emitPatch(r, wc, "Pod", p.name,
                statusPatch(Json{{"phase", "Running"},
                                 {"podIP", fmt::format("10.244.{}.{}", fnv1a(p.node) % 250, 2 + fnv1a(p.name) % 250)},
                                 {"conditions", Json::array({podCondition("Ready", "True", r),
                                                             podCondition("ContainersReady", "True", r)})},
                                 {"containerStatuses",
                                  Json::array({containerStatus(p, Json{{"running", Json{{"startedAt", timeRef(r)}}}}, true)})}}),
                podWhat + " running");
    }
    if (p.firstWork)
      emitPatch(*p.firstWork, wc, "Pod", p.name,
                Json{{"metadata", Json{{"annotations", Json{{kFirstWorkAnnotation, timeRef(*p.firstWork)}}}}}},
                podWhat + " first useful work");
    for (Offset c : p.checkpoints)
      emitPatch(c, wc, "Pod", p.name, Json{{"metadata", Json{{"annotations", Json{{kCheckpointAnnotation, timeRef(c)}}}}}},
                podWhat + " checkpoint");
  }

  void emitFinished(Offset at) {
    const std::string& wc = s_.worker->name;
    for (const auto& p : pods_) {
      if (!p.running) continue;
      Json terminated{{"exitCode", 0},
                      {"reason", "Completed"},
                      {"startedAt", timeRef(*p.running)},
                      {"finishedAt", timeRef(at)},
                      {"containerID", "containerd://" + hexDigits(p.name + "/container", 64)}};
      emitPatch(at, wc, "Pod", p.name,
                statusPatch(Json{{"phase", "Succeeded"},
                                 {"conditions", Json::array({podCondition("Ready", "False", at, "PodCompleted"),
                                                             podCondition("ContainersReady", "False", at, "PodCompleted")})},
                                 {"containerStatuses",
                                  Json::array({containerStatus(p, Json{{"terminated", terminated}}, false)})}}),
                "pod " + p.name + " succeeded");
      if (s_.dra)
        emitPatch(at, wc, "ResourceClaim", p.claimName, statusPatch(Json{{"allocation", nullptr}, {"reservedFor", nullptr}}),
                  "claim " + p.claimName + " released");
    }
    Json fin = statusPatch(Json{{"conditions", Json::array({workloadCondition("Finished", "True", "Succeeded",
                                                                              "Job finished successfully", at)})}});
    emitPatch(at, wc, "Workload", workload_, fin, "finished");
    if (s_.manager) emitPatch(at, s_.manager->name, "Workload", workload_, fin, "finished (mirrored)");
  }

  void emitPreemption(const Preemption& e) {
    // The preemption happens where quota is reserved: the manager for MultiKueue jobs.
    const std::string wlCluster = s_.manager ? s_.manager->name : s_.worker->name;
    std::string jobUid = e.preemptorJob.empty()
                             ? "UNKNOWN"
                             : fmt::format("{{{{jobuid:{}/{}@{}}}}}", e.preemptorNs, e.preemptorJob, wlCluster);
    // pkg/scheduler/preemption/preemption.go preemptionMessage (v0.15+ format).
    std::string message = fmt::format(
        "Preempted to accommodate a workload (UID: {{{{uid:{}/{}@{}}}}}, JobUID: {}) due to {}; preemptor path: {}; "
        "preemptee path: {}",
        e.preemptorNs, e.preemptorWorkload, wlCluster, jobUid, humanPreemptionReason(e.reason), e.preemptorPath,
        e.preempteePath);
    Json phase1 = Json{{"conditions", Json::array({workloadCondition("Evicted", "True", "Preempted", message, e.at),
                                                   workloadCondition("Preempted", "True", e.reason, message, e.at)})}};
    if (s_.manager) {
      // prepareForEviction: checks back to Pending, clusterName cleared (evict.go).
      phase1["admissionChecks"] = Json::array({Json{{"name", s_.admissionCheck},
                                                    {"state", "Pending"},
                                                    {"message", "Reset to Pending after eviction. Previously: Ready"},
                                                    {"lastTransitionTime", timeRef(e.at)}}});
      phase1["clusterName"] = nullptr;
    }
    emitPatch(e.at, wlCluster, "Workload", workload_, statusPatch(phase1), "evicted (preempted)");
    if (s_.manager) {
      emitPatch(e.at, s_.worker->name, "Workload", workload_,
                statusPatch(Json{{"conditions", Json::array({workloadCondition("DeactivationTarget", "True",
                                                                               "EvictedOnManagerCluster",
                                                                               "Evicted on manager: " + message, e.at)})}}),
                "worker copy asked to stop");
    }
    // Phase 2: the job's pods are gone, quota released, requeued (reconciler.go, fixture
    // kueue-workload-v1beta2-preempted-fairsharing-requeued-CONSTRUCTED.yaml).
    for (const auto& p : pods_) {
      if (s_.dra) emitDelete(e.released, s_.worker->name, "ResourceClaim", p.claimName, "claim " + p.claimName + " deleted");
      emitDelete(e.released, s_.worker->name, "Pod", p.name, "pod " + p.name + " deleted");
    }
    if (s_.manager) emitDelete(e.released, s_.worker->name, "Workload", workload_, "worker copy deleted");
    Offset admittedAt = s_.manager ? *s_.admitted : *s_.reserved;
    auto executed = std::chrono::duration_cast<std::chrono::seconds>(e.released - admittedAt).count();
    Json phase2{{"admission", nullptr},
                {"accumulatedPastExecutionTimeSeconds", executed},
                {"schedulingStats", Json{{"evictions", Json::array({Json{{"reason", "Preempted"}, {"underlyingCause", ""}, {"count", 1}}})}}},
                {"conditions",
                 Json::array({workloadCondition("QuotaReserved", "False", "PendingEvaluation", message, e.released),
                              workloadCondition("Admitted", "False", "NoReservation", "The workload has no reservation", e.released),
                              workloadCondition("Requeued", "True", "Preempted", message, e.released),
                              workloadCondition("PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded",
                                                e.released)})}};
    emitPatch(e.released, wlCluster, "Workload", workload_, statusPatch(phase2), "quota released, requeued");
  }

  // --- emit helpers -----------------------------------------------------------------------

  void emit(Offset at, const std::string& cluster, StepAction action, const std::string& kind, const std::string& name,
            Json body, const std::string& what) {
    ctx_.out.push_back(GenStep{at, cluster, action, kind, s_.ns, name, std::move(body),
                               fmt::format("job {}{}: {}", s_.namePattern, label_, what)});
  }
  void emitCreate(Offset at, const std::string& cluster, const std::string& kind, const std::string& name, Json body,
                  const std::string& what) {
    emit(at, cluster, StepAction::Create, kind, name, std::move(body), what);
  }
  void emitPatch(Offset at, const std::string& cluster, const std::string& kind, const std::string& name, Json body,
                 const std::string& what) {
    emit(at, cluster, StepAction::Patch, kind, name, std::move(body), what);
  }
  void emitDelete(Offset at, const std::string& cluster, const std::string& kind, const std::string& name,
                  const std::string& what) {
    emit(at, cluster, StepAction::Delete, kind, name, Json(), what);
  }

  const JobSpec& s_;
  GenContext& ctx_;
  std::string job_;
  std::string workload_;
  int64_t replica_ = 0;
  std::string label_;
  std::vector<PodPlan> pods_;
};

const ScenarioCluster* clusterKey(const MapReader& r, const char* key, GenContext& ctx, bool required,
                                  std::initializer_list<ClusterRole> roles) {
  auto name = r.str(key, required);
  if (!name) return nullptr;
  const ScenarioCluster* c = ctx.cluster(*name);
  if (!c) {
    r.fail(key, fmt::format("unknown cluster \"{}\" (not in clusters:)", *name));
    return nullptr;
  }
  if (std::find(roles.begin(), roles.end(), c->role) == roles.end()) {
    std::string list;
    for (auto role : roles) list += (list.empty() ? "" : " or ") + std::string(clusterRoleName(role));
    r.fail(key, fmt::format("cluster \"{}\" has role {}, expected {}", *name, clusterRoleName(c->role), list));
    return nullptr;
  }
  return c;
}

// Checks a chain of milestones is in time order; reports the first pair out of order.
using FailFn = std::function<void(const char* key, const std::string& message)>;
void checkOrder(const FailFn& fail, const std::vector<std::pair<const char*, std::optional<Offset>>>& chain) {
  std::optional<Offset> prev;
  const char* prevName = nullptr;
  for (const auto& [name, value] : chain) {
    if (!value) continue;
    if (prev && *value < *prev) {
      fail(name, fmt::format("{} ({}) is before {} ({})", name, formatOffset(*value), prevName, formatOffset(*prev)));
      return;
    }
    prev = value;
    prevName = name;
  }
}

}  // namespace

void expandJob(const YAML::Node& node, GenContext& ctx) {
  MapReader r(node, ctx.path, ctx.problems,
              {"name", "workload_name", "count", "index_from", "namespace", "queue", "cluster_queue",
               "worker_cluster_queue", "admission_check", "flavor", "manager", "worker", "worker_copy_only", "origin",
               "pods", "gpus_per_pod", "gpu_resource", "cpu_per_pod", "memory_per_pod", "image", "container",
               "priority", "priority_class", "dra", "node", "pods_per_node", "first_slot", "pending", "reserved",
               "dispatched", "admitted", "pods_created", "scheduled", "unschedulable_message", "waiting", "running",
               "first_work", "checkpoints", "finished", "worker_deleted", "preempted", "pod_overrides"});
  if (!r.ok()) return;
  size_t before = ctx.problems.size();
  JobSpec s;
  s.namePattern = r.str("name", true).value_or("");
  s.workloadNamePattern = r.str("workload_name").value_or("");
  s.count = r.integer("count", false, 1).value_or(1);
  s.indexFrom = r.integer("index_from", false, 0).value_or(0);
  if (s.count > 1 && s.namePattern.find("{i}") == std::string::npos)
    r.fail("name", "count > 1 needs \"{i}\" in the name");
  s.ns = r.str("namespace", true).value_or("");
  s.queue = r.str("queue", true).value_or("");
  s.workerCopyOnly = r.boolean("worker_copy_only").value_or(false);
  s.clusterQueue = r.str("cluster_queue", !s.workerCopyOnly).value_or("");
  s.workerClusterQueue = r.str("worker_cluster_queue").value_or(s.clusterQueue);
  if (s.workerCopyOnly && s.workerClusterQueue.empty()) r.fail("worker_cluster_queue", "required with worker_copy_only");
  s.admissionCheck = r.str("admission_check").value_or(s.admissionCheck);
  s.flavor = r.str("flavor").value_or(s.flavor);
  s.origin = r.str("origin").value_or(s.origin);
  if (r.has("manager")) s.manager = clusterKey(r, "manager", ctx, false, {ClusterRole::Manager});
  s.worker = clusterKey(r, "worker", ctx, true,
                        s.manager || s.workerCopyOnly ? std::initializer_list<ClusterRole>{ClusterRole::Worker}
                                                      : std::initializer_list<ClusterRole>{ClusterRole::Worker,
                                                                                           ClusterRole::Standalone});
  if (s.workerCopyOnly && r.has("manager")) r.fail("worker_copy_only", "a worker copy alone has no manager Workload");
  s.pods = r.integer("pods", false, 1).value_or(1);
  s.gpusPerPod = r.integer("gpus_per_pod", false, 0).value_or(1);
  s.gpuResource = r.str("gpu_resource").value_or(s.gpuResource);
  s.cpuPerPod = r.str("cpu_per_pod").value_or(s.cpuPerPod);
  s.memoryPerPod = r.str("memory_per_pod").value_or(s.memoryPerPod);
  if (auto q = multiplyQuantity(s.cpuPerPod, 1); !q) r.fail("cpu_per_pod", q.error());
  if (auto q = multiplyQuantity(s.memoryPerPod, 1); !q) r.fail("memory_per_pod", q.error());
  s.image = r.str("image").value_or(s.image);
  s.container = r.str("container").value_or(s.container);
  s.priority = r.integer("priority").value_or(0);
  s.priorityClass = r.str("priority_class").value_or("");
  if (r.has("dra")) {
    MapReader d(r.child("dra"), r.pathOf("dra"), ctx.problems,
                {"device_class", "driver", "claim_template", "claim_name", "pool", "device", "quota_resource",
                 "selector"});
    if (d.ok()) {
      DraSpec dra;
      dra.deviceClass = d.str("device_class").value_or(dra.deviceClass);
      dra.driver = d.str("driver").value_or(dra.driver);
      dra.claimTemplate = d.str("claim_template", true).value_or("");
      dra.claimName = d.str("claim_name").value_or(dra.claimName);
      dra.pool = d.str("pool").value_or(dra.pool);
      dra.device = d.str("device").value_or(dra.device);
      dra.quotaResource = d.str("quota_resource").value_or(dra.deviceClass);
      dra.selector = d.str("selector").value_or("");
      s.dra = dra;
    }
  }
  s.nodePattern = r.str("node").value_or("");
  s.podsPerNode = r.integer("pods_per_node", false, 1).value_or(1);
  s.firstSlot = r.integer("first_slot", false, 0).value_or(0);
  if (r.has("pending")) {
    MapReader p(r.child("pending"), r.pathOf("pending"), ctx.problems, {"reason", "message"});
    s.pendingReason = p.str("reason").value_or(s.pendingReason);
    s.pendingMessage = p.str("message").value_or("");
  }

  s.created = ctx.at;
  MaybeOffset reserved = maybeOffset(r, "reserved");
  if (!reserved.never) s.reserved = reserved.given ? reserved.value : s.created;
  if (s.workerCopyOnly && reserved.given) r.fail("reserved", "a worker copy is reserved when admitted (use admitted)");
  if (r.has("dispatched")) {
    if (!s.manager) r.fail("dispatched", "only MultiKueue jobs (with manager:) are dispatched");
    s.dispatched = r.offset("dispatched");
  }
  if (r.has("admitted")) {
    if (!s.manager && !s.workerCopyOnly) r.fail("admitted", "a single-cluster job is admitted when reserved");
    s.admitted = r.offset("admitted");
  }
  if (s.manager && s.dispatched && !s.admitted) s.admitted = s.dispatched;
  if (s.manager && s.admitted && !s.dispatched) r.fail("admitted", "needs dispatched");
  if (s.workerCopyOnly && !s.admitted) s.admitted = s.created;
  if (s.manager && s.dispatched && !s.reserved) r.fail("dispatched", "a job that is never reserved is not dispatched");

  // Pods exist once the job runs on its worker.
  std::optional<Offset> podsFrom;
  if (s.manager) podsFrom = s.dispatched ? s.admitted : std::nullopt;
  else if (s.workerCopyOnly) podsFrom = s.admitted;
  else podsFrom = s.reserved;
  if (r.has("pods_created")) s.podsCreated = r.offset("pods_created");
  else s.podsCreated = podsFrom;
  if (s.podsCreated && !podsFrom) r.fail("pods_created", "the job is never admitted, so it has no pods");
  MaybeOffset scheduled = maybeOffset(r, "scheduled");
  s.neverScheduled = scheduled.never;
  if (scheduled.given && !scheduled.never) s.scheduled = scheduled.value;
  // kube-scheduler's FitError text; scenarios that care give the exact node counts.
  s.unschedulableMessage = r.str("unschedulable_message")
                               .value_or(s.dra ? "0/1 nodes are available: 1 cannot allocate all claims. preemption: 0/1 "
                                                 "nodes are available: 1 Preemption is not helpful for scheduling."
                                               : "0/1 nodes are available: 1 Insufficient " + s.gpuResource +
                                                     ". preemption: 0/1 nodes are available: 1 No preemption victims "
                                                     "found for incoming pod.");
  s.waiting = readWaiting(r, "waiting");
  s.running = r.offset("running");
  s.firstWork = r.offset("first_work");
  s.checkpoints = r.offsets("checkpoints");
  s.finished = r.offset("finished");
  s.workerDeleted = r.offset("worker_deleted");
  if (s.workerDeleted && !(s.manager && s.dispatched) && !s.workerCopyOnly)
    r.fail("worker_deleted", "only a MultiKueue job's worker copy is garbage-collected");
  bool needsPods = s.scheduled || !s.waiting.empty() || s.running || s.firstWork || !s.checkpoints.empty() ||
                   s.finished || r.has("pod_overrides");
  if (needsPods && !s.podsCreated)
    r.problems().add(node, r.path(), s.manager ? "pod milestones need dispatched (the job never reaches its worker)"
                                               : "pod milestones need the job to be reserved");
  if (s.podsCreated && s.nodePattern.empty())
    r.fail("node", "required when the job has pods (e.g. node: w1-gpu-{n} with pods_per_node: 8)");
  if (s.firstWork && !s.running) r.fail("first_work", "needs running");
  if (!s.checkpoints.empty() && !s.firstWork) r.fail("checkpoints", "needs first_work");
  if (s.finished && !s.running) r.fail("finished", "needs running");

  if (r.has("preempted")) {
    MapReader p(r.child("preempted"), r.pathOf("preempted"), ctx.problems,
                {"at", "released", "reason", "preemptor", "preemptor_workload", "preemptor_path", "preemptee_path"});
    if (p.ok()) {
      Preemption e;
      e.at = p.offset("at", true).value_or(Offset{0});
      e.released = p.offset("released").value_or(e.at);
      e.reason = p.str("reason", true).value_or("");
      if (!e.reason.empty() && humanPreemptionReason(e.reason).empty())
        p.fail("reason", "expected InClusterQueue, InCohortReclamation, InCohortFairSharing or "
                         "InCohortReclaimWhileBorrowing");
      std::string ref;
      if (auto job = p.str("preemptor")) {
        ref = *job;
      } else if (auto wl = p.str("preemptor_workload")) {
        ref = *wl;
      } else {
        p.fail("preemptor", "required: the preemptor's Job (namespace/job) or preemptor_workload (namespace/name)");
      }
      auto slash = ref.find('/');
      if (!ref.empty() && (slash == std::string::npos || slash == 0 || slash + 1 == ref.size())) {
        p.fail(p.has("preemptor") ? "preemptor" : "preemptor_workload", "expected namespace/name");
      } else if (!ref.empty()) {
        e.preemptorNs = ref.substr(0, slash);
        if (p.has("preemptor")) {
          e.preemptorJob = ref.substr(slash + 1);
          e.preemptorWorkload = jobWorkloadName(e.preemptorNs, e.preemptorJob);
        } else {
          e.preemptorWorkload = ref.substr(slash + 1);
        }
      }
      e.preemptorPath = p.str("preemptor_path", true).value_or("");
      e.preempteePath = p.str("preemptee_path", true).value_or("");
      if (e.released < e.at) p.fail("released", "is before at");
      if (s.workerCopyOnly) p.fail("at", "preempt the manager Workload, not a worker copy alone");
      s.preempted = e;
    }
  }

  if (r.has("pod_overrides")) {
    YAML::Node list = r.child("pod_overrides");
    bool isList = list.IsDefined() && list.IsSequence();
    if (!isList) r.fail("pod_overrides", "expected a list");
    for (size_t k = 0; isList && k < list.size(); ++k) {
      MapReader o(list[k], fmt::format("{}[{}]", r.pathOf("pod_overrides"), k), ctx.problems,
                  {"pod", "scheduled", "unschedulable_message", "waiting", "running", "first_work", "checkpoints"});
      if (!o.ok()) continue;
      JobSpec::Override ov;
      ov.pod = o.integer("pod", true, 0).value_or(0);
      if (ov.pod >= s.pods) o.fail("pod", fmt::format("the job has pods 0..{}", s.pods - 1));
      MaybeOffset sc = maybeOffset(o, "scheduled");
      ov.neverScheduled = sc.never;
      if (sc.given && !sc.never) ov.scheduled = sc.value;
      if (o.has("unschedulable_message")) ov.unschedulableMessage = o.str("unschedulable_message");
      if (o.has("waiting")) ov.waiting = readWaiting(o, "waiting");
      MaybeOffset ru = maybeOffset(o, "running");
      ov.neverRunning = ru.never;
      if (ru.given && !ru.never) ov.running = ru.value;
      MaybeOffset fw = maybeOffset(o, "first_work");
      ov.noFirstWork = fw.never;
      if (fw.given && !fw.never) ov.firstWork = fw.value;
      if (o.has("checkpoints")) ov.checkpoints = o.offsets("checkpoints");
      s.overrides.push_back(std::move(ov));
    }
  }

  // Time order of the job-level chain.
  std::optional<Offset> firstWaiting = s.waiting.empty() ? std::nullopt : std::optional<Offset>(s.waiting.front().at);
  std::optional<Offset> firstCheckpoint =
      s.checkpoints.empty() ? std::nullopt : std::optional<Offset>(*std::min_element(s.checkpoints.begin(), s.checkpoints.end()));
  std::optional<Offset> lastCheckpoint =
      s.checkpoints.empty() ? std::nullopt : std::optional<Offset>(*std::max_element(s.checkpoints.begin(), s.checkpoints.end()));
  FailFn jobFail = [&](const char* key, const std::string& message) { r.fail(key, message); };
  checkOrder(jobFail, {{"at", s.created},
                 {"reserved", s.reserved},
                 {"dispatched", s.dispatched},
                 {"admitted", s.admitted},
                 {"pods_created", s.podsCreated},
                 {"scheduled", s.scheduled},
                 {"waiting", firstWaiting},
                 {"running", s.running},
                 {"first_work", s.firstWork},
                 {"checkpoints", firstCheckpoint},
                 {"checkpoints", lastCheckpoint},
                 {"finished", s.finished},
                 {"worker_deleted", s.workerDeleted}});
  for (size_t k = 1; k < s.waiting.size(); ++k)
    if (s.waiting[k].at < s.waiting[k - 1].at) r.fail("waiting", "entries must be in time order");
  if (s.preempted) {
    if (s.finished) r.fail("preempted", "a job is either finished or preempted");
    if (s.workerDeleted) r.fail("worker_deleted", "a preempted job's worker copy is deleted at release already");
    std::optional<Offset> admittedAt = s.manager ? s.admitted : s.reserved;
    if (!admittedAt || s.preempted->at < *admittedAt) r.fail("preempted", "a job is preempted after it is admitted");
    for (auto v : {s.running, s.firstWork, lastCheckpoint})
      if (v && *v > s.preempted->at) {
        r.fail("preempted", "running, first_work and checkpoints must not be after the eviction");
        break;
      }
  }
  for (size_t k = 0; k < s.overrides.size(); ++k) {
    const auto& o = s.overrides[k];
    YAML::Node entry = r.child("pod_overrides")[k];
    std::string entryPath = fmt::format("{}[{}]", r.pathOf("pod_overrides"), k);
    FailFn podFail = [&](const char* key, const std::string& message) {
      YAML::Node at = entry[key];
      ctx.problems.add(at.IsDefined() ? at : entry, entryPath + "." + key, message);
    };
    std::optional<Offset> sc = o.neverScheduled ? std::nullopt : (o.scheduled ? o.scheduled : s.scheduled);
    if (!sc && !o.neverScheduled && !s.neverScheduled) sc = s.podsCreated;
    std::optional<Offset> ru = o.neverRunning ? std::nullopt : (o.running ? o.running : s.running);
    std::optional<Offset> fw = o.noFirstWork ? std::nullopt : (o.firstWork ? o.firstWork : s.firstWork);
    if (ru && !sc) podFail("running", "a pod that is never scheduled does not run");
    if (fw && !ru) podFail("first_work", "needs running");
    const auto& waits = o.waiting ? *o.waiting : s.waiting;
    checkOrder(podFail, {{"pods_created", s.podsCreated},
                    {"scheduled", sc},
                    {"waiting", waits.empty() ? std::nullopt : std::optional<Offset>(waits.front().at)},
                    {"running", ru},
                    {"first_work", fw}});
    if (s.preempted && ((ru && *ru > s.preempted->at) || (fw && *fw > s.preempted->at)))
      podFail("running", "must not be after the eviction");
    if (s.finished && ru && *ru > *s.finished) podFail("running", "must not be after finished");
  }
  if (ctx.problems.size() != before) return;  // do not expand a job with problems

  JobExpander expander(s, ctx);
  for (int64_t r2 = 0; r2 < s.count; ++r2) expander.expandReplica(s.indexFrom + r2);
}

void expandNodes(const YAML::Node& node, GenContext& ctx) {
  MapReader r(node, ctx.path, ctx.problems,
              {"cluster", "name", "count", "index_from", "gpus", "gpu_resource", "product", "cpu", "memory",
               "ready_since", "labels", "unschedulable"});
  if (!r.ok()) return;
  const ScenarioCluster* c =
      clusterKey(r, "cluster", ctx, true, {ClusterRole::Worker, ClusterRole::Standalone, ClusterRole::Manager});
  std::string pattern = r.str("name", true).value_or("");
  int64_t count = r.integer("count", false, 1).value_or(1);
  int64_t from = r.integer("index_from", false, 0).value_or(0);
  if (count > 1 && pattern.find("{i}") == std::string::npos) r.fail("name", "count > 1 needs \"{i}\" in the name");
  int64_t gpus = r.integer("gpus", false, 0).value_or(0);
  std::string gpuResource = r.str("gpu_resource").value_or("nvidia.com/gpu");
  std::string product = r.str("product").value_or("NVIDIA-H100-80GB-HBM3");
  std::string cpu = r.str("cpu").value_or("192");
  std::string memory = r.str("memory").value_or("2113459016Ki");
  Offset readySince = r.offset("ready_since").value_or(ctx.at);
  bool unschedulable = r.boolean("unschedulable").value_or(false);
  Json extraLabels = r.has("labels") ? yamlToJson(r.child("labels")) : Json::object();
  if (!extraLabels.is_object()) r.fail("labels", "expected a mapping");
  if (readySince > ctx.at) r.fail("ready_since", "must not be after the step's at");
  if (!c || pattern.empty()) return;
  for (int64_t i = from; i < from + count; ++i) {
    std::string name = substituteIndex(pattern, "{i}", i);
    Json labels{{"kubernetes.io/arch", "amd64"}, {"kubernetes.io/hostname", name}, {"kubernetes.io/os", "linux"}};
    if (gpus > 0) {
      labels["nvidia.com/gpu.present"] = "true";
      labels["nvidia.com/gpu.product"] = product;
      labels["nvidia.com/gpu.count"] = std::to_string(gpus);
    }
    if (extraLabels.is_object())
      for (auto it = extraLabels.begin(); it != extraLabels.end(); ++it) labels[it.key()] = it.value();
    Json resources{{"cpu", cpu}, {"ephemeral-storage", "1844284980Ki"}, {"memory", memory}, {"pods", "110"}};
    if (gpus > 0) resources[gpuResource] = std::to_string(gpus);
    std::string t = timeRef(readySince);
    auto cond = [&](const char* type, const char* status, const char* reason, const char* message) {
      return Json{{"type", type}, {"status", status}, {"lastHeartbeatTime", t}, {"lastTransitionTime", t},
                  {"reason", reason}, {"message", message}};
    };
    Json spec = Json::object();
    spec["podCIDR"] = fmt::format("10.244.{}.0/24", fnv1a(c->name + "/" + name) % 250);
    if (unschedulable) spec["unschedulable"] = true;
    Json body{
        {"apiVersion", "v1"},
        {"kind", "Node"},
        {"metadata", Json{{"name", name}, {"creationTimestamp", t}, {"labels", labels}}},
        {"spec", spec},
        {"status",
         Json{{"capacity", resources},
              {"allocatable", resources},
              {"conditions",
               Json::array({cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                            cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                            cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                            cond("Ready", "True", "KubeletReady", "kubelet is posting ready status")})},
              {"addresses", Json::array({Json{{"type", "InternalIP"},
                                              {"address", fmt::format("10.0.{}.{}", 1 + fnv1a(name) % 200, 10 + fnv1a(name + "/h") % 200)}},
                                         Json{{"type", "Hostname"}, {"address", name}}})},
              {"nodeInfo", Json{{"architecture", "amd64"},
                                {"bootID", uuidFrom(name + "/boot")},
                                {"containerRuntimeVersion", "containerd://1.7.24"},
                                {"kernelVersion", "6.1.0-28-amd64"},
                                {"kubeProxyVersion", ""},
                                {"kubeletVersion", "v1.34.2"},
                                {"machineID", hexDigits(name + "/machine", 32)},
                                {"operatingSystem", "linux"},
                                {"osImage", "Debian GNU/Linux 12 (bookworm)"},
                                {"systemUUID", uuidFrom(name + "/system")}}}}}};
    ctx.out.push_back(GenStep{ctx.at, c->name, StepAction::Create, "Node", "", name, std::move(body),
                              "nodes " + pattern + ": node " + name});
  }
}

namespace {

std::string defaultConnectionFailure(const ScenarioCluster& worker) {
  return fmt::format(
      "Get \"https://{}.example.internal:6443/apis/kueue.x-k8s.io/v1beta2/workloads?labelSelector=kueue.x-k8s.io%2F"
      "multikueue-origin%3Dmultikueue\": dial tcp 10.0.{}.15:6443: connect: connection refused",
      worker.name, 2 + fnv1a(worker.name) % 200);
}

Json activeCondition(bool active, const std::string& reason, const std::string& message, Offset at) {
  return Json{{"type", "Active"},
              {"status", active ? "True" : "False"},
              {"reason", reason},
              {"message", message},
              {"observedGeneration", 1},
              {"lastTransitionTime", timeRef(at)}};
}

}  // namespace

void expandMultiKueueCluster(const YAML::Node& node, GenContext& ctx) {
  MapReader r(node, ctx.path, ctx.problems, {"worker", "active", "since", "reason", "message"});
  if (!r.ok()) return;
  const ScenarioCluster* w = clusterKey(r, "worker", ctx, true, {ClusterRole::Worker});
  const ScenarioCluster* m = ctx.manager();
  if (!m) r.problems().add(node, r.path(), "needs a cluster with role manager");
  bool active = r.boolean("active").value_or(true);
  Offset since = r.offset("since").value_or(ctx.at);
  if (since > ctx.at) r.fail("since", "must not be after the step's at");
  if (!w || !m) return;
  std::string reason = r.str("reason").value_or(active ? "Active" : "ClientConnectionFailed");
  std::string message = r.str("message").value_or(active ? "Connected" : defaultConnectionFailure(*w));
  Json body{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
            {"kind", "MultiKueueCluster"},
            {"metadata", Json{{"name", w->multikueueCluster}, {"generation", 1}, {"creationTimestamp", timeRef(since)}}},
            {"spec", Json{{"clusterSource", Json{{"kubeConfig", Json{{"locationType", "Secret"},
                                                                     {"location", w->multikueueCluster + "-secret"}}}}}}},
            {"status", Json{{"conditions", Json::array({activeCondition(active, reason, message, since)})}}}};
  ctx.out.push_back(GenStep{ctx.at, m->name, StepAction::Create, "MultiKueueCluster", "", w->multikueueCluster,
                            std::move(body), "multikueue_cluster " + w->multikueueCluster});
}

void expandKueueConnection(const YAML::Node& node, GenContext& ctx) {
  MapReader r(node, ctx.path, ctx.problems, {"worker", "active", "reason", "message"});
  if (!r.ok()) return;
  const ScenarioCluster* w = clusterKey(r, "worker", ctx, true, {ClusterRole::Worker});
  const ScenarioCluster* m = ctx.manager();
  if (!m) r.problems().add(node, r.path(), "needs a cluster with role manager");
  auto active = r.boolean("active");
  if (!r.has("active")) r.fail("active", "required");
  if (!w || !m || !active) return;
  std::string reason = r.str("reason").value_or(*active ? "Active" : "ClientConnectionFailed");
  std::string message = r.str("message").value_or(*active ? "Connected" : defaultConnectionFailure(*w));
  ctx.out.push_back(GenStep{ctx.at, m->name, StepAction::Patch, "MultiKueueCluster", "", w->multikueueCluster,
                            statusPatch(Json{{"conditions", Json::array({activeCondition(*active, reason, message, ctx.at)})}}),
                            fmt::format("kueue_connection {} active={}", w->name, *active)});
}

void expandResourceSlice(const YAML::Node& node, GenContext& ctx) {
  MapReader r(node, ctx.path, ctx.problems,
              {"cluster", "name", "node", "driver", "pool", "generation", "resource_slice_count", "first_device",
               "device_count", "type", "profile", "product", "architecture", "memory", "action"});
  if (!r.ok()) return;
  const ScenarioCluster* c = clusterKey(r, "cluster", ctx, true, {ClusterRole::Worker, ClusterRole::Standalone});
  std::string name = r.str("name", true).value_or("");
  std::string nodeName = r.str("node", true).value_or("");
  std::string driver = r.str("driver").value_or("gpu.nvidia.com");
  std::string pool = r.str("pool").value_or(nodeName);
  int64_t generation = r.integer("generation", false, 0).value_or(1);
  int64_t sliceCount = r.integer("resource_slice_count", false, 1).value_or(1);
  int64_t first = r.integer("first_device", false, 0).value_or(0);
  int64_t count = r.integer("device_count", true, 0).value_or(0);
  std::string type = r.str("type").value_or("gpu");
  if (type != "gpu" && type != "mig") r.fail("type", "expected gpu or mig");
  std::string profile = r.str("profile").value_or("");
  if (type == "mig" && profile.empty()) r.fail("profile", "required for type mig (e.g. 1g.10gb)");
  std::string product = r.str("product").value_or("NVIDIA H100 80GB HBM3");
  std::string architecture = r.str("architecture").value_or("Hopper");
  std::string memory = r.str("memory").value_or(type == "mig" ? "10Gi" : "80Gi");
  std::string action = r.str("action").value_or("create");
  StepAction act = StepAction::Create;
  if (action == "update") act = StepAction::Update;
  else if (action == "apply") act = StepAction::Apply;
  else if (action != "create") r.fail("action", "expected create, update or apply");
  if (!c || name.empty() || nodeName.empty()) return;
  Json devices = Json::array();
  for (int64_t d = first; d < first + count; ++d) {
    std::string devName = type == "mig" ? fmt::format("gpu-{}-mig-{}", d / 7, d % 7) : fmt::format("gpu-{}", d);
    // Attribute set of NVIDIA's DRA driver (fixture dra-resourceslice-v1-nvidia-gpu-openshift-conformance.yaml).
    Json attrs{{"addressingMode", Json{{"string", "HMM"}}},
               {"architecture", Json{{"string", architecture}}},
               {"brand", Json{{"string", "Nvidia"}}},
               {"cudaComputeCapability", Json{{"version", "9.0.0"}}},
               {"cudaDriverVersion", Json{{"version", "12.8.0"}}},
               {"driverVersion", Json{{"version", "570.124.06"}}},
               {"productName", Json{{"string", product}}},
               {"resource.kubernetes.io/pciBusID", Json{{"string", fmt::format("0000:{:02x}:00.0", 0x18 + 0x10 * (d % 8))}}},
               {"resource.kubernetes.io/pcieRoot", Json{{"string", fmt::format("pci0000:{:02x}", 0x10 * (d % 8))}}},
               {"type", Json{{"string", type}}},
               {"uuid", Json{{"string", (type == "mig" ? "MIG-" : "GPU-") + uuidFrom(c->name + "/" + nodeName + "/" + devName)}}}};
    if (type == "mig") attrs["profile"] = Json{{"string", profile}};
    devices.push_back(Json{{"name", devName}, {"attributes", attrs}, {"capacity", Json{{"memory", Json{{"value", memory}}}}}});
  }
  Json body{{"apiVersion", "resource.k8s.io/v1"},
            {"kind", "ResourceSlice"},
            {"metadata", Json{{"name", name},
                              {"generateName", fmt::format("{}-{}-", nodeName, driver)},
                              {"ownerReferences", Json::array({Json{{"apiVersion", "v1"},
                                                                    {"controller", true},
                                                                    {"kind", "Node"},
                                                                    {"name", nodeName},
                                                                    {"uid", fmt::format("{{{{uid:Node:{}}}}}", nodeName)}}})}}},
            {"spec", Json{{"driver", driver},
                          {"nodeName", nodeName},
                          {"pool", Json{{"generation", generation}, {"name", pool}, {"resourceSliceCount", sliceCount}}},
                          {"devices", devices}}}};
  if (act == StepAction::Create) body["metadata"]["creationTimestamp"] = timeRef(ctx.at);
  ctx.out.push_back(GenStep{ctx.at, c->name, act, "ResourceSlice", "", name, std::move(body),
                            fmt::format("resource_slice {} (pool {} generation {})", name, pool, generation)});
}

void expandCutConnection(const YAML::Node& node, GenContext& ctx) {
  MapReader r(node, ctx.path, ctx.problems, {"cluster", "for"});
  if (!r.ok()) return;
  const ScenarioCluster* c =
      clusterKey(r, "cluster", ctx, true, {ClusterRole::Worker, ClusterRole::Standalone, ClusterRole::Manager});
  auto length = r.offset("for", true);
  if (length && length->count() <= 0) r.fail("for", "must be positive");
  if (!c || !length || length->count() <= 0) return;
  ctx.out.push_back(GenStep{ctx.at, c->name, StepAction::CutConnection, "", "", "", Json(),
                            fmt::format("cut_daemon_connection {} for {}", c->name, formatOffset(*length))});
  ctx.out.push_back(GenStep{ctx.at + *length, c->name, StepAction::RestoreConnection, "", "", "", Json(),
                            fmt::format("cut_daemon_connection {} restored", c->name)});
}

}  // namespace firstwork::scenario::detail
