// report.md: the capacity review for people.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "detail/format.hpp"
#include "detail/plots.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/report/render.hpp"

namespace firstwork::report {
namespace {

using detail::duration;
using detail::gpuHours;
using detail::gpuMinutes;
using detail::offset;
using detail::percent;

/// A table cell: pipes escaped, line breaks flattened.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out.empty() ? "—" : out;
}

class Table {
 public:
  explicit Table(std::vector<std::string> header) : columns_(header.size()) {
    row(std::move(header));
    std::string sep = "|";
    for (size_t i = 0; i < columns_; ++i) sep += "---|";
    text_ += sep + "\n";
  }
  void row(std::vector<std::string> cells) {
    cells.resize(columns_);
    std::string line = "|";
    for (const auto& c : cells) line += " " + cell(c) + " |";
    text_ += line + "\n";
  }
  const std::string& str() const { return text_; }

 private:
  size_t columns_;
  std::string text_;
};

std::string time(const std::optional<SystemTime>& t) { return t ? formatRfc3339(*t) : "—"; }
std::string since(const std::optional<SystemTime>& t, SystemTime r) { return t ? offset(*t, r) : "—"; }

std::string periodText(const Period& p) {
  return fmt::format("{} → {} ({})", formatRfc3339(p.from), formatRfc3339(p.to),
                     duration(toSeconds(p.to - p.from)));
}

std::string workload(const engine::WorkloadRef& w) {
  return w.namespace_.empty() ? w.name : w.namespace_ + "/" + w.name;
}

std::string arrow(const std::string& before, const std::string& after) {
  return before + " → " + after;
}
/// A name on both sides: once when it is the same.
std::string sameOrArrow(const std::string& before, const std::string& after) {
  return before == after ? before : arrow(before, after);
}

/// "12m 00s ×4, 13m 00s": every observation, equal ones counted.
std::string observationList(const std::vector<double>& sorted) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    if (!out.empty()) out += ", ";
    out += duration(sorted[i]);
    if (j - i > 1) out += fmt::format(" ×{}", j - i);
    i = j;
  }
  return out;
}

std::string money(const Options& o, double amount) { return detail::money(o.currency, amount); }
std::string rateText(const Options& o) {
  return fmt::format("{} per GPU-hour", money(o, o.ratePerGpuHour.value_or(0)));
}

void summary(std::string& md, const Report& report) {
  const auto& r = report.current;
  const auto& o = report.options;
  md += "## Summary\n\n";
  const auto closed = static_cast<size_t>(r.recovered() + r.failed());
  if (r.incidents.empty())
    md += "- **Reconnection incidents:** none.\n";
  else
    md += fmt::format("- **Reconnection incidents:** {} — {} recovered, {} failed{}; {} "
                      "GPU-minutes stranded after reconnection.\n",
                      r.incidents.size(), r.recovered(), r.failed(),
                      r.incidents.size() > closed
                          ? fmt::format(", {} still open", r.incidents.size() - closed)
                          : "",
                      gpuMinutes(r.strandedGpuSeconds()));
  size_t failedReclaims = 0;
  std::vector<double> ttfw;
  for (const auto& c : r.reclaims) {
    failedReclaims += c.record.outcome == engine::ReclaimOutcome::Failed;
    if (c.record.reclaimToFirstWorkSeconds) ttfw.push_back(*c.record.reclaimToFirstWorkSeconds);
  }
  std::sort(ttfw.begin(), ttfw.end());
  if (r.reclaims.empty())
    md += "- **Reclaims:** none.\n";
  else
    md += fmt::format("- **Reclaims:** {} — {} failed; submission to first useful work typical "
                      "{}, slowest {}; {} GPU-minutes of the victims' work interrupted.\n",
                      r.reclaims.size(), failedReclaims, duration(percentile(ttfw, 50)),
                      duration(ttfw.empty() ? std::nullopt : std::optional<double>(ttfw.back())),
                      gpuMinutes(r.interruptedGpuSeconds()));
  md += fmt::format("- **Telemetry gaps:** {} (firstwork's own connection was down; not "
                    "recoveries).\n",
                    r.telemetryGaps.size());
  const auto& t = r.totals;
  md += fmt::format("- **GPU-hours:** owned {}, usable {}, reserved {}, allocated {}, productive {}"
                    "{}.\n",
                    gpuHours(t.published), gpuHours(t.usable), gpuHours(t.reserved),
                    gpuHours(t.allocated), gpuHours(t.productive),
                    t.allocated > 0
                        ? fmt::format(" ({} of allocated)", percent(t.productive / t.allocated * 100))
                        : "");
  if (r.costs.costPerProductiveGpuHour)
    md += fmt::format("- **Effective cost per productive GPU-hour:** {} (an allocation of "
                      "ownership cost, not cash).\n",
                      money(o, *r.costs.costPerProductiveGpuHour));
  if (r.costs.allocatedValue)
    md += fmt::format("- **Allocated-capacity value:** {} at {} (an allocation, not cash).\n",
                      money(o, *r.costs.allocatedValue), rateText(o));
  if (r.unreadableRecords > 0)
    md += fmt::format("- **Unreadable records skipped:** {}.\n", r.unreadableRecords);
  md += "\n";
}

