#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace prometheus {
class Registry;
}

namespace firstwork::metrics {

/// The daemon's health metrics (design §6, watch health and process): watch state and traffic per
/// (cluster, resource), decode errors, tracked objects, clock skew, observation lag, build info,
/// insecure TLS connections, store errors and useful-work probe results. Series are created on
/// first use and a cluster's series are removed with removeCluster() (Family::Remove).
/// Thread-safe: the event loop writes in practice, but the PromQL poller and store threads may
/// too; scrapes read through the registry.
///
/// Families (all prefixed firstwork_):
///   watch_up{cluster,resource}                    gauge     1 while the watch is synced
///   watch_events_total{cluster,resource,type}     counter   ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
///   watch_restarts_total{cluster,resource,reason} counter   relists and reconnects, by cause
///   decode_errors_total{cluster,resource}         counter   objects skipped as malformed
///   tracked_objects{cluster,resource}             gauge     objects held in memory
///   cluster_clock_skew_seconds{cluster}           gauge     API server Date − local clock
///   observation_lag_seconds{cluster,resource}     histogram event time → observed (≥ 0)
///   build_info{version,revision}                  gauge     1
///   cluster_insecure_tls{cluster}                 gauge     1 when TLS verification is off
///   store_errors_total{operation}                 counter   failed store operations
///   useful_work_queries_total{result}             counter   PromQL probe requests by outcome
///   metrics_renderings_total{freshness}           counter   renderings of /metrics for scrapes
///   engine_steps_total{trigger}                   counter   engine steps by what ran them
///   engine_step_seconds{trigger}                  histogram the event loop's time in a step
class SelfMetrics {
 public:
  /// Registers the families in `registry`, which must outlive this object. `lagBuckets` are the
  /// observation-lag histogram bounds in seconds (config metrics.lagBuckets).
  SelfMetrics(prometheus::Registry& registry, std::vector<double> lagBuckets,
              std::string_view version, std::string_view revision);
  ~SelfMetrics();
  SelfMetrics(const SelfMetrics&) = delete;
  SelfMetrics& operator=(const SelfMetrics&) = delete;

  /// 0.1 s … 1 h; the same as config MetricsConfig::lagBuckets' default.
  static std::vector<double> defaultLagBuckets();

  void watchUp(std::string_view cluster, std::string_view resource, bool up);
  /// `type` is the watch event type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR).
  void watchEvent(std::string_view cluster, std::string_view resource, std::string_view type,
                  uint64_t count = 1);
  /// `reason` is a short fixed word chosen by the caller (expired, stream_closed, network,
  /// http_5xx, unauthorized, stalled, ...), never free text.
  void watchRestart(std::string_view cluster, std::string_view resource, std::string_view reason);
  void decodeError(std::string_view cluster, std::string_view resource, uint64_t count = 1);
  void trackedObjects(std::string_view cluster, std::string_view resource, double count);
  void clockSkew(std::string_view cluster, double seconds);
  /// Negative lags (the API server's clock ahead of ours) are recorded as 0 so the histogram's
  /// _sum stays monotonic; the skew itself is visible in cluster_clock_skew_seconds.
  void observationLag(std::string_view cluster, std::string_view resource, double seconds);
  void insecureTls(std::string_view cluster, bool insecure);
  /// `operation`: open, write, read, prune, ...
  void storeError(std::string_view operation);
  /// `result`: ok, http_error, transport_error, parse_error, bad_token.
  void usefulWorkQuery(std::string_view result);
  /// A rendering of /metrics made for a scrape: `freshness` is current, uncommitted or stale
  /// (http::MetricsSnapshot::Freshness). Thread-safe: fallback renderings count on HTTP threads.
  /// count 0 creates the series at 0.
  void metricsRendering(std::string_view freshness, uint64_t count = 1);
  /// An engine step the daemon ran: `trigger` is events (the pacer's flush), tick, scrape (a
  /// scrape found events waiting for their step) or stop. count 0 creates the series at 0 (the
  /// step-duration histogram's too).
  void engineStep(std::string_view trigger, uint64_t count = 1);
  /// How long the event loop spent in a step of `trigger` (engine_step_seconds).
  void engineStepSeconds(std::string_view trigger, double seconds);
  /// engine_step_seconds' bucket bounds: 1 ms to 10 s.
  static std::vector<double> stepBuckets();

  /// What the engine skipped or could not use, as its running total since the start (the
  /// engine counts; the counter follows the total, never down). `reason`: rejected (objects the
  /// capacity inventory refused as malformed), invalid_signal (unparsable firstwork.dev/*
  /// annotation values, once per pod and value), ignored (objects with nothing to track: no uid,
  /// a MultiKueueCluster of no configured worker, the deletion of an object never seen),
  /// unknown_cluster. total 0 creates the series at 0.
  void engineInputsSkipped(std::string_view reason, uint64_t total);
  /// Pods tracked on `cluster` that no Workload claims (engine::Snapshot::podsWithoutWorkload).
  void podsWithoutWorkload(std::string_view cluster, double count);

  /// Removes every series labelled with `cluster` (the cluster left the config or this shard).
  void removeCluster(std::string_view cluster);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace firstwork::metrics
