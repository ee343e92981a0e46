// The simulated MultiKueue estate shared by the benchmarks (see event_mix.hpp).
#include "event_mix.hpp"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "firstwork/core/rfc3339.hpp"

namespace firstwork::bench {

int64_t toMs(SystemTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
SystemTime fromMs(int64_t ms) { return SystemTime(std::chrono::milliseconds(ms)); }

std::string_view Line::type() const {
  // {"type":"ADDED",... — the value starts at offset 9.
  std::string_view t(text);
  if (t.size() < 10) return {};
  t.remove_prefix(9);
  return t.substr(0, t.find('"'));
}

namespace {

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

constexpr int kGpusPerPod = 8;
constexpr int kActiveJobs = 24;
/// One in ten events is a ResourceSlice update: with 36 pod and 10 workload events per job this
/// gives Pods : Workloads : Slices ≈ 36 : 10 : 5.1 ≈ 7 : 2 : 1.
constexpr double kSliceShare = 0.1;
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
  // Estate jobs only: a DRA job's pods each get their GPU from a claim generated from the
  // namespace's template (claimNames: each pod's, chosen before the pod is written).
  bool dra = false;
  std::array<std::string, kPodsPerJob> claimNames;
};

struct Slice {
  std::string name, uid;
  int node = 0;
  int part = 0;  // index of the slice in its node's pool
  int64_t createdMs = 0;
  int64_t generation = 1;
  bool added = false;
  bool tainted = false;
};

}  // namespace

struct Generator::Impl {
  explicit Impl(SystemTime start, MixOptions o) : opts_(o), now_(toMs(start)), rng_(o.seed) {
    for (int n = 0; n < opts_.nodes; ++n) {
      for (int p = 0; p < opts_.slicesPerNode; ++p) {
        Slice s;
        s.name = fmt::format("{}-gpu.nvidia.com-{}", nodeName(n), suffix(5));
        s.uid = uid();
        s.node = n;
        s.part = p;
        s.createdMs = now_ - 86'400'000;
        slices_.push_back(std::move(s));
      }
    }
    claimsOnNode_.assign(static_cast<size_t>(opts_.nodes), 0);
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

  MixStats stats;

  void record(int kind, size_t size) {
    stats.bytes[kind] += size;
    stats.minBytes[kind] = std::min(stats.minBytes[kind], size);
    stats.maxBytes[kind] = std::max(stats.maxBytes[kind], size);
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
      j.podNodes[i] = static_cast<int>((j.id * kPodsPerJob + i) % opts_.nodes);
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
        out.objectBegin = before;
        out.objectEnd = out.text.size();
        w.end();
        out.kind = model::Kind::Workload;
        out.manager = true;
        record(1, out.text.size() - before);
        ++stats.counts[1];
        break;
      }
      case Target::Copy: {
        j.copyT[st.phase] = now_;
        w.obj().kv("type", st.phase == 0 ? "ADDED" : st.phase == 3 ? "DELETED" : "MODIFIED");
        w.key("object");
        before = out.text.size();
        workload(w, j, false, st.phase);
        out.objectBegin = before;
        out.objectEnd = out.text.size();
        w.end();
        out.kind = model::Kind::Workload;
        out.manager = false;
        record(1, out.text.size() - before);
        ++stats.counts[1];
        break;
      }
      case Target::Pod: {
        j.podT[st.pod][st.phase] = now_;
        w.obj().kv("type", st.phase == 0 ? "ADDED" : st.phase == 5 ? "DELETED" : "MODIFIED");
        w.key("object");
        before = out.text.size();
        pod(w, j, st.pod, st.phase);
        out.objectBegin = before;
        out.objectEnd = out.text.size();
        w.end();
        out.kind = model::Kind::Pod;
        out.manager = false;
        record(0, out.text.size() - before);
        ++stats.counts[0];
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
    slice(w, s);
    out.objectBegin = before;
    out.objectEnd = out.text.size();
    w.end();
    out.kind = model::Kind::ResourceSlice;
    out.manager = false;
    record(2, out.text.size() - before);
    ++stats.counts[2];
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

  // `dra`: the pod's GPUs come from its ResourceClaim (the container names the claim) rather
  // than from the nvidia.com/gpu extended resource.
  static void containerSpec(JsonWriter& w, const Job& j, int index, bool dra = false) {
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
    if (dra) {
      w.key("limits").obj().kv("memory", "256Gi").end();
      w.key("requests").obj().kv("cpu", "32").kv("memory", "256Gi").end();
      w.key("claims").arr().obj().kv("name", "gpu").end().endArr();
    } else {
      w.key("limits").obj().kv("nvidia.com/gpu", std::to_string(kGpusPerPod)).end();
      w.key("requests").obj().kv("cpu", "32").kv("memory", "256Gi");
      w.kv("nvidia.com/gpu", std::to_string(kGpusPerPod)).end();
    }
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

  // The namespace's template, as Kueue's and NVIDIA's DRA examples have it (one per device shape,
  // made once, named by every job that wants that shape).
  static void podClaims(JsonWriter& w) {
    w.key("resourceClaims").arr().obj().kv("name", "gpu");
    w.kv("resourceClaimTemplateName", "single-gpu").end().endArr();
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

  // A DRA job's pod names the ResourceClaim generated for it (j.claimNames) in its spec and
  // status.
  void pod(JsonWriter& w, const Job& j, int i, int phase) {
    const bool dra = j.dra;
    const std::string& claimName = j.claimNames[i];
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
    if (dra) {
      managedEntry(w, "kube-controller-manager", "Update", "v1", t[0], "status",
                   {"f:status|f:resourceClaimStatuses|.",
                    "f:status|f:resourceClaimStatuses|k:{\"name\":\"gpu\"}|."});
    }
    w.endArr();
    w.end();  // metadata

    w.key("spec").obj();
    w.key("containers").arr();
    containerSpec(w, j, i, dra);
    w.endArr();
    podSpecRest(w, j);
    if (dra) podClaims(w);
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
    if (dra) {
      w.key("resourceClaimStatuses").arr().obj().kv("name", "gpu");
      w.kv("resourceClaimName", claimName).end().endArr();
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
    containerSpec(w, j, 0, j.dra);
    w.endArr();
    podSpecRest(w, j);
    if (j.dra) podClaims(w);
    w.end().end();  // spec, template
    w.end().endArr().end();  // podSet, podSets, spec

    w.key("status").obj();
    if (stage >= 1) {
      w.key("admission").obj().kv("clusterQueue", manager ? fmt::format("{}-cq", j.ns) : "gpu-cq");
      w.key("podSetAssignments").arr().obj().kv("name", "main").kn("count", kPodsPerJob);
      const char* flavor = manager ? "default-flavor" : "h100";
      // A DRA job's devices under the name Kueue's deviceClassMappings give gpu.nvidia.com.
      const std::string_view gpus = j.dra ? "whole-gpus" : "nvidia.com/gpu";
      w.key("flavors").obj().kv("cpu", flavor).kv("memory", flavor).kv(gpus, flavor).end();
      w.key("resourceUsage").obj().kv("cpu", std::to_string(32 * kPodsPerJob));
      w.kv("memory", fmt::format("{}Gi", 256 * kPodsPerJob));
      w.kv(gpus, std::to_string((j.dra ? 1 : kGpusPerPod) * kPodsPerJob)).end();
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

  void slice(JsonWriter& w, const Slice& s) {
    const int node = s.node;
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
    w.key("pool").obj().kn("generation", s.generation).kv("name", nodeName(node)).kn("resourceSliceCount", opts_.slicesPerNode).end();
    w.key("devices").arr();
    for (int d = 0; d < kDevicesPerSlice; ++d) {
      w.obj().kv("name", fmt::format("gpu-{}", s.part * kDevicesPerSlice + d)).key("attributes").obj();
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


  // --- steady estate ---------------------------------------------------------------------------

  void emit(const EstateSink& sink, std::string_view resource, bool manager,
            const std::function<void(JsonWriter&)>& write) {
    std::string json;
    JsonWriter w(json);
    write(w);
    sink(EstateObject{resource, manager, std::move(json)});
  }

  void estateJob(int claimEvery, const EstateSink& sink) {
    Job j = newJob();
    j.dra = claimEvery > 0 && jobsEmitted_++ % claimEvery == 0;
    if (j.dra) {
      for (int i = 0; i < kPodsPerJob; ++i) {
        j.claimNames[i] = fmt::format("{}-gpu-{}", j.podNames[i], suffix(5));
      }
    }
    // Submitted 10 min to 2 h ago; reserved, dispatched, admitted, pods running, useful work.
    const int64_t base = now_ - std::uniform_int_distribution<int64_t>(600'000, 7'200'000)(rng_);
    j.mgrT = {base, base + 2'000, base + 5'000, base + 60'000, 0, 0};
    j.copyT = {base + 3'000, base + 60'000, 0, 0};
    for (int i = 0; i < kPodsPerJob; ++i) {
      j.podT[i] = {base + 6'000, base + 8'000 + i * 100, base + 30'000 + i * 100, base + 50'000 + i * 100, 0, 0};
    }
    emit(sink, "workloads", true, [&](JsonWriter& w) { workload(w, j, true, 3); });
    emit(sink, "workloads", false, [&](JsonWriter& w) { workload(w, j, false, 1); });
    for (int i = 0; i < kPodsPerJob; ++i) {
      emit(sink, "pods", false, [&](JsonWriter& w) { pod(w, j, i, 3); });
      if (j.dra) emit(sink, "resourceclaims", false, [&](JsonWriter& w) { claim(w, j, i); });
    }
  }

  void estateNode(int n, const EstateSink& sink) {
    emit(sink, "nodes", false, [&](JsonWriter& w) { node(w, n); });
    for (Slice& s : slices_) {
      if (s.node != n) continue;
      s.added = true;
      emit(sink, "resourceslices", false, [&](JsonWriter& w) { slice(w, s); });
    }
  }

  // The DaemonSets a GPU node runs (kDaemonSets): their pods, one per node each, are pods no
  // Workload ever claims.
  struct DaemonSet {
    std::string_view ns, name, image;
    std::string uid, revision;
  };
  std::vector<DaemonSet> daemonSets_;
  std::unordered_set<std::string> daemonSetPodNames_;

  void estateDaemonSetPod(int n, int d, const EstateSink& sink) {
    static constexpr std::array<std::array<std::string_view, 3>, kDaemonSets> kSets = {{
        {"gpu-operator", "nvidia-dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.1-ubuntu22.04"},
        {"gpu-operator", "nvidia-dra-driver-gpu-kubelet-plugin", "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.3.0"},
        {"monitoring", "node-exporter", "quay.io/prometheus/node-exporter:v1.8.1"},
        {"kube-system", "kube-proxy", "registry.k8s.io/kube-proxy:v1.34.1"},
        {"kube-system", "cilium", "quay.io/cilium/cilium:v1.16.3"},
    }};
    while (daemonSets_.size() < kSets.size()) {
      const auto& k = kSets[daemonSets_.size()];
      daemonSets_.push_back({k[0], k[1], k[2], uid(), suffix(10)});
    }
    const DaemonSet& ds = daemonSets_[static_cast<size_t>(d % kDaemonSets)];
    const int64_t created = now_ - std::uniform_int_distribution<int64_t>(86'400'000, 30 * 86'400'000LL)(rng_);
    const std::string node = nodeName(n);
    // generateName's five characters, drawn again on a clash as the API server makes the
    // controller do (5,000 pods of one DaemonSet clash about once).
    std::string name;
    do {
      name = fmt::format("{}-{}", ds.name, suffix(5));
    } while (!daemonSetPodNames_.insert(name).second);
    const std::string hostIP = fmt::format("10.0.{}.{}", n / 200, n % 200 + 10);
    emit(sink, "pods", false, [&](JsonWriter& w) {
      w.obj().kv("kind", "Pod").kv("apiVersion", "v1");
      w.key("metadata").obj();
      w.kv("name", name).kv("generateName", fmt::format("{}-", ds.name)).kv("namespace", ds.ns);
      w.kv("uid", uid()).kv("resourceVersion", rv(false)).kv("creationTimestamp", ts(created));
      w.key("labels").obj().kv("app.kubernetes.io/name", ds.name).kv("app.kubernetes.io/part-of", ds.ns);
      w.kv("controller-revision-hash", ds.revision).kv("pod-template-generation", "3").end();
      w.key("annotations").obj().kv("kubectl.kubernetes.io/default-container", ds.name);
      w.kv("prometheus.io/scrape", "true").kv("prometheus.io/port", "9400").end();
      w.key("ownerReferences").arr().obj().kv("apiVersion", "apps/v1").kv("kind", "DaemonSet");
      w.kv("name", ds.name).kv("uid", ds.uid).kb("controller", true).kb("blockOwnerDeletion", true);
      w.end().endArr();
      w.key("managedFields").arr();
      managedEntry(w, "kube-controller-manager", "Update", "v1", created, "",
                   {"f:metadata|f:annotations|.", "f:metadata|f:generateName", "f:metadata|f:labels|.",
                    "f:metadata|f:labels|f:controller-revision-hash", "f:metadata|f:ownerReferences|.",
                    "f:spec|f:affinity|.", "f:spec|f:containers|.", "f:spec|f:tolerations",
                    "f:spec|f:volumes|."});
      managedEntry(w, "kubelet", "Update", "v1", created + 20'000, "status",
                   {"f:status|f:conditions|.", "f:status|f:containerStatuses", "f:status|f:hostIP",
                    "f:status|f:phase", "f:status|f:podIP", "f:status|f:startTime"});
      w.endArr();
      w.end();  // metadata
      w.key("spec").obj();
      w.key("containers").arr().obj().kv("name", ds.name).kv("image", ds.image);
      w.key("args").arr().str("--web.listen-address=:9400").str("--collectors=/etc/collectors/default.csv").endArr();
      w.key("env").arr();
      w.obj().kv("name", "NODE_NAME").key("valueFrom").obj().key("fieldRef").obj().kv("apiVersion", "v1");
      w.kv("fieldPath", "spec.nodeName").end().end().end();
      w.obj().kv("name", "NVIDIA_VISIBLE_DEVICES").kv("value", "all").end();
      w.endArr();
      w.key("ports").arr().obj().kv("name", "metrics").kn("containerPort", 9400).kv("protocol", "TCP").end().endArr();
      w.key("resources").obj().key("limits").obj().kv("memory", "512Mi").end();
      w.key("requests").obj().kv("cpu", "100m").kv("memory", "128Mi").end().end();
      w.key("securityContext").obj().kb("privileged", true).end();
      w.key("volumeMounts").arr();
      w.obj().kv("name", "pod-resources").kv("mountPath", "/var/lib/kubelet/pod-resources").kb("readOnly", true).end();
      w.obj().kv("name", "kube-api-access").kv("mountPath", "/var/run/secrets/kubernetes.io/serviceaccount");
      w.kb("readOnly", true).end();
      w.endArr();
      w.kv("terminationMessagePath", "/dev/termination-log").kv("terminationMessagePolicy", "File");
      w.kv("imagePullPolicy", "IfNotPresent").end().endArr();
      w.key("volumes").arr();
      w.obj().kv("name", "pod-resources").key("hostPath").obj().kv("path", "/var/lib/kubelet/pod-resources");
      w.kv("type", "").end().end();
      w.obj().kv("name", "kube-api-access").key("projected").obj().key("sources").arr();
      w.obj().key("serviceAccountToken").obj().kn("expirationSeconds", 3607).kv("path", "token").end().end();
      w.endArr().kn("defaultMode", 420).end().end();
      w.endArr();
      w.kv("restartPolicy", "Always").kn("terminationGracePeriodSeconds", 30).kv("dnsPolicy", "ClusterFirst");
      w.kv("serviceAccountName", ds.name).kv("nodeName", node).kb("hostNetwork", true);
      w.kv("schedulerName", "default-scheduler").kv("priorityClassName", "system-node-critical");
      w.kn("priority", 2000001000);
      // The node affinity and the tolerations the DaemonSet controller adds to its pods.
      w.key("affinity").obj().key("nodeAffinity").obj().key("requiredDuringSchedulingIgnoredDuringExecution").obj();
      w.key("nodeSelectorTerms").arr().obj().key("matchFields").arr().obj().kv("key", "metadata.name");
      w.kv("operator", "In").key("values").arr().str(node).endArr().end().endArr().end().endArr();
      w.end().end().end();
      w.key("tolerations").arr();
      w.obj().kv("key", "nvidia.com/gpu").kv("operator", "Exists").kv("effect", "NoSchedule").end();
      for (std::string_view t : {"not-ready", "unreachable"}) {
        w.obj().kv("key", fmt::format("node.kubernetes.io/{}", t)).kv("operator", "Exists").kv("effect", "NoExecute").end();
      }
      for (std::string_view t : {"disk-pressure", "memory-pressure", "pid-pressure", "unschedulable"}) {
        w.obj().kv("key", fmt::format("node.kubernetes.io/{}", t)).kv("operator", "Exists").kv("effect", "NoSchedule").end();
      }
      w.endArr();
      w.end();  // spec
      w.key("status").obj().kv("phase", "Running");
      w.key("conditions").arr();
      for (std::string_view type : {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
        w.obj().kv("type", type).kv("status", "True").key("lastProbeTime").null();
        w.kv("lastTransitionTime", ts(created + 15'000)).end();
      }
      w.endArr();
      w.kv("hostIP", hostIP).key("hostIPs").arr().obj().kv("ip", hostIP).end().endArr();
      w.kv("podIP", hostIP).key("podIPs").arr().obj().kv("ip", hostIP).end().endArr();
      w.kv("startTime", ts(created + 1'000));
      w.key("containerStatuses").arr().obj().kv("name", ds.name);
      w.key("state").obj().key("running").obj().kv("startedAt", ts(created + 12'000)).end().end();
      w.ke("lastState").kb("ready", true).kn("restartCount", 0).kv("image", ds.image);
      w.kv("imageID", fmt::format("{}@sha256:{:064x}", ds.image.substr(0, ds.image.find(':')), 0x5eed + d));
      w.kv("containerID", fmt::format("containerd://{:064x}", static_cast<uint64_t>(n) * 16 + static_cast<uint64_t>(d)));
      w.kb("started", true).end().endArr();
      w.kv("qosClass", "Burstable");
      w.end();  // status
      w.end();
    });
  }

  // A claim generated from the pod's ResourceClaimTemplate, allocated one GPU of the pod's node
  // and reserved for the pod (as the scheduler leaves it).
  void claim(JsonWriter& w, const Job& j, int i) {
    const std::string& name = j.claimNames[i];
    const int nodeIdx = j.podNodes[i];
    const int devices = opts_.slicesPerNode * kDevicesPerSlice;
    const int device = claimsOnNode_[static_cast<size_t>(nodeIdx)]++ % devices;
    const int64_t at = j.podT[i][1];
    w.obj().kv("apiVersion", "resource.k8s.io/v1").kv("kind", "ResourceClaim");
    w.key("metadata").obj();
    w.key("annotations").obj().kv("resource.kubernetes.io/pod-claim-name", "gpu").end();
    w.kv("creationTimestamp", ts(j.podT[i][0])).kv("generateName", fmt::format("{}-gpu-", j.podNames[i]));
    w.kv("name", name).kv("namespace", j.ns).kv("uid", uid()).kv("resourceVersion", rv(false));
    w.key("finalizers").arr().str("resource.kubernetes.io/delete-protection").endArr();
    w.key("ownerReferences").arr().obj().kv("apiVersion", "v1").kb("blockOwnerDeletion", true);
    w.kb("controller", true).kv("kind", "Pod").kv("name", j.podNames[i]).kv("uid", j.podUids[i]);
    w.end().endArr();
    w.key("managedFields").arr();
    managedEntry(w, "kube-controller-manager", "Update", "resource.k8s.io/v1", j.podT[i][0], "",
                 {"f:metadata|f:annotations|.", "f:metadata|f:annotations|f:resource.kubernetes.io/pod-claim-name",
                  "f:metadata|f:generateName", "f:metadata|f:ownerReferences|.",
                  "f:spec|f:devices|f:requests"});
    managedEntry(w, "kube-scheduler", "Update", "resource.k8s.io/v1", at, "status",
                 {"f:status|f:allocation|.", "f:status|f:allocation|f:allocationTimestamp",
                  "f:status|f:allocation|f:devices|.", "f:status|f:allocation|f:nodeSelector",
                  "f:status|f:reservedFor"});
    w.endArr();
    w.end();  // metadata
    w.key("spec").obj().key("devices").obj().key("requests").arr().obj().kv("name", "gpu");
    w.key("exactly").obj().kv("allocationMode", "ExactCount").kn("count", 1);
    w.kv("deviceClassName", "gpu.nvidia.com").end().end().endArr().end().end();
    w.key("status").obj().key("allocation").obj().kv("allocationTimestamp", ts(at));
    w.key("devices").obj().key("results").arr().obj().kv("device", fmt::format("gpu-{}", device));
    w.kv("driver", "gpu.nvidia.com").kv("pool", nodeName(nodeIdx)).kv("request", "gpu").end().endArr().end();
    w.key("nodeSelector").obj().key("nodeSelectorTerms").arr().obj().key("matchFields").arr().obj();
    w.kv("key", "metadata.name").kv("operator", "In").key("values").arr().str(nodeName(nodeIdx)).endArr();
    w.end().endArr().end().endArr().end();
    w.end();  // allocation
    w.key("reservedFor").arr().obj().kv("name", j.podNames[i]).kv("resource", "pods");
    w.kv("uid", j.podUids[i]).end().endArr();
    w.end();  // status
    w.end();
  }

  void node(JsonWriter& w, int n) {
    const std::string name = nodeName(n);
    const int64_t created = now_ - 30LL * 86'400'000;
    w.obj().kv("apiVersion", "v1").kv("kind", "Node");
    w.key("metadata").obj().kv("name", name).kv("uid", uid()).kv("resourceVersion", rv(false));
    w.kv("creationTimestamp", ts(created));
    w.key("annotations").obj().kv("node.alpha.kubernetes.io/ttl", "0");
    w.kv("volumes.kubernetes.io/controller-managed-attach-detach", "true");
    w.kv("csi.volume.kubernetes.io/nodeid", fmt::format("{{\"ebs.csi.aws.com\":\"i-0{:015x}\"}}", n * 7919));
    w.end();
    w.key("labels").obj().kv("kubernetes.io/hostname", name).kv("kubernetes.io/arch", "amd64");
    w.kv("kubernetes.io/os", "linux").kv("beta.kubernetes.io/arch", "amd64").kv("beta.kubernetes.io/os", "linux");
    w.kv("node.kubernetes.io/instance-type", "p5.48xlarge");
    w.kv("topology.kubernetes.io/region", "us-east-1").kv("topology.kubernetes.io/zone", fmt::format("us-east-1{}", static_cast<char>('a' + n % 4)));
    w.kv("nvidia.com/gpu.present", "true").kv("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3");
    w.kv("nvidia.com/gpu.count", "8").kv("nvidia.com/gpu.memory", "81559").kv("nvidia.com/cuda.driver.major", "570");
    w.kv("nvidia.com/gpu.deploy.dcgm-exporter", "true").kv("nvidia.com/gpu.deploy.device-plugin", "true");
    w.end();
    w.key("managedFields").arr();
    managedEntry(w, "kubelet", "Update", "v1", created, "status",
                 {"f:status|f:allocatable|.", "f:status|f:capacity|.", "f:status|f:conditions|.",
                  "f:status|f:daemonEndpoints", "f:status|f:images", "f:status|f:nodeInfo"});
    managedEntry(w, "gpu-feature-discovery", "Update", "v1", created, "",
                 {"f:metadata|f:labels|f:nvidia.com/gpu.count", "f:metadata|f:labels|f:nvidia.com/gpu.product",
                  "f:metadata|f:labels|f:nvidia.com/gpu.memory"});
    w.endArr();
    w.end();  // metadata
    w.key("spec").obj().kv("podCIDR", fmt::format("10.244.{}.0/24", n % 250));
    w.key("podCIDRs").arr().str(fmt::format("10.244.{}.0/24", n % 250)).endArr();
    w.kv("providerID", fmt::format("aws:///us-east-1a/i-0{:015x}", n * 7919)).end();
    w.key("status").obj();
    auto resources = [&](std::string_view key) {
      w.key(key).obj().kv("cpu", "192").kv("ephemeral-storage", "3748905272Ki").kv("hugepages-1Gi", "0");
      w.kv("memory", "2097152000Ki").kv("nvidia.com/gpu", "8").kv("pods", "110").end();
    };
    resources("capacity");
    resources("allocatable");
    w.key("conditions").arr();
    auto cond = [&](std::string_view type, std::string_view status, std::string_view reason,
                    std::string_view message) {
      w.obj().kv("type", type).kv("status", status).kv("lastHeartbeatTime", ts(now_ - 20'000));
      w.kv("lastTransitionTime", ts(created)).kv("reason", reason).kv("message", message).end();
    };
    cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available");
    cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure");
    cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available");
    cond("Ready", "True", "KubeletReady", "kubelet is posting ready status");
    w.endArr();
    w.key("addresses").arr().obj().kv("type", "InternalIP").kv("address", fmt::format("10.0.{}.{}", n / 200, n % 200 + 10)).end();
    w.obj().kv("type", "Hostname").kv("address", name).end().endArr();
    w.key("daemonEndpoints").obj().key("kubeletEndpoint").obj().kn("Port", 10250).end().end();
    w.key("nodeInfo").obj().kv("machineID", fmt::format("{:032x}", n * 104729)).kv("systemUUID", uid());
    w.kv("bootID", uid()).kv("kernelVersion", "6.1.128-136.201.amzn2023.x86_64");
    w.kv("osImage", "Amazon Linux 2023.6.20250303").kv("containerRuntimeVersion", "containerd://1.7.25");
    w.kv("kubeletVersion", "v1.34.1").kv("kubeProxyVersion", "").kv("operatingSystem", "linux");
    w.kv("architecture", "amd64").end();
    w.key("images").arr();
    static constexpr std::array<std::pair<std::string_view, int64_t>, 5> kImages = {{
        {"registry.example.com/ml/train:2.4.1-cuda12.4", 19'874'332'651},
        {"nvcr.io/nvidia/k8s-device-plugin:v0.17.0", 148'201'220},
        {"nvcr.io/nvidia/k8s/dcgm-exporter:4.1.1-4.0.4-ubuntu22.04", 532'114'009},
        {"registry.k8s.io/kube-proxy:v1.34.1", 30'318'337},
        {"quay.io/cilium/cilium:v1.17.2", 221'904'112},
    }};
    for (const auto& [image, size] : kImages) {
      w.obj().key("names").arr().str(fmt::format("{}@sha256:{:064x}", image.substr(0, image.find(':')), size));
      w.str(image).endArr().kn("sizeBytes", size).end();
    }
    w.endArr();
    w.end();  // status
    w.end();
  }

  std::vector<int> claimsOnNode_;
  int64_t jobsEmitted_ = 0;
  MixOptions opts_;
  int64_t now_;
  std::mt19937_64 rng_;
  int64_t nextJob_ = 0;
  int64_t rvManager_ = 884000;
  int64_t rvWorker_ = 55000;
  std::vector<Job> active_;
  std::vector<Slice> slices_;
};


Generator::Generator(SystemTime start, MixOptions options)
    : impl_(std::make_unique<Impl>(start, options)) {}
Generator::~Generator() = default;
void Generator::next(Line& out) { impl_->next(out); }
const MixStats& Generator::stats() const { return impl_->stats; }
void Generator::estateJob(int claimEvery, const EstateSink& sink) { impl_->estateJob(claimEvery, sink); }
void Generator::estateNode(int n, const EstateSink& sink) { impl_->estateNode(n, sink); }
void Generator::estateDaemonSetPod(int n, int d, const EstateSink& sink) {
  impl_->estateDaemonSetPod(n, d, sink);
}

}  // namespace firstwork::bench
