#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "firstwork/core/clock.hpp"

namespace firstwork::sim {

struct ApiServerOptions {
  bool tls = false;                  // HTTPS with a CA and server certificate generated at start
  std::string token = "test-token";  // bearer token required on every request (401 otherwise)
  std::chrono::milliseconds bookmarkInterval{1000};  // BOOKMARK cadence on watches that ask
  size_t historyLimit = 200000;      // events kept for watch-from-RV; older RVs get ERROR 410
  size_t defaultPageLimit = 0;       // page size when the client sends no `limit` (0: no paging)
  std::string workloadVersion = "v1beta2";  // kueue.x-k8s.io version served ("" = no Kueue)
  std::string draVersion = "v1";            // resource.k8s.io version served ("" = no DRA)
  std::string name = "cluster";             // for log lines only

  // --- added by the sim area (additive; defaults match kube-apiserver) ----------------------
  /// A LIST whose resourceVersion is newer than the latest waits this long for it, then answers
  /// 504 Timeout with cause ResourceVersionTooLarge (kube-apiserver's watch cache waits 3 s).
  std::chrono::milliseconds tooLargeResourceVersionWait{3000};
  /// WatchList feature gate: `sendInitialEvents` is accepted. false ⇒ 422 Invalid, like a 1.33
  /// server, so clients can test their fallback to LIST+WATCH.
  bool watchList = true;
  std::string gitVersion = "v1.34.1";  // reported by GET /version
  size_t workerThreads = 256;          // connections served at once (each open watch holds one;
                                       // threads start as connections need them)
  /// A watch without timeoutSeconds ends cleanly after minRequestTimeout·(1+rand[0,1)), as
  /// kube-apiserver does with --min-request-timeout=1800.
  std::chrono::seconds minRequestTimeout{1800};
  /// A write to a connection that takes no bytes for this long fails, and a watch stream then
  /// ends without its terminating chunk (ApiServerStats::watchesDropped): kube-apiserver, too,
  /// closes a watcher that does not keep up with its events.
  std::chrono::milliseconds writeTimeout{5000};
  /// The cluster's own clock: the `Date` header of every response and the creationTimestamp the
  /// server stamps read it. Null = real time. A clock ahead of or behind the client's is a cluster
  /// whose clock is skewed (the fault soak gives the servers the scenario's skewed clock). Must
  /// outlive the server.
  const Clock* clock = nullptr;
};

/// Server-side counters, for tests that assert on client behaviour.
struct ApiServerStats {
  uint64_t listRequests = 0;
  uint64_t watchRequests = 0;
  uint64_t unauthorized = 0;
  uint64_t injectedFailures = 0;
  uint64_t expiredContinue = 0;
  uint64_t watchExpired = 0;  // in-band ERROR 410 sent
  // --- added by the sim area -----------------------------------------------------------------
  // listRequests/watchRequests count every authenticated request of that kind, including the
  // ones answered with an injected failure (injectedFailures counts those too).
  uint64_t getRequests = 0;        // GET of a single object
  uint64_t discoveryRequests = 0;  // /version, /api, /apis, /api/v1, /apis/<g>[/<v>]
  uint64_t eventsSent = 0;         // ADDED/MODIFIED/DELETED lines written to watch streams
  uint64_t bookmarksSent = 0;      // BOOKMARK lines written (periodic and initial-events-end)
  uint64_t openWatches = 0;        // watch streams open right now
  uint64_t watchesDropped = 0;     // watch streams ended by a failed write (writeTimeout)
};

/// One request the server answered (kept for tests that assert what a client asked for). The
/// Authorization header is never recorded.
struct ApiRequestRecord {
  std::string method;
  std::string path;  // decoded path, no query
  std::vector<std::pair<std::string, std::string>> params;  // decoded query, sorted by key
  int status = 0;                                           // 200 for a watch that started
  bool watch = false;
  /// The value of query parameter `key` ("" when absent).
  std::string param(const std::string& key) const {
    for (const auto& [k, v] : params) {
      if (k == key) return v;
    }
    return {};
  }
};

/// An object parsed and shaped for one resource ahead of its write (ApiServer::prepare). Parsing
/// is most of what a write costs the server, so a writer that must hold a rate beside the process
/// it measures (the benchmarks' paced streams) prepares its objects before its clock starts.
class PreparedObject {
 public:
  PreparedObject();
  ~PreparedObject();
  PreparedObject(PreparedObject&&) noexcept;
  PreparedObject& operator=(PreparedObject&&) noexcept;
  bool empty() const { return data_ == nullptr; }
  struct Data;  // defined in api_server.cpp

