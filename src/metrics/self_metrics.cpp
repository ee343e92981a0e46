#include "firstwork/metrics/self_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/core/strings_less.hpp"

namespace firstwork::metrics {
namespace {

// Series of one family, keyed by label values in the family's label order, so that
// removeCluster can find and Family::Remove them (prometheus-cpp 1.0 cannot enumerate a family).
template <typename T>
struct Series {
  prometheus::Family<T>* family = nullptr;
  std::vector<std::string> labelNames;
  // Found by views of the values: every watch event counts itself here, and a vector of three
  // strings made for each lookup was 2 % of the loop's samples at 500 ev/s (bench/README.md,
  // change 103).
  std::map<std::vector<std::string>, T*, StringsLess> byValues;

  template <typename... Args>
  T& get(std::initializer_list<std::string_view> values, Args&&... args) {
    auto it = byValues.find(values);
    if (it != byValues.end()) return *it->second;
    prometheus::Labels labels;
    auto value = values.begin();
    for (size_t i = 0; i < labelNames.size() && value != values.end(); ++i, ++value)
      labels[labelNames[i]] = std::string(*value);
    T& metric = family->Add(labels, std::forward<Args>(args)...);
    byValues.emplace(std::vector<std::string>(values.begin(), values.end()), &metric);
    return metric;
  }

  // Removes the series whose label `index` equals `value`.
  void removeWhere(size_t index, std::string_view value) {
    for (auto it = byValues.begin(); it != byValues.end();) {
      if (it->first[index] == value) {
        family->Remove(it->second);
        it = byValues.erase(it);
      } else {
        ++it;
      }
    }
  }
};

}  // namespace

struct SelfMetrics::State {
  std::mutex mu;
  std::vector<double> lagBuckets;
  Series<prometheus::Gauge> watchUp;
  Series<prometheus::Counter> watchEvents;
  Series<prometheus::Counter> watchRestarts;
  Series<prometheus::Counter> decodeErrors;
  Series<prometheus::Gauge> trackedObjects;
  Series<prometheus::Gauge> clockSkew;
  Series<prometheus::Histogram> observationLag;
  Series<prometheus::Gauge> insecureTls;
  Series<prometheus::Counter> storeErrors;
  Series<prometheus::Counter> usefulWorkQueries;
  Series<prometheus::Counter> metricsRenderings;
  Series<prometheus::Counter> engineSteps;
  Series<prometheus::Histogram> engineStepSeconds;
  Series<prometheus::Counter> inputsSkipped;
  Series<prometheus::Gauge> podsWithoutWorkload;

  // Every family whose first label is `cluster`, for removeCluster.
  template <typename F>
  void forEachClusterFamily(F&& f) {
    f(watchUp);
    f(watchEvents);
    f(watchRestarts);
    f(decodeErrors);
    f(trackedObjects);
    f(clockSkew);
    f(observationLag);
    f(insecureTls);
    f(podsWithoutWorkload);
  }
};

SelfMetrics::SelfMetrics(prometheus::Registry& registry, std::vector<double> lagBuckets,
                         std::string_view version, std::string_view revision)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.lagBuckets = std::move(lagBuckets);
  s.watchUp = {&prometheus::BuildGauge()
                    .Name("firstwork_watch_up")
                    .Help("1 while the list+watch of a resource on a cluster is synced, else 0.")
                    .Register(registry),
               {"cluster", "resource"}, {}};
  s.watchEvents = {&prometheus::BuildCounter()
                        .Name("firstwork_watch_events_total")
                        .Help("Watch events received, by event type.")
                        .Register(registry),
                   {"cluster", "resource", "type"}, {}};
  s.watchRestarts = {&prometheus::BuildCounter()
                          .Name("firstwork_watch_restarts_total")
                          .Help("Watch reconnects and relists, by reason.")
                          .Register(registry),
                     {"cluster", "resource", "reason"}, {}};
  s.decodeErrors = {&prometheus::BuildCounter()
                         .Name("firstwork_decode_errors_total")
                         .Help("Objects skipped because they could not be decoded.")
                         .Register(registry),
                    {"cluster", "resource"}, {}};
  s.trackedObjects = {&prometheus::BuildGauge()
                           .Name("firstwork_tracked_objects")
                           .Help("Objects of a resource held in memory.")
                           .Register(registry),
                      {"cluster", "resource"}, {}};
  s.clockSkew = {&prometheus::BuildGauge()
                      .Name("firstwork_cluster_clock_skew_seconds")
                      .Help("API server Date header minus the local clock, in seconds.")
                      .Register(registry),
                 {"cluster"}, {}};
  s.observationLag = {&prometheus::BuildHistogram()
                           .Name("firstwork_observation_lag_seconds")
                           .Help("Time from an object's event time to when the daemon observed "
                                 "it, in seconds (negative lags count as 0).")
                           .Register(registry),
                      {"cluster", "resource"}, {}};
  s.insecureTls = {&prometheus::BuildGauge()
                        .Name("firstwork_cluster_insecure_tls")
                        .Help("1 when the connection to a cluster skips TLS verification "
                              "(insecureSkipTLSVerifyAllowed).")
                        .Register(registry),
                   {"cluster"}, {}};
  s.storeErrors = {&prometheus::BuildCounter()
                        .Name("firstwork_store_errors_total")
                        .Help("Failed store operations, by operation.")
                        .Register(registry),
                   {"operation"}, {}};
  s.usefulWorkQueries = {&prometheus::BuildCounter()
                              .Name("firstwork_useful_work_queries_total")
                              .Help("PromQL useful-work probe requests, by result.")
                              .Register(registry),
                         {"result"}, {}};
  s.metricsRenderings = {&prometheus::BuildCounter()
                              .Name("firstwork_metrics_renderings_total")
                              .Help("Renderings of /metrics made for scrapes, by how current their "
                                    "figures were.")
                              .Register(registry),
                         {"freshness"}, {}};
  s.engineSteps = {&prometheus::BuildCounter()
                        .Name("firstwork_engine_steps_total")
                        .Help("Engine steps (advance, store commit, export), by what ran them.")
                        .Register(registry),
                   {"trigger"},
                   {}};
  s.engineStepSeconds = {&prometheus::BuildHistogram()
                              .Name("firstwork_engine_step_seconds")
                              .Help("Time the event loop spent in an engine step (advance, the "
                                    "store commit handed over, export), by what ran it.")
                              .Register(registry),
                         {"trigger"},
                         {}};
  s.inputsSkipped = {&prometheus::BuildCounter()
                          .Name("firstwork_engine_inputs_skipped_total")
                          .Help("Objects and values the engine skipped or could not use, by "
                                "reason.")
                          .Register(registry),
                     {"reason"},
                     {}};
  s.podsWithoutWorkload = {&prometheus::BuildGauge()
                                .Name("firstwork_pods_without_workload")
                                .Help("Pods tracked that no Workload claims: other controllers' "
                                      "pods, and pods seen before their Workload.")
                                .Register(registry),
                           {"cluster"},
                           {}};
  auto& build = prometheus::BuildGauge()
                    .Name("firstwork_build_info")
                    .Help("Version and git revision of the running firstworkd; always 1.")
                    .Register(registry);
  build.Add({{"version", std::string(version)}, {"revision", std::string(revision)}}).Set(1);
}

