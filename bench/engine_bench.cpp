// firstwork_engine_bench: decode + milestone-engine throughput on a realistic watch-event mix,
// measured against raw simdjson On-Demand extraction of the same fields from the same bytes.
//
// The event stream is generated deterministically (fixed seed): Kueue jobs go through a whole
// admission/start/finish cycle on a MultiKueue estate of two clusters — the manager's Workload,
// its copy on the worker, and the job's pods on the worker — while the worker's DRA driver keeps
// republishing its ResourceSlices. Objects are compact JSON of 4–6 KB, shaped and padded like
// what the API server sends (labels, annotations, env, volumes, managedFields), so that the
// decoders skip as much as they do in production.
//
// Events are generated and measured in chunks, so memory stays bounded (~10 MB per chunk)
// whatever --events is; each chunk is timed three times over the same bytes: the reference
// extraction, decode only, then decode + MilestoneEngine::onObject (+ advance every 500 events).
// CPU time (CLOCK_THREAD_CPUTIME_ID) is the headline figure because the machine may be shared;
// wall time is printed alongside.
#include <simdjson.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/engine/engine_config.hpp"
#include "firstwork/engine/milestone_engine.hpp"
#include "firstwork/model/decode.hpp"
#include "firstwork/model/object.hpp"

namespace {

using firstwork::SystemTime;
namespace model = firstwork::model;
namespace engine = firstwork::engine;
namespace od = simdjson::ondemand;

// ---------------------------------------------------------------------------------------------
// Compact JSON writer for the generator (not timed).
// ---------------------------------------------------------------------------------------------

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : o_(out) {}
  JsonWriter& obj() {
    sep();
    o_ += '{';
    comma_ = false;
    return *this;
  }
  JsonWriter& end() {
    o_ += '}';
    comma_ = true;
    return *this;
  }
  JsonWriter& arr() {
    sep();
    o_ += '[';
    comma_ = false;
    return *this;
  }
  JsonWriter& endArr() {
    o_ += ']';
    comma_ = true;
    return *this;
  }
  JsonWriter& key(std::string_view k) {
    sep();
    quoted(k);
    o_ += ':';
    comma_ = false;
    return *this;
  }
  JsonWriter& str(std::string_view v) {
    sep();
    quoted(v);
    comma_ = true;
    return *this;
  }
  JsonWriter& num(int64_t v) {
    sep();
    o_ += std::to_string(v);
    comma_ = true;
    return *this;
  }
  JsonWriter& boolean(bool v) {
    sep();
    o_ += v ? "true" : "false";
    comma_ = true;
    return *this;
  }
  JsonWriter& null() {
    sep();
    o_ += "null";
    comma_ = true;
    return *this;
  }
  JsonWriter& kv(std::string_view k, std::string_view v) { return key(k).str(v); }
  JsonWriter& kn(std::string_view k, int64_t v) { return key(k).num(v); }
  JsonWriter& kb(std::string_view k, bool v) { return key(k).boolean(v); }
  /// An empty object `{}` as the value of `k` (managedFields leaves, lastState, ...).
  JsonWriter& ke(std::string_view k) { return key(k).obj().end(); }

 private:
  void sep() {
    if (comma_) o_ += ',';
  }
  void quoted(std::string_view v) {
    o_ += '"';
    for (char ch : v) {
      if (ch == '"' || ch == '\\') o_ += '\\';
      if (ch == '\n') {
        o_ += "\\n";
        continue;
      }
      o_ += ch;
    }
    o_ += '"';
  }
  std::string& o_;
  bool comma_ = false;
};

// ---------------------------------------------------------------------------------------------
// The simulated estate.
// ---------------------------------------------------------------------------------------------

constexpr int kNodes = 64;
constexpr int kPodsPerJob = 6;
constexpr int kGpusPerPod = 8;
constexpr int kActiveJobs = 24;
constexpr int kDevicesPerSlice = 8;
constexpr int kAdvanceEvery = 500;
/// One in ten events is a ResourceSlice update: with 36 pod and 10 workload events per job this
/// gives Pods : Workloads : Slices ≈ 36 : 10 : 5.1 ≈ 7 : 2 : 1.
constexpr double kSliceShare = 0.1;
constexpr std::string_view kManager = "manager";
constexpr std::string_view kWorker = "worker1";

