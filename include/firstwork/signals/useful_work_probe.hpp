#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/log/throttle.hpp"
#include "firstwork/signals/promql.hpp"

namespace firstwork::metrics {
class SelfMetrics;
}

namespace firstwork::signals {

/// Settings of the probe (from config usefulWork.prometheus).
struct ProbeOptions {
  std::string url;    // Prometheus base URL; a path prefix is kept
  std::string query;  // one query for all pods (see PrometheusProbeConfig)
  std::string namespaceLabel = "namespace";
  std::string podLabel = "pod";
  std::string clusterLabel;  // see ExtractOptions::clusterLabel
  bool valueIsTimestamp = false;
  std::chrono::milliseconds interval{15'000};
  std::chrono::milliseconds timeout{10'000};  // whole request, connect included
  std::string bearerTokenFile;                // re-read on every poll
  std::string caFile;                         // PEM bundle; empty = system CAs
  /// A reported pod absent from the results this long is forgotten (bounded memory). A pod seen
  /// again after that is reported again; consumers keep the first signal per pod.
  std::chrono::milliseconds forgetAfter{std::chrono::hours(1)};
  size_t maxResponseBytes = 64u << 20;  // a larger body is refused, not buffered without bound
};

/// What one poll did. `result` is the firstwork_useful_work_queries_total label:
/// ok, transport_error (connect, TLS, timeout), http_error (non-200), parse_error, bad_token
/// (token file unreadable or empty: no request is sent), aborted (stop() during the request).
struct PollOutcome {
  std::string result;
  std::string error;  // empty when ok; already scrubbed of credentials
  size_t series = 0;
  size_t newSignals = 0;
};

/// Cumulative counts, for tests and /readyz-style diagnostics.
struct ProbeStats {
  uint64_t polls = 0;
  uint64_t failures = 0;
  uint64_t signals = 0;
  size_t trackedPods = 0;
  std::string lastError;
};

/// New signals from one poll (only pods not reported before).
using SignalCallback = std::function<void(std::vector<UsefulWorkSignal>)>;

/// The PromQL useful-work probe (design §4 signal 3): GETs `<url>/api/v1/query?query=...` with
/// libcurl (TLS verification always on, optional CA file and bearer token, bounded timeout, no
/// redirects), parses the result, and reports each pod's first useful work once. Errors are
/// counted (SelfMetrics) and logged at most once a minute; they are never fatal.
///
/// Threading: start() runs polls on the probe's own thread every `interval` and calls the
/// callback there — the integrator posts the signals to the event loop from it. Alternatively the
/// owner calls pollOnce() itself (it blocks for up to `timeout`, so not on the event loop).
/// forget() and stats() may be called from any thread.
class UsefulWorkProbe {
 public:
  /// `clock` (and `metrics` when given) must outlive the probe.
  UsefulWorkProbe(ProbeOptions options, const Clock& clock, SignalCallback callback,
                  metrics::SelfMetrics* metrics = nullptr);
  ~UsefulWorkProbe();
  UsefulWorkProbe(const UsefulWorkProbe&) = delete;
  UsefulWorkProbe& operator=(const UsefulWorkProbe&) = delete;

  /// One request, synchronously; calls the callback when there are new signals.
  PollOutcome pollOnce();
  /// Polls now and then every `interval`, on a background thread, until stop().
  void start();
  /// Interrupts an in-flight request and joins the thread. Idempotent.
  void stop();

  /// The pod was deleted: drop it from the reported set.
  void forget(const std::string& podNamespace, const std::string& podName);
  ProbeStats stats() const;
  /// The request URL (without credentials) — for logs and tests.
  std::string queryUrl() const;

 private:
  struct Fetch;
  PollOutcome record(PollOutcome outcome);

  ProbeOptions options_;
  const Clock& clock_;
  SignalCallback callback_;
  metrics::SelfMetrics* metrics_;

  std::mutex poll_mu_;  // one poll at a time (owns the curl handle)
  std::unique_ptr<Fetch> fetch_;

  mutable std::mutex mu_;
  // (namespace, pod, cluster label value) → last seen
  std::map<std::tuple<std::string, std::string, std::string>, MonotonicTime> reported_;
  ProbeStats stats_;
  bool failing_ = false;
  log::LogThrottle error_log_{std::chrono::minutes(1)};

  std::atomic<bool> stopping_{false};
  std::mutex wake_mu_;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace firstwork::signals
