#include "firstwork/sim/api_server.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <thread>

#include "base64.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/core/thread_name.hpp"
#include "firstwork/http/httplib.hpp"
#include "selectors.hpp"
#include "tls_certs.hpp"

namespace firstwork::sim {
namespace {

using Json = nlohmann::ordered_json;
using Steady = std::chrono::steady_clock;
using detail::Selector;

constexpr size_t kMaxRequestRecords = 10000;
// The watch cache closes a watcher whose client cannot keep up; past this many undelivered
// lines the stream ends cleanly and the client resumes from its last RV.
constexpr size_t kMaxPendingLines = 1000000;
constexpr size_t kMaxBatchBytes = 64 * 1024;
constexpr const char* kKueueGroup = "kueue.x-k8s.io";
constexpr const char* kDraGroup = "resource.k8s.io";
constexpr const char* kContinueExpiredMessage =
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list.";

enum class Api { kCore, kKueue, kDra };

struct ResourceDef {
  const char* plural;
  const char* singular;
  const char* kind;
  Api api;
  bool namespaced;
  bool statusSubresource;
  std::vector<std::string> shortNames;
  std::vector<std::string> fields;  // field selectors beyond metadata.name / metadata.namespace
};

// Index order is fixed: Impl keeps per-resource vectors indexed by it.
const std::vector<ResourceDef>& resourceDefs() {
  static const std::vector<ResourceDef> defs = {
      {"workloads",
       "workload",
       "Workload",
       Api::kKueue,
       true,
       true,
       {"kwl", "kueueworkload", "kueueworkloads"},
       {}},
      {"multikueueclusters",
       "multikueuecluster",
       "MultiKueueCluster",
       Api::kKueue,
       false,
       true,
       {"mkc"},
       {}},
      {"multikueueconfigs",
       "multikueueconfig",
       "MultiKueueConfig",
       Api::kKueue,
       false,
       false,
       {"mkconf"},
       {}},
      {"admissionchecks", "admissioncheck", "AdmissionCheck", Api::kKueue, false, true, {}, {}},
      {"clusterqueues", "clusterqueue", "ClusterQueue", Api::kKueue, false, true, {"cq"}, {}},
      {"pods",
       "pod",
       "Pod",
       Api::kCore,
       true,
       true,
       {"po"},
       {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"}},
      {"nodes", "node", "Node", Api::kCore, false, true, {"no"}, {"spec.unschedulable"}},
      {"resourceclaims", "resourceclaim", "ResourceClaim", Api::kDra, true, true, {}, {}},
      {"resourceslices",
       "resourceslice",
       "ResourceSlice",
       Api::kDra,
       false,
       false,
       {},
       {"spec.nodeName", "spec.driver", "spec.pool.name"}},
  };
  return defs;
}

// Built-in kinds are typed structs in kube-apiserver: their LIST items carry no kind/apiVersion
// and their JSON starts with kind. CRDs are unstructured maps (apiVersion first, GVK on items).
bool builtIn(const ResourceDef& d) { return d.api != Api::kKueue; }

struct Obj {
  std::string key;  // "<namespace>/<name>" or "<name>": the etcd key order LIST follows
  std::string ns;
  std::string name;
  Json json;
  std::string wire;  // json as sent in watch events and GET
  /// The json as a LIST item (built-in kinds' items carry no kind and apiVersion) is '{' and then
  /// the wire from 1 + itemSkip on: no copy of the object is kept for it (finish()).
  size_t itemSkip = 0;
  uint64_t rv = 0;
  std::string_view itemTail() const { return std::string_view(wire).substr(1 + itemSkip); }
  size_t itemSize() const { return wire.size() - itemSkip; }
};
using ObjPtr = std::shared_ptr<const Obj>;
using ObjMap = std::map<std::string, ObjPtr>;
using Line = std::shared_ptr<const std::string>;

enum class EvType { kAdded, kModified, kDeleted };

const char* evName(EvType t) {
  switch (t) {
    case EvType::kAdded:
      return "ADDED";
    case EvType::kModified:
      return "MODIFIED";
    case EvType::kDeleted:
      return "DELETED";
  }
  return "";
}

struct Event {
  uint64_t rv = 0;
  size_t res = 0;
  EvType type = EvType::kAdded;
  ObjPtr obj;   // new state; for DELETED the last state stamped with the deletion RV
  ObjPtr prev;  // state before (null for ADDED)
  Line line;    // built on first use, shared by every watcher that gets the event unchanged
};

struct Watcher {
  size_t res = 0;
  std::string ns;
  Selector sel;
  uint64_t startRv = 0;  // events and bookmarks at or below this are never sent
  uint64_t lastRv = 0;   // RV of the last line queued
  bool bookmarks = false;
  std::deque<Line> queue;
  bool finish = false;  // end the stream cleanly once the queue is written
  bool abort = false;   // drop the connection without ending the chunked body
  bool cutNext = false;
  bool truncateNext = false;
  Steady::time_point stallUntil{};
  Steady::time_point deadline{};
  Steady::time_point nextBookmark{};
  std::condition_variable cv;
  int connFd = -1;  // dup of the connection's socket, polled for the client hanging up
};

struct Query {
  bool watch = false;
  std::optional<bool> sendInitialEvents;
  bool allowBookmarks = false;
  std::string rv;
  std::string match;
  std::string cont;
  std::optional<int64_t> limit;
  std::optional<int64_t> timeoutSeconds;
  std::string labelSelector;
  std::string fieldSelector;
};

struct FieldError {
  std::string field;
  std::string reason;   // FieldValueForbidden / FieldValueNotSupported
  std::string message;  // "Forbidden: ..." / "Unsupported value: ..."
};

struct ContinueToken {
  int64_t rv = 0;
  std::string start;
  uint64_t epoch = 0;
  /// Items the pages before handed out (lists without a selector): the remaining count is then
  /// the snapshot's size less those and this page's, not a walk over every item left.
  std::optional<uint64_t> handedOut;
};

std::optional<bool> parseBool(const std::string& s) {
  // Go's strconv.ParseBool, which decodes these query parameters in kube-apiserver.
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") {
    return false;
  }
  return std::nullopt;
}

std::optional<uint64_t> parseUint(const std::string& s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::optional<int64_t> parseInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  const bool neg = s[0] == '-';
  auto v = parseUint(neg ? s.substr(1) : s);
  if (!v || *v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return neg ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v);
}

std::string httpDate(SystemTime now) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

std::string reasonFor(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return code >= 500 ? "InternalError" : "Unknown";
  }
}

// metav1.Status as kube-apiserver writes it (field order of the Go struct).
std::string statusBody(int code, const std::string& reason, const std::string& message,
                       const Json& details = nullptr, const std::string& continueToken = {}) {
  Json s;
  s["kind"] = "Status";
  s["apiVersion"] = "v1";
  s["metadata"] = Json::object();
  if (!continueToken.empty()) s["metadata"]["continue"] = continueToken;
  s["status"] = "Failure";
  s["message"] = message;
  s["reason"] = reason;
  if (!details.is_null()) s["details"] = details;
  s["code"] = code;
  return s.dump();
}

void sendStatus(httplib::Response& res, int code, const std::string& reason,
                const std::string& message, const Json& details = nullptr,
                const std::string& continueToken = {}) {
  res.status = code;
  res.set_content(statusBody(code, reason, message, details, continueToken), "application/json");
}

std::string watchLine(const char* type, const std::string& objectJson) {
  std::string s;
  s.reserve(objectJson.size() + 32);
  s.append("{\"type\":\"").append(type).append("\",\"object\":").append(objectJson).append("}\n");
  return s;
}

/// Deep equality that ignores the order of object keys, as two API objects compare (the
/// ordered_json's own == compares keys in order), without copying or re-parsing either side.
bool sameJson(const Json& a, const Json& b) {
  if (a.type() != b.type()) return a.is_number() && b.is_number() && a == b;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !sameJson(it.value(), *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

/// `spec` of an object, or null when it has none.
const Json* specOf(const Json& object) {
  auto it = object.find("spec");
  return it == object.end() ? nullptr : &*it;
}

Line makeLine(const char* type, const std::string& objectJson) {
  return std::make_shared<const std::string>(watchLine(type, objectJson));
}

std::string encodeContinue(const ContinueToken& t) {
  Json j;
  j["v"] = "meta.k8s.io/v1";
  j["rv"] = t.rv;
  j["start"] = t.start;
  // Not in kube-apiserver's token: lets compactHistory()/restartWithNewRvBase() expire tokens
  // whose RV is still inside the history window. Clients treat tokens as opaque.
  if (t.rv >= 0) j["e"] = t.epoch;
  if (t.handedOut) j["n"] = *t.handedOut;  // not in kube-apiserver's token either
  return detail::base64Encode(j.dump(), /*urlRaw=*/true);
}

std::optional<ContinueToken> decodeContinue(const std::string& text, std::string& why) {
  auto raw = detail::base64Decode(text);
  if (!raw) {
    why = "continue key is not valid: illegal base64 data";
    return std::nullopt;
  }
  auto j = nlohmann::json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("v", "") != "meta.k8s.io/v1" ||
      !j.contains("rv") || !j["rv"].is_number_integer() || !j.contains("start") ||
      !j["start"].is_string()) {
    why =
        "continue key is not valid: incorrect encoded start resourceVersion (version "
        "meta.k8s.io/v1)";
    return std::nullopt;
  }
  ContinueToken t;
  t.rv = j["rv"].get<int64_t>();
  t.start = j["start"].get<std::string>();
  if (j.contains("e") && j["e"].is_number_unsigned()) t.epoch = j["e"].get<uint64_t>();
  if (j.contains("n") && j["n"].is_number_unsigned()) t.handedOut = j["n"].get<uint64_t>();
  if (t.start.empty() || t.start.back() != '\0') {
    why = "continue key is not valid: continue key is not valid";
    return std::nullopt;
  }
  return t;
}

bool startsWith(const std::string& s, const std::string& prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// Walks this process's sockets accepted on 127.0.0.1:<port> (those with a peer; the listener
// has none). Each is pinned with dup() first so a number httplib closes and reuses meanwhile is
// never touched. fn(pinned, peerPort) returns true to keep that dup and stop (it is returned),
// false to have it closed and go on; -1 when none was kept.
template <typename Fn>
int scanAcceptedSockets(int port, Fn&& fn) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  const int self = dirfd(dir);
  int kept = -1;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fdLong = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    const int fd = static_cast<int>(fdLong);
    if (fd == self) continue;
    const int pinned = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (pinned < 0) continue;
    struct stat st {};
    sockaddr_storage local{};
    sockaddr_storage peer{};
    socklen_t localLen = sizeof(local);
    socklen_t peerLen = sizeof(peer);
    const bool ours =
        fstat(pinned, &st) == 0 && S_ISSOCK(st.st_mode) &&
        getsockname(pinned, reinterpret_cast<sockaddr*>(&local), &localLen) == 0 &&
        local.ss_family == AF_INET &&
        ntohs(reinterpret_cast<const sockaddr_in*>(&local)->sin_port) == port &&
        reinterpret_cast<const sockaddr_in*>(&local)->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
        getpeername(pinned, reinterpret_cast<sockaddr*>(&peer), &peerLen) == 0 &&
        peer.ss_family == AF_INET;
    if (ours && fn(pinned, static_cast<int>(
                               ntohs(reinterpret_cast<const sockaddr_in*>(&peer)->sin_port)))) {
      kept = pinned;
      break;
    }
    ::close(pinned);
  }
  closedir(dir);
  return kept;
}

// Shuts down every accepted connection on 127.0.0.1:<port> in this process. httplib 0.11.4
// has no hook to reach accepted sockets, and without this an idle keep-alive connection keeps
// a worker (and the old server instance) alive for the keep-alive timeout after stop().
// shutdown() only makes blocked reads/writes return; httplib still closes its own fds.
void shutdownAcceptedConnections(int port) {
  scanAcceptedSockets(port, [](int pinned, int) {
    ::shutdown(pinned, SHUT_RDWR);
    return false;
  });
}

// A dup() of this process's accepted socket 127.0.0.1:<port> <- 127.0.0.1:<remotePort>, or -1.
// The 4-tuple is unique, so this is the connection a request arrived on.
int pinConnection(int port, int remotePort) {
  return scanAcceptedSockets(port, [&](int, int peerPort) { return peerPort == remotePort; });
}

// True once the client has closed its side (FIN or reset). Data it sends (a pipelined request,
// a TLS alert) is left alone.
bool peerHungUp(int fd) {
  pollfd p{};
  p.fd = fd;
  p.events = POLLRDHUP;
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

// httplib's task queue, with threads started as connections need them (up to `max`) and kept
// once started. httplib's ThreadPool starts all of them before its accept loop runs: the 256
// a server may need for its open watches took seconds under TSan on a loaded 2-vCPU machine,
// during which the server accepted nothing (its tests missed their 5 s deadlines), and were
// joined again at every stop.
class GrowingThreadPool : public httplib::TaskQueue {
 public:
  /// `running` counts the threads alive (the server's workerThreads()).
  GrowingThreadPool(size_t max, std::atomic<size_t>& running)
      : max_(std::max<size_t>(max, 1)), running_(running) {}
  ~GrowingThreadPool() override { shutdown(); }
  GrowingThreadPool(const GrowingThreadPool&) = delete;
  GrowingThreadPool& operator=(const GrowingThreadPool&) = delete;

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      jobs_.push_back(std::move(fn));
      // A job beyond the idle threads gets a new thread while there is room; else it waits for
      // one to finish (as httplib's pool does once all its threads are busy).
      if (jobs_.size() > idle_ && threads_.size() < max_) {
        threads_.emplace_back([this] { work(); });
        ++running_;
      }
    }
    cv_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (shutdown_) return;
      shutdown_ = true;
    }
    cv_.notify_all();
    // No thread starts after shutdown_ (httplib enqueues only from its accept loop, which has
    // ended when it calls this), so threads_ no longer changes.
    for (auto& t : threads_) {
      t.join();
      --running_;
    }
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      ++idle_;
      cv_.wait(lk, [&] { return !jobs_.empty() || shutdown_; });
      --idle_;
      if (jobs_.empty()) return;  // shut down, nothing left to run
      std::function<void()> fn = std::move(jobs_.front());
      jobs_.pop_front();
      lk.unlock();
      fn();
      lk.lock();
    }
  }

  const size_t max_;
  std::atomic<size_t>& running_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool shutdown_ = false;
};

