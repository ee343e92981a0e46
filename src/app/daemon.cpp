#include "firstwork/app/daemon.hpp"

#include <fmt/format.h>
#include <prometheus/registry.h>
#include <signal.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "firstwork/app/api.hpp"
#include "firstwork/config/cli.hpp"
#include "firstwork/core/heap.hpp"
#include "firstwork/engine/milestone_engine.hpp"
#include "firstwork/http/http_server.hpp"
#include "firstwork/http/metrics_snapshot.hpp"
#include "firstwork/kube/kube_client.hpp"
#include "firstwork/kube/kubeconfig.hpp"
#include "firstwork/kube/list_decoder.hpp"
#include "firstwork/log/log.hpp"
#include "firstwork/log/redact.hpp"
#include "firstwork/log/throttle.hpp"
#include "firstwork/app/engine_metrics.hpp"
#include "firstwork/app/step_pacer.hpp"
#include "firstwork/core/thread_name.hpp"
#include "firstwork/metrics/process_metrics.hpp"
#include "firstwork/metrics/self_metrics.hpp"
#include "firstwork/records/records.hpp"
#include "firstwork/signals/useful_work_probe.hpp"
#include "firstwork/store/store.hpp"
#include "firstwork/store/store_thread.hpp"
#include "detail/daemon_config.hpp"

namespace firstwork::app {
namespace {

using records::PendingRecord;

using namespace std::chrono_literals;
namespace asio = boost::asio;

const RealClock kRealClock;

engine::ClusterRole engineRole(config::ClusterRole r) {
  switch (r) {
    case config::ClusterRole::Management:
      return engine::ClusterRole::Management;
    case config::ClusterRole::Worker:
      return engine::ClusterRole::Worker;
    case config::ClusterRole::Standalone:
      break;
  }
  return engine::ClusterRole::Standalone;
}

/// What ran an engine step (firstwork_engine_steps_total{trigger}): events waiting for the pacer,
/// the tick, a scrape that found events waiting, the daemon stopping. kStepTriggers names each.
enum class StepTrigger { Events, Tick, Scrape, Stop };
constexpr std::string_view kStepTriggers[] = {"events", "tick", "scrape", "stop"};
static_assert(std::size(kStepTriggers) == static_cast<size_t>(StepTrigger::Stop) + 1,
              "a name for every step trigger");

/// The engine's counts of what it skipped, by firstwork_engine_inputs_skipped_total's reason.
struct SkipReason {
  std::string_view name;
  uint64_t engine::EngineStats::*total;
};
constexpr SkipReason kSkipReasons[] = {
    {"rejected", &engine::EngineStats::rejectedInventoryObjects},
    {"invalid_signal", &engine::EngineStats::invalidSignals},
    {"ignored", &engine::EngineStats::ignoredObjects},
    {"unknown_cluster", &engine::EngineStats::unknownCluster},
};

/// What each role watches (design §2).
std::vector<model::Kind> watchedKinds(config::ClusterRole role) {
  using K = model::Kind;
  if (role == config::ClusterRole::Management)
    return {K::Workload, K::MultiKueueCluster, K::ClusterQueue, K::AdmissionCheck,
            K::MultiKueueConfig};
  return {K::Workload, K::Pod, K::ResourceClaim, K::ResourceSlice, K::Node};
}

}  // namespace

namespace detail {

engine::EngineConfig engineConfig(const config::Config& c) {
  engine::EngineConfig e;
  for (const auto& cl : c.clusters)
    e.clusters.push_back({cl.name, engineRole(cl.role), cl.multiKueueClusterName});
  e.usefulWork.annotation = c.usefulWork.annotation;
  e.usefulWork.podConditionType = c.usefulWork.podConditionType;
  e.usefulWork.readyProxy = c.usefulWork.readyProxy;
  e.usefulWork.external = true;
  e.recoveryBudget = std::chrono::duration_cast<std::chrono::seconds>(c.recovery.budget);
  e.reclaimBudget = std::chrono::duration_cast<std::chrono::seconds>(c.recovery.reclaimBudget);
  e.stuckAfter = std::chrono::duration_cast<std::chrono::seconds>(c.recovery.stuckAfter);
  // The inventory's defaults (whole GPUs, shared GPUs, MIG profiles) stay; configured extended
  // resources are added to them.
  for (const auto& r : c.gpu.extendedResources) {
    auto& v = e.inventory.extendedResources;
    if (std::find(v.begin(), v.end(), r) == v.end()) v.push_back(r);
  }
  e.inventory.profileAttribute = c.gpu.profileAttribute;
  for (const auto& m : c.gpu.deviceClassMappings)
    e.inventory.deviceClasses.push_back({m.deviceClass, m.driver, {}});
  return e;
}

model::DecodeOptions decodeOptions(const config::Config& c) {
  model::DecodeOptions o;
  o.deviceAttributes = inventory::deviceAttributesRead(engineConfig(c).inventory);
  return o;
}

}  // namespace detail

struct Daemon::Impl : kube::KubeObserver, kube::EventSink {
  explicit Impl(DaemonOptions o)
      : options(std::move(o)),
        clock(options.clock ? *options.clock : kRealClock),
        registry(std::make_shared<prometheus::Registry>()),
        self(*registry, options.config.metrics.lagBuckets, config::buildVersion(),
             config::buildRevision()),
        engineMetrics(*registry, options.config.metrics.buckets),
        // A rendering is shared by scrapes within 25 ms, or four times what it cost to render
        // if that is longer: back-to-back scrapes keep the loop rendering at most a fifth of the
        // time at any estate size, and counters are not served older than they must be (a
        // fixed 100 ms was most of the event-to-metric latency in bench/README.md, change 25).
        collectables({registry.get(), &process}),
        snapshot(collectables, kRealClock,
                 {.freshness = 25ms, .waitForLoop = 500ms, .renderCostMultiple = 4, .answerBetweenEventsAfter = 50ms}),
        engine(detail::engineConfig(options.config)),
        redactor(*log::currentRedactor()),  // the salt log::configure() read (inline or file)
        log("daemon") {}

  struct Cluster {
    config::ClusterConfig config;
    std::unique_ptr<kube::KubeClient> client;
    bool monitorConnected = true;   // until the connection monitor says otherwise
    bool reportedConnected = false; // what the engine was told last
    /// When the daemon regained the cluster (first answer after an outage): the event time of
    /// the reconnection, reported once every watch has re-listed.
    std::optional<SystemTime> regainedAt;
    std::set<std::string> watchesUp;
    bool watchesCurrent = true;     // what the engine was told last (onWatchesCurrent)
  };