SelfMetrics::~SelfMetrics() = default;

std::vector<double> SelfMetrics::defaultLagBuckets() {
  return {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600};
}

void SelfMetrics::watchUp(std::string_view cluster, std::string_view resource, bool up) {
  std::lock_guard lock(state_->mu);
  state_->watchUp.get({cluster, resource}).Set(up ? 1 : 0);
}

void SelfMetrics::watchEvent(std::string_view cluster, std::string_view resource,
                             std::string_view type, uint64_t count) {
  std::lock_guard lock(state_->mu);
  state_->watchEvents.get({cluster, resource, type}).Increment(static_cast<double>(count));
}

void SelfMetrics::watchRestart(std::string_view cluster, std::string_view resource,
                               std::string_view reason) {
  std::lock_guard lock(state_->mu);
  state_->watchRestarts.get({cluster, resource, reason}).Increment();
}

void SelfMetrics::decodeError(std::string_view cluster, std::string_view resource,
                              uint64_t count) {
  std::lock_guard lock(state_->mu);
  state_->decodeErrors.get({cluster, resource}).Increment(static_cast<double>(count));
}

void SelfMetrics::trackedObjects(std::string_view cluster, std::string_view resource,
                                 double count) {
  std::lock_guard lock(state_->mu);
  state_->trackedObjects.get({cluster, resource}).Set(count);
}

void SelfMetrics::clockSkew(std::string_view cluster, double seconds) {
  std::lock_guard lock(state_->mu);
  state_->clockSkew.get({cluster}).Set(seconds);
}

void SelfMetrics::observationLag(std::string_view cluster, std::string_view resource,
                                 double seconds) {
  std::lock_guard lock(state_->mu);
  state_->observationLag.get({cluster, resource}, state_->lagBuckets)
      .Observe(std::max(0.0, seconds));
}

void SelfMetrics::insecureTls(std::string_view cluster, bool insecure) {
  std::lock_guard lock(state_->mu);
  state_->insecureTls.get({cluster}).Set(insecure ? 1 : 0);
}

void SelfMetrics::storeError(std::string_view operation) {
  std::lock_guard lock(state_->mu);
  state_->storeErrors.get({operation}).Increment();
}

void SelfMetrics::usefulWorkQuery(std::string_view result) {
  std::lock_guard lock(state_->mu);
  state_->usefulWorkQueries.get({result}).Increment();
}

void SelfMetrics::metricsRendering(std::string_view freshness, uint64_t count) {
  std::lock_guard lock(state_->mu);
  state_->metricsRenderings.get({freshness}).Increment(static_cast<double>(count));
}

void SelfMetrics::engineStep(std::string_view trigger, uint64_t count) {
  std::lock_guard lock(state_->mu);
  state_->engineSteps.get({trigger}).Increment(static_cast<double>(count));
  if (count == 0) state_->engineStepSeconds.get({trigger}, stepBuckets());
}

std::vector<double> SelfMetrics::stepBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

void SelfMetrics::engineStepSeconds(std::string_view trigger, double seconds) {
  std::lock_guard lock(state_->mu);
  state_->engineStepSeconds.get({trigger}, stepBuckets()).Observe(std::max(0.0, seconds));
}

void SelfMetrics::engineInputsSkipped(std::string_view reason, uint64_t total) {
  std::lock_guard lock(state_->mu);
  auto& counter = state_->inputsSkipped.get({reason});
  const double increase = static_cast<double>(total) - counter.Value();
  if (increase > 0) counter.Increment(increase);
}

void SelfMetrics::podsWithoutWorkload(std::string_view cluster, double count) {
  std::lock_guard lock(state_->mu);
  state_->podsWithoutWorkload.get({cluster}).Set(count);
}

void SelfMetrics::removeCluster(std::string_view cluster) {
  std::lock_guard lock(state_->mu);
  state_->forEachClusterFamily([&](auto& series) { series.removeWhere(0, cluster); });
}

}  // namespace firstwork::metrics