int64_t toMs(SystemTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
SystemTime fromMs(int64_t ms) { return SystemTime(std::chrono::milliseconds(ms)); }
/// Kubernetes timestamps have whole seconds.
std::string ts(int64_t ms) { return firstwork::formatRfc3339(fromMs(ms - ms % 1000)); }

enum class Target : uint8_t { Manager, Copy, Pod };
struct Step {
  Target target;
  uint8_t phase;
  uint8_t pod;
};

struct Job {
  int64_t id = 0;
  std::string ns, jobName, wlName, jobUid, mgrUid, copyUid;
  std::array<std::string, kPodsPerJob> podNames, podUids;
  std::array<int, kPodsPerJob> podNodes{};
  std::array<int64_t, 6> mgrT{};
  std::array<int64_t, 4> copyT{};
  std::array<std::array<int64_t, 6>, kPodsPerJob> podT{};
  std::vector<Step> script;
  size_t next = 0;
};

struct Slice {
  std::string name, uid;
  int64_t createdMs = 0;
  int64_t generation = 1;
  bool added = false;
  bool tainted = false;
};

/// One generated watch event line, with what the reflector knows about it.
struct Line {
  std::string text;
  model::Kind kind = model::Kind::Pod;
  bool manager = false;  // cluster: manager or worker
  int64_t observedMs = 0;
};

class Generator {
 public:
  explicit Generator(SystemTime start) : now_(toMs(start)) {
    for (int n = 0; n < kNodes; ++n) {
      Slice s;
      s.name = fmt::format("{}-gpu.nvidia.com-{}", nodeName(n), suffix(5));
      s.uid = uid();
      s.createdMs = now_ - 86'400'000;
      slices_.push_back(std::move(s));
    }
    for (int i = 0; i < kActiveJobs; ++i) active_.push_back(newJob());
  }

  /// Appends the next event to `out` (reusing its string capacity).
  void next(Line& out) {
    now_ += std::uniform_int_distribution<int64_t>(5, 40)(rng_);
    out.text.clear();
    out.observedMs = now_ + 50;  // the watch delivers ~50 ms after the write
    if (std::bernoulli_distribution(kSliceShare)(rng_)) {
      sliceEvent(out);
    } else {
      size_t pick = std::uniform_int_distribution<size_t>(0, active_.size() - 1)(rng_);
      jobEvent(active_[pick], out);
      if (active_[pick].next == active_[pick].script.size()) active_[pick] = newJob();
    }
    // simdjson's padding is appended in place by the decoder: reserve it once here, as the
    // reflector's reused line buffer would have it.
    out.text.reserve(out.text.size() + simdjson::SIMDJSON_PADDING);
  }

  size_t bytes[3] = {0, 0, 0};  // object JSON bytes: pods, workloads, slices
  size_t counts[3] = {0, 0, 0};
  size_t minBytes[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
  size_t maxBytes[3] = {0, 0, 0};

 private:
  void record(int kind, size_t size) {
    bytes[kind] += size;
    minBytes[kind] = std::min(minBytes[kind], size);
    maxBytes[kind] = std::max(maxBytes[kind], size);
  }
  static std::string nodeName(int n) { return fmt::format("gpu-node-{:03}", n); }
  std::string suffix(int len) {
    static constexpr std::string_view kAlnum = "bcdfghjklmnpqrstvwxz2456789";
    std::string s;
    for (int i = 0; i < len; ++i)
      s += kAlnum[std::uniform_int_distribution<size_t>(0, kAlnum.size() - 1)(rng_)];
    return s;
  }
  std::string uid() {
    std::uniform_int_distribution<uint64_t> d;
    uint64_t a = d(rng_), b = d(rng_);
    return fmt::format("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                       a & 0xfff, b >> 52, b & 0xffffffffffffULL);
  }
  std::string rv(bool manager) { return std::to_string(manager ? ++rvManager_ : ++rvWorker_); }

  Job newJob() {
    Job j;
    j.id = nextJob_++;
    j.ns = fmt::format("team-{}", static_cast<char>('a' + j.id % 6));
    j.jobName = fmt::format("train-{}-{}", j.id, suffix(4));
    j.wlName = fmt::format("job-{}-{}", j.jobName, suffix(5));
    j.jobUid = uid();
    j.mgrUid = uid();
    j.copyUid = uid();
    for (int i = 0; i < kPodsPerJob; ++i) {
      j.podNames[i] = fmt::format("{}-{}-{}", j.jobName, i, suffix(5));
      j.podUids[i] = uid();
      j.podNodes[i] = static_cast<int>((j.id * kPodsPerJob + i) % kNodes);
    }
    // A causally ordered cycle: reserve, dispatch to the worker, admit, pods created, scheduled,
    // running, first work, PodsReady, pods succeed, finish, delete.
    auto add = [&](Target t, int phase, int pod = 0) {
      j.script.push_back(Step{t, static_cast<uint8_t>(phase), static_cast<uint8_t>(pod)});
    };
    auto allPods = [&](int phase) {
      for (int i = 0; i < kPodsPerJob; ++i) add(Target::Pod, phase, i);
    };
    add(Target::Manager, 0);
    add(Target::Manager, 1);
    add(Target::Copy, 0);
    add(Target::Manager, 2);
    for (int phase = 0; phase < 4; ++phase) allPods(phase);
    add(Target::Copy, 1);
    add(Target::Manager, 3);
    allPods(4);
    add(Target::Copy, 2);
    add(Target::Manager, 4);
    allPods(5);
    add(Target::Copy, 3);
    add(Target::Manager, 5);
    return j;
  }

  void jobEvent(Job& j, Line& out) {
    const Step st = j.script[j.next++];
    JsonWriter w(out.text);
    size_t before = 0;
    switch (st.target) {
      case Target::Manager: {
        j.mgrT[st.phase] = now_;
        w.obj().kv("type", st.phase == 0 ? "ADDED" : st.phase == 5 ? "DELETED" : "MODIFIED");
        w.key("object");
        before = out.text.size();
        workload(w, j, true, st.phase);
        w.end();
        out.kind = model::Kind::Workload;
        out.manager = true;
        record(1, out.text.size() - before);
        ++counts[1];
        break;
      }
      case Target::Copy: {
        j.copyT[st.phase] = now_;
        w.obj().kv("type", st.phase == 0 ? "ADDED" : st.phase == 3 ? "DELETED" : "MODIFIED");
        w.key("object");
        before = out.text.size();
        workload(w, j, false, st.phase);
        w.end();
        out.kind = model::Kind::Workload;
        out.manager = false;
        record(1, out.text.size() - before);
        ++counts[1];
        break;
      }
      case Target::Pod: {
        j.podT[st.pod][st.phase] = now_;
        w.obj().kv("type", st.phase == 0 ? "ADDED" : st.phase == 5 ? "DELETED" : "MODIFIED");
        w.key("object");
        before = out.text.size();
        pod(w, j, st.pod, st.phase);
        w.end();
        out.kind = model::Kind::Pod;
        out.manager = false;
        record(0, out.text.size() - before);
        ++counts[0];
        break;
      }
    }
  }

  void sliceEvent(Line& out) {
    size_t n = std::uniform_int_distribution<size_t>(0, slices_.size() - 1)(rng_);
    Slice& s = slices_[n];
    std::string_view type = "MODIFIED";
    if (!s.added) {
      type = "ADDED";
      s.added = true;
    } else if (std::bernoulli_distribution(0.25)(rng_)) {
      // Device health churn: the driver taints and untaints a device.
      s.tainted = !s.tainted;
    } else {
      ++s.generation;  // the driver republishes its pool
    }
    JsonWriter w(out.text);
    w.obj().kv("type", type).key("object");
    size_t before = out.text.size();
    slice(w, s, static_cast<int>(n));
    w.end();
    out.kind = model::Kind::ResourceSlice;
    out.manager = false;
    record(2, out.text.size() - before);
    ++counts[2];
  }

  // --- object shapes ---------------------------------------------------------------------------

  static void managedEntry(JsonWriter& w, std::string_view manager, std::string_view op,
                           std::string_view apiVersion, int64_t at, std::string_view subresource,
                           const std::vector<std::string_view>& paths) {
    // fieldsV1 is a nested set: paths "f:a|f:b" (sorted, so shared prefixes are adjacent) become
    // {"f:a":{"f:b":{}}}, merged like the API server writes them.
    w.obj().kv("manager", manager).kv("operation", op).kv("apiVersion", apiVersion);
    w.kv("time", ts(at)).kv("fieldsType", "FieldsV1");
    if (!subresource.empty()) w.kv("subresource", subresource);
    w.key("fieldsV1").obj();
    std::vector<std::string_view> sorted = paths;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::string_view> open;  // components of the enclosing objects
    for (std::string_view p : sorted) {
      std::vector<std::string_view> comps;
      for (size_t start = 0;;) {
        size_t bar = p.find('|', start);
        comps.push_back(p.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
        if (bar == std::string_view::npos) break;
        start = bar + 1;
      }
      size_t common = 0;
      while (common < open.size() && common + 1 < comps.size() && open[common] == comps[common]) ++common;
      for (size_t d = open.size(); d > common; --d) w.end();
      open.resize(common);
      for (size_t c = common; c + 1 < comps.size(); ++c) {
        w.key(comps[c]).obj();
        open.push_back(comps[c]);
      }
      w.key(comps.back()).obj().end();
    }
    for (size_t d = 0; d < open.size(); ++d) w.end();
    w.end().end();
  }

  static void containerSpec(JsonWriter& w, const Job& j, int index) {
    w.obj().kv("name", "trainer").kv("image", "registry.example.com/ml/train:2.4.1-cuda12.4");
    w.key("command").arr().str("torchrun").endArr();
    w.key("args").arr().str("--nnodes=6").str("--nproc-per-node=8").str("--rdzv-backend=c10d");
    w.str(fmt::format("--rdzv-endpoint={}-0.{}:29400", j.jobName, j.jobName)).str("train.py");
    w.str("--config=/etc/train/config.yaml").endArr();
    w.key("env").arr();
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kEnv = {{
        {"NCCL_DEBUG", "WARN"},
        {"NCCL_IB_HCA", "mlx5_0,mlx5_1,mlx5_2,mlx5_3"},
        {"NCCL_SOCKET_IFNAME", "eth0"},
        {"PYTHONUNBUFFERED", "1"},
        {"HF_HOME", "/data/cache/huggingface"},
        {"CHECKPOINT_DIR", "/data/checkpoints"},
    }};
    for (const auto& [k, v] : kEnv) w.obj().kv("name", k).kv("value", v).end();
    w.obj().kv("name", "JOB_COMPLETION_INDEX").key("valueFrom").obj().key("fieldRef").obj();
    w.kv("apiVersion", "v1");
    w.kv("fieldPath", "metadata.annotations['batch.kubernetes.io/job-completion-index']");
    w.end().end().end();
    w.obj().kv("name", "MASTER_ADDR").kv("value", fmt::format("{}-0.{}", j.jobName, j.jobName)).end();
    w.obj().kv("name", "NODE_RANK").kv("value", std::to_string(index)).end();
    w.endArr();
    w.key("resources").obj();
    w.key("limits").obj().kv("nvidia.com/gpu", std::to_string(kGpusPerPod)).end();
    w.key("requests").obj().kv("cpu", "32").kv("memory", "256Gi");
    w.kv("nvidia.com/gpu", std::to_string(kGpusPerPod)).end();
    w.end();
    w.key("volumeMounts").arr();
    w.obj().kv("name", "dshm").kv("mountPath", "/dev/shm").end();
    w.obj().kv("name", "data").kv("mountPath", "/data").end();
    w.obj().kv("name", "config").kv("mountPath", "/etc/train").kb("readOnly", true).end();
    w.obj().kv("name", "kube-api-access").kv("mountPath", "/var/run/secrets/kubernetes.io/serviceaccount");
    w.kb("readOnly", true).end();
    w.endArr();
    w.kv("terminationMessagePath", "/dev/termination-log");
    w.kv("terminationMessagePolicy", "File").kv("imagePullPolicy", "IfNotPresent");
    w.end();
  }

  static void podSpecRest(JsonWriter& w, const Job& j) {
    w.key("volumes").arr();
    w.obj().kv("name", "dshm").key("emptyDir").obj().kv("medium", "Memory").kv("sizeLimit", "64Gi").end().end();
    w.obj().kv("name", "data").key("persistentVolumeClaim").obj();
    w.kv("claimName", fmt::format("{}-data", j.ns)).end().end();
    w.obj().kv("name", "config").key("configMap").obj().kv("name", fmt::format("{}-config", j.jobName));
    w.kn("defaultMode", 420).end().end();
    w.obj().kv("name", "kube-api-access").key("projected").obj().key("sources").arr();
    w.obj().key("serviceAccountToken").obj().kn("expirationSeconds", 3607).kv("path", "token").end().end();
    w.obj().key("configMap").obj().kv("name", "kube-root-ca.crt").key("items").arr();
    w.obj().kv("key", "ca.crt").kv("path", "ca.crt").end().endArr().end().end();
    w.endArr().kn("defaultMode", 420).end().end();
    w.endArr();
    w.kv("restartPolicy", "Never").kn("terminationGracePeriodSeconds", 30);
    w.kv("dnsPolicy", "ClusterFirst").kv("serviceAccountName", "trainer");
    w.kv("schedulerName", "default-scheduler").kv("priorityClassName", "gpu-high").kn("priority", 100000);
    w.kv("subdomain", j.jobName);
    w.key("nodeSelector").obj().kv("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3").end();
    w.key("tolerations").arr();
    w.obj().kv("key", "nvidia.com/gpu").kv("operator", "Exists").kv("effect", "NoSchedule").end();
    w.obj().kv("key", "node.kubernetes.io/not-ready").kv("operator", "Exists").kv("effect", "NoExecute");
    w.kn("tolerationSeconds", 300).end();
    w.obj().kv("key", "node.kubernetes.io/unreachable").kv("operator", "Exists").kv("effect", "NoExecute");
    w.kn("tolerationSeconds", 300).end();
    w.endArr();
  }

  void pod(JsonWriter& w, const Job& j, int i, int phase) {
    const auto& t = j.podT[i];
    const std::string idx = std::to_string(i);
    w.obj().kv("kind", "Pod").kv("apiVersion", "v1");
    w.key("metadata").obj();
    w.kv("name", j.podNames[i]).kv("generateName", fmt::format("{}-{}-", j.jobName, i));
    w.kv("namespace", j.ns).kv("uid", j.podUids[i]).kv("resourceVersion", rv(false));
    w.kv("creationTimestamp", ts(t[0]));
    if (phase == 5) w.kv("deletionTimestamp", ts(t[5])).kn("deletionGracePeriodSeconds", 0);
    w.key("labels").obj();
    w.kv("batch.kubernetes.io/controller-uid", j.jobUid).kv("batch.kubernetes.io/job-name", j.jobName);
    w.kv("batch.kubernetes.io/job-completion-index", idx).kv("controller-uid", j.jobUid);
    w.kv("job-name", j.jobName).kv("kueue.x-k8s.io/podset", "main");
    w.kv("kueue.x-k8s.io/cluster-queue-name", "gpu-cq").kv("kueue.x-k8s.io/local-queue-name", fmt::format("{}-lq", j.ns));
    w.kv("kueue.x-k8s.io/multikueue-worker-workload-pod", "true");
    w.kv("app.kubernetes.io/name", "llm-train");
    w.kv("team", j.ns);
    w.end();
    w.key("annotations").obj();
    w.kv("batch.kubernetes.io/job-completion-index", idx).kv("kueue.x-k8s.io/workload", j.wlName);
    if (phase >= 2) {
      w.kv("k8s.v1.cni.cncf.io/network-status",
           fmt::format("[{{\"name\":\"cilium\",\"interface\":\"eth0\",\"ips\":[\"10.244.{}.{}\"],"
                       "\"default\":true}}]",
                       j.podNodes[i], (j.id * 7 + i) % 250 + 2));
    }
    if (phase >= 3 && phase <= 5) w.kv("firstwork.dev/first-work-at", ts(t[3] - 1000));
    w.end();
    w.key("ownerReferences").arr().obj().kv("apiVersion", "batch/v1").kv("kind", "Job");
    w.kv("name", j.jobName).kv("uid", j.jobUid).kb("controller", true).kb("blockOwnerDeletion", true);
    w.end().endArr();
    w.key("finalizers").arr().str("batch.kubernetes.io/job-tracking").endArr();
    w.key("managedFields").arr();
    managedEntry(w, "kube-controller-manager", "Update", "v1", t[0], "",
                 {"f:metadata|f:annotations|.",
                  "f:metadata|f:annotations|f:kueue.x-k8s.io/workload", "f:metadata|f:finalizers|.",
                  "f:metadata|f:generateName",
                  "f:metadata|f:labels|.", "f:metadata|f:labels|f:batch.kubernetes.io/job-name",
                  "f:metadata|f:labels|f:job-name",
                  "f:metadata|f:ownerReferences|.", "f:spec|f:containers|k:{\"name\":\"trainer\"}|.",
                  "f:spec|f:containers|k:{\"name\":\"trainer\"}|f:env|.",
                  "f:spec|f:containers|k:{\"name\":\"trainer\"}|f:resources|.",
                  "f:spec|f:nodeSelector", "f:spec|f:volumes|."});
    if (phase >= 1) {
      managedEntry(w, "kubelet", "Update", "v1", t[phase >= 4 ? 4 : phase], "status",
                   {"f:status|f:conditions|k:{\"type\":\"ContainersReady\"}|.",
                    "f:status|f:conditions|k:{\"type\":\"Initialized\"}|.",
                    "f:status|f:conditions|k:{\"type\":\"PodReadyToStartContainers\"}|.",
                    "f:status|f:conditions|k:{\"type\":\"Ready\"}|.", "f:status|f:containerStatuses",
                    "f:status|f:hostIP", "f:status|f:phase", "f:status|f:podIP", "f:status|f:startTime"});
    }
    w.endArr();
    w.end();  // metadata

    w.key("spec").obj();
    w.key("containers").arr();
    containerSpec(w, j, i);
    w.endArr();
    podSpecRest(w, j);
    if (phase >= 1) w.kv("nodeName", nodeName(j.podNodes[i]));
    w.kv("preemptionPolicy", "PreemptLowerPriority").kb("enableServiceLinks", true);
    w.end();

    w.key("status").obj();
    const char* podPhase = phase == 0 || phase == 1 ? "Pending" : phase <= 3 ? "Running" : "Succeeded";
    w.kv("phase", podPhase);
    if (phase >= 1) {
      const bool running = phase == 2 || phase == 3;
      const bool done = phase >= 4;
      auto cond = [&](std::string_view type, bool ok, int64_t at, std::string_view reason) {
        w.obj().kv("type", type).kv("status", ok ? "True" : "False").key("lastProbeTime").null();
        w.kv("lastTransitionTime", ts(at));
        if (!reason.empty()) w.kv("reason", reason);
        w.end();
      };
      w.key("conditions").arr();
      cond("PodReadyToStartContainers", phase >= 2, phase >= 2 ? t[2] : t[1], "");
      cond("Initialized", true, t[1], "");
      cond("Ready", running, phase >= 2 ? (done ? t[4] : t[2]) : t[1],
           running ? "" : done ? "PodCompleted" : "ContainersNotReady");
      cond("ContainersReady", running, phase >= 2 ? (done ? t[4] : t[2]) : t[1],
           running ? "" : done ? "PodCompleted" : "ContainersNotReady");
      cond("PodScheduled", true, t[1], "");
      w.endArr();
      const std::string hostIP = fmt::format("10.0.{}.{}", j.podNodes[i] / 200, j.podNodes[i] % 200 + 10);
      w.kv("hostIP", hostIP).key("hostIPs").arr().obj().kv("ip", hostIP).end().endArr();
      if (phase >= 2) {
        const std::string podIP = fmt::format("10.244.{}.{}", j.podNodes[i], (j.id * 7 + i) % 250 + 2);
        w.kv("podIP", podIP).key("podIPs").arr().obj().kv("ip", podIP).end().endArr();
      }
      w.kv("startTime", ts(t[1]));
      w.key("containerStatuses").arr().obj();
      w.kv("name", "trainer");
      w.key("state").obj();
      if (phase == 1) {
        w.key("waiting").obj().kv("reason", "ContainerCreating").end();
      } else if (running) {
        w.key("running").obj().kv("startedAt", ts(t[2] - 1000)).end();
      } else {
        w.key("terminated").obj().kn("exitCode", 0).kv("reason", "Completed");
        w.kv("startedAt", ts(t[2] - 1000)).kv("finishedAt", ts(t[4] - 1000)).end();
      }
      w.end();
      w.ke("lastState").kb("ready", running).kn("restartCount", 0);
      w.kv("image", "registry.example.com/ml/train:2.4.1-cuda12.4");
      w.kv("imageID", fmt::format("registry.example.com/ml/train@sha256:{:064x}", 0x2a41));
      if (phase >= 2) w.kv("containerID", fmt::format("containerd://{:064x}", j.id * 16 + i));
      w.kb("started", running);
      w.end().endArr();
    }
    w.kv("qosClass", "Burstable");
    w.end();  // status
    w.end();
  }

  void workload(JsonWriter& w, const Job& j, bool manager, int phase) {
    // Phases — manager: 0 pending, 1 reserved, 2 admitted, 3 pods ready, 4 finished, 5 deleted;
    // copy: 0 reserved+admitted, 1 pods ready, 2 finished, 3 deleted. Mapped to one scale.
    const int stage = manager ? phase : (phase == 0 ? 2 : phase + 2);
    const auto& mt = j.mgrT;
    const auto& ct = j.copyT;
    const int64_t created = manager ? mt[0] : ct[0];
    const int64_t reservedAt = manager ? mt[1] : ct[0];
    const int64_t admittedAt = manager ? mt[2] : ct[0];
    const int64_t readyAt = manager ? mt[3] : ct[1];
    const int64_t finishedAt = manager ? mt[4] : ct[2];
    w.obj().kv("apiVersion", "kueue.x-k8s.io/v1beta2").kv("kind", "Workload");
    w.key("metadata").obj();
    w.kv("name", j.wlName).kv("namespace", j.ns).kv("uid", manager ? j.mgrUid : j.copyUid);
    w.kv("resourceVersion", rv(manager)).kn("generation", stage >= 4 ? 2 : 1);
    w.kv("creationTimestamp", ts(created));
    if (stage == 5) w.kv("deletionTimestamp", ts(manager ? mt[5] : ct[3])).kn("deletionGracePeriodSeconds", 0);
    if (stage < 5) w.key("finalizers").arr().str("kueue.x-k8s.io/resource-in-use").endArr();
    w.key("labels").obj();
    if (manager) {
      w.kv("kueue.x-k8s.io/job-uid", j.jobUid);
    } else {
      w.kv("kueue.x-k8s.io/multikueue-origin", "multikueue");
    }
    w.kv("kueue.x-k8s.io/queue-name", fmt::format("{}-lq", j.ns));
    w.kv("app.kubernetes.io/name", "llm-train").kv("team", j.ns).end();
    w.key("annotations").obj().kv("kueue.x-k8s.io/job-name", j.jobName).end();
    if (manager) {
      w.key("ownerReferences").arr().obj().kv("apiVersion", "batch/v1").kv("kind", "Job");
      w.kv("name", j.jobName).kv("uid", j.jobUid).kb("controller", true).kb("blockOwnerDeletion", true);
      w.end().endArr();
    }
    w.key("managedFields").arr();
    managedEntry(w, manager ? "kueue-job-controller-Job" : "kueue-multikueue", "Update",
                 "kueue.x-k8s.io/v1beta2", created, "",
                 {"f:metadata|f:finalizers|.", "f:metadata|f:labels|.", "f:metadata|f:labels|f:kueue.x-k8s.io/job-uid",
                  "f:spec|f:podSets|k:{\"name\":\"main\"}|.", "f:spec|f:podSets|k:{\"name\":\"main\"}|f:count",
                  "f:spec|f:podSets|k:{\"name\":\"main\"}|f:template|.",
                  "f:metadata|f:ownerReferences|.", "f:spec|.", "f:spec|f:active", "f:spec|f:podSets|.",
                  "f:spec|f:priority", "f:spec|f:priorityClassRef|.", "f:spec|f:queueName"});
    if (stage >= 1) {
      managedEntry(w, "kueue-admission", "Apply", "kueue.x-k8s.io/v1beta2", reservedAt, "status",
                   {"f:status|f:admission|f:clusterQueue", "f:status|f:admission|f:podSetAssignments",
                    "f:status|f:conditions|k:{\"type\":\"QuotaReserved\"}|.",
                    "f:status|f:conditions|k:{\"type\":\"Admitted\"}|."});
    }
    w.endArr();
    w.end();  // metadata

    w.key("spec").obj().kb("active", true).kv("queueName", fmt::format("{}-lq", j.ns));
    w.kn("priority", 100).key("priorityClassRef").obj().kv("group", "kueue.x-k8s.io");
    w.kv("kind", "WorkloadPriorityClass").kv("name", "high").end();
    w.key("podSets").arr().obj().kv("name", "main").kn("count", kPodsPerJob);
    w.key("template").obj().key("metadata").obj().key("labels").obj();
    w.kv("app.kubernetes.io/name", "llm-train").kv("team", j.ns).end().end();
    w.key("spec").obj().key("containers").arr();
    containerSpec(w, j, 0);
    w.endArr();
    podSpecRest(w, j);
    w.end().end();  // spec, template
    w.end().endArr().end();  // podSet, podSets, spec

    w.key("status").obj();
    if (stage >= 1) {
      w.key("admission").obj().kv("clusterQueue", manager ? fmt::format("{}-cq", j.ns) : "gpu-cq");
      w.key("podSetAssignments").arr().obj().kv("name", "main").kn("count", kPodsPerJob);
      const char* flavor = manager ? "default-flavor" : "h100";
      w.key("flavors").obj().kv("cpu", flavor).kv("memory", flavor).kv("nvidia.com/gpu", flavor).end();
      w.key("resourceUsage").obj().kv("cpu", std::to_string(32 * kPodsPerJob));
      w.kv("memory", fmt::format("{}Gi", 256 * kPodsPerJob));
      w.kv("nvidia.com/gpu", std::to_string(kGpusPerPod * kPodsPerJob)).end();
      w.end().endArr().end();
    }
    if (manager && stage >= 1) {
      w.key("admissionChecks").arr().obj().kv("name", "multikueue-ac");
      w.kv("state", stage >= 2 ? "Ready" : "Pending");
      w.kv("message", stage >= 2 ? "The workload was admitted on \"worker1\"" : "");
      w.kv("lastTransitionTime", ts(stage >= 2 ? admittedAt : reservedAt)).end().endArr();
      if (stage >= 2) w.kv("clusterName", "worker1");
    }
    w.key("conditions").arr();
    auto cond = [&](std::string_view type, bool ok, std::string_view reason, std::string_view msg,
                    int64_t at) {
      w.obj().kv("type", type).kv("status", ok ? "True" : "False").kv("reason", reason);
      w.kv("message", msg).kn("observedGeneration", 1).kv("lastTransitionTime", ts(at)).end();
    };
    if (stage == 0) {
      cond("QuotaReserved", false, "Pending", "couldn't assign flavors to pod set main: insufficient quota",
           created);
    } else {
      cond("QuotaReserved", true, "QuotaReserved", "Quota reserved in ClusterQueue", reservedAt);
    }
    if (stage >= 2) cond("Admitted", true, "Admitted", "The workload is admitted", admittedAt);
    if (stage >= 2) {
      cond("PodsReady", stage >= 3, stage >= 3 ? "Started" : "WaitForStart",
           stage >= 3 ? "All pods reached readiness and the workload is running"
                      : "Not all pods are ready or succeeded",
           stage >= 3 ? readyAt : admittedAt);
    }
    if (stage >= 4) cond("Finished", true, "Succeeded", "Job finished successfully", finishedAt);
    w.endArr();
    w.end();  // status
    w.end();
  }

  void slice(JsonWriter& w, const Slice& s, int node) {
    w.obj().kv("apiVersion", "resource.k8s.io/v1").kv("kind", "ResourceSlice");
    w.key("metadata").obj().kv("name", s.name).kv("generateName", fmt::format("{}-gpu.nvidia.com-", nodeName(node)));
    w.kv("uid", s.uid).kv("resourceVersion", rv(false)).kn("generation", s.generation);
    w.kv("creationTimestamp", ts(s.createdMs));
    w.key("ownerReferences").arr().obj().kv("apiVersion", "v1").kv("kind", "Node");
    w.kv("name", nodeName(node)).kv("uid", s.uid).kb("controller", true).end().endArr();
    w.key("managedFields").arr();
    managedEntry(w, "gpu-kubelet-plugin", "Update", "resource.k8s.io/v1", s.createdMs, "",
                 {"f:metadata|f:generateName", "f:metadata|f:ownerReferences|.", "f:spec|f:devices",
                  "f:spec|f:driver", "f:spec|f:nodeName", "f:spec|f:pool|."});
    w.endArr().end();
    w.key("spec").obj().kv("driver", "gpu.nvidia.com").kv("nodeName", nodeName(node));
    w.key("pool").obj().kn("generation", s.generation).kv("name", nodeName(node)).kn("resourceSliceCount", 1).end();
    w.key("devices").arr();
    for (int d = 0; d < kDevicesPerSlice; ++d) {
      w.obj().kv("name", fmt::format("gpu-{}", d)).key("attributes").obj();
      auto attr = [&](std::string_view k, std::string_view kind, std::string_view v) {
        w.key(k).obj().kv(kind, v).end();
      };
      attr("addressingMode", "string", "None");
      attr("architecture", "string", "Hopper");
      attr("brand", "string", "Nvidia");
      attr("cudaComputeCapability", "version", "9.0.0");
      attr("cudaDriverVersion", "version", "12.8.0");
      attr("driverVersion", "version", "570.124.6");
      attr("productName", "string", "NVIDIA H100 80GB HBM3");
      attr("resource.kubernetes.io/pciBusID", "string", fmt::format("0000:{:02x}:00.0", 0x18 + d * 0x10));
      attr("resource.kubernetes.io/pcieRoot", "string", fmt::format("pci0000:{:02x}", 0x10 + d * 0x10));
      attr("type", "string", "gpu");
      attr("uuid", "string", fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", node * 97 + d, d, node, 0xbeef, node * 1000 + d));
      w.end();
      w.key("capacity").obj().key("memory").obj().kv("value", "80Gi").end().end();
      if (s.tainted && d == 0) {
        w.key("taints").arr().obj().kv("key", "gpu.nvidia.com/xid").kv("value", "79");
        w.kv("effect", "NoSchedule").kv("timeAdded", ts(now_)).end().endArr();
      }
      w.end();
    }
    w.endArr().end();
    w.end();
  }

  std::mt19937_64 rng_{20260820};
  int64_t now_;
  int64_t nextJob_ = 0;
  int64_t rvManager_ = 884000;
  int64_t rvWorker_ = 55000;
  std::vector<Job> active_;
  std::vector<Slice> slices_;
};

// ---------------------------------------------------------------------------------------------
// Reference: raw simdjson On-Demand extraction of roughly the fields the decoders keep, into
// string_views (no allocation, no timestamp/quantity parsing) — an upper bound on what any
// decoder built on simdjson can do on these bytes.
// ---------------------------------------------------------------------------------------------

struct Sink {
  uint64_t h = 0;
  uint64_t fields = 0;
  void add(std::string_view s) {
    h = h * 31 + s.size() + (s.empty() ? 0 : static_cast<uint8_t>(s.back()));
    ++fields;
  }
  void add(int64_t v) {
    h = h * 31 + static_cast<uint64_t>(v);
    ++fields;
  }
};

#define BENCH_TRY(expr) \
  do {                  \
    if ((expr)) return false; \
  } while (0)

bool str(od::value& v, Sink& s) {
  std::string_view out;
  BENCH_TRY(v.get_string().get(out));
  s.add(out);
  return true;
}

bool num(od::value& v, Sink& s) {
  int64_t out = 0;
  BENCH_TRY(v.get_int64().get(out));
  s.add(out);
  return true;
}

/// Map of strings, keeping only keys with a prefix the decoders keep.
bool filteredMap(od::value& v, Sink& s) {
  od::object o;
  BENCH_TRY(v.get_object().get(o));
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    std::string_view k;
    BENCH_TRY(f.unescaped_key().get(k));
    if (k.starts_with("kueue.x-k8s.io/") || k.starts_with("batch.kubernetes.io/") ||
        k.starts_with("firstwork.dev/")) {
      s.add(k);
      BENCH_TRY(!str(f.value(), s));
    }
  }
  return true;
}

/// Any map of string values (resource requests, usage).
bool stringMap(od::value& v, Sink& s) {
  od::object o;
  BENCH_TRY(v.get_object().get(o));
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    std::string_view k;
    BENCH_TRY(f.unescaped_key().get(k));
    s.add(k);
    BENCH_TRY(!str(f.value(), s));
  }
  return true;
}

bool metadata(od::value& v, Sink& s) {
  od::object o;
  BENCH_TRY(v.get_object().get(o));
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    auto k = f.key();
    if (k == "name" || k == "namespace" || k == "uid" || k == "resourceVersion" ||
        k == "creationTimestamp" || k == "deletionTimestamp") {
      BENCH_TRY(!str(f.value(), s));
    } else if (k == "generation") {
      BENCH_TRY(!num(f.value(), s));
    } else if (k == "labels" || k == "annotations") {
      BENCH_TRY(!filteredMap(f.value(), s));
    } else if (k == "ownerReferences") {
      od::array a;
      BENCH_TRY(f.value().get_array().get(a));
      for (auto e : a) {
        od::object ref;
        BENCH_TRY(e.get_object().get(ref));
        for (auto rf : ref) {
          od::field g;
          BENCH_TRY(std::move(rf).get(g));
          auto gk = g.key();
          if (gk == "kind" || gk == "name" || gk == "uid") BENCH_TRY(!str(g.value(), s));
        }
      }
    }
  }
  return true;
}

bool conditions(od::value& v, Sink& s) {
  od::array a;
  BENCH_TRY(v.get_array().get(a));
  for (auto e : a) {
    od::object c;
    BENCH_TRY(e.get_object().get(c));
    for (auto r : c) {
      od::field f;
      BENCH_TRY(std::move(r).get(f));
      auto k = f.key();
      if (k == "type" || k == "status" || k == "lastTransitionTime" || k == "reason") {
        BENCH_TRY(!str(f.value(), s));
      }
    }
  }
  return true;
}

/// containers[].resources.requests (pod spec or pod template spec).
bool containers(od::value& v, Sink& s) {
  od::array a;
  BENCH_TRY(v.get_array().get(a));
  for (auto e : a) {
    od::object c;
    BENCH_TRY(e.get_object().get(c));
    for (auto r : c) {
      od::field f;
      BENCH_TRY(std::move(r).get(f));
      auto k = f.key();
      if (k == "name") {
        BENCH_TRY(!str(f.value(), s));
      } else if (k == "resources") {
        od::object res;
        BENCH_TRY(f.value().get_object().get(res));
        for (auto rr : res) {
          od::field g;
          BENCH_TRY(std::move(rr).get(g));
          if (g.key() == "requests" || g.key() == "limits") BENCH_TRY(!stringMap(g.value(), s));
        }
      }
    }
  }
  return true;
}

bool podSpec(od::value& v, Sink& s) {
  od::object o;
  BENCH_TRY(v.get_object().get(o));
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    auto k = f.key();
    if (k == "containers" || k == "initContainers") {
      BENCH_TRY(!containers(f.value(), s));
    } else if (k == "nodeName" || k == "restartPolicy") {
      BENCH_TRY(!str(f.value(), s));
    }
  }
  return true;
}

bool containerStatuses(od::value& v, Sink& s) {
  od::array a;
  BENCH_TRY(v.get_array().get(a));
  for (auto e : a) {
    od::object c;
    BENCH_TRY(e.get_object().get(c));
    for (auto r : c) {
      od::field f;
      BENCH_TRY(std::move(r).get(f));
      auto k = f.key();
      if (k == "name") {
        BENCH_TRY(!str(f.value(), s));
      } else if (k == "restartCount") {
        BENCH_TRY(!num(f.value(), s));
      } else if (k == "ready") {
        bool b = false;
        BENCH_TRY(f.value().get_bool().get(b));
        s.add(int64_t{b});
      } else if (k == "state" || k == "lastState") {
        od::object st;
        BENCH_TRY(f.value().get_object().get(st));
        for (auto sr : st) {  // {"running": {...}} | {"terminated": {...}} | {"waiting": {...}}
          od::field which;
          BENCH_TRY(std::move(sr).get(which));
          s.add(which.key() == "running" ? int64_t{1} : int64_t{2});
          od::object detail;
          BENCH_TRY(which.value().get_object().get(detail));
          for (auto dr : detail) {
            od::field g;
            BENCH_TRY(std::move(dr).get(g));
            auto gk = g.key();
            if (gk == "exitCode") {
              BENCH_TRY(!num(g.value(), s));
            } else if (gk == "reason" || gk == "startedAt" || gk == "finishedAt") {
              BENCH_TRY(!str(g.value(), s));
            }
          }
        }
      }
    }
  }
  return true;
}

bool pod(od::object& o, Sink& s) {
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    auto k = f.key();
    if (k == "metadata") {
      BENCH_TRY(!metadata(f.value(), s));
    } else if (k == "spec") {
      BENCH_TRY(!podSpec(f.value(), s));
    } else if (k == "status") {
      od::object st;
      BENCH_TRY(f.value().get_object().get(st));
      for (auto sr : st) {
        od::field g;
        BENCH_TRY(std::move(sr).get(g));
        auto gk = g.key();
        if (gk == "phase" || gk == "startTime") {
          BENCH_TRY(!str(g.value(), s));
        } else if (gk == "conditions") {
          BENCH_TRY(!conditions(g.value(), s));
        } else if (gk == "containerStatuses" || gk == "initContainerStatuses") {
          BENCH_TRY(!containerStatuses(g.value(), s));
        }
      }
    }
  }
  return true;
}