  // --- KubeObserver ----------------------------------------------------------------------
  // firstwork_watch_events_total counts what came over the watch, bookmarks and ERRORs included;
  // objects from LIST pages are not watch events.
  void onWatchEvent(std::string_view cluster, std::string_view resource,
                    model::EventType type) override {
    self.watchEvent(cluster, resource, kube::watchEventTypeName(type));
  }
  void onRestart(std::string_view cluster, std::string_view resource,
                 kube::RestartReason reason) override {
    self.watchRestart(cluster, resource, kube::restartReasonName(reason));
  }
  void onDecodeError(std::string_view cluster, std::string_view resource) override {
    self.decodeError(cluster, resource);
  }
  void onWatchUp(std::string_view cluster, std::string_view resource, bool up) override {
    self.watchUp(cluster, resource, up);
    if (auto* c = find(cluster)) {
      if (up)
        c->watchesUp.insert(std::string(resource));
      else
        c->watchesUp.erase(std::string(resource));
      updateConnection(*c, clock.systemNow(), clock.systemNow());
    }
  }
  void onTrackedObjects(std::string_view cluster, std::string_view resource,
                        size_t count) override {
    self.trackedObjects(cluster, resource, static_cast<double>(count));
  }
  void onClockSkew(std::string_view cluster, double seconds) override {
    self.clockSkew(cluster, seconds);
  }
  void onConnection(std::string_view cluster, const kube::ConnectionEvent& e) override {
    auto* c = find(cluster);
    if (!c) return;
    c->monitorConnected = e.connected;
    if (!e.connected) c->regainedAt.reset();
    if (!e.connected && c->reportedConnected) {
      // The outage began at the last contact, not when the failure was noticed.
      c->reportedConnected = false;
      engine.onConnection(c->config.name, false, e.lastContact, e.at);
      log.warn("lost connection to cluster",
               {{"cluster", c->config.name}, {"detail", e.detail}});
      scheduleFlush();
    } else if (e.connected) {
      if (!c->regainedAt) c->regainedAt = e.at;
      updateConnection(*c, e.at, e.at);
    }
  }

  // --- EventSink -------------------------------------------------------------------------
  using kube::KubeObserver::onEvent;  // the observer's per-event hook stays the default no-op
  void onEvent(const kube::ObjectEvent& e) override {
    if (e.finalStateUnknown) {
      engine.onDeletedUnknown(e.cluster, e.kind, model::metaOf(*e.object).uid, e.nameHash,
                              e.observedAt);
    } else {
      engine.onObject(e.cluster, e.type, e.object, e.observedAt);  // shared, not copied
    }
    ++eventsWaiting;
    scheduleFlush();
    // A read of a busy stream delivers up to a thousand events in one handler, and a round of
    // them held a scrape's posted refresh for up to half a second at the full estate: a scrape
    // that has waited 50 ms for the loop is answered here, between two events (no batch of
    // gauges is half applied), at the cost of one atomic load per event when none waits.
    snapshot.refreshIfWanted();
  }
  void onSynced(std::string_view cluster, model::Kind kind) override {
    log.info("initial list done",
             {{"cluster", std::string(cluster)}, {"resource", model::kindInfo(kind).resource}});
    if (auto* c = find(cluster)) updateConnection(*c, clock.systemNow(), clock.systemNow());
    updateReadiness();
    scheduleFlush();
  }

  Cluster* find(std::string_view name) {
    for (auto& c : clusters)
      if (c.config.name == name) return &c;
    return nullptr;
  }

  /// The engine hears "connected" once the daemon can reach the cluster and every watch of it
  /// has (re)listed, so objects that arrive late are not judged before they arrive; and, while
  /// the cluster stays reachable, whether its watches are all streaming (a relist after 410 or
  /// retries after 429 leave its objects behind).
  void updateConnection(Cluster& c, SystemTime eventTime, SystemTime observedAt) {
    if (!c.client) return;
    bool current = true;
    for (const auto& r : c.client->reflectors()) {
      if (r->unavailable()) continue;
      if (!r->synced() || !c.watchesUp.count(std::string(r->resource()))) current = false;
    }
    if (current != c.watchesCurrent) {
      c.watchesCurrent = current;
      engine.onWatchesCurrent(c.config.name, current);
      scheduleFlush();
    }
    if (c.reportedConnected || !c.monitorConnected || !current) return;
    c.reportedConnected = true;
    engine.onConnection(c.config.name, true, c.regainedAt.value_or(eventTime), observedAt);
    c.regainedAt.reset();
    scheduleFlush();
  }

  /// Refreshes /readyz's answer; notes when every watched resource has just completed its LIST
  /// (the first sync, or relists) after some had not.
  void updateReadiness() {
    std::vector<std::string> notReady;
    for (const auto& c : clusters)
      for (const auto& r : c.client->reflectors())
        if (!r->settled())
          notReady.push_back(fmt::format("cluster {}: {} {}", c.config.name, r->resource(),
                                         kube::reflectorStateName(r->state())));
    std::lock_guard lock(readyMu);
    if (notReady.empty() && !notReadyLines.empty()) listsCompleted = true;
    notReadyLines = std::move(notReady);
  }

  /// Whether a watched resource is in its first LIST right now.
  bool initialListInProgress() const {
    for (const auto& c : clusters) {
      if (!c.client) continue;
      for (const auto& r : c.client->reflectors())
        if (!r->synced() && r->state() == kube::ReflectorState::Listing) return true;
    }
    return false;
  }

  /// Steps wait while a first LIST is in progress, for at most 30 s from the start
  /// (StepPacer::holdForInitialLists): the list that completes last asks for the step
  /// (onSynced), and past the hold the tick steps. Relists hold nothing.
  bool stepsHeld() {
    const auto now = std::chrono::steady_clock::now();
    return pacer.holdPossible(now) && pacer.holdForInitialLists(now, initialListInProgress());
  }

  /// Steps are coalesced to at most one per step interval (StepPacer; the tick's, a second, by
  /// default): at 50 ms the store's commits were still a fifth of the steady-state CPU at 500
  /// events/s, and each wrote ~9 KB of WAL and checkpoint pages per event (bench/README.md,
  /// change 24); at 250 ms, 5 KB (change 110). A scrape steps what waits before it renders, so
  /// /metrics is never behind the events taken; the store's records are, by a step at most.
  /// Once busyStepEvents events wait, the spacing is the busy interval (250 ms), and a flush
  /// scheduled for the whole interval is brought forward: a flood's steps stay as small as they
  /// were, and a scrape during one waits for a quarter of a second's events, not a second's.
  /// Any step takes every event waiting for the flush (the tick's, a scrape's): it ends the wait
  /// (cancelPendingFlush), and events after it schedule a flush of their own, spaced from it.
  void scheduleFlush() {
    const bool busy = pacer.busy(eventsWaiting);
    if (flushScheduled && (flushBusy || !busy)) return;
    if (stepsHeld()) return;
    cancelPendingFlush();  // one for the whole interval, now that many events wait
    flushScheduled = true;
    flushBusy = busy;
    const uint64_t gen = ++flushGen;
    // Real time, not the Clock seam: the pacing is about CPU spent, and the demo's clock runs
    // scaled.
    const auto wait = pacer.delay(std::chrono::steady_clock::now(), eventsWaiting);
    if (wait <= std::chrono::nanoseconds::zero() || !flushTimer) {
      asio::post(io, [this, gen] {
        if (gen != flushGen) return;  // a step since took its events
        flushScheduled = false;
        step(StepTrigger::Events);
      });
      return;
    }
    flushTimer->expires_after(wait);
    flushTimer->async_wait([this, gen](const boost::system::error_code& ec) {
      // Cancelled, or expired with its handler queued before a step took its events.
      if (ec || stopping || gen != flushGen) return;
      flushScheduled = false;
      step(StepTrigger::Events);
    });
  }

