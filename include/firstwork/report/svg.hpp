#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// A small SVG 1.1 writer and the one chart type the report needs (lines and steps over a
// duration axis). Debian packages no SVG or plotting library for C++, so the report draws its
// own: plain text, deterministic (same figures, same bytes), viewable in any browser and in
// GitHub's Markdown preview.
namespace firstwork::report::svg {

/// Text with `&`, `<`, `>`, `"` and `'` escaped for element content and attribute values.
std::string escape(std::string_view text);
/// A coordinate: fixed with at most two decimals, trailing zeros dropped ("12", "12.5", "-3.25").
std::string number(double value);

/// Stroke and fill of one shape ("none" leaves it out).
struct Style {
  std::string stroke = "none";
  std::string fill = "none";
  double strokeWidth = 1;
  std::string dash;  // stroke-dasharray, e.g. "4 3"
};

enum class Anchor { Start, Middle, End };

struct TextStyle {
  double size = 12;
  Anchor anchor = Anchor::Start;
  std::string fill = "#222222";
  bool bold = false;
  double rotate = 0;  // degrees around the text's anchor point
};

/// One SVG document, built shape by shape in drawing order. Not thread-safe (a local value).
class Document {
 public:
  Document(double width, double height);
  void title(std::string_view text);  // <title>: what a screen reader announces
  void rect(double x, double y, double width, double height, const Style& style);
  void line(double x1, double y1, double x2, double y2, const Style& style);
  void polyline(const std::vector<std::pair<double, double>>& points, const Style& style);
  void circle(double cx, double cy, double r, const Style& style);
  void text(double x, double y, std::string_view content, const TextStyle& style);
  /// The complete document, starting with the XML declaration.
  std::string str() const;

 private:
  double width_;
  double height_;
  std::string title_;
  std::string body_;
};

/// Maps [d0, d1] (data) onto [r0, r1] (pixels); log10 when `log` (d0, d1 > 0).
class Scale {
 public:
  Scale(double d0, double d1, double r0, double r1, bool log = false);
  double operator()(double value) const;

 private:
  double d0_, d1_, r0_, r1_;
  bool log_;
};

/// Round tick values covering [lo, hi]: steps of 1, 2 or 5 × 10^k, at most `maxTicks` of them
/// (lo ≤ hi; an empty range gets one tick).
std::vector<double> niceTicks(double lo, double hi, int maxTicks);
/// Ticks for a duration axis in seconds: steps a person reads at a glance (1 s … 30 s, 1 min …
/// 30 min, 1 h … 12 h, days), at most `maxTicks`, from 0 (linear) or within [lo, hi] (log).
std::vector<double> durationTicks(double lo, double hi, int maxTicks, bool log);
/// "0", "30s", "8m", "1h", "1h 30m", "2d".
std::string shortDuration(double seconds);

/// A line over time. Points are (seconds, value); a step series holds each value until the
/// next point (and the last one until `Chart::xMax`).
struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;
  bool step = false;
  bool dashed = false;
  bool dots = false;  // mark each point
  std::string color;  // empty: from the palette, in series order
};

struct VerticalMarker {
  double x = 0;
  std::string label;
};

struct HorizontalLine {
  double y = 0;
  std::string label;
  std::string color = "#7f7f7f";
};

/// A chart with a duration x axis (seconds) and a numeric y axis.
struct Chart {
  std::string title;
  std::string subtitle;
  std::string xLabel;
  std::string yLabel;
  std::vector<Series> series;
  std::vector<VerticalMarker> markers;
  std::vector<HorizontalLine> lines;
  std::optional<double> xMin;  // default 0 (log: the smallest x)
  std::optional<double> xMax;  // default: the largest x
  std::optional<double> yMax;  // default: the largest y (and line), at least 1
  bool logX = false;
  bool yPercent = false;  // y in [0, 1] shown as percent
};

/// Draws the chart: axes with ticks, grid, markers, lines, series and a legend below the plot.
std::string renderChart(const Chart& chart);

}  // namespace firstwork::report::svg
