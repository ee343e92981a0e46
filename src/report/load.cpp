// Reading one period of the store and decoding its records (report layer 1).
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "firstwork/report/report.hpp"
#include "firstwork/store/store.hpp"

namespace firstwork::report {
namespace {

// Store::query has a row limit; a review reads every row of its period.
constexpr size_t kNoLimit = std::numeric_limits<int64_t>::max();

// GPU-second records are stamped with their period's start; a period that ends inside the report
// may have begun this long before it (one record per minute of daemon time, longer only when the
// daemon's loop stalled).
constexpr auto kGpuPeriodLookback = std::chrono::hours(1);

Result<std::vector<store::Record>> rows(store::Store& s, const char* kind,
                                        std::optional<SystemTime> from,
                                        std::optional<SystemTime> to) {
  store::Query q;
  q.kind = kind;
  q.since = from;
  q.until = to;
  q.limit = kNoLimit;
  auto r = s.query(q);
  if (!r.ok()) return makeError(fmt::format("reading {} records: {}", kind, r.error()));
  return r;
}

}  // namespace

Result<PeriodData> loadPeriod(store::Store& store, std::optional<SystemTime> from,
                              std::optional<SystemTime> to) {
  PeriodData d;
  // Without bounds the period is what the store covers.
  if (!from || !to) {
    std::optional<SystemTime> first, last;
    for (const char* kind : {records::kIncidentKind, records::kReclaimKind,
                             records::kMilestoneKind, records::kObservationKind,
                             records::kGpuSecondsKind}) {
      auto all = rows(store, kind, from, to);
      if (!all.ok()) return Error{all.error()};
      for (const auto& r : *all) {
        first = first ? std::min(*first, r.time) : r.time;
        last = last ? std::max(*last, r.time) : r.time;
      }
    }
    if (!first) {
      if (!from && !to) return makeError("the store holds no records: there is nothing to report");
      first = last = from ? *from : *to;
    }
    d.period.from = from.value_or(*first);
    // Just after the latest record, so that it lies inside the half-open period.
    d.period.to = to.value_or(std::chrono::floor<std::chrono::seconds>(*last) +
                              std::chrono::seconds(1));
    if (!(d.period.from < d.period.to)) d.period.to = d.period.from + std::chrono::seconds(1);
  } else {
    d.period = Period{*from, *to};
  }

  auto incidents = rows(store, records::kIncidentKind, d.period.from, d.period.to);
  if (!incidents.ok()) return Error{incidents.error()};
  auto reclaims = rows(store, records::kReclaimKind, d.period.from, d.period.to);
  if (!reclaims.ok()) return Error{reclaims.error()};
  SystemTime until = d.period.to;  // how far milestones and samples are read
  for (const auto& r : *incidents) {
    auto i = records::incidentFromJson(r.body);
    if (!i) {
      ++d.unreadableRecords;
      continue;
    }
    if (i->closedAt) until = std::max(until, *i->closedAt);
    d.incidents.push_back(std::move(*i));
  }
  for (const auto& r : *reclaims) {
    auto c = records::reclaimFromJson(r.body);
    if (!c) {
      ++d.unreadableRecords;
      continue;
    }
    if (c->firstWorkAt) until = std::max(until, *c->firstWorkAt);
    d.reclaims.push_back(std::move(*c));
  }
  // One second past the last instant of interest keeps it inside [from, until).
  until += std::chrono::seconds(1);

  auto milestones = rows(store, records::kMilestoneKind, d.period.from, until);
  if (!milestones.ok()) return Error{milestones.error()};
  for (const auto& r : *milestones) {
    if (auto m = records::milestoneFromJson(r.body)) d.milestones.push_back(std::move(*m));
    else ++d.unreadableRecords;
  }
  auto observations = rows(store, records::kObservationKind, d.period.from, until);
  if (!observations.ok()) return Error{observations.error()};
  for (const auto& r : *observations) {
    if (auto o = records::observationFromJson(r.key, r.body)) d.observations.push_back(std::move(*o));
    else ++d.unreadableRecords;
  }
  auto gpu = rows(store, records::kGpuSecondsKind, d.period.from - kGpuPeriodLookback, d.period.to);
  if (!gpu.ok()) return Error{gpu.error()};
  for (const auto& r : *gpu) {
    auto p = records::gpuSecondsFromJson(r.body);
    if (!p) {
      ++d.unreadableRecords;
      continue;
    }
    if (p->to > d.period.from) d.gpuSeconds.push_back(std::move(*p));
  }
  return d;
}

}  // namespace firstwork::report