 private:
  friend class ApiServer;
  std::unique_ptr<Data> data_;
};

/// A Kubernetes API test server: a real HTTP(S) server on 127.0.0.1 (port 0 → picked by the OS)
/// with kube-apiserver list/watch semantics for every resource firstwork watches: discovery,
/// cluster-wide monotonic resourceVersions, paginated LIST with continue tokens, WATCH from an RV
/// with chunked newline-delimited events, bookmarks, timeoutSeconds, in-band ERROR 410 for
/// compacted RVs, and bearer-token auth. Objects are JSON exactly as the API sends them.
///
/// Resources are named by their plural (`workloads`, `multikueueclusters`, `clusterqueues`,
/// `admissionchecks`, `multikueueconfigs`, `pods`, `nodes`, `resourceclaims`, `resourceslices`).
/// Thread-safe: tests and scenario players mutate objects from any thread while clients stream.
/// Shares no code with the engine or the client.
///
/// Wire details (as kube-apiserver): stored objects and watch events carry kind/apiVersion of
/// the served version; LIST items of built-in kinds (Pod, Node, ResourceClaim, ResourceSlice)
/// omit kind/apiVersion, CRD list items (Kueue) include them. LIST is sorted by etcd key
/// ("<namespace>/<name>"); `limit`/`continue` pages are one consistent snapshot at the first
/// page's RV (rebuilt from history), and expire (410 + inconsistent continuation token) when
/// history no longer covers that RV, after compactHistory() or restartWithNewRvBase().
/// labelSelector and fieldSelector work on LIST and WATCH (a watched object that stops/starts
/// matching yields DELETED/ADDED). ListOptions validation errors are 422 Invalid. Watch events
/// are never gzip-compressed. Every response has a Date header. HTTP writes (POST/PUT/...) are
/// 405: objects change only through this class.
class ApiServer {
 public:
  explicit ApiServer(ApiServerOptions options = {});
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  /// Binds 127.0.0.1 (port 0 the first time, the same port after stop()) and serves in the
  /// background. Returns once the socket accepts connections.
  void start();
  /// Closes every connection and stops listening. Objects and the RV counter are kept.
  void stop();
  bool running() const;

  int port() const;
  std::string baseUrl() const;  // "http://127.0.0.1:<port>" or "https://..."
  std::string caPem() const;    // PEM of the CA that signed the server certificate (TLS only)
  /// A kubeconfig (YAML) for this server: server URL, CA data when TLS, the current token.
  std::string kubeconfig(const std::string& contextName = "test") const;

  // --- objects -------------------------------------------------------------------------------
  /// Creates an object (JSON). Fills metadata.uid (when absent), creationTimestamp (when
  /// absent), resourceVersion; emits ADDED. Returns the stored JSON. Throws on a duplicate
  /// namespace/name or bad JSON.
  /// (Also: namespace defaults to "default" for namespaced kinds and is dropped for cluster-
  /// scoped ones; metadata.generation defaults to 1 for CRDs and Pods; kind/apiVersion are set
  /// to the served version. Unknown resource names throw std::invalid_argument.)
  std::string create(const std::string& resource, const std::string& json);
  /// Replaces an existing object (matched by namespace/name), keeps uid, bumps RV, emits MODIFIED.
  /// (Also keeps creationTimestamp; bumps generation when spec changed and none is given. An
  /// update that changes nothing is not written: no new RV, no event, like etcd.)
  std::string update(const std::string& resource, const std::string& json);
  /// Creates or updates.
  std::string apply(const std::string& resource, const std::string& json);
  /// Parses and shapes an object for create/update/apply as they do (throws as they do); the
  /// prepared overloads below then write it. An object is written once: they consume it. They
  /// return the object's resourceVersion after the write (an update that changes nothing keeps
  /// it), not its JSON: a writer holding a rate has no use for a copy of every object.
  PreparedObject prepare(const std::string& resource, const std::string& json) const;
  uint64_t create(PreparedObject object);
  uint64_t update(PreparedObject object);
  uint64_t apply(PreparedObject object);
  /// Deletes by namespace/name (namespace "" for cluster-scoped), emits DELETED. False if absent.
  bool remove(const std::string& resource, const std::string& ns, const std::string& name);
  /// Current objects of a resource (stored JSON) and their count.
  std::vector<std::string> objects(const std::string& resource) const;
  size_t count(const std::string& resource) const;
  /// Each current object's uid and resourceVersion, without its JSON: what a test compares a
  /// client's store with, cheap enough to ask in a loop at 2,000 objects (objects() and a parse
  /// of each took a third of a second in a Debug build).
  std::vector<std::pair<std::string, std::string>> identities(const std::string& resource) const;
  /// The latest resourceVersion issued.
  uint64_t currentResourceVersion() const;

