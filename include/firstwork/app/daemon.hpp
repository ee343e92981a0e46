#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "firstwork/config/config.hpp"
#include "firstwork/core/clock.hpp"
#include "firstwork/core/result.hpp"
#include "firstwork/kube/kubeconfig.hpp"

namespace firstwork::log {
class Logger;
}
namespace firstwork::metrics {
class SelfMetrics;
}

namespace firstwork::app {

struct DaemonOptions {
  config::Config config;
  /// The clock for everything time-related (the demo passes a ScaledClock); null = real time.
  const Clock* clock = nullptr;
  /// Connection settings per cluster name, used instead of the cluster's kubeconfig/inCluster
  /// (the demo and tests point clusters at in-process API servers this way).
  std::map<std::string, kube::RestConfig> restConfigs;
  /// How often time-driven logic runs and gauges refresh (real time).
  std::chrono::milliseconds tickInterval{1000};
  /// Overrides the watch timing of every reflector (tests and the demo use short values).
  std::optional<std::chrono::milliseconds> stallTimeout;
  std::optional<std::chrono::seconds> minWatchTimeout;
  /// Overrides the transports' read coalescing interval (kube::TransportOptions::readCoalesce;
  /// tests use a long one to hold a stream's events back).
  std::optional<std::chrono::milliseconds> readCoalesce;
  /// Under a stream of events, engine steps are spaced by at least this (StepPacer; tests use
  /// other values to tell the pacer's steps from others). The tick's interval by default: the
  /// tick steps once a second, so events wait for it (a second at most) and the pacer's flush
  /// runs only when the tick falls behind or many events wait (busyStepEvents). Nothing reads the
  /// engine's figures between steps but a scrape, which steps what waits first; the store's records
  /// are a second behind at most, and fewer steps write their pages fewer times (bench/README.md,
  /// change 110).
  std::chrono::milliseconds stepInterval{1000};
  /// Once this many events wait for a step, steps are spaced by busyStepInterval instead: under
  /// a flood a step (and a scrape's step, which the scrape waits for) takes what a quarter of a
  /// second brings, not what a second does. 0: never.
  size_t busyStepEvents = 2500;
  std::chrono::milliseconds busyStepInterval{250};
  /// Records a step sends to the store while the engine still advances, once this many are
  /// pending (and as often as the batch out is back): a large step's records go in batches, not
  /// all at its end (tests use small values).
  size_t commitEvery = 16384;
};

/// The composition root (design §1): one event-loop thread owns the reflectors of every cluster
/// (curl multi on Boost.Asio), the milestone engine, the store writes and the metric updates;
/// it decides what is written and in which order, and a store thread carries each batch out on
/// a connection of its own (store::StoreThread), so the loop reads watches while a commit waits
/// for the disk. HTTP threads serve /metrics from a snapshot and /api/v1 by asking the loop.
/// start() and stop() from one owner thread.
class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  /// Opens the store, connects to every cluster, binds the HTTP listener and starts the event
  /// loop thread. Every problem is returned (one per line) and nothing is left running.
  Status start();
  /// Stops watches, flushes pending records to the store, stops HTTP, joins the loop.
  void stop();
  /// Blocks until SIGINT/SIGTERM (installed by this call) or stop() from another thread.
  void waitForShutdownSignal();

  /// The bound HTTP port and base URL (after start()).
  uint16_t httpPort() const;
  std::string baseUrl() const;
  /// True once every watch finished its first list (what /readyz reports).
  bool ready() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// What the daemon does when a checkpoint of its store's WAL fails (the store thread's
/// store::SqliteOptions::checkpointFailed; any thread): counts
/// firstwork_store_errors_total{operation="checkpoint"} and logs an error at most once a minute,
/// saying how many failures it left out since the last line. The references must outlive it.
std::function<void(const std::string&)> checkpointFailureReporter(metrics::SelfMetrics& self,
                                                                  const log::Logger& log,
                                                                  const Clock& clock);

}  // namespace firstwork::app