// How often an idle watch checks whether its client is still there. Go's HTTP server cancels
// the request as soon as the client closes; this gets close without a thread per connection.
constexpr auto kHangUpPoll = std::chrono::milliseconds(100);

}  // namespace

// ------------------------------------------------------------------------------------------------

struct PreparedObject::Data {
  size_t resource = 0;
  Json json;
};

struct ApiServer::Impl {
  explicit Impl(ApiServerOptions o)
      : opts_(std::move(o)),
        token_(opts_.token),
        objects_(resourceDefs().size()),
        watchers_(resourceDefs().size()) {
    // parseObject puts kind, then apiVersion, first in every built-in object, so its wire begins
    // with this prefix and its LIST item is the wire without it (finish()).
    itemPrefix_.resize(resourceDefs().size());
    for (size_t r = 0; r < resourceDefs().size(); ++r) {
      const auto& d = resourceDefs()[r];
      if (builtIn(d)) {
        itemPrefix_[r] = fmt::format(R"({{"kind":"{}","apiVersion":"{}",)", d.kind, apiVersionOf(d.api));
      }
    }
  }

  /// Per resource: what a built-in object's wire begins with and its LIST item leaves out.
  std::vector<std::string> itemPrefix_;

  // --- lifecycle (lifecycle_mu_ serialises start/stop/restart; taken before mu_) ---
  ApiServerOptions opts_;
  std::mutex lifecycle_mu_;
  std::unique_ptr<httplib::Server> server_;
  std::thread listen_thread_;
  std::atomic<bool> listen_done_{true};
  std::atomic<int> listen_fd_{-1};
  std::atomic<size_t> worker_threads_{0};
  std::unique_ptr<detail::TlsMaterial> tls_;

  // --- state (mu_) ---
  mutable std::mutex mu_;
  std::condition_variable rv_advanced_;
  bool running_ = false;
  int port_ = 0;
  std::string token_;
  uint64_t rv_ = 0;
  uint64_t compacted_rv_ = 0;  // history holds every event with RV > compacted_rv_
  uint64_t epoch_ = 1;  // bumped by compaction/restart: continue tokens of older epochs expire
  std::vector<ObjMap> objects_;
  std::deque<Event> history_;
  std::vector<std::list<std::shared_ptr<Watcher>>> watchers_;
  struct {
    int status = 0;
    int remaining = 0;
    std::optional<int> retryAfter;
  } fault_;
  ApiServerStats stats_;
  std::deque<ApiRequestRecord> records_;
  std::mt19937_64 rng_{std::random_device{}()};

  // The cluster's clock (options.clock, else real time). Immutable option: no lock needed.
  SystemTime clusterNow() const {
    return opts_.clock != nullptr ? opts_.clock->systemNow() : std::chrono::system_clock::now();
  }

  // ---------------------------------------------------------------------------------------------
  // Served versions.

  const std::string& versionOf(Api api) const {
    static const std::string v1 = "v1";
    switch (api) {
      case Api::kCore:
        return v1;
      case Api::kKueue:
        return opts_.workloadVersion;
      case Api::kDra:
        return opts_.draVersion;
    }
    return v1;
  }
  bool served(Api api) const { return !versionOf(api).empty(); }
  static const char* groupOf(Api api) {
    return api == Api::kKueue ? kKueueGroup : api == Api::kDra ? kDraGroup : "";
  }
  std::string apiVersionOf(Api api) const {
    if (api == Api::kCore) return "v1";
    return std::string(groupOf(api)) + "/" + versionOf(api);
  }

  static size_t resourceIndex(const std::string& plural) {
    const auto& defs = resourceDefs();
    for (size_t i = 0; i < defs.size(); ++i) {
      if (plural == defs[i].plural) return i;
    }
    throw std::invalid_argument("unknown resource \"" + plural + "\"");
  }

  std::vector<std::string> supportedFields(size_t r) const {
    std::vector<std::string> f = {"metadata.name", "metadata.namespace"};
    const auto& d = resourceDefs()[r];
    f.insert(f.end(), d.fields.begin(), d.fields.end());
    // Kueue's v1beta2 Workload CRD declares selectableFields (reference §1.1).
    if (std::string(d.plural) == "workloads" && opts_.workloadVersion == "v1beta2") {
      f.emplace_back("status.admission.clusterQueue");
    }
    return f;
  }