void comparisonSection(std::string& md, const Report& report) {
  const auto& c = *report.comparison;
  const auto& o = report.options;
  md += "## Before and after\n\n";
  md += fmt::format("Baseline {}, compared with this period drill by drill. Reconnection incidents "
                    "are paired per worker in order of reconnection (the k-th of the baseline "
                    "with the k-th of this period); reclaims per cluster queue and reason in "
                    "order of submission. Typical is the median (nearest rank), slowest the "
                    "maximum.\n\n",
                    periodText(c.baseline));
  if (c.callouts.empty()) {
    md += "No slower tail, new failure or increase to call out.\n\n";
  } else {
    md += "**Called out:**\n\n";
    for (const auto& s : c.callouts) md += "- " + s + "\n";
    md += "\n";
  }

  md += "### Reconnection incidents\n\n";
  if (c.incidents.empty()) {
    md += "None in either period.\n\n";
  } else {
    Table t({"Worker", "#", "Baseline reconnected", "Reconnected", "Stranded GPU-min",
             "Change GPU-min", "Change", fmt::format("Value at {}", rateText(o)),
             "Typical first work", "Slowest first work", "Outcome"});
    for (const auto& i : c.incidents) {
      auto val = [&](auto f) { return i.baseline ? f(*i.baseline) : std::string("—"); };
      auto cur = [&](auto f) { return i.current ? f(*i.current) : std::string("—"); };
      auto stranded = [](const IncidentView& v) { return gpuMinutes(v.record.strandedGpuSeconds); };
      auto typical = [](const IncidentView& v) { return duration(v.typicalFirstWork()); };
      auto slowest = [](const IncidentView& v) { return duration(v.slowestFirstWork()); };
      auto outcome = [](const IncidentView& v) {
        return std::string(engine::incidentOutcomeName(v.record.outcome));
      };
      auto reconnected = [](const IncidentView& v) { return time(v.record.reconnectedAt); };
      t.row({i.cluster, fmt::format("{}", i.ordinal), val(reconnected), cur(reconnected),
             arrow(val(stranded), cur(stranded)),
             i.reduction ? gpuMinutes(-*i.reduction) : "—",
             i.reductionPercent ? percent(-*i.reductionPercent) : "—",
             i.value ? money(o, *i.value) : "—", arrow(val(typical), cur(typical)),
             arrow(val(slowest), cur(slowest)), arrow(val(outcome), cur(outcome))});
    }
    md += t.str() + "\n";
    for (const auto& i : c.incidents) {
      if (!i.reduction) continue;
      md += fmt::format("- {} incident {}: {} → {} GPU-minutes stranded after reconnection, ", i.cluster,
                        i.ordinal, gpuMinutes(i.baseline->record.strandedGpuSeconds),
                        gpuMinutes(i.current->record.strandedGpuSeconds));
      md += *i.reduction >= 0 ? fmt::format("a reduction of {} GPU-minutes", gpuMinutes(*i.reduction))
                              : fmt::format("an increase of {} GPU-minutes", gpuMinutes(-*i.reduction));
      if (i.reductionPercent) md += fmt::format(" ({})", percent(std::abs(*i.reductionPercent)));
      md += fmt::format(", {} GPU-hours", gpuHours(std::abs(*i.reduction)));
      if (i.value) md += fmt::format(" worth {} at {}", money(o, std::abs(*i.value)), rateText(o));
      md += ".\n";
    }
    md += fmt::format("- All incidents: {} → {} GPU-minutes stranded after reconnection{}.\n\n",
                      gpuMinutes(c.strandedBefore), gpuMinutes(c.strandedAfter),
                      c.strandedValue ? fmt::format(", a difference worth {} at {}",
                                                    money(o, c.strandedValue.value()), rateText(o))
                                      : "");
  }

  md += "### Reclaims\n\n";
  if (c.reclaimGroups.empty()) {
    md += "None in either period.\n\n";
    return;
  }
  Table g({"Cluster queue", "Reason", "Reclaims", "Typical submission → first work",
           "Slowest", "Failed", "Interrupted GPU-min", "Earlier access GPU-min",
           fmt::format("Value at {}", rateText(o))});
  for (const auto& x : c.reclaimGroups)
    g.row({x.clusterQueue, x.reason, fmt::format("{} → {}", x.baselineCount, x.currentCount),
           arrow(duration(x.typicalBefore), duration(x.typicalAfter)),
           arrow(duration(x.slowestBefore), duration(x.slowestAfter)),
           fmt::format("{} → {}", x.failedBefore, x.failedAfter),
           arrow(gpuMinutes(x.interruptedBefore), gpuMinutes(x.interruptedAfter)),
           gpuMinutes(x.earlierAccessGpuSeconds), x.value ? money(o, *x.value) : "—"});
  md += g.str() + "\n";
  for (const auto& x : c.reclaimGroups) {
    md += fmt::format("- {} ({}): {} reclaims, submission to first useful work {} → {} (slowest "
                      "{} → {}): {} GPU-minutes ({} GPU-hours) {} access",
                      x.clusterQueue, x.reason, x.currentCount, duration(x.typicalBefore),
                      duration(x.typicalAfter), duration(x.slowestBefore),
                      duration(x.slowestAfter), gpuMinutes(std::abs(x.earlierAccessGpuSeconds)),
                      gpuHours(std::abs(x.earlierAccessGpuSeconds)),
                      x.earlierAccessGpuSeconds >= 0 ? "earlier" : "later");
    if (x.value) md += fmt::format(" worth {} at {}", money(o, std::abs(*x.value)), rateText(o));
    md += fmt::format("; victims' interrupted work {} → {} GPU-minutes.\n",
                      gpuMinutes(x.interruptedBefore), gpuMinutes(x.interruptedAfter));
  }
  md += "\n";
  Table p({"Cluster queue", "Reason", "#", "Preemptor", "GPUs", "Submission → first work",
           "Earlier access GPU-min", "Interrupted GPU-min"});
  for (const auto& x : c.reclaims) {
    auto b = [&](auto f) { return x.baseline ? f(*x.baseline) : std::string("—"); };
    auto a = [&](auto f) { return x.current ? f(*x.current) : std::string("—"); };
    auto name = [](const ReclaimView& v) { return workload(v.record.preemptor); };
    auto gpus = [](const ReclaimView& v) {
      return v.preemptorGpus ? fmt::format("{}", *v.preemptorGpus) : std::string("—");
    };
    auto ttfw = [](const ReclaimView& v) { return duration(v.record.reclaimToFirstWorkSeconds); };
    auto lost = [](const ReclaimView& v) { return gpuMinutes(v.record.interruptedGpuSeconds); };
    p.row({x.clusterQueue, x.reason, fmt::format("{}", x.ordinal), sameOrArrow(b(name), a(name)),
           arrow(b(gpus), a(gpus)), arrow(b(ttfw), a(ttfw)),
           x.earlierAccessGpuSeconds ? gpuMinutes(*x.earlierAccessGpuSeconds) : "—",
           arrow(b(lost), a(lost))});
  }
  md += p.str() + "\n";
}

