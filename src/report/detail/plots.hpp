#pragma once
// Plot file names, shared by the plot writer and the Markdown that links the plots.
#include <string>
#include <vector>

#include "firstwork/report/report.hpp"

namespace firstwork::report::detail {

/// At most this many label sets share one latency plot (the palette's size); more go to further
/// numbered plots of the same metric.
inline constexpr size_t kSeriesPerPlot = 10;

/// "recovery-<index + 1>-<worker>.svg".
std::string recoveryPlotName(size_t index, const IncidentView& incident);

struct LatencyPlot {
  std::string metric;
  std::string file;              // "latency-<metric>[-<part>].svg"
  std::vector<size_t> summaries;  // indexes into PeriodReport::latencies
};
/// The latency plots of a period, metric by metric in the period's order.
std::vector<LatencyPlot> latencyPlots(const PeriodReport& period);

}  // namespace firstwork::report::detail