  // ---------------------------------------------------------------------------------------------
  // Objects.

  std::string uuidLocked() {
    uint64_t a = rng_();
    uint64_t b = rng_();
    a = (a & ~0xF000ULL) | 0x4000ULL;                         // version 4
    b = (b & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // RFC 4122 variant
    return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xFFFF,
                       a & 0xFFFF, b >> 48, b & 0xFFFFFFFFFFFFULL);
  }

  // Parses and shapes a caller's object: GVK of the served version first, namespace defaulted
  // (namespaced) or dropped (cluster-scoped). Throws std::invalid_argument.
  Json parseObject(size_t r, const std::string& text) const {
    const auto& d = resourceDefs()[r];
    Json in;
    try {
      in = Json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(fmt::format("{}: bad JSON: {}", d.plural, e.what()));
    }
    if (!in.is_object()) throw std::invalid_argument(std::string(d.plural) + ": not an object");
    auto meta = in.find("metadata");
    if (meta == in.end() || !meta->is_object()) {
      throw std::invalid_argument(std::string(d.plural) + ": metadata missing");
    }
    auto name = meta->find("name");
    if (name == meta->end() || !name->is_string() || name->get<std::string>().empty()) {
      throw std::invalid_argument(std::string(d.plural) + ": metadata.name missing");
    }
    if (d.namespaced) {
      auto ns = meta->find("namespace");
      if (ns == meta->end() || !ns->is_string() || ns->get<std::string>().empty()) {
        (*meta)["namespace"] = "default";
      }
    } else {
      meta->erase("namespace");
    }
    Json out = Json::object();
    if (builtIn(d)) {
      out["kind"] = d.kind;
      out["apiVersion"] = apiVersionOf(d.api);
    } else {
      out["apiVersion"] = apiVersionOf(d.api);
      out["kind"] = d.kind;
    }
    for (auto& [k, v] : in.items()) {
      if (k != "kind" && k != "apiVersion") out[k] = std::move(v);
    }
    return out;
  }

  ObjPtr finish(size_t r, Json json, uint64_t rv) const {
    auto o = std::make_shared<Obj>();
    json["metadata"]["resourceVersion"] = std::to_string(rv);
    o->name = json["metadata"]["name"].get<std::string>();
    if (auto ns = json["metadata"].find("namespace"); ns != json["metadata"].end()) {
      o->ns = ns->get<std::string>();
    }
    o->key = o->ns.empty() ? o->name : o->ns + "/" + o->name;
    o->rv = rv;
    // Serialised into a buffer that keeps its capacity, then copied once at its size: a string
    // that grows by doubling as the dump writes takes half a dozen allocations per object, and
    // the larger ones land on fresh pages (page faults were a third of a write, change 43).
    static thread_local std::string buffer;
    buffer.clear();
    nlohmann::detail::serializer<Json> serializer(nlohmann::detail::output_adapter<char>(buffer), ' ');
    serializer.dump(json, false, false, 0);
    o->wire.assign(buffer.data(), buffer.size());
    if (const std::string& prefix = itemPrefix_[r]; !prefix.empty()) {
      if (!o->wire.starts_with(prefix)) {
        throw std::logic_error("sim: a built-in object must begin with its kind and apiVersion");
      }
      o->itemSkip = prefix.size() - 1;
    }
    o->json = std::move(json);
    return o;
  }

  static std::string keyOf(const Json& json) {
    const auto& meta = json["metadata"];
    const std::string name = meta["name"].get<std::string>();
    auto ns = meta.find("namespace");
    return ns == meta.end() ? name : ns->get<std::string>() + "/" + name;
  }

  ObjPtr createLocked(size_t r, Json json) {
    const auto& d = resourceDefs()[r];
    const std::string key = keyOf(json);
    if (objects_[r].count(key) != 0) {
      throw std::runtime_error(fmt::format("{} \"{}\" already exists", d.plural,
                                           json["metadata"]["name"].get<std::string>()));
    }
    auto& meta = json["metadata"];
    if (!meta.contains("uid")) meta["uid"] = uuidLocked();
    if (!meta.contains("creationTimestamp")) {
      meta["creationTimestamp"] = formatRfc3339(std::chrono::floor<std::chrono::seconds>(clusterNow()));
    }
    // CRDs and (since 1.34) Pods get a generation; other built-ins leave it to the caller.
    if (!meta.contains("generation") && (!builtIn(d) || std::string(d.plural) == "pods")) {
      meta["generation"] = 1;
    }
    ObjPtr obj = finish(r, std::move(json), ++rv_);
    objects_[r][obj->key] = obj;
    emitLocked(r, EvType::kAdded, obj, nullptr);
    spdlog::debug("sim[{}] ADDED {} {} rv={}", opts_.name, d.plural, obj->key, obj->rv);
    return obj;
  }

  ObjPtr updateLocked(size_t r, Json json) {
    const auto& d = resourceDefs()[r];
    auto it = objects_[r].find(keyOf(json));
    if (it == objects_[r].end()) {
      throw std::runtime_error(fmt::format("{} \"{}\" not found", d.plural,
                                           json["metadata"]["name"].get<std::string>()));
    }
    const ObjPtr prev = it->second;
    auto& meta = json["metadata"];
    const auto& oldMeta = prev->json["metadata"];
    meta["uid"] = oldMeta["uid"];
    if (oldMeta.contains("creationTimestamp")) {
      meta["creationTimestamp"] = oldMeta["creationTimestamp"];
    } else {
      meta.erase("creationTimestamp");
    }
    if (!meta.contains("generation") && oldMeta.contains("generation") &&
        oldMeta["generation"].is_number_integer()) {
      const Json* spec = specOf(json);
      const Json* prevSpec = specOf(prev->json);
      const bool specChanged = spec && prevSpec ? !sameJson(*spec, *prevSpec) : spec != prevSpec;
      meta["generation"] = oldMeta["generation"].get<int64_t>() + (specChanged ? 1 : 0);
    }
    // An update that changes nothing is not written, so it gets no RV and no event (etcd's
    // GuaranteedUpdate short-circuit). Compare key-order-insensitively.
    meta["resourceVersion"] = std::to_string(prev->rv);
    if (sameJson(json, prev->json)) {
      return prev;
    }
    ObjPtr obj = finish(r, std::move(json), ++rv_);
    it->second = obj;
    emitLocked(r, EvType::kModified, obj, prev);
    spdlog::debug("sim[{}] MODIFIED {} {} rv={}", opts_.name, d.plural, obj->key, obj->rv);
    return obj;
  }

  ObjPtr withRv(size_t r, const Obj& o, uint64_t rv) const { return finish(r, o.json, rv); }

  enum class Write : uint8_t { kCreate, kUpdate, kApply };
  /// Writes a prepared object (its json is moved out): the stored result.
  ObjPtr write(Write how, PreparedObject::Data& d) {
    std::lock_guard<std::mutex> lk(mu_);
    if (how == Write::kApply) {
      how = objects_[d.resource].count(keyOf(d.json)) != 0 ? Write::kUpdate : Write::kCreate;
    }
    return how == Write::kCreate ? createLocked(d.resource, std::move(d.json))
                                 : updateLocked(d.resource, std::move(d.json));
  }

  // ---------------------------------------------------------------------------------------------
  // Events.

  static Line cachedLine(Event& ev) {
    if (!ev.line) ev.line = makeLine(evName(ev.type), ev.obj->wire);
    return ev.line;
  }

  static bool matches(const Watcher& w, const Obj& o) {
    return (w.ns.empty() || o.ns == w.ns) && w.sel.matches(o.json);
  }

  void pushLocked(Watcher& w, Line line, uint64_t rv) {
    w.queue.push_back(std::move(line));
    w.lastRv = std::max(w.lastRv, rv);
    if (w.queue.size() > kMaxPendingLines) {
      w.queue.clear();
      w.finish = true;
    }
    w.cv.notify_all();
  }

  // What one watcher sees of one event: selectors turn MODIFIED into ADDED (object starts to
  // match) or DELETED (stops matching), as the watch cache does.
  void deliverLocked(Watcher& w, Event& ev) {
    if (w.finish || w.abort || ev.rv <= w.startRv) return;
    Line line;
    switch (ev.type) {
      case EvType::kAdded:
      case EvType::kDeleted:
        if (matches(w, *ev.obj)) line = cachedLine(ev);
        break;
      case EvType::kModified: {
        const bool now = matches(w, *ev.obj);
        const bool before = ev.prev && matches(w, *ev.prev);
        if (now && before) {
          line = cachedLine(ev);
        } else if (now) {
          line = makeLine("ADDED", ev.obj->wire);
        } else if (before) {
          line = makeLine("DELETED", withRv(ev.res, *ev.prev, ev.rv)->wire);
        }
        break;
      }
    }
    if (line) pushLocked(w, std::move(line), ev.rv);
  }

  void emitLocked(size_t r, EvType type, ObjPtr obj, ObjPtr prev) {
    Event ev;
    ev.rv = obj->rv;
    ev.res = r;
    ev.type = type;
    ev.obj = std::move(obj);
    ev.prev = std::move(prev);
    history_.push_back(std::move(ev));
    Event& stored = history_.back();
    for (auto& w : watchers_[r]) deliverLocked(*w, stored);
    trimHistoryLocked();
    rv_advanced_.notify_all();
  }

