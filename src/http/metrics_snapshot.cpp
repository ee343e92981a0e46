#include "firstwork/http/metrics_snapshot.hpp"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <algorithm>

#include "firstwork/http/text_exposition.hpp"

namespace firstwork::http {

MetricsSnapshot::MetricsSnapshot(const prometheus::Collectable& collectable, const Clock& clock,
                                 Options options)
    : collectable_(collectable), clock_(clock), options_(options) {}

void MetricsSnapshot::setRefreshRequester(std::function<void()> requester) {
  std::lock_guard lock(mu_);
  requester_ = std::move(requester);
}

MetricsSnapshot::Rendering MetricsSnapshot::render() const {
  const auto started = clock_.monotonicNow();
  auto text = std::make_shared<const std::string>(serializeText(collectable_.Collect()));
  return {std::move(text), clock_.monotonicNow() - started};
}

std::chrono::nanoseconds MetricsSnapshot::freshFor() const {
  const auto byCost = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double, std::nano>(static_cast<double>(render_cost_.count()) *
                                               options_.renderCostMultiple));
  return std::max<std::chrono::nanoseconds>(options_.freshness, byCost);
}

void MetricsSnapshot::publish(Rendering r) {
  {
    std::lock_guard lock(mu_);
    text_ = std::move(r.text);
    render_cost_ = r.cost;
    rendered_at_ = clock_.monotonicNow();
    ++generation_;
    request_pending_ = false;
    wanted_.store(false, std::memory_order_relaxed);
  }
  published_.notify_all();
}

void MetricsSnapshot::setBeforeLoopRendering(BeforeLoopRendering prepare) {
  before_loop_rendering_ = std::move(prepare);
}

void MetricsSnapshot::setRenderingCounter(std::function<void(Freshness)> counter) {
  rendering_counter_ = std::move(counter);
}

std::string_view MetricsSnapshot::freshnessName(Freshness f) {
  switch (f) {
    case Freshness::Current: return "current";
    case Freshness::Uncommitted: return "uncommitted";
    case Freshness::Stale: return "stale";
  }
  return "stale";
}

void MetricsSnapshot::refresh() { publish(render()); }

bool MetricsSnapshot::refreshIfWanted(bool always) {
  if (!wanted_.load(std::memory_order_relaxed)) return false;
  uint64_t seen = 0;
  uint64_t request = 0;
  {
    std::lock_guard lock(mu_);
    if (!request_pending_) return false;  // answered meanwhile, or the scrape gave up
    if (!always && clock_.monotonicNow() - asked_at_ < options_.answerBetweenEventsAfter) return false;
    seen = generation_;
    request = request_;
  }
  auto freshness = Freshness::Current;
  if (before_loop_rendering_) {
    const auto ready = before_loop_rendering_(request);
    std::lock_guard lock(mu_);
    // Answered while it prepared (a step renders between its halves), or the scrape gave up.
    if (!request_pending_) return generation_ != seen;
    if (!ready) return false;  // the loop asks again when the figures are in
    freshness = *ready;
  }
  if (rendering_counter_) rendering_counter_(freshness);
  refresh();
  return true;
}

std::shared_ptr<const std::string> MetricsSnapshot::current() const {
  std::lock_guard lock(mu_);
  return text_;
}

uint64_t MetricsSnapshot::renderCount() const {
  std::lock_guard lock(mu_);
  return generation_;
}

uint64_t MetricsSnapshot::inlineRenderCount() const {
  std::lock_guard lock(mu_);
  return inline_renders_;
}

std::shared_ptr<const std::string> MetricsSnapshot::scrape() {
  std::function<void()> requester;
  uint64_t seen = 0;
  {
    std::unique_lock lock(mu_);
    if (text_ && clock_.monotonicNow() - rendered_at_ < freshFor()) return text_;
    seen = generation_;
    if (requester_) {
      bool ask = !request_pending_;
      request_pending_ = true;
      if (ask) {
        asked_at_ = clock_.monotonicNow();
        ++request_;
      }
      wanted_.store(true, std::memory_order_relaxed);
      requester = requester_;
      if (ask) {
        lock.unlock();
        try {
          requester();
        } catch (...) {
          // A requester that throws (loop already stopped) is the same as one never answering.
        }
        lock.lock();
      }
      // Real time on purpose: this bounds how long an HTTP thread is held, not a domain time.
      published_.wait_for(lock, options_.waitForLoop, [&] { return generation_ != seen; });
      if (generation_ != seen) return text_;
      request_pending_ = false;  // let a later scrape ask again
      wanted_.store(false, std::memory_order_relaxed);
    }
  }
  // No loop to ask, or it did not answer in time: render here, one scrape thread at a time, and
  // reuse a rendering another scrape finished while this one waited for the lock.
  std::lock_guard render_lock(inline_render_mu_);
  {
    std::lock_guard lock(mu_);
    if (generation_ != seen && text_) return text_;
  }
  // Without a loop there is nothing to bring up to date; a loop that did not answer left it stale.
  if (rendering_counter_) rendering_counter_(requester ? Freshness::Stale : Freshness::Current);
  Rendering r = render();
  auto text = r.text;
  {
    std::lock_guard lock(mu_);
    ++inline_renders_;
  }
  publish(std::move(r));
  return text;
}

}  // namespace firstwork::http
