#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/result.hpp"
#include "firstwork/http/metrics_snapshot.hpp"

namespace httplib {
class Server;
}

namespace firstwork::http {

/// A GET request to /api/v1/<path>.
struct ApiRequest {
  std::string path;  // after "/api/v1/", e.g. "incidents" or "workloads/ns/name"
  std::string rest;  // for prefix routes: what follows the prefix ("ns/name"); else empty
  std::multimap<std::string, std::string> params;  // decoded query parameters

  /// The first value of a query parameter, if present.
  std::optional<std::string> param(const std::string& name) const;
};

/// A handler's answer: status and a JSON body (served as application/json).
struct ApiResponse {
  int status = 200;
  std::string body;

  static ApiResponse json(std::string body, int status = 200);
  /// `{"error":"<message>"}`, properly escaped. 400 for bad parameters is the handler's call.
  static ApiResponse error(int status, std::string_view message);
};

/// Runs on an HTTP worker thread, concurrently with other requests and with the event loop: it
/// must read thread-safe state only (a snapshot, the store) or hand the work to the loop and wait.
/// Exceptions are caught and become 500 {"error":"internal error"}.
using ApiHandler = std::function<ApiResponse(const ApiRequest&)>;

/// What is not ready yet, one short line each (`cluster w1: pods initial list`); empty = ready.
/// Runs on HTTP threads: must be thread-safe.
using ReadinessCheck = std::function<std::vector<std::string>()>;

struct HttpServerOptions {
  std::string listen = "127.0.0.1:0";  // host:port, [ipv6]:port, :port; port 0 = OS picks
  std::string tlsCertFile;             // HTTPS when both are set (PEM chain / key)
  std::string tlsKeyFile;
  /// Bearer token required on /api/v1/* (never on /metrics, /healthz, /readyz). Taken from the
  /// file (re-read when its modification time changes; unreadable or empty ⇒ every API request is
  /// refused) or else from `apiBearerToken`; both empty ⇒ the API is open.
  std::string apiBearerTokenFile;
  std::string apiBearerToken;
  /// /healthz fails when the event loop's last heartbeat() is older than this.
  std::chrono::milliseconds heartbeatTimeout{30'000};
  size_t threads = 4;
  std::chrono::seconds readTimeout{10};
  std::chrono::seconds writeTimeout{10};
};

/// The daemon's HTTP endpoint (cpp-httplib): /metrics (text 0.0.4 from a MetricsSnapshot),
/// /healthz (event-loop heartbeat), /readyz (readiness callback), /api/v1/* (registered JSON GET
/// routes, optional bearer token; unknown paths 404 JSON), optional TLS. Serves on its own
/// threads; heartbeat() may be called from any thread. Configure (routes, readiness) before
/// start(); start() and stop() from one owner thread.
class HttpServer {
 public:
  /// `metrics` and `clock` must outlive the server.
  HttpServer(HttpServerOptions options, MetricsSnapshot& metrics, const Clock& clock);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Exact route: `addApiRoute("incidents", h)` serves GET /api/v1/incidents. A path ending in
  /// '/' is a prefix route: `addApiRoute("workloads/", h)` serves /api/v1/workloads/<rest>.
  /// Exact routes win over prefixes; the longest prefix wins among prefixes.
  void addApiRoute(std::string path, ApiHandler handler);
  void setReadinessCheck(ReadinessCheck check);

  /// Binds and starts serving in the background; returns once connections are accepted. Errors:
  /// unparsable address, TLS files that do not load, unreadable token file, bind failure.
  Status start();
  /// Stops accepting, finishes in-flight requests, joins the threads. Idempotent.
  void stop();
  bool running() const;

  /// The bound port (the OS's pick when the address said 0); 0 before start().
  uint16_t port() const { return port_.load(); }
  /// `http://127.0.0.1:<port>` or `https://...`, with [] around IPv6 hosts; a wildcard host
  /// (0.0.0.0, ::) becomes the matching loopback address, for local clients and tests.
  std::string baseUrl() const;

  /// The event loop calls this on every turn (or from a periodic timer shorter than
  /// heartbeatTimeout). Lock-free.
  void heartbeat();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<uint16_t> port_{0};
};

}  // namespace firstwork::http