  void trimHistoryLocked() {
    while (history_.size() > opts_.historyLimit) {
      compacted_rv_ = history_.front().rv;
      history_.pop_front();
    }
  }

  // The objects of resource r as they were at RV x (compacted_rv_ <= x <= rv_), rebuilt by
  // undoing later events. Returns the live map when nothing changed since x.
  const ObjMap* stateAtLocked(size_t r, uint64_t x, ObjMap& scratch) const {
    auto first = std::partition_point(history_.begin(), history_.end(),
                                      [x](const Event& e) { return e.rv <= x; });
    if (std::none_of(first, history_.end(), [r](const Event& e) { return e.res == r; })) {
      return &objects_[r];
    }
    scratch = objects_[r];
    for (auto it = history_.end(); it != first;) {
      --it;
      if (it->res != r) continue;
      if (it->type == EvType::kAdded) {
        scratch.erase(it->obj->key);
      } else {
        scratch[it->prev->key] = it->prev;
      }
    }
    return &scratch;
  }

  Json bookmarkObject(size_t r, uint64_t rv, bool initialEventsEnd) const {
    const auto& d = resourceDefs()[r];
    Json o = Json::object();
    if (builtIn(d)) {
      o["kind"] = d.kind;
      o["apiVersion"] = apiVersionOf(d.api);
    } else {
      o["apiVersion"] = apiVersionOf(d.api);
      o["kind"] = d.kind;
    }
    Json meta = Json::object();
    meta["resourceVersion"] = std::to_string(rv);
    // A typed object serialises its zero-valued ObjectMeta timestamp as null.
    if (builtIn(d)) meta["creationTimestamp"] = nullptr;
    if (initialEventsEnd) meta["annotations"] = Json{{"k8s.io/initial-events-end", "true"}};
    o["metadata"] = std::move(meta);
    if (std::string(d.plural) == "pods") {
      // Exact typed form of an empty Pod (shared fixture watch-stream-streaming-list-pods).
      o["spec"] = Json{{"containers", nullptr}};
      o["status"] = Json::object();
    }
    return o;
  }

  static std::string errorEventLine(int code, const std::string& reason, const std::string& message,
                                    const Json& details = nullptr) {
    return watchLine("ERROR", statusBody(code, reason, message, details));
  }

  static Json tooLargeDetails() {
    return Json{{"causes", Json::array({Json{{"reason", "ResourceVersionTooLarge"},
                                             {"message", "Too large resource version"}}})},
                {"retryAfterSeconds", 1}};
  }

  // ---------------------------------------------------------------------------------------------
  // HTTP.

  void record(const httplib::Request& req, int status, bool watch) {
    ApiRequestRecord rec;
    rec.method = req.method;
    rec.path = req.path;
    for (const auto& [k, v] : req.params) rec.params.emplace_back(k, v);
    rec.status = status;
    rec.watch = watch;
    std::lock_guard<std::mutex> lk(mu_);
    records_.push_back(std::move(rec));
    while (records_.size() > kMaxRequestRecords) records_.pop_front();
  }

