#pragma once
// Stores filled the way the daemon fills them: the engine tests' reconnection drill (design §5)
// played through a real MilestoneEngine, its outputs turned into records by records::toRecords
// and committed in production order (incidents upserted, facts inserted once).
#include <catch2/catch.hpp>

#include "drills.hpp"
#include "firstwork/log/redact.hpp"
#include "firstwork/records/records.hpp"
#include "firstwork/report/report.hpp"
#include "firstwork/store/store.hpp"

namespace firstwork::testing {

/// Drill 1 (design §5): 16 GPUs productive 8 min after reconnection, 16 after 12 min.
inline const ReconnectTimes kBaselineDrill{std::chrono::seconds(240), std::chrono::seconds(480),
                                           std::chrono::seconds(300), std::chrono::seconds(720)};
/// Drill 2: 3 and 5 min.
inline const ReconnectTimes kImprovedDrill{std::chrono::seconds(120), std::chrono::seconds(180),
                                           std::chrono::seconds(150), std::chrono::seconds(300)};
/// Nobody reaches useful work before the 30-minute recovery budget runs out.
inline const ReconnectTimes kFailedDrill{std::chrono::seconds(240), std::chrono::seconds(4000),
                                         std::chrono::seconds(300), std::chrono::seconds(4000)};

inline store::StorePtr storeFromDrill(ReconnectTimes d) {
  Harness h(multiKueueConfigFor({"w1"}));
  play(h, reconnectDrill(d), {std::chrono::seconds(2400), std::chrono::seconds(2600)});
  auto s = store::makeMemoryStore();
  std::vector<store::Record> recs;
  for (auto& p : records::toRecords(h.all, log::Redactor())) recs.push_back(std::move(p.record));
  REQUIRE(s->commit(recs).ok());
  return s;
}

/// The drill's period: from an hour before the outage (t0) to two hours after.
inline report::PeriodData drillPeriod(store::Store& s) {
  auto d = report::loadPeriod(s, at(std::chrono::seconds(-3600)), at(std::chrono::seconds(7200)));
  REQUIRE(d.ok());
  return std::move(*d);
}

inline report::PeriodData drillData(ReconnectTimes d) {
  auto s = storeFromDrill(d);
  return drillPeriod(*s);
}

}  // namespace firstwork::testing
