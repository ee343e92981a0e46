// The report's plots: a recovery curve per incident and the latency distributions.
#include <fmt/format.h>

#include <map>

#include "detail/format.hpp"
#include "detail/plots.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/report/render.hpp"
#include "firstwork/report/svg.hpp"

namespace firstwork::report {
namespace detail {

std::string recoveryPlotName(size_t index, const IncidentView& incident) {
  return fmt::format("recovery-{}-{}.svg", index + 1, fileSafe(incident.record.cluster));
}

std::vector<LatencyPlot> latencyPlots(const PeriodReport& period) {
  std::vector<LatencyPlot> plots;
  std::map<std::string, std::vector<size_t>> byMetric;
  std::vector<std::string> order;
  for (size_t i = 0; i < period.latencies.size(); ++i) {
    auto& v = byMetric[period.latencies[i].metric];
    if (v.empty()) order.push_back(period.latencies[i].metric);
    v.push_back(i);
  }
  for (const auto& metric : order) {
    const auto& idx = byMetric[metric];
    const size_t parts = (idx.size() + kSeriesPerPlot - 1) / kSeriesPerPlot;
    for (size_t p = 0; p < parts; ++p) {
      LatencyPlot plot;
      plot.metric = metric;
      plot.file = parts == 1 ? fmt::format("latency-{}.svg", fileSafe(metric))
                             : fmt::format("latency-{}-{}.svg", fileSafe(metric), p + 1);
      for (size_t k = p * kSeriesPerPlot; k < std::min(idx.size(), (p + 1) * kSeriesPerPlot); ++k)
        plot.summaries.push_back(idx[k]);
      plots.push_back(std::move(plot));
    }
  }
  return plots;
}

}  // namespace detail

namespace {

std::string recoveryChart(size_t index, const IncidentView& inc, const IncidentView* baseline) {
  const auto& r = inc.record;
  const SystemTime rec = *r.reconnectedAt;
  svg::Chart c;
  c.title = fmt::format("Recovery of {} after reconnection (incident {})", r.cluster, index + 1);
  c.subtitle = fmt::format("reconnected {}; {}; {} GPU-minutes stranded",
                           formatRfc3339(rec), engine::incidentOutcomeName(r.outcome),
                           detail::gpuMinutes(r.strandedGpuSeconds));
  c.xLabel = "time since reconnection";
  c.yLabel = "GPUs";
  auto series = [](const RecoveryCurve& curve, std::string label, bool dashed, std::string color) {
    svg::Series s;
    s.label = std::move(label);
    s.step = true;
    s.dashed = dashed;
    s.color = std::move(color);
    for (const auto& p : curve.points) s.points.emplace_back(p.seconds, static_cast<double>(p.gpus));
    s.points.emplace_back(curve.endSeconds, s.points.back().second);
    return s;
  };
  double end = inc.curve->endSeconds;
  c.series.push_back(series(*inc.curve, "productive GPUs (workloads that began useful work "
                                        "after the reconnection)",
                            false, "#1f77b4"));
  if (baseline && baseline->curve) {
    c.series.push_back(series(*baseline->curve,
                              fmt::format("baseline: incident reconnected {}",
                                          formatRfc3339(*baseline->record.reconnectedAt)),
                              true, "#7f7f7f"));
    end = std::max(end, baseline->curve->endSeconds);
  }
  c.xMax = end;
  c.lines.push_back({static_cast<double>(r.demandGpus),
                     fmt::format("GPUs wanted by waiting work at reconnection: {}", r.demandGpus),
                     "#d62728"});
  c.lines.push_back(
      {static_cast<double>(r.usableGpus), fmt::format("usable GPUs: {}", r.usableGpus), "#2ca02c"});
  auto marker = [&](const std::optional<SystemTime>& t, const char* what) {
    if (t) c.markers.push_back({toSeconds(*t - rec), fmt::format("{} ({})", what, detail::offset(*t, rec))});
  };
  marker(r.firstDispatchedAt, "first dispatch");
  marker(r.firstRunningAt, "first running");
  marker(r.firstWorkAt, "first useful work");
  marker(r.lastProductiveAt, "last GPU productive");
  marker(r.closedAt, r.outcome == engine::IncidentOutcome::Failed ? "failed" : "recovered");
  return svg::renderChart(c);
}

std::string latencyChart(const PeriodReport& period, const detail::LatencyPlot& plot) {
  svg::Chart c;
  c.title = fmt::format("firstwork_{}: distribution", plot.metric);
  c.subtitle = "share of observations at or below each duration";
  c.xLabel = "duration";
  c.yLabel = "share of observations";
  c.yPercent = true;
  double lo = 0, hi = 0;
  for (size_t i : plot.summaries) {
    const auto& g = period.latencies[i];
    svg::Series s;
    s.label = fmt::format("{} (n = {})", g.labelText().empty() ? "all" : g.labelText(),
                          g.seconds.size());
    s.step = true;
    s.dots = !g.hasPercentiles();
    const double n = static_cast<double>(g.seconds.size());
    s.points.emplace_back(g.seconds.front(), 0.0);
    for (size_t k = 0; k < g.seconds.size(); ++k) {
      if (k + 1 < g.seconds.size() && g.seconds[k + 1] == g.seconds[k]) continue;
      s.points.emplace_back(g.seconds[k], static_cast<double>(k + 1) / n);
    }
    lo = lo == 0 ? g.seconds.front() : std::min(lo, g.seconds.front());
    hi = std::max(hi, g.seconds.back());
    c.series.push_back(std::move(s));
  }
  // Latencies spread over orders of magnitude read better on a log axis.
  c.logX = lo > 0 && hi / lo > 30;
  return svg::renderChart(c);
}

}  // namespace

std::vector<OutputFile> renderPlots(const Report& report) {
  std::vector<OutputFile> files;
  const auto& cur = report.current;
  for (size_t i = 0; i < cur.incidents.size(); ++i) {
    const auto& inc = cur.incidents[i];
    if (!inc.curve) continue;
    const IncidentView* baseline = nullptr;
    if (report.comparison)
      for (const auto& c : report.comparison->incidents)
        if (c.current && c.baseline && c.current->record.id == inc.record.id) baseline = &*c.baseline;
    files.push_back({detail::recoveryPlotName(i, inc), recoveryChart(i, inc, baseline)});
  }
  for (const auto& p : detail::latencyPlots(cur)) files.push_back({p.file, latencyChart(cur, p)});
  return files;
}

}  // namespace firstwork::report