void incidentsSection(std::string& md, const Report& report) {
  const auto& r = report.current;
  md += "## Reconnection incidents\n\n";
  md += "A worker's MultiKueue connection (Kueue's view) went down and came back. Milestones are "
        "offsets from the reconnection R. Stranded GPU-minutes are the exact integral of "
        "min(usable − productive, waiting work) from R to the close.\n\n";
  if (r.incidents.empty()) {
    md += "None in this period.\n\n";
  } else {
    Table t({"#", "Worker", "Disconnected", "Reconnected (R)", "Outage", "Usable GPUs",
             "GPUs waiting", "First dispatch", "First running", "First useful work",
             "Last GPU productive", "Closed", "Outcome", "Stranded GPU-min"});
    for (size_t k = 0; k < r.incidents.size(); ++k) {
      const auto& i = r.incidents[k].record;
      const SystemTime rec = i.reconnectedAt.value_or(SystemTime{});
      auto rel = [&](const std::optional<SystemTime>& x) {
        return i.reconnectedAt ? since(x, rec) : time(x);
      };
      t.row({fmt::format("{}", k + 1), i.cluster, time(i.disconnectedAt), time(i.reconnectedAt),
             duration(i.disconnectedSeconds),
             fmt::format("{}", i.usableGpus), fmt::format("{}", i.demandGpus),
             rel(i.firstDispatchedAt), rel(i.firstRunningAt), rel(i.firstWorkAt),
             rel(i.lastProductiveAt), rel(i.closedAt),
             std::string(engine::incidentOutcomeName(i.outcome)) +
                 (i.failureReason.empty() ? "" : " (" + i.failureReason + ")"),
             gpuMinutes(i.strandedGpuSeconds)});
    }
    md += t.str() + "\n";
    for (size_t k = 0; k < r.incidents.size(); ++k) {
      const auto& v = r.incidents[k];
      md += fmt::format("**Incident {} ({})**: ", k + 1, v.record.cluster);
      if (v.reconnectToFirstWork.empty())
        md += "no workload reached useful work after the reconnection";
      else
        md += fmt::format("reconnection to first useful work typical {}, slowest {} over {} "
                          "workloads",
                          duration(v.typicalFirstWork()), duration(v.slowestFirstWork()),
                          v.reconnectToFirstWork.size());
      if (v.record.closedAt && v.record.recoverySeconds)
        md += fmt::format("; {} {} after the reconnection",
                          v.record.outcome == engine::IncidentOutcome::Failed ? "failed" : "recovered",
                          duration(*v.record.recoverySeconds));
      if (v.record.excludedWorkloads > 0)
        md += fmt::format("; {} workloads stuck on their own fault (image, configuration, crash) "
                          "left out",
                          v.record.excludedWorkloads);
      md += ".\n\n";
      if (v.curve) {
        md += fmt::format("![Recovery curve of incident {} on {}]({})\n\n", k + 1, v.record.cluster,
                          detail::recoveryPlotName(k, v));
        if (v.curve->workloadsWithoutGpus > 0)
          md += fmt::format("({} workloads with an unknown GPU count are not in the curve.)\n\n",
                            v.curve->workloadsWithoutGpus);
      }
    }
  }

  md += "### Failed recoveries\n\n";
  if (r.failed() == 0) {
    md += "None in this period.\n\n";
  } else {
    Table t({"#", "Worker", "Reconnected", "Failed at", "Reason", "GPUs waiting",
             "Stranded GPU-min"});
    for (size_t k = 0; k < r.incidents.size(); ++k) {
      const auto& i = r.incidents[k].record;
      if (i.outcome != engine::IncidentOutcome::Failed) continue;
      t.row({fmt::format("{}", k + 1), i.cluster, time(i.reconnectedAt), time(i.closedAt),
             i.failureReason == "budget" ? "recovery budget ran out"
             : i.failureReason == "disconnected_again" ? "disconnected again before recovering"
                                                       : i.failureReason,
             fmt::format("{}", i.demandGpus), gpuMinutes(i.strandedGpuSeconds)});
    }
    md += t.str() + "\n";
  }

  md += "### Telemetry gaps\n\n";
  md += "firstwork's own connection to a cluster was down: its figures were delayed, not "
        "lengthened (they come from object timestamps), and these are not recoveries.\n\n";
  if (r.telemetryGaps.empty()) {
    md += "None in this period.\n\n";
  } else {
    Table t({"Cluster", "Lost", "Regained", "Duration"});
    for (const auto& g : r.telemetryGaps)
      t.row({g.cluster, time(g.disconnectedAt), time(g.reconnectedAt),
             duration(g.disconnectedSeconds)});
    md += t.str() + "\n";
  }
}

