#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "firstwork/core/clock.hpp"

namespace prometheus {
class Collectable;
}

namespace firstwork::http {

/// The /metrics body: text exposition 0.0.4 rendered from a registry (Collect() +
/// serializeText, the library's format written faster), kept as an immutable string that scrapes
/// share. Thread-safe.
///
/// Why a snapshot, and who renders it. Rendering walks every series; the engine's gauges are
/// updated in batches on the event loop, and a rendering taken in the middle of a batch would
/// show half of it (e.g. stranded GPUs by phase that do not add up). So the preferred renderer is
/// the event loop itself, between batches:
///   1. A scrape arrives (HTTP thread). A snapshot younger than `freshness` is served at once —
///      parallel scrapes from HA Prometheus pairs cost one rendering.
///   2. Otherwise the scrape calls the refresh requester, which posts `refresh()` to the event
///      loop and returns; the scrape waits up to `waitForLoop` for the new snapshot. Concurrent
///      scrapes share one request.
///   3. The loop runs refresh() when it gets to it, at a consistent point, and never blocks on
///      a scrape (it does not wait for the HTTP side at all). A loop whose handlers run long
///      (a flood of watch events: one read of a busy stream delivers a thousand events, and the
///      posted refresh waits behind every handler queued before it) also calls
///      refreshIfWanted() between the events it handles, where no batch is half applied: a
///      scrape that has waited `answerBetweenEventsAfter` is answered there, within one event's
///      work, not after the whole round. Not sooner: a rendering taken before the round's end
///      leaves out the rest of its events, which then wait for a later rendering (answering at
///      once lengthened event-to-metric latency at 5,000 events/s).
///   4. If the loop is too busy or stuck (no snapshot within `waitForLoop`), the scrape renders on
///      its own thread: prometheus-cpp is thread-safe, and self-metrics must stay visible exactly
///      when the loop is in trouble (/healthz reports that separately).
/// Without a requester (tests, tools), scrapes render on their own thread, one at a time.
class MetricsSnapshot {
 public:
  struct Options {
    std::chrono::milliseconds freshness{1000};
    std::chrono::milliseconds waitForLoop{500};
    /// A rendering also stays fresh for this many times what it cost to render: scrapes
    /// arriving back to back keep whoever renders busy at most 1/(1 + k) of the time, whatever
    /// the size of the estate, while a small estate's scrapes see counters `freshness` old at
    /// most. 0: `freshness` alone.
    double renderCostMultiple = 0;
    /// How long a scrape waits for the posted refresh before refreshIfWanted() answers it.
    std::chrono::milliseconds answerBetweenEventsAfter{50};
  };

  /// `collectable` (normally the prometheus::Registry) and `clock` must outlive this object.
  MetricsSnapshot(const prometheus::Collectable& collectable, const Clock& clock,
                  Options options);
  MetricsSnapshot(const prometheus::Collectable& collectable, const Clock& clock)
      : MetricsSnapshot(collectable, clock, Options{}) {}

  /// Set before serving. Called on a scrape thread; must only schedule refresh() on the event
  /// loop (e.g. boost::asio::post) and return immediately.
  void setRefreshRequester(std::function<void()> requester);

  /// How current the figures of a rendering for a scrape are (firstwork_metrics_renderings_total).
  enum class Freshness : uint8_t {
    Current,      // every event taken when the scrape asked, and what its step derived, is in
    Uncommitted,  // the gauges are current; records of the last step were not committed in time
    Stale,        // the figures as last applied: the loop did not bring them up to date
  };
  static std::string_view freshnessName(Freshness f);

  /// Brings what a rendering reads up to date, on the loop, for the scrape request `request`
  /// (one number per request; concurrent scrapes share one). Returns how current the figures are
  /// to render now, or nothing to wait: the loop then calls refreshIfWanted(true) again when the
  /// figures are in (the scrape waits for that within `waitForLoop`, as for any loop rendering).
  using BeforeLoopRendering = std::function<std::optional<Freshness>(uint64_t request)>;
  /// Set before serving. Called by refreshIfWanted() on the event loop just before it renders
  /// for a waiting scrape, and never before a scrape thread's own rendering (step 4). The daemon
  /// steps the events its pacer holds back, waits for the store to commit what that step derived
  /// (design §7: facts are exported once committed), and applies its gauges, so a scrape reads
  /// the figures of every event the daemon had taken when it asked, all as of one step: not those
  /// of its last step or tick (up to a second behind under a stream). The hook may call
  /// refreshIfWanted() itself (a step answers a waiting scrape between its halves); the scrape
  /// is then not rendered twice.
  void setBeforeLoopRendering(BeforeLoopRendering prepare);

  /// Set before serving. Called just before each rendering made for a scrape, on the thread that
  /// renders it, so the rendering counts itself: the loop's with what the hook returned (Current
  /// without a hook), a scrape thread's fallback (step 4) with Stale. Not for refresh().
  void setRenderingCounter(std::function<void(Freshness)> counter);

  /// Renders now and publishes the result. Called by the event loop (or any thread).
  void refresh();
  /// Renders only if a scrape has waited `answerBetweenEventsAfter` for the loop's rendering
  /// (step 2 above) and none has been published since it asked, or, from the posted refresh
  /// (`always`), if one waits at all; returns whether it rendered. Costs one atomic load when no
  /// scrape waits, so the loop may call it between any two pieces of its work.
  bool refreshIfWanted(bool always = false);
  /// What a scrape serves (see the class comment). Never returns null.
  std::shared_ptr<const std::string> scrape();
  /// The last rendering without refreshing; null before the first.
  std::shared_ptr<const std::string> current() const;

  /// Renderings done so far, and how many of them ran on scrape threads (fallbacks).
  uint64_t renderCount() const;
  uint64_t inlineRenderCount() const;

 private:
  struct Rendering {
    std::shared_ptr<const std::string> text;
    std::chrono::nanoseconds cost{0};  // for renderCostMultiple
  };
  Rendering render() const;
  void publish(Rendering r);
  /// How long a rendering is served (under mu_).
  std::chrono::nanoseconds freshFor() const;

  const prometheus::Collectable& collectable_;
  const Clock& clock_;
  Options options_;
  std::function<void()> requester_;
  BeforeLoopRendering before_loop_rendering_;  // set before serving; called on the loop only
  std::function<void(Freshness)> rendering_counter_;  // set before serving

  mutable std::mutex mu_;
  std::condition_variable published_;
  std::shared_ptr<const std::string> text_;
  MonotonicTime rendered_at_{};
  std::chrono::nanoseconds render_cost_{0};  // of the last rendering
  uint64_t generation_ = 0;
  bool request_pending_ = false;
  uint64_t request_ = 0;  // the number of the pending request (BeforeLoopRendering)
  /// Set while a scrape waits for the loop's rendering (refreshIfWanted's cheap check).
  std::atomic<bool> wanted_{false};
  MonotonicTime asked_at_{};  // when the waiting scrape asked (under mu_)
  uint64_t inline_renders_ = 0;
  std::mutex inline_render_mu_;  // one scrape-thread rendering at a time
};

}  // namespace firstwork::http