  bool authorized(const httplib::Request& req) {
    const std::string h = req.get_header_value("Authorization");
    constexpr std::string_view kBearer = "bearer ";
    if (h.size() <= kBearer.size()) return false;
    for (size_t i = 0; i < kBearer.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(h[i])) != kBearer[i]) return false;
    }
    std::string presented = h.substr(kBearer.size());
    while (!presented.empty() && presented.back() == ' ') presented.pop_back();
    std::lock_guard<std::mutex> lk(mu_);
    if (presented.size() != token_.size()) return false;
    // Constant-time compare: the test server is also used to exercise clients' auth paths.
    unsigned char diff = 0;
    for (size_t i = 0; i < presented.size(); ++i) {
      diff |= static_cast<unsigned char>(presented[i] ^ token_[i]);
    }
    return diff == 0;
  }

  enum class RouteKind { kNotFound, kDiscovery, kHealth, kCollection, kObject };
  struct Route {
    RouteKind kind = RouteKind::kNotFound;
    std::string discovery;  // "version", "api", "apis", "core", "group", "groupversion"
    Api api = Api::kCore;
    size_t res = 0;
    std::string ns;
    std::string name;
  };

  Route route(const std::string& path) const {
    std::vector<std::string> seg;
    size_t start = 0;
    while (start < path.size()) {
      size_t slash = path.find('/', start);
      if (slash == std::string::npos) slash = path.size();
      if (slash > start) seg.push_back(path.substr(start, slash - start));
      start = slash + 1;
    }
    Route rt;
    if (seg.size() == 1 && (seg[0] == "healthz" || seg[0] == "readyz" || seg[0] == "livez")) {
      rt.kind = RouteKind::kHealth;
      return rt;
    }
    if (seg.size() == 1 && (seg[0] == "version" || seg[0] == "api" || seg[0] == "apis")) {
      rt.kind = RouteKind::kDiscovery;
      rt.discovery = seg[0];
      return rt;
    }
    size_t rest = 0;
    if (seg.size() >= 2 && seg[0] == "api" && seg[1] == "v1") {
      rt.api = Api::kCore;
      rest = 2;
    } else if (seg.size() >= 2 && seg[0] == "apis") {
      if (seg[1] == kKueueGroup) {
        rt.api = Api::kKueue;
      } else if (seg[1] == kDraGroup) {
        rt.api = Api::kDra;
      } else {
        return rt;
      }
      if (!served(rt.api)) return rt;
      if (seg.size() == 2) {
        rt.kind = RouteKind::kDiscovery;
        rt.discovery = "group";
        return rt;
      }
      if (seg[2] != versionOf(rt.api)) return rt;
      rest = 3;
    } else {
      return rt;
    }
    if (seg.size() == rest) {
      rt.kind = RouteKind::kDiscovery;
      rt.discovery = rt.api == Api::kCore ? "core" : "groupversion";
      return rt;
    }
    if (seg[rest] == "namespaces") {
      if (seg.size() < rest + 3) return rt;  // the namespaces resource itself is not served
      rt.ns = seg[rest + 1];
      rest += 2;
    }
    const auto& defs = resourceDefs();
    auto it = std::find_if(defs.begin(), defs.end(), [&](const ResourceDef& d) {
      return d.api == rt.api && seg[rest] == d.plural;
    });
    if (it == defs.end()) return rt;
    rt.res = static_cast<size_t>(it - defs.begin());
    if (!rt.ns.empty() && !it->namespaced) return rt;
    const size_t left = seg.size() - rest;
    if (left == 1) {
      rt.kind = RouteKind::kCollection;
    } else if ((left == 2 || (left == 3 && seg[rest + 2] == "status" && it->statusSubresource)) &&
               (rt.ns.empty() != it->namespaced)) {
      rt.kind = RouteKind::kObject;
      rt.name = seg[rest + 1];
    }
    return rt;
  }

  void handle(const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req)) {
      {
        std::lock_guard<std::mutex> lk(mu_);
        ++stats_.unauthorized;
      }
      sendStatus(res, 401, "Unauthorized", "Unauthorized");
      record(req, res.status, false);
      spdlog::debug("sim[{}] {} {} -> 401", opts_.name, req.method, req.path);
      return;
    }
    const Route rt = route(req.path);
    const bool isGet = req.method == "GET" || req.method == "HEAD";
    bool watchReq = false;
    if (rt.kind == RouteKind::kCollection && req.has_param("watch")) {
      watchReq = parseBool(req.get_param_value("watch")).value_or(false);
    }
    std::optional<int> injected;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (isGet) {
        if (rt.kind == RouteKind::kDiscovery) ++stats_.discoveryRequests;
        if (rt.kind == RouteKind::kObject) ++stats_.getRequests;
        if (rt.kind == RouteKind::kCollection) {
          ++(watchReq ? stats_.watchRequests : stats_.listRequests);
        }
      }
      if (fault_.remaining > 0) {
        --fault_.remaining;
        ++stats_.injectedFailures;
        injected = fault_.status;
        Json details = nullptr;
        if (fault_.retryAfter) {
          res.set_header("Retry-After", std::to_string(*fault_.retryAfter));
          details = Json{{"retryAfterSeconds", *fault_.retryAfter}};
        }
        std::string message = "injected failure";
        if (*injected == 429) message = "Too many requests, please try again later.";
        if (*injected == 500) message = "Internal error occurred: injected failure";
        if (*injected == 503) message = "the server is currently unable to handle the request";
        sendStatus(res, *injected, reasonFor(*injected), message, details);
      }
    }
    if (injected) {
      record(req, *injected, watchReq);
      spdlog::debug("sim[{}] {} {} -> {} (injected)", opts_.name, req.method, req.path, *injected);
      return;
    }
    if (!isGet) {
      sendStatus(res, 405, "MethodNotAllowed",
                 "the server does not allow this method on the requested resource");
    } else {
      switch (rt.kind) {
        case RouteKind::kNotFound:
          sendStatus(res, 404, "NotFound", "the server could not find the requested resource",
                     Json::object());
          break;
        case RouteKind::kHealth:
          res.status = 200;
          res.set_content("ok", "text/plain; charset=utf-8");
          break;
        case RouteKind::kDiscovery:
          handleDiscovery(rt, res);
          break;
        case RouteKind::kObject:
          handleGet(rt, res);
          break;
        case RouteKind::kCollection:
          handleCollection(req, res, rt, watchReq);
          break;
      }
    }
    record(req, res.status, watchReq);
    spdlog::debug("sim[{}] {} {} -> {}", opts_.name, req.method, req.path, res.status);
  }

  // --- discovery ---

  Json resourceListJson(Api api) const {
    Json list = Json::object();
    list["kind"] = "APIResourceList";
    if (api != Api::kCore) list["apiVersion"] = "v1";
    list["groupVersion"] = apiVersionOf(api);
    Json resources = Json::array();
    for (const auto& d : resourceDefs()) {
      if (d.api != api) continue;
      Json r = Json::object();
      r["name"] = d.plural;
      r["singularName"] = d.singular;
      r["namespaced"] = d.namespaced;
      r["kind"] = d.kind;
      r["verbs"] = Json::array(
          {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"});
      if (!d.shortNames.empty()) r["shortNames"] = d.shortNames;
      resources.push_back(std::move(r));
      if (d.statusSubresource) {
        Json s = Json::object();
        s["name"] = std::string(d.plural) + "/status";
        s["singularName"] = "";
        s["namespaced"] = d.namespaced;
        s["kind"] = d.kind;
        s["verbs"] = Json::array({"get", "patch", "update"});
        resources.push_back(std::move(s));
      }
    }
    list["resources"] = std::move(resources);
    return list;
  }

  Json groupJson(Api api) const {
    Json gv = Json{{"groupVersion", apiVersionOf(api)}, {"version", versionOf(api)}};
    Json g = Json::object();
    g["name"] = groupOf(api);
    g["versions"] = Json::array({gv});
    g["preferredVersion"] = gv;
    return g;
  }

  void handleDiscovery(const Route& rt, httplib::Response& res) const {
    Json body;
    if (rt.discovery == "version") {
      std::string major = "1";
      std::string minor = "0";
      const std::string& gv = opts_.gitVersion;
      const size_t dot1 = gv.find('.');
      if (gv.size() > 1 && gv[0] == 'v' && dot1 != std::string::npos) {
        major = gv.substr(1, dot1 - 1);
        const size_t dot2 = gv.find('.', dot1 + 1);
        minor =
            gv.substr(dot1 + 1, dot2 == std::string::npos ? std::string::npos : dot2 - dot1 - 1);
      }
      body = Json{{"major", major},
                  {"minor", minor},
                  {"gitVersion", opts_.gitVersion},
                  {"gitCommit", "0000000000000000000000000000000000000000"},
                  {"gitTreeState", "clean"},
                  {"buildDate", "2025-09-09T00:00:00Z"},
                  {"goVersion", "go1.24.6"},
                  {"compiler", "gc"},
                  {"platform", "linux/amd64"}};
    } else if (rt.discovery == "api") {
      std::lock_guard<std::mutex> lk(mu_);
      body = Json{{"kind", "APIVersions"},
                  {"versions", Json::array({"v1"})},
                  {"serverAddressByClientCIDRs",
                   Json::array({Json{{"clientCIDR", "0.0.0.0/0"},
                                     {"serverAddress", fmt::format("127.0.0.1:{}", port_)}}})}};
    } else if (rt.discovery == "apis") {
      Json groups = Json::array();
      for (Api api : {Api::kDra, Api::kKueue}) {
        if (served(api)) groups.push_back(groupJson(api));
      }
      body = Json::object();
      body["kind"] = "APIGroupList";
      body["apiVersion"] = "v1";
      body["groups"] = std::move(groups);
    } else if (rt.discovery == "group") {
      body = Json::object();
      body["kind"] = "APIGroup";
      body["apiVersion"] = "v1";
      const Json group = groupJson(rt.api);
      for (const auto& [k, v] : group.items()) body[k] = v;
    } else {
      body = resourceListJson(rt.api);
    }
    res.status = 200;
    res.set_content(body.dump(), "application/json");
  }

  // --- GET one object ---

  void handleGet(const Route& rt, httplib::Response& res) {
    const auto& d = resourceDefs()[rt.res];
    ObjPtr obj;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = objects_[rt.res].find(rt.ns.empty() ? rt.name : rt.ns + "/" + rt.name);
      if (it != objects_[rt.res].end()) obj = it->second;
    }
    if (!obj) {
      const std::string qualified =
          d.api == Api::kCore ? d.plural : std::string(d.plural) + "." + groupOf(d.api);
      Json details = Json::object();
      details["name"] = rt.name;
      if (d.api != Api::kCore) details["group"] = groupOf(d.api);
      details["kind"] = d.plural;
      sendStatus(res, 404, "NotFound", fmt::format("{} \"{}\" not found", qualified, rt.name),
                 details);
      return;
    }
    res.status = 200;
    res.set_content(obj->wire, "application/json");
  }

  // --- LIST / WATCH ---

  // Reads the ListOptions query; returns false after answering 400 on a malformed value.
  static bool parseQuery(const httplib::Request& req, httplib::Response& res, Query& q) {
    auto boolParam = [&](const char* name, std::optional<bool>& out) {
      if (!req.has_param(name)) return true;
      const std::string v = req.get_param_value(name);
      out = parseBool(v);
      if (!out) {
        sendStatus(res, 400, "BadRequest",
                   fmt::format("strconv.ParseBool: parsing \"{}\": invalid syntax", v));
        return false;
      }
      return true;
    };
    auto intParam = [&](const char* name, std::optional<int64_t>& out) {
      if (!req.has_param(name)) return true;
      const std::string v = req.get_param_value(name);
      out = parseInt(v);
      if (!out) {
        sendStatus(res, 400, "BadRequest",
                   fmt::format("strconv.ParseInt: parsing \"{}\": invalid syntax", v));
        return false;
      }
      return true;
    };
    std::optional<bool> watch;
    std::optional<bool> bookmarks;
    if (!boolParam("watch", watch) || !boolParam("allowWatchBookmarks", bookmarks) ||
        !boolParam("sendInitialEvents", q.sendInitialEvents) || !intParam("limit", q.limit) ||
        !intParam("timeoutSeconds", q.timeoutSeconds)) {
      return false;
    }
    q.watch = watch.value_or(false);
    q.allowBookmarks = bookmarks.value_or(false);
    q.rv = req.get_param_value("resourceVersion");
    q.match = req.get_param_value("resourceVersionMatch");
    q.cont = req.get_param_value("continue");
    q.labelSelector = req.get_param_value("labelSelector");
    q.fieldSelector = req.get_param_value("fieldSelector");
    return true;
  }

  // apimachinery pkg/apis/meta/internalversion/validation ValidateListOptions.
  std::vector<FieldError> validate(const Query& q) const {
    std::vector<FieldError> errs;
    auto forbidden = [&](const char* field, const std::string& detail) {
      errs.push_back({field, "FieldValueForbidden", "Forbidden: " + detail});
    };
    auto notSupported = [&](const char* field, const std::string& value,
                            const std::vector<std::string>& ok) {
      std::string list;
      for (const auto& v : ok) list += (list.empty() ? "\"" : ", \"") + v + "\"";
      errs.push_back({field, "FieldValueNotSupported",
                      fmt::format("Unsupported value: \"{}\": supported values: {}", value, list)});
    };
    if (q.watch) {
      if (q.sendInitialEvents) {
        if (q.match != "NotOlderThan") {
          forbidden("resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
        }
        if (!opts_.watchList) {
          forbidden("sendInitialEvents",
                    "sendInitialEvents is forbidden for watch unless the WatchList feature gate "
                    "is enabled");
        }
      }
      if (!q.match.empty()) {
        if (!q.sendInitialEvents) {
          forbidden("resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                    "provided");
        }
        if (q.match != "NotOlderThan")
          notSupported("resourceVersionMatch", q.match, {"NotOlderThan"});
        if (!q.cont.empty()) {
          forbidden("resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided");
        }
      }
      return errs;
    }
    if (!q.match.empty()) {
      if (q.rv.empty()) {
        forbidden("resourceVersionMatch",
                  "resourceVersionMatch is forbidden unless resourceVersion is provided");
      }
      if (!q.cont.empty()) {
        forbidden("resourceVersionMatch",
                  "resourceVersionMatch is forbidden when continue is provided");
      }
      if (q.match != "Exact" && q.match != "NotOlderThan") {
        notSupported("resourceVersionMatch", q.match, {"Exact", "NotOlderThan", ""});
      }
      if (q.match == "Exact" && q.rv == "0") {
        forbidden("resourceVersionMatch",
                  "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
      }
    }
    if (q.sendInitialEvents)
      forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list");
    return errs;
  }

  static void sendInvalid(httplib::Response& res, const std::vector<FieldError>& errs) {
    Json causes = Json::array();
    std::vector<std::string> parts;
    for (const auto& e : errs) {
      causes.push_back(Json{{"reason", e.reason}, {"message", e.message}, {"field", e.field}});
      parts.push_back(e.field + ": " + e.message);
    }
    std::string joined = parts.front();
    if (parts.size() > 1) {
      joined = "[";
      for (size_t i = 0; i < parts.size(); ++i) joined += (i ? ", " : "") + parts[i];
      joined += "]";
    }
    Json details = Json{{"group", "meta.k8s.io"}, {"kind", "ListOptions"}, {"causes", causes}};
    sendStatus(res, 422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: " + joined, details);
  }

  void handleCollection(const httplib::Request& req, httplib::Response& res, const Route& rt,
                        bool watch) {
    Query q;
    if (!parseQuery(req, res, q)) return;
    q.watch = watch;
    if (auto errs = validate(q); !errs.empty()) {
      sendInvalid(res, errs);
      return;
    }
    Selector sel;
    std::string why = detail::parseLabelSelector(q.labelSelector, sel.labels);
    if (why.empty())
      why = detail::parseFieldSelector(q.fieldSelector, supportedFields(rt.res), sel.fields);
    if (!why.empty()) {
      sendStatus(res, 400, "BadRequest", why);
      return;
    }
    std::optional<uint64_t> rv;
    if (!q.rv.empty()) {
      rv = parseUint(q.rv);
      if (!rv) {
        sendStatus(res, 400, "BadRequest",
                   fmt::format("invalid resource version \"{}\": strconv.ParseUint: parsing "
                               "\"{}\": invalid syntax",
                               q.rv, q.rv));
        return;
      }
      if (*rv == 0) rv.reset();  // "0" means "any": served from the latest state
    }
    if (watch) {
      handleWatch(req, res, rt, q, std::move(sel), rv);
    } else {
      handleList(res, rt, q, sel, rv);
    }
  }

  bool waitForRvLocked(std::unique_lock<std::mutex>& lk, uint64_t x) {
    rv_advanced_.wait_for(lk, opts_.tooLargeResourceVersionWait,
                          [&] { return rv_ >= x || !running_; });
    return rv_ >= x;
  }

  void handleList(httplib::Response& res, const Route& rt, const Query& q, const Selector& sel,
                  std::optional<uint64_t> rv) {
    const auto& d = resourceDefs()[rt.res];
    std::vector<ObjPtr> items;
    uint64_t pageRv = 0;
    std::string token;
    std::optional<size_t> remaining;
    {
      std::unique_lock<std::mutex> lk(mu_);
      ObjMap scratch;
      const ObjMap* view = &objects_[rt.res];
      std::string start;
      // Items of this listing's snapshot handed out before this page (see ContinueToken), when
      // known.
      uint64_t handedOut = 0;
      bool handedOutKnown = true;
      if (!q.cont.empty()) {
        if (!q.rv.empty() && q.rv != "0") {
          sendStatus(res, 400, "BadRequest",
                     "specifying resource version is not allowed when using continue");
          return;
        }
        std::string why;
        auto tok = decodeContinue(q.cont, why);
        if (!tok) {
          sendStatus(res, 400, "BadRequest", "invalid continue token: " + why);
          return;
        }
        start = tok->start;
        handedOutKnown = tok->handedOut.has_value();
        handedOut = tok->handedOut.value_or(0);
        if (tok->rv < 0) {
          pageRv = rv_;  // inconsistent continuation, handed out with a 410
          handedOutKnown = false;  // the pages before read another state
        } else if (tok->epoch != epoch_ || static_cast<uint64_t>(tok->rv) < compacted_rv_ ||
                   static_cast<uint64_t>(tok->rv) > rv_) {
          ++stats_.expiredContinue;
          ContinueToken fresh{-1, tok->start, 0, std::nullopt};
          sendStatus(res, 410, "Expired", kContinueExpiredMessage, nullptr, encodeContinue(fresh));
          return;
        } else {
          pageRv = static_cast<uint64_t>(tok->rv);
          view = stateAtLocked(rt.res, pageRv, scratch);
        }
      } else if (rv) {
        if (*rv > rv_ && !waitForRvLocked(lk, *rv)) {
          res.set_header("Retry-After", "1");
          sendStatus(res, 504, "Timeout",
                     fmt::format("Too large resource version: {}, current: {}", *rv, rv_),
                     tooLargeDetails());
          return;
        }
        if (q.match == "Exact") {
          if (*rv < compacted_rv_) {
            sendStatus(res, 410, "Expired",
                       fmt::format("too old resource version: {} ({})", *rv, compacted_rv_));
            return;
          }
          pageRv = *rv;
          view = stateAtLocked(rt.res, pageRv, scratch);
        } else {
          pageRv = rv_;  // NotOlderThan: the latest state is not older than what was asked
        }
      } else {
        pageRv = rv_;
      }

      size_t limit = opts_.defaultPageLimit;
      if (q.limit) limit = *q.limit > 0 ? static_cast<size_t>(*q.limit) : 0;
      const std::string prefix = rt.ns.empty() ? std::string() : rt.ns + "/";
      auto it = view->lower_bound(std::max(start, prefix));
      bool more = false;
      size_t rest = 0;
      // Every item of the snapshot is the list's (all namespaces, no selector), and the count
      // handed out before is known: what remains follows from the snapshot's size. Otherwise the
      // rest is walked, as it was for every page (a walk per page made the pod list's 300 pages
      // cost the server O(n²): 73 % of its CPU through benchmark 4's sync, bench/README.md).
      const bool countBySize = sel.empty() && prefix.empty() && handedOutKnown;
      for (; it != view->end() && startsWith(it->first, prefix); ++it) {
        if (!sel.matches(it->second->json)) continue;
        if (limit != 0 && items.size() == limit) {
          more = true;
          if (!sel.empty() || countBySize) break;  // no count under a selector
          ++rest;
          continue;
        }
        items.push_back(it->second);
      }
      if (more) {
        const uint64_t through = handedOut + items.size();
        // A token made by hand may claim more than the snapshot holds (ours never do): 0 left.
        if (countBySize) rest = view->size() > through ? view->size() - static_cast<size_t>(through) : 0;
        token = encodeContinue(ContinueToken{static_cast<int64_t>(pageRv),
                                             items.back()->key + std::string(1, '\0'), epoch_,
                                             sel.empty() && handedOutKnown
                                                 ? std::optional<uint64_t>(through)
                                                 : std::nullopt});
        if (sel.empty()) remaining = rest;
      }
    }
    std::string body;
    size_t total = 256;
    for (const auto& o : items) total += o->itemSize() + 1;
    body.reserve(total);
    body.append("{\"kind\":\"").append(d.kind).append("List\",\"apiVersion\":\"");
    body.append(apiVersionOf(d.api)).append("\",\"metadata\":{\"resourceVersion\":\"");
    body.append(std::to_string(pageRv)).append("\"");
    if (!token.empty()) body.append(",\"continue\":\"").append(token).append("\"");
    if (remaining) body.append(",\"remainingItemCount\":").append(std::to_string(*remaining));
    body.append("},\"items\":[");
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) body += ',';
      body += '{';
      body += items[i]->itemTail();
    }
    body.append("]}");
    res.status = 200;
    res.set_content(body, "application/json");
  }

  void handleWatch(const httplib::Request& req, httplib::Response& res, const Route& rt,
                   const Query& q, Selector sel, std::optional<uint64_t> rv) {
    // httplib would gzip a chunked body when the client accepts it, and its deflate stream
    // holds small writes back: events would stall. kube-apiserver does not compress plain
    // watches either (reference §3.3), so drop the header for this request.
    const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");

    auto w = std::make_shared<Watcher>();
    w->connFd = pinConnection(req.local_port, req.remote_port);
    w->res = rt.res;
    w->ns = rt.ns;
    w->sel = std::move(sel);
    w->bookmarks = q.allowBookmarks;
    const auto now = Steady::now();
    {
      std::unique_lock<std::mutex> lk(mu_);
      if (!running_) {
        if (w->connFd >= 0) ::close(w->connFd);
        sendStatus(res, 503, "ServiceUnavailable", "the server is shutting down");
        return;
      }
      if (q.timeoutSeconds && *q.timeoutSeconds > 0) {
        w->deadline = now + std::chrono::seconds(*q.timeoutSeconds);
      } else {
        std::uniform_real_distribution<double> jitter(1.0, 2.0);
        w->deadline = now + std::chrono::duration_cast<Steady::duration>(opts_.minRequestTimeout *
                                                                         jitter(rng_));
      }
      w->nextBookmark = now + opts_.bookmarkInterval;
      const bool initial = q.sendInitialEvents.value_or(!rv.has_value());
      if (q.sendInitialEvents.value_or(false) && rv && *rv > rv_ && !waitForRvLocked(lk, *rv)) {
        w->queue.push_back(std::make_shared<const std::string>(errorEventLine(
            504, "Timeout", fmt::format("Too large resource version: {}, current: {}", *rv, rv_),
            tooLargeDetails())));
        w->finish = true;
      } else if (initial) {
        // Synthetic ADDED for the current state (legacy RV=""/"0" watch, or watch-list).
        const std::string prefix = rt.ns.empty() ? std::string() : rt.ns + "/";
        for (auto it = objects_[rt.res].lower_bound(prefix);
             it != objects_[rt.res].end() && startsWith(it->first, prefix); ++it) {
          if (w->sel.matches(it->second->json)) {
            w->queue.push_back(makeLine("ADDED", it->second->wire));
          }
        }
        w->startRv = rv_;
        w->lastRv = rv_;
        // The end marker is only sent when asked for explicitly (cacher.go
        // setInitialEventsEndBookmarkIfRequested).
        if (q.sendInitialEvents.value_or(false) && q.allowBookmarks) {
          w->queue.push_back(makeLine("BOOKMARK", bookmarkObject(rt.res, rv_, true).dump()));
        }
      } else if (rv && *rv < compacted_rv_) {
        ++stats_.watchExpired;
        w->queue.push_back(std::make_shared<const std::string>(errorEventLine(
            410, "Expired", fmt::format("too old resource version: {} ({})", *rv, compacted_rv_))));
        w->finish = true;
      } else if (rv) {
        // Replay what happened after the RV, then live events. An RV above the latest is
        // accepted as the watch cache does: nothing is sent until the RV is passed.
        w->startRv = *rv;
        w->lastRv = *rv;
        auto first = std::partition_point(history_.begin(), history_.end(),
                                          [x = *rv](const Event& e) { return e.rv <= x; });
        for (auto it = first; it != history_.end(); ++it) {
          if (it->res == rt.res) deliverLocked(*w, *it);
        }
      } else {
        w->startRv = rv_;  // sendInitialEvents=false without RV: from now on
        w->lastRv = rv_;
      }
      watchers_[rt.res].push_back(w);
    }
    res.status = 200;
    res.set_chunked_content_provider(
        "application/json", [this, w](size_t, httplib::DataSink& sink) { return pump(*w, sink); },
        [this, w](bool) {
          std::lock_guard<std::mutex> lk(mu_);
          watchers_[w->res].remove(w);
          if (w->connFd >= 0) ::close(w->connFd);
          w->connFd = -1;
        });
  }

  // Appends one line to a batch, applying pending cut/truncate faults. Returns true when the
  // stream must be dropped right after this batch.
  bool appendLine(Watcher& w, const std::string& line, std::string& out) {
    if (startsWith(line, "{\"type\":\"BOOKMARK\"")) {
      ++stats_.bookmarksSent;
    } else if (!startsWith(line, "{\"type\":\"ERROR\"")) {
      ++stats_.eventsSent;
    }
    const size_t half = (line.size() - 1) / 2;  // the line ends in '\n'
    if (w.cutNext) {
      w.cutNext = false;
      out.append(line, 0, half);
      return true;
    }
    if (w.truncateNext) {
      w.truncateNext = false;
      out.append(line, 0, half).push_back('\n');
      return false;
    }
    out += line;
    return false;
  }

  // Called by httplib in a loop on the connection's worker thread; blocks until there is
  // something to write, the stream ends, or the server stops.
  bool pump(Watcher& w, httplib::DataSink& sink) {
    std::string out;
    bool drop = false;
    bool end = false;
    {
      std::unique_lock<std::mutex> lk(mu_);
      for (;;) {
        if (w.abort || !running_) {
          drop = true;
          break;
        }
        const auto now = Steady::now();
        if (now < w.stallUntil) {
          w.cv.wait_until(lk, w.stallUntil);
          continue;
        }
        if (!w.queue.empty()) {
          while (!w.queue.empty() && out.size() < kMaxBatchBytes && !drop) {
            Line line = std::move(w.queue.front());
            w.queue.pop_front();
            drop = appendLine(w, *line, out);
          }
          break;
        }
        if (w.finish || now >= w.deadline) {
          end = true;
          break;
        }
        if (w.bookmarks && now >= w.nextBookmark) {
          w.nextBookmark = now + opts_.bookmarkInterval;
          if (rv_ >= w.startRv) {
            w.lastRv = std::max(w.lastRv, rv_);
            drop =
                appendLine(w, watchLine("BOOKMARK", bookmarkObject(w.res, rv_, false).dump()), out);
            break;
          }
          continue;
        }
        if (w.connFd >= 0 && peerHungUp(w.connFd)) {
          drop = true;
          break;
        }
        auto wake = w.deadline;
        if (w.bookmarks) wake = std::min(wake, w.nextBookmark);
        if (w.connFd >= 0) wake = std::min(wake, now + kHangUpPoll);
        w.cv.wait_until(lk, wake);
      }
    }
    if (!out.empty() && !sink.write(out.data(), out.size())) {
      // The client took no bytes for the write timeout, or went away mid-write.
      std::lock_guard<std::mutex> lk(mu_);
      ++stats_.watchesDropped;
      return false;
    }
    if (drop) return false;
    if (end) sink.done();
    return true;
  }

  void wakeAllLocked(bool abort) {
    for (auto& list : watchers_) {
      for (auto& w : list) {
        if (abort) w->abort = true;
        w->cv.notify_all();
      }
    }
    rv_advanced_.notify_all();
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle.

  void start() {
    std::lock_guard<std::mutex> life(lifecycle_mu_);
    if (server_) return;
    if (opts_.tls && !tls_) {
      // Generated once: the CA must survive stop()/start() or clients holding the kubeconfig
      // would fail verification after a simulated restart.
      tls_ = std::make_unique<detail::TlsMaterial>(detail::generateTlsMaterial(opts_.name));
    }
    std::unique_ptr<httplib::Server> srv;
    if (tls_) {
      srv = std::make_unique<httplib::SSLServer>(tls_->serverCert.get(), tls_->serverKey.get());
    } else {
      srv = std::make_unique<httplib::Server>();
    }
    if (!srv->is_valid()) throw std::runtime_error("sim api server: TLS context setup failed");
    const size_t threads = std::max<size_t>(opts_.workerThreads, 4);
    srv->new_task_queue = [this, threads] { return new GrowingThreadPool(threads, worker_threads_); };
    srv->set_tcp_nodelay(true);  // events are small writes that must leave at once
    srv->set_keep_alive_max_count(100000);
    srv->set_keep_alive_timeout(10);
    srv->set_write_timeout(opts_.writeTimeout);
    srv->set_socket_options([this](socket_t sock) {
      httplib::default_socket_options(sock);
      int yes = 1;
      // Rebinding the same port right after stop() needs SO_REUSEADDR: the server side closed
      // first, so its connections sit in TIME_WAIT on this port.
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_fd_ = sock;
    });
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res);
    };
    srv->Get(".*", handler);
    srv->Post(".*", handler);
    srv->Put(".*", handler);
    srv->Patch(".*", handler);
    srv->Delete(".*", handler);
    srv->Options(".*", handler);
    srv->set_post_routing_handler([this](const httplib::Request&, httplib::Response& res) {
      res.set_header("Date", httpDate(clusterNow()));
      res.set_header("Cache-Control", "no-cache, private");
    });

    int port = 0;
    {
      std::lock_guard<std::mutex> lk(mu_);
      port = port_;
    }
    if (port == 0) {
      port = srv->bind_to_any_port("127.0.0.1");
      if (port <= 0) throw std::runtime_error("sim api server: cannot bind 127.0.0.1");
    } else {
      const auto deadline = Steady::now() + std::chrono::seconds(5);
      while (!srv->bind_to_port("127.0.0.1", port)) {
        if (Steady::now() > deadline) {
          throw std::runtime_error(fmt::format("sim api server: cannot rebind 127.0.0.1:{}", port));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    // httplib listens with a backlog of 5; a burst of reconnecting reflectors would then see
    // dropped SYNs and 1 s retransmits. Calling listen() again only raises the backlog.
    if (listen_fd_ >= 0) ::listen(listen_fd_, 1024);
    {
      std::lock_guard<std::mutex> lk(mu_);
      port_ = port;
      running_ = true;
    }
    listen_done_ = false;
    httplib::Server* raw = srv.get();
    listen_thread_ = std::thread([this, raw] {
      nameThisThread("sim-api");  // before its pool's threads start: they take its name
      raw->listen_after_bind();
      listen_done_ = true;
    });
    server_ = std::move(srv);
    // Server::stop() is a no-op until the accept loop runs; wait for it so that stop() right
    // after start() cannot leave the thread accepting forever.
    while (!server_->is_running() && !listen_done_) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    spdlog::debug("sim[{}] listening on {}://127.0.0.1:{}", opts_.name, tls_ ? "https" : "http",
                  port);
  }

  void stop() {
    std::lock_guard<std::mutex> life(lifecycle_mu_);
    if (!server_) return;
    int port = 0;
    {
      std::lock_guard<std::mutex> lk(mu_);
      running_ = false;
      port = port_;
      wakeAllLocked(/*abort=*/true);
    }
    server_->stop();
    // Until the accept loop and every worker are gone, keep shutting down accepted
    // connections (one accepted just before the listener closed is caught by the next pass).
    while (!listen_done_) {
      shutdownAcceptedConnections(port);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    listen_thread_.join();
    server_.reset();
    listen_fd_ = -1;
    spdlog::debug("sim[{}] stopped", opts_.name);
  }
};

// ------------------------------------------------------------------------------------------------

ApiServer::ApiServer(ApiServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

ApiServer::~ApiServer() { stop(); }

void ApiServer::start() { impl_->start(); }

void ApiServer::stop() { impl_->stop(); }

bool ApiServer::running() const {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  return impl_->running_;
}

int ApiServer::port() const {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  return impl_->port_;
}

std::string ApiServer::baseUrl() const {
  return fmt::format("{}://127.0.0.1:{}", impl_->opts_.tls ? "https" : "http", port());
}

std::string ApiServer::caPem() const {
  std::lock_guard<std::mutex> life(impl_->lifecycle_mu_);
  return impl_->tls_ ? impl_->tls_->caPem : std::string();
}

std::string ApiServer::kubeconfig(const std::string& contextName) const {
  // Strings are written as JSON strings, which YAML reads as double-quoted scalars.
  const std::string name = nlohmann::json(contextName).dump();
  const std::string server = nlohmann::json(baseUrl()).dump();
  const std::string tok = nlohmann::json(token()).dump();
  const std::string ca = caPem();
  std::string y;
  y += "apiVersion: v1\nkind: Config\nclusters:\n- name: " + name + "\n  cluster:\n";
  y += "    server: " + server + "\n";
  if (!ca.empty()) y += "    certificate-authority-data: " + detail::base64Encode(ca) + "\n";
  y += "users:\n- name: " + name + "\n  user:\n    token: " + tok + "\n";
  y += "contexts:\n- name: " + name + "\n  context:\n    cluster: " + name + "\n    user: " + name +
       "\n";
  y += "current-context: " + name + "\npreferences: {}\n";
  return y;
}

PreparedObject::PreparedObject() = default;
PreparedObject::~PreparedObject() = default;
PreparedObject::PreparedObject(PreparedObject&&) noexcept = default;
PreparedObject& PreparedObject::operator=(PreparedObject&&) noexcept = default;

PreparedObject ApiServer::prepare(const std::string& resource, const std::string& json) const {
  PreparedObject p;
  p.data_ = std::make_unique<PreparedObject::Data>();
  p.data_->resource = Impl::resourceIndex(resource);
  p.data_->json = impl_->parseObject(p.data_->resource, json);
  return p;
}

namespace {
PreparedObject::Data& preparedData(const std::unique_ptr<PreparedObject::Data>& d) {
  if (!d) throw std::invalid_argument("sim: an empty (moved-from or written) prepared object");
  return *d;
}
}  // namespace

// The stored object is immutable: the string overloads copy its JSON after the lock is released.
std::string ApiServer::create(const std::string& resource, const std::string& json) {
  PreparedObject p = prepare(resource, json);
  return impl_->write(Impl::Write::kCreate, preparedData(p.data_))->wire;
}

std::string ApiServer::update(const std::string& resource, const std::string& json) {
  PreparedObject p = prepare(resource, json);
  return impl_->write(Impl::Write::kUpdate, preparedData(p.data_))->wire;
}

std::string ApiServer::apply(const std::string& resource, const std::string& json) {
  PreparedObject p = prepare(resource, json);
  return impl_->write(Impl::Write::kApply, preparedData(p.data_))->wire;
}

uint64_t ApiServer::create(PreparedObject object) {
  return impl_->write(Impl::Write::kCreate, preparedData(object.data_))->rv;
}

uint64_t ApiServer::update(PreparedObject object) {
  return impl_->write(Impl::Write::kUpdate, preparedData(object.data_))->rv;
}

uint64_t ApiServer::apply(PreparedObject object) {
  return impl_->write(Impl::Write::kApply, preparedData(object.data_))->rv;
}

bool ApiServer::remove(const std::string& resource, const std::string& ns,
                       const std::string& name) {
  const size_t r = Impl::resourceIndex(resource);
  const auto& d = resourceDefs()[r];
  const std::string key = d.namespaced ? (ns.empty() ? "default" : ns) + "/" + name : name;
  std::lock_guard<std::mutex> lk(impl_->mu_);
  auto it = impl_->objects_[r].find(key);
  if (it == impl_->objects_[r].end()) return false;
  const ObjPtr prev = it->second;
  impl_->objects_[r].erase(it);
  ObjPtr last = impl_->withRv(r, *prev, ++impl_->rv_);
  impl_->emitLocked(r, EvType::kDeleted, last, prev);
  spdlog::debug("sim[{}] DELETED {} {} rv={}", impl_->opts_.name, d.plural, key, last->rv);
  return true;
}

std::vector<std::string> ApiServer::objects(const std::string& resource) const {
  const size_t r = Impl::resourceIndex(resource);
  std::lock_guard<std::mutex> lk(impl_->mu_);
  std::vector<std::string> out;
  out.reserve(impl_->objects_[r].size());
  for (const auto& [key, obj] : impl_->objects_[r]) out.push_back(obj->wire);
  return out;
}

std::vector<std::pair<std::string, std::string>> ApiServer::identities(
    const std::string& resource) const {
  const size_t r = Impl::resourceIndex(resource);
  std::lock_guard<std::mutex> lk(impl_->mu_);
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(impl_->objects_[r].size());
  for (const auto& [key, obj] : impl_->objects_[r]) {
    const auto& meta = obj->json.at("metadata");
    out.emplace_back(meta.at("uid").get<std::string>(),
                     meta.at("resourceVersion").get<std::string>());
  }
  return out;
}

size_t ApiServer::count(const std::string& resource) const {
  const size_t r = Impl::resourceIndex(resource);
  std::lock_guard<std::mutex> lk(impl_->mu_);
  return impl_->objects_[r].size();
}

uint64_t ApiServer::currentResourceVersion() const {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  return impl_->rv_;
}

void ApiServer::cutStreamsMidEvent() {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  for (auto& list : impl_->watchers_) {
    for (auto& w : list) w->cutNext = true;
  }
}

void ApiServer::truncateNextEvent() {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  for (auto& list : impl_->watchers_) {
    for (auto& w : list) w->truncateNext = true;
  }
}

void ApiServer::stallStreams(std::chrono::milliseconds duration) {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  const auto until = Steady::now() + duration;
  for (auto& list : impl_->watchers_) {
    for (auto& w : list) w->stallUntil = std::max(w->stallUntil, until);
  }
}

void ApiServer::resumeStreams() {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  const auto now = Steady::now();
  for (auto& list : impl_->watchers_) {
    for (auto& w : list) {
      w->stallUntil = std::min(w->stallUntil, now);
      w->cv.notify_all();
    }
  }
}

void ApiServer::failNextRequests(int status, int count, std::optional<int> retryAfterSeconds) {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  impl_->fault_.status = status;
  impl_->fault_.remaining = std::max(count, 0);
  impl_->fault_.retryAfter = retryAfterSeconds;
}

void ApiServer::compactHistory(bool expireOpenStreams) {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  impl_->history_.clear();
  impl_->compacted_rv_ = impl_->rv_;
  ++impl_->epoch_;
  if (!expireOpenStreams) return;
  for (auto& list : impl_->watchers_) {
    for (auto& w : list) {
      if (w->finish || w->abort) continue;
      w->queue.clear();
      w->queue.push_back(std::make_shared<const std::string>(Impl::errorEventLine(
          410, "Expired",
          fmt::format("too old resource version: {} ({})", w->lastRv, impl_->compacted_rv_))));
      w->finish = true;
      ++impl_->stats_.watchExpired;
      w->cv.notify_all();
    }
  }
}

void ApiServer::restartWithNewRvBase(uint64_t newBase) {
  std::lock_guard<std::mutex> life(impl_->lifecycle_mu_);
  int port = 0;
  bool listening = false;
  {
    std::lock_guard<std::mutex> lk(impl_->mu_);
    impl_->wakeAllLocked(/*abort=*/true);
    impl_->rv_ = newBase;
    impl_->history_.clear();
    impl_->compacted_rv_ = newBase;
    ++impl_->epoch_;
    port = impl_->port_;
    listening = impl_->running_;
  }
  // A restarted process has no connections left: drop the idle keep-alive ones as well.
  if (listening) shutdownAcceptedConnections(port);
}

uint64_t ApiServer::injectRawEvent(const std::string& resource, const std::string& type,
                                   const std::string& rawObject) {
  const size_t r = Impl::resourceIndex(resource);
  std::lock_guard<std::mutex> lk(impl_->mu_);
  // A stand-in object that matches every watcher and no LIST key: history rebuilds
  // (stateAtLocked) erase its key, which no stored object has.
  auto placeholder = std::make_shared<Obj>();
  placeholder->key = std::string(1, '\0') + "raw";
  placeholder->json = Json{{"metadata", Json::object()}};
  placeholder->rv = ++impl_->rv_;
  Event ev;
  ev.rv = placeholder->rv;
  ev.res = r;
  ev.type = EvType::kAdded;
  ev.line = makeLine(type.c_str(), rawObject);
  ev.obj = std::move(placeholder);
  impl_->history_.push_back(std::move(ev));
  Event& stored = impl_->history_.back();
  for (auto& w : impl_->watchers_[r]) impl_->deliverLocked(*w, stored);
  impl_->trimHistoryLocked();
  impl_->rv_advanced_.notify_all();
  return stored.rv;
}

void ApiServer::rotateToken(const std::string& newToken) {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  impl_->token_ = newToken;
}

std::string ApiServer::token() const {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  return impl_->token_;
}

ApiServerStats ApiServer::stats() const {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  ApiServerStats s = impl_->stats_;
  s.openWatches = 0;
  for (const auto& list : impl_->watchers_) s.openWatches += list.size();
  return s;
}

size_t ApiServer::workerThreads() const { return impl_->worker_threads_; }

size_t ApiServer::openWatches(const std::string& resource) const {
  std::optional<size_t> r;
  if (!resource.empty()) r = Impl::resourceIndex(resource);
  std::lock_guard<std::mutex> lk(impl_->mu_);
  size_t n = 0;
  for (size_t i = 0; i < impl_->watchers_.size(); ++i) {
    if (!r || *r == i) n += impl_->watchers_[i].size();
  }
  return n;
}

std::vector<ApiRequestRecord> ApiServer::requests() const {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  return {impl_->records_.begin(), impl_->records_.end()};
}

void ApiServer::clearRequests() {
  std::lock_guard<std::mutex> lk(impl_->mu_);
  impl_->records_.clear();
}

}  // namespace firstwork::sim