bool workload(od::object& o, Sink& s) {
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    auto k = f.key();
    if (k == "metadata") {
      BENCH_TRY(!metadata(f.value(), s));
    } else if (k == "spec") {
      od::object sp;
      BENCH_TRY(f.value().get_object().get(sp));
      for (auto sr : sp) {
        od::field g;
        BENCH_TRY(std::move(sr).get(g));
        auto gk = g.key();
        if (gk == "queueName") {
          BENCH_TRY(!str(g.value(), s));
        } else if (gk == "priority") {
          BENCH_TRY(!num(g.value(), s));
        } else if (gk == "active") {
          bool b = false;
          BENCH_TRY(g.value().get_bool().get(b));
          s.add(int64_t{b});
        } else if (gk == "podSets") {
          od::array a;
          BENCH_TRY(g.value().get_array().get(a));
          for (auto e : a) {
            od::object ps;
            BENCH_TRY(e.get_object().get(ps));
            for (auto pr : ps) {
              od::field h;
              BENCH_TRY(std::move(pr).get(h));
              auto hk = h.key();
              if (hk == "name") {
                BENCH_TRY(!str(h.value(), s));
              } else if (hk == "count") {
                BENCH_TRY(!num(h.value(), s));
              } else if (hk == "template") {
                od::object tpl;
                BENCH_TRY(h.value().get_object().get(tpl));
                for (auto tr : tpl) {
                  od::field t;
                  BENCH_TRY(std::move(tr).get(t));
                  if (t.key() == "spec") BENCH_TRY(!podSpec(t.value(), s));
                }
              }
            }
          }
        }
      }
    } else if (k == "status") {
      od::object st;
      BENCH_TRY(f.value().get_object().get(st));
      for (auto sr : st) {
        od::field g;
        BENCH_TRY(std::move(sr).get(g));
        auto gk = g.key();
        if (gk == "conditions") {
          BENCH_TRY(!conditions(g.value(), s));
        } else if (gk == "clusterName") {
          BENCH_TRY(!str(g.value(), s));
        } else if (gk == "admissionChecks") {
          od::array a;
          BENCH_TRY(g.value().get_array().get(a));
          for (auto e : a) {
            od::object ac;
            BENCH_TRY(e.get_object().get(ac));
            for (auto ar : ac) {
              od::field h;
              BENCH_TRY(std::move(ar).get(h));
              auto hk = h.key();
              if (hk == "name" || hk == "state" || hk == "lastTransitionTime") BENCH_TRY(!str(h.value(), s));
            }
          }
        } else if (gk == "admission") {
          od::object ad;
          BENCH_TRY(g.value().get_object().get(ad));
          for (auto ar : ad) {
            od::field h;
            BENCH_TRY(std::move(ar).get(h));
            if (h.key() == "clusterQueue") {
              BENCH_TRY(!str(h.value(), s));
            } else if (h.key() == "podSetAssignments") {
              od::array a;
              BENCH_TRY(h.value().get_array().get(a));
              for (auto e : a) {
                od::object psa;
                BENCH_TRY(e.get_object().get(psa));
                for (auto pr : psa) {
                  od::field t;
                  BENCH_TRY(std::move(pr).get(t));
                  auto tk = t.key();
                  if (tk == "name") {
                    BENCH_TRY(!str(t.value(), s));
                  } else if (tk == "count") {
                    BENCH_TRY(!num(t.value(), s));
                  } else if (tk == "flavors" || tk == "resourceUsage") {
                    BENCH_TRY(!stringMap(t.value(), s));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return true;
}

bool slice(od::object& o, Sink& s) {
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    auto k = f.key();
    if (k == "metadata") {
      BENCH_TRY(!metadata(f.value(), s));
    } else if (k == "spec") {
      od::object sp;
      BENCH_TRY(f.value().get_object().get(sp));
      for (auto sr : sp) {
        od::field g;
        BENCH_TRY(std::move(sr).get(g));
        auto gk = g.key();
        if (gk == "driver" || gk == "nodeName") {
          BENCH_TRY(!str(g.value(), s));
        } else if (gk == "pool") {
          od::object pool;
          BENCH_TRY(g.value().get_object().get(pool));
          for (auto pr : pool) {
            od::field h;
            BENCH_TRY(std::move(pr).get(h));
            if (h.key() == "name") {
              BENCH_TRY(!str(h.value(), s));
            } else {
              BENCH_TRY(!num(h.value(), s));
            }
          }
        } else if (gk == "devices") {
          od::array a;
          BENCH_TRY(g.value().get_array().get(a));
          for (auto e : a) {
            od::object dev;
            BENCH_TRY(e.get_object().get(dev));
            for (auto dr : dev) {
              od::field h;
              BENCH_TRY(std::move(dr).get(h));
              auto hk = h.key();
              if (hk == "name") {
                BENCH_TRY(!str(h.value(), s));
              } else if (hk == "attributes" || hk == "capacity") {
                od::object attrs;
                BENCH_TRY(h.value().get_object().get(attrs));
                for (auto ar : attrs) {  // "productName": {"string": "..."}
                  od::field a1;
                  BENCH_TRY(std::move(ar).get(a1));
                  std::string_view ak;
                  BENCH_TRY(a1.unescaped_key().get(ak));
                  s.add(ak);
                  od::object typed;
                  BENCH_TRY(a1.value().get_object().get(typed));
                  for (auto tr : typed) {
                    od::field t;
                    BENCH_TRY(std::move(tr).get(t));
                    BENCH_TRY(!str(t.value(), s));
                  }
                }
              } else if (hk == "taints") {
                od::array ta;
                BENCH_TRY(h.value().get_array().get(ta));
                for (auto te : ta) {
                  od::object taint;
                  BENCH_TRY(te.get_object().get(taint));
                  for (auto tr : taint) {
                    od::field t;
                    BENCH_TRY(std::move(tr).get(t));
                    BENCH_TRY(!str(t.value(), s));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return true;
}

/// The whole event: `type`, then the object of `kind`. Pads `line` in place as the decoder does.
bool referenceExtract(od::parser& parser, std::string& line, model::Kind kind, Sink& s) {
  const size_t len = line.size();
  line.append(simdjson::SIMDJSON_PADDING, ' ');
  bool ok = [&] {
    od::document doc;
    BENCH_TRY(parser.iterate(line.data(), len, line.size()).get(doc));
    od::object top;
    BENCH_TRY(doc.get_object().get(top));
    for (auto r : top) {
      od::field f;
      BENCH_TRY(std::move(r).get(f));
      if (f.key() == "type") {
        BENCH_TRY(!str(f.value(), s));
      } else if (f.key() == "object") {
        od::object o;
        BENCH_TRY(f.value().get_object().get(o));
        switch (kind) {
          case model::Kind::Pod: BENCH_TRY(!pod(o, s)); break;
          case model::Kind::Workload: BENCH_TRY(!workload(o, s)); break;
          case model::Kind::ResourceSlice: BENCH_TRY(!slice(o, s)); break;
          default: return false;
        }
      }
    }
    return true;
  }();
  line.resize(len);
  return ok;
}

// ---------------------------------------------------------------------------------------------
// Timing.
// ---------------------------------------------------------------------------------------------

double cpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timer {
  double cpu = 0, wall = 0;
  double c0 = 0, w0 = 0;
  void start() {
    w0 = wallSeconds();
    c0 = cpuSeconds();
  }
  void stop() {
    cpu += cpuSeconds() - c0;
    wall += wallSeconds() - w0;
  }
};

std::string firstLine(const std::string& path, std::string_view prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(prefix)) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown";
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--events N] [--smoke] [--dump]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t events = 200'000;
  bool dump = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--dump") {
      dump = true;
    } else if (a == "--smoke") {
      events = 2'000;
    } else if (a == "--events" && i + 1 < argc) {
      char* end = nullptr;
      events = std::strtoll(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0' || events <= 0) return usage(argv[0]);
    } else {
      return usage(argv[0]);
    }
  }

  auto startTime = firstwork::parseRfc3339("2026-08-20T10:00:00Z");
  if (!startTime) {
    std::fprintf(stderr, "bad start time: %s\n", startTime.error().c_str());
    return 1;
  }
  engine::EngineConfig config;
  config.clusters.push_back({std::string(kManager), engine::ClusterRole::Management, ""});
  config.clusters.push_back({std::string(kWorker), engine::ClusterRole::Worker, ""});
  engine::MilestoneEngine eng(config);
  const SystemTime t0 = *startTime;
  for (std::string_view c : {kManager, kWorker}) {
    eng.onConnection(c, false, t0, t0);
    eng.onConnection(c, true, t0, t0);
  }
  (void)eng.advance(t0);

  Generator gen(t0);
  if (dump) {
    // Prints the first `events` generated lines (JSON lines) instead of measuring.
    Line l;
    for (int64_t i = 0; i < events; ++i) {
      gen.next(l);
      std::printf("%s\n", l.text.c_str());
    }
    return 0;
  }
  od::parser parser;
  constexpr int64_t kChunk = 2'000;
  std::vector<Line> chunk(static_cast<size_t>(std::min(kChunk, events)));
  Timer tRef, tDecode, tEngine;
  Sink sink;
  int64_t done = 0, refErrors = 0, decodeErrors = 0, engineEvents = 0, milestones = 0;
  int64_t lastObserved = toMs(t0);
  size_t bytes = 0;
  std::string firstDecodeError;

  while (done < events) {
    const size_t n = static_cast<size_t>(std::min<int64_t>(kChunk, events - done));
    for (size_t i = 0; i < n; ++i) {
      gen.next(chunk[i]);
      bytes += chunk[i].text.size();
    }

    // (a) reference: raw simdjson extraction.
    tRef.start();
    for (size_t i = 0; i < n; ++i) {
      if (!referenceExtract(parser, chunk[i].text, chunk[i].kind, sink)) ++refErrors;
    }
    tRef.stop();

    // (b) decode only.
    tDecode.start();
    for (size_t i = 0; i < n; ++i) {
      auto ev = model::decodeWatchEvent(chunk[i].text, chunk[i].kind);
      if (!ev || !ev->object) {
        ++decodeErrors;
        if (firstDecodeError.empty()) firstDecodeError = ev ? ev->decodeError : ev.error();
      }
    }
    tDecode.stop();

    // (c) decode + engine, advancing every kAdvanceEvery events like the daemon's event loop.
    tEngine.start();
    for (size_t i = 0; i < n; ++i) {
      Line& l = chunk[i];
      auto ev = model::decodeWatchEvent(l.text, l.kind);
      if (ev && ev->object) {
        eng.onObject(l.manager ? kManager : kWorker, ev->type, *ev->object, fromMs(l.observedMs));
      }
      lastObserved = l.observedMs;
      if (++engineEvents % kAdvanceEvery == 0) {
        milestones += static_cast<int64_t>(eng.advance(fromMs(lastObserved)).milestones.size());
      }
    }
    tEngine.stop();
    done += static_cast<int64_t>(n);
  }
  milestones += static_cast<int64_t>(eng.advance(fromMs(lastObserved)).milestones.size());

  const double mb = static_cast<double>(bytes) / 1e6;
  const double ev = static_cast<double>(events);
  auto row = [&](const char* name, const Timer& t) {
    std::printf("%-32s %12.0f %12.0f %10.2f %10.1f\n", name, ev / t.cpu, ev / t.wall, t.cpu / ev * 1e6,
                mb / t.cpu);
  };
  std::printf("firstwork_engine_bench: %lld events, %.1f MB JSON (avg %.0f B/event)\n",
              static_cast<long long>(events), mb, static_cast<double>(bytes) / ev);
  static constexpr std::array<const char*, 3> kKinds = {"pods", "workloads", "slices"};
  for (size_t k = 0; k < 3; ++k) {
    if (gen.counts[k] == 0) continue;
    std::printf("  %-9s %7zu events (%4.1f%%), object JSON min/avg/max %zu / %.0f / %zu B\n", kKinds[k],
                gen.counts[k], 100.0 * static_cast<double>(gen.counts[k]) / ev, gen.minBytes[k],
                static_cast<double>(gen.bytes[k]) / static_cast<double>(gen.counts[k]), gen.maxBytes[k]);
  }
  // On-Demand's navigation (stage 2) is inlined and compiled for the -m flags of the including
  // file — here and in firstwork_model alike — while stage 1 runs in libsimdjson, dispatched at
  // runtime.
  std::printf("simdjson On-Demand: navigation compiled for %s, stage 1 (runtime-dispatched) %s\n",
              std::string(simdjson::builtin_implementation()->name()).c_str(),
              std::string(simdjson::get_active_implementation()->name()).c_str());
  std::printf("cpu: %s, nproc %d\n\n", firstLine("/proc/cpuinfo", "model name").c_str(),
              static_cast<int>(std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN))));
  std::printf("%-32s %12s %12s %10s %10s\n", "pass (single thread)", "ev/s (cpu)", "ev/s (wall)",
              "us/ev cpu", "MB/s cpu");
  row("raw simdjson extraction (ref)", tRef);
  row("decodeWatchEvent", tDecode);
  row("decodeWatchEvent + engine", tEngine);
  const double ratioDecode = tRef.cpu / tDecode.cpu;
  const double ratioEngine = tRef.cpu / tEngine.cpu;
  const double perCore = ev / tEngine.cpu;
  std::printf("\nratio decode / reference:          %.2f\n", ratioDecode);
  std::printf("ratio decode+engine / reference:   %.2f  (goal >= 0.60: %s)\n", ratioEngine,
              ratioEngine >= 0.6 ? "met" : "NOT met");
  std::printf("decode+engine events/s per core:   %.0f  (goal >= 100000: %s)\n", perCore,
              perCore >= 100'000 ? "met" : "NOT met");
  std::printf("engine milestones produced: %lld; reference fields extracted: %llu (checksum %llx)\n",
              static_cast<long long>(milestones), static_cast<unsigned long long>(sink.fields),
              static_cast<unsigned long long>(sink.h));
  // A benchmark of lines that do not decode measures nothing: fail loudly (this is also what the
  // smoke test guards — that the generated mix stays valid for the decoders).
  if (refErrors != 0 || decodeErrors != 0) {
    std::fprintf(stderr, "error: %lld reference failures, %lld decode failures (first: %s)\n",
                 static_cast<long long>(refErrors), static_cast<long long>(decodeErrors),
                 firstDecodeError.c_str());
    return 1;
  }
  if (milestones == 0) {
    std::fprintf(stderr, "error: the engine produced no milestones: the event mix is not realistic\n");
    return 1;
  }
  return 0;
}