void reclaimsSection(std::string& md, const Report& report) {
  const auto& r = report.current;
  md += "## Reclaims\n\n";
  md += "A team took back quota lent to another cohort member. Time to first work runs from the "
        "entitled team's submission to its first useful work; interrupted GPU-minutes are the "
        "victims' work since their last checkpoint (or first work).\n\n";
  if (r.reclaims.empty()) {
    md += "None in this period.\n\n";
    return;
  }
  Table t({"#", "Cluster queue", "Preemptor", "Reason", "Submitted", "First useful work",
           "Time to first work", "GPUs", "Victims", "Interrupted GPU-min", "Outcome"});
  for (size_t k = 0; k < r.reclaims.size(); ++k) {
    const auto& v = r.reclaims[k];
    const auto& c = v.record;
    std::string victims;
    for (const auto& x : c.victims)
      victims += (victims.empty() ? "" : ", ") + workload(x.workload) +
                 fmt::format(" ({} GPU{})", x.gpus, x.gpus == 1 ? "" : "s");
    t.row({fmt::format("{}", k + 1), c.preemptor.clusterQueue, workload(c.preemptor), c.reason,
           time(c.queuedAt), time(c.firstWorkAt), duration(c.reclaimToFirstWorkSeconds),
           v.preemptorGpus ? fmt::format("{}", *v.preemptorGpus) : "—", victims,
           gpuMinutes(c.interruptedGpuSeconds), std::string(engine::reclaimOutcomeName(c.outcome))});
  }
  md += t.str() + "\n";
}

