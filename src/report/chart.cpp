// The report's chart: series over a duration axis, drawn with svg::Document.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "firstwork/report/svg.hpp"

namespace firstwork::report::svg {
namespace {

// Distinguishable colours (the usual categorical palette), used in series order.
constexpr std::array<const char*, 10> kPalette{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                               "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                               "#bcbd22", "#7f7f7f"};

constexpr double kWidth = 760;
constexpr double kLeft = 70;
constexpr double kRight = 24;
constexpr double kTop = 58;
constexpr double kPlotHeight = 300;
constexpr double kRow = 18;  // legend row height

std::string percentLabel(double v) { return fmt::format("{} %", std::llround(v * 100)); }

}  // namespace

std::string renderChart(const Chart& chart) {
  // --- ranges --------------------------------------------------------------------------------
  double xLo = chart.xMin.value_or(0), xHi = 0, yHi = 0;
  bool anyX = false;
  double minPositiveX = 0;
  auto seeX = [&](double x) {
    xHi = std::max(xHi, x);
    if (x > 0 && (minPositiveX == 0 || x < minPositiveX)) minPositiveX = x;
    anyX = true;
  };
  for (const auto& s : chart.series)
    for (const auto& [x, y] : s.points) {
      seeX(x);
      yHi = std::max(yHi, y);
    }
  for (const auto& m : chart.markers) seeX(m.x);
  for (const auto& l : chart.lines) yHi = std::max(yHi, l.y);
  if (chart.xMax) xHi = *chart.xMax;
  const bool log = chart.logX && minPositiveX > 0;
  std::vector<double> xTicks;
  if (log) {
    if (!chart.xMin) xLo = minPositiveX;
    // Widen to the duration steps around the data, so the ends carry labels.
    const auto steps = durationTicks(1, 1e9, 1000, true);
    double lo = xLo;
    for (double t : steps)
      if (t <= xLo) lo = t;
    xLo = lo;
    for (double t : steps)
      if (t >= xHi) {
        xHi = t;
        break;
      }
    xTicks = durationTicks(xLo, xHi, 9, true);
  } else {
    if (xHi <= xLo) xHi = xLo + 60;
    xTicks = durationTicks(0, xHi - xLo, 9, false);
    for (double& t : xTicks) t += xLo;
    xHi = xTicks.back();
  }
  std::vector<double> yTicks;
  if (chart.yPercent) {
    yTicks = {0, 0.25, 0.5, 0.75, 1};
    yHi = 1;
  } else {
    yHi = std::max(chart.yMax.value_or(yHi), 1.0);
    yTicks = niceTicks(0, yHi, 6);
    yHi = yTicks.back();
  }

  // --- layout --------------------------------------------------------------------------------
  const double plotLeft = kLeft, plotRight = kWidth - kRight;
  const double plotTop = kTop, plotBottom = kTop + kPlotHeight;
  const size_t legendRows = chart.series.size() + chart.lines.size() + chart.markers.size();
  const double height = plotBottom + 52 + static_cast<double>(legendRows) * kRow + 8;
  Scale sx(xLo, xHi, plotLeft, plotRight, log);
  Scale sy(0, yHi, plotBottom, plotTop);
  Document doc(kWidth, height);
  doc.title(chart.title);
  doc.rect(0, 0, kWidth, height, {"none", "#ffffff", 1, ""});
  doc.text(plotLeft, 22, chart.title, {15, Anchor::Start, "#111111", true, 0});
  if (!chart.subtitle.empty())
    doc.text(plotLeft, 42, chart.subtitle, {12, Anchor::Start, "#555555", false, 0});

  // Grid and axes.
  const Style grid{"#e3e3e3", "none", 1, ""};
  const Style axis{"#444444", "none", 1, ""};
  const TextStyle tickText{11, Anchor::Middle, "#444444", false, 0};
  for (double t : xTicks) {
    double x = sx(t);
    doc.line(x, plotTop, x, plotBottom, grid);
    doc.text(x, plotBottom + 16, shortDuration(t), tickText);
  }
  for (double t : yTicks) {
    double y = sy(t);
    doc.line(plotLeft, y, plotRight, y, grid);
    doc.text(plotLeft - 8, y + 4,
             chart.yPercent ? percentLabel(t) : fmt::format("{}", number(t)),
             {11, Anchor::End, "#444444", false, 0});
  }
  doc.line(plotLeft, plotBottom, plotRight, plotBottom, axis);
  doc.line(plotLeft, plotTop, plotLeft, plotBottom, axis);
  doc.text((plotLeft + plotRight) / 2, plotBottom + 34, chart.xLabel,
           {12, Anchor::Middle, "#222222", false, 0});
  doc.text(18, (plotTop + plotBottom) / 2, chart.yLabel,
           {12, Anchor::Middle, "#222222", false, -90});

  // Reference lines, markers, then the series on top.
  for (const auto& l : chart.lines)
    doc.line(plotLeft, sy(l.y), plotRight, sy(l.y), {l.color, "none", 1.5, "6 4"});
  for (size_t i = 0; i < chart.markers.size(); ++i) {
    double x = sx(chart.markers[i].x);
    doc.line(x, plotTop, x, plotBottom, {"#999999", "none", 1, "2 3"});
    doc.text(x + 3, plotTop + 12 + static_cast<double>(i % 4) * 12, fmt::format("{}", i + 1),
             {10, Anchor::Start, "#555555", true, 0});
  }
  auto colorOf = [&](size_t i) {
    return chart.series[i].color.empty() ? std::string(kPalette[i % kPalette.size()])
                                         : chart.series[i].color;
  };
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    if (s.points.empty()) continue;
    std::vector<std::pair<double, double>> pts;
    for (size_t k = 0; k < s.points.size(); ++k) {
      auto [x, y] = s.points[k];
      if (s.step && k > 0) pts.emplace_back(sx(x), sy(s.points[k - 1].second));
      pts.emplace_back(sx(x), sy(y));
    }
    if (s.step && s.points.back().first < xHi) pts.emplace_back(sx(xHi), sy(s.points.back().second));
    const Style st{colorOf(i), "none", 2, s.dashed ? "6 4" : ""};
    doc.polyline(pts, st);
    if (s.dots)
      for (const auto& [x, y] : s.points) doc.circle(sx(x), sy(y), 2.5, {colorOf(i), colorOf(i), 1, ""});
  }
  if (!anyX)
    doc.text((plotLeft + plotRight) / 2, (plotTop + plotBottom) / 2, "no data in this period",
             {13, Anchor::Middle, "#888888", false, 0});

  // Legend, one entry per row.
  double y = plotBottom + 56;
  const TextStyle legendText{12, Anchor::Start, "#222222", false, 0};
  for (size_t i = 0; i < chart.series.size(); ++i, y += kRow) {
    doc.line(plotLeft, y - 4, plotLeft + 28, y - 4,
             {colorOf(i), "none", 2, chart.series[i].dashed ? "6 4" : ""});
    doc.text(plotLeft + 36, y, chart.series[i].label, legendText);
  }
  for (const auto& l : chart.lines) {
    doc.line(plotLeft, y - 4, plotLeft + 28, y - 4, {l.color, "none", 1.5, "6 4"});
    doc.text(plotLeft + 36, y, l.label, legendText);
    y += kRow;
  }
  for (size_t i = 0; i < chart.markers.size(); ++i, y += kRow)
    doc.text(plotLeft + 8, y, fmt::format("{}  {}", i + 1, chart.markers[i].label), legendText);
  return doc.str();
}

}  // namespace firstwork::report::svg