  // --- faults --------------------------------------------------------------------------------
  /// Every open watch stream writes half of its next event and then drops the connection.
  void cutStreamsMidEvent();
  /// The next event written on each open stream is truncated (invalid JSON) and followed by a
  /// newline; the stream stays open.
  void truncateNextEvent();
  /// Open streams send nothing (no events, no bookmarks) for `duration`; events are kept and
  /// sent afterwards.
  void stallStreams(std::chrono::milliseconds duration);
  /// Ends a stall now: every open stream sends what it kept at once.
  void resumeStreams();
  /// The next `count` requests answer `status` (e.g. 500 or 429) with a Status body; for 429 a
  /// Retry-After header of `retryAfterSeconds` is sent when given.
  /// (Any authenticated request counts: list, watch, get, discovery. 401 is decided first.
  /// Retry-After and details.retryAfterSeconds are sent for any status when given.)
  void failNextRequests(int status, int count, std::optional<int> retryAfterSeconds = {});
  /// Forgets all event history: a watch from any earlier RV gets in-band ERROR 410 (Expired);
  /// continue tokens issued so far expire (HTTP 410). With `expireOpenStreams`, open watch
  /// streams receive ERROR 410 and are closed.
  void compactHistory(bool expireOpenStreams = true);
  /// Simulates an API server restored/restarted with a new RV base: closes every stream, jumps
  /// the RV counter to `newBase` (which may be lower), and forgets history.
  /// (Streams are dropped without a terminating chunk and idle connections are closed; the next
  /// RV issued is newBase+1; stored objects keep their RVs. A later watch from an RV below
  /// newBase gets in-band 410; one from an RV above the current RV is accepted and sends nothing
  /// until the RV passes it, and a LIST with such an RV answers 504 ResourceVersionTooLarge after
  /// tooLargeResourceVersionWait — both as kube-apiserver's watch cache does.)
  void restartWithNewRvBase(uint64_t newBase);
  /// Replaces the accepted token; requests with the old one get 401 from now on.
  void rotateToken(const std::string& newToken);
  std::string token() const;
  /// Hostile-input tests: a watch event of `type` ("ADDED", "MODIFIED", ...) whose object is
  /// `rawObject` byte for byte — it may be invalid JSON, invalid UTF-8 or megabytes long. It gets
  /// the next RV and enters the watch history (a watch from an earlier RV receives it again, as
  /// from an API server that keeps serving a corrupt object), but no object is stored, so LIST
  /// never shows it. Delivered to every open watch of `resource` (selectors are not applied).
  /// Returns the RV it was given (write it into `rawObject` beforehand via
  /// currentResourceVersion() + 1 if the event should carry it).
  uint64_t injectRawEvent(const std::string& resource, const std::string& type,
                          const std::string& rawObject);

  ApiServerStats stats() const;

  // --- added by the sim area -----------------------------------------------------------------
  /// Watch streams open right now on `resource` (all resources when empty). Lets tests wait
  /// for a client's watch to be established before they mutate objects. A stream counts until
  /// it ends; a client that hangs up is noticed within ~100 ms even on an idle stream.
  size_t openWatches(const std::string& resource = {}) const;
  /// Worker threads running now: started as connections need them (at most
  /// ApiServerOptions::workerThreads), kept until stop().
  size_t workerThreads() const;
  /// The last 10,000 requests answered, oldest first.
  std::vector<ApiRequestRecord> requests() const;
  void clearRequests();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace firstwork::sim