void latencySection(std::string& md, const Report& report) {
  const auto& r = report.current;
  md += "## Latency\n\n";
  md += fmt::format("Per histogram and label set (design §6). Percentiles (nearest rank) are "
                    "given from {} observations on; below that every observation is listed with "
                    "the maximum.\n\n",
                    kMinObservationsForPercentiles);
  if (r.latencies.empty()) {
    md += "No observations in this period.\n\n";
    return;
  }
  auto plots = detail::latencyPlots(r);
  for (const auto& plot : plots) {
    const bool firstPart = plot.summaries.front() == 0 ||
                           r.latencies[plot.summaries.front() - 1].metric != plot.metric;
    if (firstPart) md += fmt::format("### firstwork_{}\n\n", plot.metric);
    Table t({"Labels", "n", "p50", "p90", "p99", "Max", "Observations"});
    for (size_t i : plot.summaries) {
      const auto& g = r.latencies[i];
      const bool p = g.hasPercentiles();
      t.row({g.labelText(), fmt::format("{}", g.seconds.size()), p ? duration(g.p50()) : "—",
             p ? duration(g.p90()) : "—", p ? duration(g.p99()) : "—", duration(g.max()),
             p ? "—" : observationList(g.seconds)});
    }
    md += t.str() + "\n";
    md += fmt::format("![Distribution of firstwork_{}]({})\n\n", plot.metric, plot.file);
  }
}