  /// The flush waiting for the pacer is not needed once a step runs: a scrape's step under a
  /// stream left it in place, and a scraped stream stepped five times a second, not four
  /// (bench/README.md, change 108).
  void cancelPendingFlush() {
    if (!flushScheduled) return;
    flushScheduled = false;
    ++flushGen;  // a handler already queued (posted, or its timer expired) does nothing
    if (flushTimer) flushTimer->cancel();
  }

  /// One engine step: advance, write what it produced, export what the store accepted as new.
  void step(StepTrigger trigger) {
    const auto began = std::chrono::steady_clock::now();
    const bool tick = trigger == StepTrigger::Tick;
    cancelPendingFlush();
    inStep = true;
    struct Done {
      bool& flag;
      ~Done() { flag = false; }
    } done{inStep};
    ++stepSeq;
    eventsWaiting = 0;
    self.engineStep(kStepTriggers[static_cast<size_t>(trigger)]);
    pacer.stepped(std::chrono::steady_clock::now());
    auto now = clock.systemNow();
    inAdvance = true;
    engine.advance(now, [this](engine::Outputs&& part) { takeOutputs(std::move(part)); });
    inAdvance = false;
    snapshot.refreshIfWanted();  // a step under a flood takes tens of ms: answer between its halves
    // GPU-seconds by state become durable once a minute (and at shutdown) for the report.
    std::optional<engine::Snapshot> snap;
    if (tick || stopping) {
      snap = engine.snapshot();
      if (gpuSeconds) {
        if (auto rec = gpuSeconds->onSnapshot(*snap, now, stopping)) {
          PendingRecord p;
          p.record = std::move(*rec);
          pending.push_back(std::move(p));
        }
      }
    }
    commitPending();
    if (tick) {
      applyMetrics(*snap);
      updateReadiness();
      pruneIfDue(now);
      releaseMemoryIfDue();
    }
    // Before the scrape that may be answered now renders: it shows its own step.
    self.engineStepSeconds(
        kStepTriggers[static_cast<size_t>(trigger)],
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
    answerWaitingScrape();  // a step without records is committed at once
  }

  /// A part of a step's outputs (the engine hands them over as it settles): their records join
  /// `pending`. A full part's records (a large step's: the engine hands a part over when it
  /// holds kOutputsPerPart outputs) are made in the arena for short-lived blocks: they live until
  /// their commit returns, and made among the engine's own blocks they left its slabs a third
  /// used once freed (bench/README.md, change 90). A smaller part (a step of the steady state,
  /// or the rest of a large one) leaves too few blocks to matter, and the scope in every step
  /// (two flushes of the thread's cache, an arena the last commit emptied) went with a slower
  /// event-to-metric p99 under a stream (change 92). The part's own strings go here, before the
  /// engine makes the next part, so that what it makes fills their places.
  void takeOutputs(engine::Outputs&& out) {
    const bool large = out.size() >= engine::MilestoneEngine::kOutputsPerPart;
    for (const auto& o : out.observations)
      if (o.histogram == engine::HistogramKind::ObservationLag)
        self.observationLag(o.cluster, o.resource, o.seconds);
    std::erase_if(out.observations, [](const engine::Observation& o) {
      return o.histogram == engine::HistogramKind::ObservationLag;
    });
    if (out.empty()) return;
    std::optional<TransientHeapScope> heap;
    if (large) heap.emplace();
    // The outputs are consumed as their records are made: not both held whole at the peak.
    auto recs = records::toRecords(std::move(out), redactor);
    if (pending.empty()) {
      pending = std::move(recs);  // the usual case: nothing left from a failed commit
    } else {
      pending.insert(pending.end(), std::make_move_iterator(recs.begin()),
                     std::make_move_iterator(recs.end()));
    }
    heap.reset();
    // A large step's records go to the store while the step goes on, a batch at a time: held
    // until its end, the first step after a sync held all of them at once (264 MB at the full
    // estate, most of the sync's peak; bench/README.md, change 93). The batch out is taken back
    // here when it is done (commitReturned sends what is pending then), since the loop does not
    // run its handler until the step ends. A failing store is not asked again within the step.
    if (inAdvance && !storeFailing && pending.size() >= options.commitEvery) {
      if (!inFlight) {
        commitPending();
      } else if (inFlight->done.load(std::memory_order_acquire)) {
        commitReturned();
      }
    }
  }

  /// The engine's gauges and live integrals, as of its last step.
  void applyMetrics(const engine::Snapshot& snap) {
    // Without the per-pool detail: nothing exported reads it (/api/v1/pools asks for it on
    // demand), and it was half the inventory's cost here (bench/README.md, change 16).
    const auto inventory = engine.inventory().snapshot(/*withPools=*/false);
    engineMetrics.apply(snap, inventory, clock.monotonicNow());
    for (const auto& r : kSkipReasons) self.engineInputsSkipped(r.name, snap.stats.*r.total);
    for (const auto& p : snap.podsWithoutWorkload)
      self.podsWithoutWorkload(p.cluster, static_cast<double>(p.count));
    warnUnclassified(inventory);
  }

  /// Reads what waits on every cluster's held-back streams (kube::KubeTransport::readHeldStreams),
  /// before a scrape's step. In a handler of its own: never inside a transport's callback.
  void readHeldStreams() {
    if (stopping) return;
    for (auto& c : clusters)
      if (c.client) c.client->transport().readHeldStreams();
  }

  /// Runs on the loop before it renders /metrics for the waiting scrape `request`
  /// (MetricsSnapshot::setBeforeLoopRendering); true: render now. The pacer spaces steps under a
  /// stream (up to a second) and the tick applies the gauges once a second, so a scrape used to
  /// read figures up to a second behind the events the daemon had taken (bench/README.md, changes
  /// 48–49). Here the events waiting for their step are stepped now; the rendering waits until
  /// the store has committed what that step derived (its observations are exported then, design
  /// §7), and the gauges are applied as of that step: the scrape reads one consistent step.
  /// A step and an application per scrape that finds work waiting, which Prometheus' interval
  /// makes rare; renderings are shared for at least 25 ms, which bounds them under a scraper in a
  /// loop. The wait for the commit is bounded (kScrapeCommitWait, from the loop's first look at
  /// the request): under a flood a step's commit holds thousands of records, and a slow disk's
  /// fsync can take long; past the bound the scrape gets the gauges and the observations
  /// committed so far. A store that fails is not waited for, nor is anything while the first
  /// lists hold the steps. Inside a step (a step answers a waiting scrape between its halves) the
  /// step is not run again: the scrape waits for that step's records.
  /// Returns how current the rendering is (firstwork_metrics_renderings_total), or nothing to
  /// wait: stale while the lists hold the steps or the daemon stops, uncommitted past the bound.
  std::optional<http::MetricsSnapshot::Freshness> beforeScrapeRendering(uint64_t request) {
    using Freshness = http::MetricsSnapshot::Freshness;
    if (stopping || stepsHeld()) return Freshness::Stale;
    if (inScrapeHook) return std::nullopt;  // the step run below answers between its halves: decided here
    inScrapeHook = true;
    struct Done {
      bool& flag;
      ~Done() { flag = false; }
    } done{inScrapeHook};
    const auto now = std::chrono::steady_clock::now();
    if (!scrapeAwaits || scrapeAwaits->request != request) {
      if (!inStep && flushScheduled) step(StepTrigger::Scrape);  // the pending flush is cancelled
      scrapeAwaits = ScrapeWait{request, stepSeq, now, false};
    }
    // Under a flood the store's answer is a posted handler behind rounds of reads; this hook runs
    // between two events (MetricsSnapshot::refreshIfWanted), so it takes the answer here.
    if (!inStep && inFlight && inFlight->done.load(std::memory_order_acquire)) commitReturned();
    const bool committed = committedSeq >= scrapeAwaits->step;
    const auto waited = now - scrapeAwaits->since;
    if (!committed && !storeFailing && waited < kScrapeCommitWait) {
      // When no event comes to ask again before the bound. Armed once a scrape: under a flood
      // every event asks again, and re-arming for the same deadline cost a few µs each (a
      // timerfd_settime and the replaced wait's handler), thousands of times a scrape.
      if (scrapeTimer && !scrapeAwaits->timerArmed) {
        scrapeAwaits->timerArmed = true;
        scrapeTimer->expires_at(scrapeAwaits->since + kScrapeCommitWait);
        scrapeTimer->async_wait([this](const boost::system::error_code& ec) {
          if (!ec && !stopping) snapshot.refreshIfWanted(/*always=*/true);
        });
      }
      return std::nullopt;  // answerWaitingScrape asks again once the commit is back
    }
    scrapeAwaits.reset();
    applyMetrics(engine.snapshot());
    return committed ? Freshness::Current : Freshness::Uncommitted;
  }
  static constexpr std::chrono::milliseconds kScrapeCommitWait{50};

  /// A scrape's rendering waits for its step's records (beforeScrapeRendering): renders it once
  /// they are committed, or once the store has failed.
  void answerWaitingScrape() {
    if (inScrapeHook) return;  // the hook itself took the commit and decides
    if (inAdvance) return;     // a batch back during the advance: the step answers at its end
    if (scrapeAwaits && (committedSeq >= scrapeAwaits->step || storeFailing || stopping))
      snapshot.refreshIfWanted(/*always=*/true);
  }

  /// Capacity the inventory could not put into a unit is reported, not guessed (firstwork_gpus
  /// unit="unknown"); each cause is logged once, with what the operator can fix.
  void warnUnclassified(const inventory::InventorySnapshot& inv) {
    for (const auto& m : inv.nodeModeProblems) {
      if (m.sharing.mode == inventory::SharingMode::Unknown) {
        if (!warned.insert("mode/" + m.cluster + "/" + m.node + "/" + m.resource + "/" + m.sharing.problem).second)
          continue;
        log.warn("GPU sharing mode of a node cannot be told from its labels; its capacity is "
                 "reported as unit unknown",
                 {{"cluster", m.cluster}, {"node", m.node}, {"resource", m.resource},
                  {"units", m.units}, {"reason", m.sharing.problem}});
      } else if (m.sharing.mode == inventory::SharingMode::Unlabelled) {
        if (!warned.insert("unlabelled/" + m.cluster + "/" + m.node + "/" + m.resource).second) continue;
        log.info("node publishes an NVIDIA resource without GPU feature discovery labels; counted "
                 "one unit per GPU (time-slicing cannot be detected without them)",
                 {{"cluster", m.cluster}, {"node", m.node}, {"resource", m.resource}, {"units", m.units}});
      }
    }
    for (const auto& u : inv.unclassified) {
      if (u.kind != inventory::ClassKind::Dra || u.published <= 0) continue;
      if (!warned.insert("dra/" + u.cluster + "/" + u.source).second) continue;
      log.warn("DRA devices match no device class; they are reported as unit unknown (map their "
               "DeviceClass in gpu.deviceClasses)",
               {{"cluster", u.cluster}, {"driver", u.source}, {"devices", u.published}});
    }
  }

  /// Every fact is committed before it is exported (design §7). The commit runs on the store
  /// thread, one batch at a time: the loop goes on reading the watches meanwhile, and exports a
  /// batch's figures when it returns (commitReturned). A step while a batch is out leaves its
  /// records pending; they go as the next batch when that one returns. A failing store keeps the
  /// records queued (bounded) and the daemon exporting gauges; they are retried every step.
  void commitPending() {
    if (inFlight) return;
    // Closed incidents and reclaims are final. A process started after they closed derives them
    // again from the relisted objects, which may no longer show what they were measured from
    // (a reclaim victim's interrupted cycle is gone once it is requeued): found by the fault
    // soak, where a restart rewrote completed reclaims with 0 interrupted GPU-seconds. Asked
    // here, with no batch out, the loop's connection sees every closing committed before.
    std::erase_if(pending, [&](const PendingRecord& p) { return closedAlready(p.record); });
    // During an advance the step's records are not all pending yet: a batch then completes the
    // steps before it only.
    const uint64_t complete = inAdvance ? stepSeq - 1 : stepSeq;
    if (pending.empty()) {
      committedSeq = std::max(committedSeq, complete);  // nothing out, nothing left
      return;
    }
    auto batch = std::make_shared<CommitBatch>();
    batch->step = complete;  // every step so far has its records in this batch or an earlier one
    batch->duringStep = inAdvance;
    batch->pending = std::move(pending);
    pending.clear();
    inFlight = batch;
    storeThread->post([this, batch](store::Store& s) {
      // The records travel to the store and back by move: a copy of every body was most of a
      // large commit's allocations (the first step after a sync writes tens of thousands).
      const auto began = std::chrono::steady_clock::now();
      std::vector<store::Record> recs;
      recs.reserve(batch->pending.size());
      for (auto& p : batch->pending) recs.push_back(std::move(p.record));
      batch->result.emplace(s.commit(recs));
      batch->seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      for (size_t i = 0; i < recs.size(); ++i) batch->pending[i].record = std::move(recs[i]);
      batch->done.store(true, std::memory_order_release);
      asio::post(io, [this] { commitReturned(); });
    });
  }

  /// The batch out came back: exports what the store accepted as new, or queues the records
  /// again in front of those pending since.
  void commitReturned() {
    if (!inFlight || !inFlight->done.load(std::memory_order_acquire)) return;
    const auto batch = std::move(inFlight);
    inFlight.reset();
    auto& done = batch->pending;
    const auto& res = *batch->result;
    if (!res.ok()) {
      self.storeError("write");
      done.insert(done.end(), std::make_move_iterator(pending.begin()), std::make_move_iterator(pending.end()));
      pending = std::move(done);
      if (!storeFailing)
        log.error("store write failed; records kept in memory and retried",
                  {{"error", res.error()}, {"pending", static_cast<uint64_t>(pending.size())}});
      storeFailing = true;
      constexpr size_t kMaxPending = 200000;
      if (pending.size() > kMaxPending)  // the oldest go first
        pending.erase(pending.begin(), pending.begin() + static_cast<ptrdiff_t>(pending.size() - kMaxPending));
      answerWaitingScrape();
      return;
    }
    committedSeq = std::max(committedSeq, batch->step);
    log.debug("store batch committed", {{"records", static_cast<uint64_t>(done.size())},
                                        {"seconds", batch->seconds},
                                        {"during_step", batch->duringStep}});
    if (storeFailing) log.info("store writes recovered", {});
    storeFailing = false;
    for (size_t i = 0; i < done.size(); ++i) {
      if (!(*res)[i]) continue;
      const auto& p = done[i];
      engineMetrics.exportCommitted(p);
      if (p.effect == PendingRecord::Effect::RecoveryClosed)
        log.info("incident closed", {{"cluster", p.detail->cluster},
                                      {"outcome", p.detail->outcome},
                                      {"stranded_gpu_minutes", p.detail->strandedGpuSeconds / 60.0}});
    }
    commitPending();  // what the steps left meanwhile
    answerWaitingScrape();
    // Nothing out: a release after the lists that waited for these records may be due now. Posted,
    // so that this batch is freed first; asked only while one is to come (not at every commit).
    if (!inFlight && !stopping && (listsCompleted || heapPolicy.afterListsPending()))
      asio::post(io, [this] { if (!stopping) releaseMemoryIfDue(); });
  }

  /// At shutdown, on the loop: waits for the batch out and commits what is pending, until
  /// nothing is left or the store fails (what it could not write is derived again at the next
  /// start, as after a SIGKILL; the log says how much).
  void finishCommits() {
    for (;;) {
      commitPending();
      if (!inFlight) return;
      storeThread->drain();
      commitReturned();
      if (storeFailing && !inFlight) break;
    }
    log.error("store write failed at shutdown; records not written (derived again at the next start)",
              {{"records", static_cast<uint64_t>(pending.size())}});
  }

  /// An incident or reclaim record whose closing was committed before (its `_closed` twin).
  bool closedAlready(const store::Record& r) {
    const char* closed = r.kind == records::kReclaimKind    ? records::kReclaimClosedKind
                         : r.kind == records::kIncidentKind ? records::kIncidentClosedKind
                                                            : nullptr;
    if (closed == nullptr) return false;
    auto has = store->contains(closed, r.key);
    return has.ok() && *has;
  }

  void pruneIfDue(SystemTime now) {
    auto mono = clock.monotonicNow();
    if (lastPrune != MonotonicTime{} && mono - lastPrune < 1h) return;
    lastPrune = mono;
    // Kueue's view of each worker is kept however long it has not changed.
    // On the store thread, after the commits posted before it (a write of its own: from the
    // loop's connection it would wait for the commit out).
    storeThread->post([this, cutoff = now - options.config.store.retention](store::Store& s) {
      auto res = s.prune(cutoff, {records::kWorkerConnectionKind});
      if (!res.ok()) {
        self.storeError("prune");  // SelfMetrics and the logger are thread-safe
        log.error("store prune failed", {{"error", res.error()}});
      }
    });
  }

  /// Gives the memory of past bursts back to the OS (see HeapReleasePolicy): the decoder's
  /// buffers, grown to the largest LIST page, and the free heap the sync and its first steps
  /// left behind. Loop thread (watch lines are decoded here, LIST pages on the decoding thread;
  /// the buffers are per thread).
  void releaseMemoryIfDue() {
    const auto mono = clock.monotonicNow();
    if (std::exchange(listsCompleted, false)) heapPolicy.listsCompleted(mono);
    if (!heapPolicy.due(mono, /*stepsSettled=*/!inFlight && pending.empty())) return;
    const size_t decodeBuffers = model::releaseDecodeBuffers(kDecodeBufferKeepBytes);
    if (listDecoder) {  // its own thread's
      listDecoder->releaseBuffers(kDecodeBufferKeepBytes, [this](size_t bytes) {
        if (bytes > 0) {
          log.debug("list decoding buffers released", {{"bytes", static_cast<uint64_t>(bytes)}});
        }
      });
    }
    const auto started = clock.monotonicNow();
    releaseFreeHeap();
    log.debug("free heap released to the OS",
              {{"decode_buffer_bytes", static_cast<uint64_t>(decodeBuffers)},
               {"seconds", toSeconds(clock.monotonicNow() - started)}});
  }
  /// A watch line is a few KiB (a 1.5 MiB object is the API's limit): buffers above this were
  /// grown by LIST pages.
  static constexpr size_t kDecodeBufferKeepBytes = size_t{2} << 20;

  /// The tick keeps a fixed schedule (each deadline one interval after the last, not after the
  /// tick's step ended). Re-armed after its step, it drifted by that step's length a second, and
  /// under a stream it settled just after the pacer's fourth flush of the second, with nothing
  /// waiting: 4 flushes and a tick, 5 steps a second at 500 ev/s where 4 do (bench/README.md,
  /// change 109). On the schedule it comes just before that flush, whose events it takes (the
  /// flush is cancelled). A loop behind by more than an interval (or the first arm) starts the
  /// schedule anew.
  void armTick() {
    const auto now = std::chrono::steady_clock::now();
    tickDeadline += options.tickInterval;
    if (tickDeadline <= now) tickDeadline = now + options.tickInterval;
    tickTimer->expires_at(tickDeadline);
    tickTimer->async_wait([this](const boost::system::error_code& ec) {
      if (ec || stopping) return;
      if (httpServer) httpServer->heartbeat();
      if (stepsHeld()) {
        updateReadiness();
      } else {
        step(StepTrigger::Tick);
      }
      armTick();
    });
  }

  /// Runs `fn` on the loop thread and waits for its answer (HTTP handlers read loop-owned state
  /// this way); 503 when the loop does not answer in time.
  http::ApiResponse onLoop(std::function<http::ApiResponse()> fn) {
    auto task = std::make_shared<std::packaged_task<http::ApiResponse()>>(std::move(fn));
    auto fut = task->get_future();
    asio::post(io, [task] { (*task)(); });
    if (fut.wait_for(5s) != std::future_status::ready)
      return http::ApiResponse::error(503, "event loop busy");
    return fut.get();
  }

  Status openStore() {
    store::SqliteOptions storeOptions;
    storeOptions.notice = [this](const std::string& what) { log.info("store layout", {{"detail", what}}); };
    // The loop's connection reads; its rare writes may checkpoint inline. The store thread's
    // connection below, which makes every commit, has the checkpoint thread.
    storeOptions.checkpointInBackground = false;
    auto s = store::openSqliteStore(options.config.store.path, storeOptions);
    if (!s.ok()) return Error{s.error()};
    store = std::move(*s);
    // Incidents that were still open when the daemon stopped go on being measured.
    auto open = store->query({records::kIncidentKind, "", "", {}, {}, 100000, {}, {}});
    if (!open.ok()) return Error{open.error()};
    for (const auto& r : *open) {
      auto inc = records::incidentFromJson(r.body);
      if (inc && (inc->outcome == engine::IncidentOutcome::Open ||
                  inc->outcome == engine::IncidentOutcome::Recovering))
        engine.restoreIncident(*inc);
    }
    // Reclaims still pending go on to complete or fail, and keep their victims' lost work: the
    // victims' interrupted pods are usually gone by the relist, so it cannot be derived again.
    auto reclaims = store->query({records::kReclaimKind, "", "", {}, {}, 100000, {}, {}});
    if (!reclaims.ok()) return Error{reclaims.error()};
    for (const auto& r : *reclaims) {
      auto rec = records::reclaimFromJson(r.body);
      if (rec && rec->outcome == engine::ReclaimOutcome::Pending) engine.restoreReclaim(*rec);
    }
    // Kueue's last seen view of each worker: a worker lost and regained while the daemon was
    // down shows only its reconnection, which is an outage only against what it showed before.
    auto connections = store->query({records::kWorkerConnectionKind, "", "", {}, {}, 100000, {}, {}});
    if (!connections.ok()) return Error{connections.error()};
    for (const auto& r : *connections) {
      if (auto c = records::workerConnectionFromJson(r.body)) engine.restoreWorkerConnection(*c);
    }
    removeUnconfiguredWorkerConnections(*connections);
    if (auto restored = restoreOpenCycles(); !restored) return restored;
    // The store thread's connection: commits and prunes. This one serves the loop's reads.
    store::SqliteOptions writerOptions;
    writerOptions.convertLayoutUpTo = 0;  // the conversion, if any, was the first opening's
    writerOptions.checkpointFailed = checkpointFailureReporter(self, log, clock);
    auto w = store::openSqliteStore(options.config.store.path, writerOptions);
    if (!w.ok()) return Error{w.error()};
    storeThread = std::make_unique<store::StoreThread>(std::move(*w));
    return Ok{};
  }

  /// Deletes the stored views of workers no longer in the configuration: pruning keeps the kind
  /// and no MultiKueueCluster event will replace or remove them. Every shard watches the
  /// management cluster, so a worker of another shard is still configured here (its view is kept).
  /// A failed delete is retried at the next start.
  void removeUnconfiguredWorkerConnections(const std::vector<store::Record>& connections) {
    std::set<std::string> workers;
    for (const auto& cc : options.config.clusters)
      if (cc.role == config::ClusterRole::Worker) workers.insert(cc.name);
    std::vector<store::Record> stale;
    std::string names;
    // A worker_connection record's cluster is its worker (records::toRecords).
    for (const auto& r : connections) {
      if (workers.count(r.cluster) != 0) continue;
      stale.push_back({r.kind, r.key, r.cluster, "", r.time, "", store::WriteMode::Remove});
      names += (names.empty() ? "" : ",") + r.cluster;
    }
    if (stale.empty()) return;
    if (auto res = store->commit(stale); !res.ok()) {
      self.storeError("write");
      log.error("removing the stored views of unconfigured workers failed",
                {{"error", res.error()}, {"workers", names}});
      return;
    }
    log.info("removed the stored views of workers no longer configured",
             {{"count", static_cast<uint64_t>(stale.size())}, {"workers", names}});
  }

  /// Admission cycles that held quota and were not released when the daemon stopped (their
  /// open_cycle records; and, from stores written before those existed, cycles with an evicted
  /// but no released or finished milestone): a Workload requeued meanwhile no longer shows them,
  /// and their pods are gone, so their end and lost work would be lost (found by the fault soak,
  /// reclaim seed 4251, reclaim-improved seed 4248). Milestone keys are
  /// ms/<cluster>/<uid>/<cycle>/<milestone>.
  Status restoreOpenCycles() {
    store::Query openQuery;
    openQuery.kind = records::kOpenCycleKind;
    openQuery.limit = 1000000;
    auto open = store->query(openQuery);
    if (!open.ok()) return Error{open.error()};
    for (const auto& r : *open) {
      auto c = records::openCycleFromJson(r.body);
      if (!c) continue;
      auto s = restoreCycle("ms/" + c->workload.cluster + "/" + c->workload.uid + "/" + c->cycleId + "/",
                            c->workSince);
      if (!s) return s;
    }
    store::Query evictedQuery;
    evictedQuery.kind = records::kMilestoneKind;
    evictedQuery.keySuffix = "/evicted";
    evictedQuery.limit = 100000;
    auto evicted = store->query(evictedQuery);
    if (!evicted.ok()) return Error{evicted.error()};
    for (const auto& e : *evicted) {
      const std::string prefix = e.key.substr(0, e.key.size() - std::string_view("evicted").size());
      auto s = restoreCycle(prefix, std::nullopt);
      if (!s) return s;
    }
    return Ok{};
  }

  /// Gives the engine the stored milestones of one cycle (keys starting with `prefix`) unless it
  /// was released or finished.
  Status restoreCycle(const std::string& prefix, std::optional<SystemTime> workSince) {
    for (const char* end : {"released", "finished"}) {
      auto has = store->contains(records::kMilestoneKind, prefix + end);
      if (!has.ok()) return Error{has.error()};
      if (*has) return Ok{};
    }
    store::Query cycleQuery;
    cycleQuery.kind = records::kMilestoneKind;
    cycleQuery.keyPrefix = prefix;
    auto stored = store->query(cycleQuery);
    if (!stored.ok()) return Error{stored.error()};
    std::vector<engine::MilestoneRecord> cycle;
    for (const auto& r : *stored) {
      auto m = records::milestoneFromJson(r.body);
      auto kind = m ? engine::milestoneFromName(m->milestone) : std::nullopt;
      if (!kind) continue;
      engine::MilestoneRecord mr;
      mr.key = r.key;
      mr.workload = m->workload;
      mr.cycleId = m->cycleId;
      mr.milestone = *kind;
      mr.eventTime = m->eventTime;
      mr.observedAt = m->eventTime;
      mr.executionCluster = m->executionCluster;
      mr.signal = m->signal;
      mr.proxy = m->proxy;
      mr.reason = m->reason;
      mr.gpus = m->gpus;
      cycle.push_back(std::move(mr));
    }
    engine.restoreCycle(cycle, workSince);
    return Ok{};
  }

  Status connectClusters() {
    std::vector<std::string> problems;
    kube::KubeClientOptions kopts;
    kopts.reflector.pageSize = static_cast<size_t>(options.config.watch.pageSize);
    kopts.reflector.stallTimeout = options.stallTimeout.value_or(options.config.watch.stallTimeout);
    if (options.minWatchTimeout) kopts.reflector.minWatchTimeout = *options.minWatchTimeout;
    if (options.readCoalesce) kopts.transport.readCoalesce = *options.readCoalesce;
    kopts.reflector.backoff.initial = options.config.watch.backoffInitial;
    kopts.reflector.backoff.max = options.config.watch.backoffMax;
    // A ResourceSlice's devices keep the attributes the inventory reads, no others: a GPU
    // driver publishes a dozen a device (bench/README.md, change 78).
    kopts.reflector.decode =
        std::make_shared<const model::DecodeOptions>(detail::decodeOptions(options.config));
    listDecoder = kube::makeThreadListDecoder(io, "fw-decode");
    kopts.listDecoder = listDecoder.get();
    for (const auto& cc : options.config.clusters) {
      if (!config::shardOwnsCluster(options.config.shard, cc)) continue;
      Result<kube::RestConfig> rest = makeError("no connection settings");
      if (auto it = options.restConfigs.find(cc.name); it != options.restConfigs.end())
        rest = it->second;
      else if (cc.inCluster)
        rest = kube::inClusterConfig();
      else
        rest = kube::loadKubeconfig({cc.kubeconfig, cc.context, nullptr});
      if (!rest.ok()) {
        problems.push_back(fmt::format("clusters {}: {}", cc.name, rest.error()));
        continue;
      }
      if (rest->insecureSkipTlsVerify) {
        if (!cc.insecureSkipTLSVerifyAllowed) {
          problems.push_back(fmt::format(
              "clusters {}: kubeconfig sets insecure-skip-tls-verify; set "
              "insecureSkipTLSVerifyAllowed: true to accept that",
              cc.name));
          continue;
        }
        log.warn("TLS verification is off for this cluster", {{"cluster", cc.name}});
      }
      self.insecureTls(cc.name, rest->insecureSkipTlsVerify);
      if (cc.role != config::ClusterRole::Management)
        engineMetrics.initCluster(cc.name, cc.role == config::ClusterRole::Worker);
      Cluster c;
      c.config = cc;
      c.client = std::make_unique<kube::KubeClient>(io, clock, cc.name, std::move(*rest), kopts,
                                                    this);
      for (auto kind : watchedKinds(cc.role)) {
        // The engine keeps every pod it is given, and the inventory every claim, as last seen:
        // the pod and claim reflectors keep their identities alone (a relist's delete names the
        // object by uid; the engine deletes what it holds), so that what is kept of a pod or a
        // claim is the engine's to decide.
        kube::ReflectorOptions ro = kopts.reflector;
        ro.keepObjects = kind != model::Kind::Pod && kind != model::Kind::ResourceClaim;
        c.client->addReflector(kind, *this, std::move(ro));
      }
      clusters.push_back(std::move(c));
    }
    if (!problems.empty()) {
      std::string all;
      for (const auto& p : problems) all += (all.empty() ? "" : "\n") + p;
      return makeError(all);
    }
    return Ok{};
  }

  DaemonOptions options;
  const Clock& clock;
  std::shared_ptr<prometheus::Registry> registry;
  metrics::SelfMetrics self;
  EngineMetrics engineMetrics;
  std::set<std::string> warned;  // unclassified-capacity causes already logged
  /// The process's own CPU, memory and descriptors (process_*), read at each rendering.
  metrics::ProcessMetrics process;
  metrics::Collectables collectables;  // the registry, then `process`
  http::MetricsSnapshot snapshot;
  std::unique_ptr<http::HttpServer> httpServer;
  asio::io_context io;
  /// The clusters' LIST pages are decoded on a thread of their own ("fw-decode"), beside the
  /// loop that receives them and settles their objects. Goes before `io`.
  std::unique_ptr<kube::ListDecoder> listDecoder;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::unique_ptr<asio::steady_timer> tickTimer;
  std::chrono::steady_clock::time_point tickDeadline{};  // the tick's last deadline (armTick)
  std::unique_ptr<asio::steady_timer> flushTimer;
  StepPacer pacer{options.stepInterval, options.busyStepInterval, options.busyStepEvents};
  std::thread loop;
  engine::MilestoneEngine engine;
  /// The loop's connection: the API's reads, closedAlready, the start-up restore.
  store::StorePtr store;
  std::optional<records::GpuSecondsRecorder> gpuSeconds;
  std::vector<PendingRecord> pending;
  /// One batch of records out on the store thread at a time (commitPending): the store thread
  /// owns `pending` and writes `result`, then sets `done`; the loop touches them again only
  /// once `done` is set.
  struct CommitBatch {
    std::vector<PendingRecord> pending;
    uint64_t step = 0;        // the last step whose records are all in this batch or earlier
    bool duringStep = false;  // sent while the engine advanced (DaemonOptions::commitEvery)
    double seconds = 0;       // the commit's time on the store thread
    std::optional<Result<std::vector<bool>>> result;
    std::atomic<bool> done{false};
  };
  std::shared_ptr<CommitBatch> inFlight;
  bool storeFailing = false;
  MonotonicTime lastPrune{};
  HeapReleasePolicy heapPolicy;
  bool listsCompleted = false;  // set by updateReadiness(), taken by releaseMemoryIfDue()
  std::vector<Cluster> clusters;
  std::unique_ptr<signals::UsefulWorkProbe> probe;
  bool flushScheduled = false;
  bool flushBusy = false;     // the scheduled flush is spaced by the busy interval
  size_t eventsWaiting = 0;   // watch events taken since the last step began
  uint64_t flushGen = 0;      // the flush scheduled last; a handler of an older one does nothing
  bool inStep = false;        // inside step(): beforeScrapeRendering does not step again
  bool inAdvance = false;     // inside the engine's advance: its outputs are still coming
  uint64_t stepSeq = 0;       // steps begun
  uint64_t committedSeq = 0;  // every step up to this one has had its records committed
  struct ScrapeWait {
    uint64_t request = 0;  // MetricsSnapshot's request number
    uint64_t step = 0;     // its rendering waits until committedSeq reaches this step
    std::chrono::steady_clock::time_point since{};  // the loop's first look at the request
    bool timerArmed = false;  // scrapeTimer runs for since + kScrapeCommitWait
  };
  std::optional<ScrapeWait> scrapeAwaits;
  bool inScrapeHook = false;
  std::unique_ptr<asio::steady_timer> scrapeTimer;  // bounds the wait for a scrape's commit
  bool stopping = false;
  log::Redactor redactor;
  log::Logger log;
  /// Commits and prunes (a connection of its own). Declared after `io`, which its jobs post to,
  /// so it is joined first.
  std::unique_ptr<store::StoreThread> storeThread;
  mutable std::mutex readyMu;
  std::vector<std::string> notReadyLines{"starting"};
};

std::function<void(const std::string&)> checkpointFailureReporter(metrics::SelfMetrics& self,
                                                                  const log::Logger& log,
                                                                  const Clock& clock) {
  auto throttle = std::make_shared<log::LogThrottle>(std::chrono::minutes(1));
  return [&self, &log, &clock, throttle](const std::string& error) {
    self.storeError("checkpoint");
    uint64_t leftOut = 0;
    if (throttle->allow(clock.monotonicNow(), &leftOut))
      log.error("store checkpoint failed; the WAL keeps every commit and grows until one succeeds",
                {{"error", error}, {"failures_not_logged", leftOut}});
  };
}

Daemon::Daemon(DaemonOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Daemon::~Daemon() { stop(); }

Status Daemon::start() {
  auto& d = *impl_;
  auto& cfg = d.options.config;
  // Libraries that log plain text through spdlog (the kube layer, the default logger) write the
  // same schema-1 JSON lines as everything else.
  log::adoptTextLogger("kube");
  log::adoptTextLogger("firstwork", true);
  if (auto s = d.openStore(); !s) return s;
  d.gpuSeconds.emplace(d.clock.systemNow());
  for (const auto& cc : cfg.clusters)
    if (config::shardOwnsCluster(cfg.shard, cc))
      d.engine.onConnection(cc.name, false, d.clock.systemNow(), d.clock.systemNow());
  if (auto s = d.connectClusters(); !s) return s;

  http::HttpServerOptions hopts;
  hopts.listen = cfg.server.listen;
  hopts.tlsCertFile = cfg.server.tlsCertFile;
  hopts.tlsKeyFile = cfg.server.tlsKeyFile;
  hopts.apiBearerTokenFile = cfg.server.apiBearerTokenFile;
  d.httpServer = std::make_unique<http::HttpServer>(hopts, d.snapshot, d.clock);
  // Rendered when the loop reaches the posted handler, unless the scrape, after waiting 50 ms,
  // was answered between two events before that (onEvent). The streams whose reads the
  // transports hold back to batch them (read coalescing, up to 50 ms) are read first, so that
  // the scrape counts every event that had arrived when it asked.
  d.snapshot.setRefreshRequester([&d] {
    asio::post(d.io, [&d] {
      d.readHeldStreams();
      d.snapshot.refreshIfWanted(/*always=*/true);
    });
  });
  d.snapshot.setBeforeLoopRendering([&d](uint64_t request) { return d.beforeScrapeRendering(request); });
  using Freshness = http::MetricsSnapshot::Freshness;
  for (auto f : {Freshness::Current, Freshness::Uncommitted, Freshness::Stale})
    d.self.metricsRendering(http::MetricsSnapshot::freshnessName(f), 0);  // every series from the start
  for (auto t : kStepTriggers) d.self.engineStep(t, 0);
  for (const auto& r : kSkipReasons) d.self.engineInputsSkipped(r.name, 0);
  d.snapshot.setRenderingCounter(
      [&d](Freshness f) { d.self.metricsRendering(http::MetricsSnapshot::freshnessName(f)); });
  d.httpServer->setReadinessCheck([&d] {
    std::lock_guard lock(d.readyMu);
    return d.notReadyLines;
  });
  registerApiRoutes(*d.httpServer, ApiContext{
                                        [&d](std::function<http::ApiResponse()> fn) {
                                          return d.onLoop(std::move(fn));
                                        },
                                        [&d]() -> store::Store& { return *d.store; },
                                        [&d]() -> const engine::MilestoneEngine& { return d.engine; },
                                        &d.redactor,
                                    });
  if (auto s = d.httpServer->start(); !s) return s;

  // The PromQL useful-work probe polls on its own thread and hands signals to the loop. A signal
  // whose cluster label names a configured cluster goes to that cluster; otherwise (no
  // clusterLabel, or a value naming no cluster here) to every cluster that runs pods, and the
  // engine joins it to the pod of that namespace/name it sees there (design §4 signal 3).
  if (const auto& pc = cfg.usefulWork.prometheus; pc.enabled()) {
    signals::ProbeOptions po;
    po.url = pc.url;
    po.query = pc.query;
    po.namespaceLabel = pc.namespaceLabel;
    po.podLabel = pc.podLabel;
    po.clusterLabel = pc.clusterLabel;
    po.valueIsTimestamp = pc.valueIsTimestamp;
    po.interval = pc.interval;
    po.timeout = pc.timeout;
    po.bearerTokenFile = pc.bearerTokenFile;
    po.caFile = pc.caFile;
    d.probe = std::make_unique<signals::UsefulWorkProbe>(
        po, d.clock,
        [&d](std::vector<signals::UsefulWorkSignal> found) {
          asio::post(d.io, [&d, found = std::move(found)] {
            auto now = d.clock.systemNow();
            for (const auto& sig : found) {
              const bool named = !sig.cluster.empty() && d.find(sig.cluster) != nullptr &&
                                 d.find(sig.cluster)->config.role != config::ClusterRole::Management;
              for (const auto& c : d.clusters)
                if (c.config.role != config::ClusterRole::Management &&
                    (!named || c.config.name == sig.cluster))
                  d.engine.onUsefulWorkSignal(c.config.name, sig.podNamespace + "/" + sig.podName,
                                              sig.at, "promql", now);
            }
            d.scheduleFlush();
          });
        },
        &d.self);
  }

  d.work.emplace(d.io.get_executor());
  d.tickTimer = std::make_unique<asio::steady_timer>(d.io);
  d.flushTimer = std::make_unique<asio::steady_timer>(d.io);
  d.scrapeTimer = std::make_unique<asio::steady_timer>(d.io);
  asio::post(d.io, [&d] {
    for (auto& c : d.clusters) c.client->start();
    d.updateReadiness();
    d.armTick();
  });
  if (d.probe) d.probe->start();
  d.loop = std::thread([&d] {
    nameThisThread("fw-loop");
    try {
      d.io.run();
    } catch (const std::exception& e) {
      // Nothing may cross the loop boundary silently: an escaped exception is a bug.
      d.log.error("event loop stopped by an exception", {{"error", e.what()}});
      std::abort();
    }
  });
  d.log.info("firstworkd started", {{"listen", d.httpServer->baseUrl()},
                                    {"clusters", static_cast<uint64_t>(d.clusters.size())},
                                    {"store", cfg.store.path},
                                    {"allocator", heapAllocatorName()}});
  return Ok{};
}

void Daemon::stop() {
  auto& d = *impl_;
  if (d.probe) d.probe->stop();
  if (!d.loop.joinable()) {
    if (d.httpServer) d.httpServer->stop();
    return;
  }
  std::promise<void> done;
  asio::post(d.io, [&d, &done] {
    d.stopping = true;
    if (d.tickTimer) d.tickTimer->cancel();
    if (d.flushTimer) d.flushTimer->cancel();
    if (d.scrapeTimer) d.scrapeTimer->cancel();
    for (auto& c : d.clusters) c.client->stop();
    d.step(StepTrigger::Stop);  // the last records
    d.finishCommits();   // committed before the loop stops
    done.set_value();
  });
  done.get_future().wait();
  if (d.httpServer) d.httpServer->stop();
  d.work.reset();
  d.io.stop();
  d.loop.join();
  d.storeThread.reset();  // runs what is queued (a prune), then joins
  d.clusters.clear();
}

void Daemon::waitForShutdownSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
  impl_->log.info("shutting down", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}});
}

uint16_t Daemon::httpPort() const { return impl_->httpServer ? impl_->httpServer->port() : 0; }
std::string Daemon::baseUrl() const {
  return impl_->httpServer ? impl_->httpServer->baseUrl() : std::string();
}
bool Daemon::ready() const {
  std::lock_guard lock(impl_->readyMu);
  return impl_->notReadyLines.empty();
}

}  // namespace firstwork::app