void gpuSection(std::string& md, const Report& report) {
  const auto& r = report.current;
  const auto& o = report.options;
  md += "## GPU-hours\n\n";
  md += "From firstworkd's live counters (firstwork_gpu_seconds_total by state, and the "
        "firstwork_gpus gauges `published` = owned and `usable`), recorded once a minute; they "
        "accrue at the daemon's steps rather than at object timestamps.\n\n";
  if (r.gpuUse.empty() && r.capacity.empty()) {
    md += "No GPU-hours recorded in this period.\n\n";
  } else {
    Table t({"Cluster", "Cluster queue", "Device class", "Reserved", "Allocated", "Productive",
             "Productive / allocated"});
    for (const auto& u : r.gpuUse)
      t.row({u.cluster, u.clusterQueue, u.deviceClass, gpuHours(u.reserved),
             gpuHours(u.allocated), gpuHours(u.productive),
             u.allocated > 0 ? percent(u.productive / u.allocated * 100) : "—"});
    const auto& x = r.totals;
    t.row({"**all**", "", "", gpuHours(x.reserved), gpuHours(x.allocated), gpuHours(x.productive),
           x.allocated > 0 ? percent(x.productive / x.allocated * 100) : "—"});
    md += t.str() + "\n";
    Table c({"Cluster", "Device class", "Owned (published)", "Usable"});
    for (const auto& k : r.capacity)
      c.row({k.cluster, k.deviceClass, gpuHours(k.published), gpuHours(k.usable)});
    md += c.str() + "\n";
  }

  md += "## Cost allocation (not cash)\n\n";
  md += "These figures spread what the estate costs over what it did; nothing here was spent or "
        "billed.\n\n";
  bool any = false;
  if (r.costs.ownershipCost) {
    any = true;
    md += fmt::format("- Ownership cost of the period: {} per owned GPU-hour × {} owned GPU-hours "
                      "= {}.\n",
                      money(o, *o.ownershipCostPerGpuHour), gpuHours(r.totals.published),
                      money(o, *r.costs.ownershipCost));
    if (r.costs.costPerProductiveGpuHour)
      md += fmt::format("- Effective cost per productive GPU-hour: {} ÷ {} productive GPU-hours = "
                        "**{}** (an allocation, not cash).\n",
                        money(o, *r.costs.ownershipCost), gpuHours(r.totals.productive),
                        money(o, *r.costs.costPerProductiveGpuHour));
    else
      md += "- Effective cost per productive GPU-hour: no productive GPU-hours in this period.\n";
  } else if (o.ownershipCostPerGpuHour) {
    md += "- Effective cost per productive GPU-hour: no owned GPU-hours recorded in this period.\n";
    any = true;
  }
  if (r.costs.allocatedValue) {
    any = true;
    md += fmt::format("- Allocated-capacity value: {} allocated GPU-hours × {} = **{}** (an "
                      "allocation, not cash).\n",
                      gpuHours(r.totals.allocated), rateText(o), money(o, *r.costs.allocatedValue));
  }
  if (!any)
    md += "- Give --ownership-cost (per owned GPU-hour) and --rate-per-gpu-hour to allocate "
          "cost and value.\n";
  md += "\n";
}

}  // namespace

std::vector<OutputFile> renderMarkdown(const Report& report) {
  std::string md = "# GPU capacity review\n\n";
  md += fmt::format("- Period: {}\n", periodText(report.current.period));
  if (report.baseline) md += fmt::format("- Baseline: {}\n", periodText(report.baseline->period));
  md += "- Times are UTC. Every figure comes from the objects' own timestamps as firstworkd "
        "recorded them, except the GPU-hours (its live counters). Money figures are allocations, "
        "not cash.\n\n";
  summary(md, report);
  if (report.comparison) comparisonSection(md, report);
  incidentsSection(md, report);
  reclaimsSection(md, report);
  latencySection(md, report);
  gpuSection(md, report);
  std::vector<OutputFile> files{{"report.md", md}};
  for (auto& f : renderPlots(report)) files.push_back(std::move(f));
  return files;
}

}  // namespace firstwork::report
