// SVG document primitives, scales and ticks.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "firstwork/report/svg.hpp"

namespace firstwork::report::svg {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0; a name never needs them.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
        else out += c;
    }
  }
  return out;
}

std::string number(double value) {
  std::string s = fmt::format("{:.2f}", value);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

namespace {

std::string styleAttributes(const Style& s) {
  std::string out = fmt::format(" stroke=\"{}\" fill=\"{}\"", escape(s.stroke), escape(s.fill));
  if (s.stroke != "none") out += fmt::format(" stroke-width=\"{}\"", number(s.strokeWidth));
  if (!s.dash.empty()) out += fmt::format(" stroke-dasharray=\"{}\"", escape(s.dash));
  return out;
}

}  // namespace

Document::Document(double width, double height) : width_(width), height_(height) {}

void Document::title(std::string_view text) { title_ = std::string(text); }

void Document::rect(double x, double y, double width, double height, const Style& style) {
  body_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{}/>\n", number(x),
                       number(y), number(width), number(height), styleAttributes(style));
}

void Document::line(double x1, double y1, double x2, double y2, const Style& style) {
  body_ += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"{}/>\n", number(x1),
                       number(y1), number(x2), number(y2), styleAttributes(style));
}

void Document::polyline(const std::vector<std::pair<double, double>>& points, const Style& style) {
  if (points.empty()) return;
  std::string pts;
  for (const auto& [x, y] : points) {
    if (!pts.empty()) pts += ' ';
    pts += number(x) + "," + number(y);
  }
  body_ += fmt::format("<polyline points=\"{}\"{}/>\n", pts, styleAttributes(style));
}

void Document::circle(double cx, double cy, double r, const Style& style) {
  body_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\"{}/>\n", number(cx), number(cy),
                       number(r), styleAttributes(style));
}

void Document::text(double x, double y, std::string_view content, const TextStyle& style) {
  const char* anchor = style.anchor == Anchor::Middle ? "middle"
                       : style.anchor == Anchor::End  ? "end"
                                                      : "start";
  std::string attrs = fmt::format(" font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\"",
                                  number(style.size), anchor, escape(style.fill));
  if (style.bold) attrs += " font-weight=\"bold\"";
  if (style.rotate != 0)
    attrs += fmt::format(" transform=\"rotate({} {} {})\"", number(style.rotate), number(x),
                         number(y));
  body_ += fmt::format("<text x=\"{}\" y=\"{}\"{}>{}</text>\n", number(x), number(y), attrs,
                       escape(content));
}

std::string Document::str() const {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\">\n",
      number(width_), number(height_));
  if (!title_.empty()) out += fmt::format("<title>{}</title>\n", escape(title_));
  out += body_;
  out += "</svg>\n";
  return out;
}

Scale::Scale(double d0, double d1, double r0, double r1, bool log)
    : d0_(d0), d1_(d1), r0_(r0), r1_(r1), log_(log && d0 > 0 && d1 > 0) {}

double Scale::operator()(double value) const {
  double a = d0_, b = d1_, v = value;
  if (log_) {
    a = std::log10(a);
    b = std::log10(b);
    v = std::log10(std::max(value, d0_));
  }
  if (b == a) return (r0_ + r1_) / 2;
  return r0_ + (v - a) / (b - a) * (r1_ - r0_);
}

std::vector<double> niceTicks(double lo, double hi, int maxTicks) {
  if (!(hi > lo) || maxTicks < 2) return {lo};
  // The smallest step of 1, 2 or 5 × 10^e whose ticks from floor(lo) to ceil(hi) fit. Ticks are
  // computed as integers scaled by 10^e (dividing for e < 0), so 0.6 prints as 0.6.
  auto e = static_cast<int>(std::floor(std::log10((hi - lo) / (maxTicks - 1))));
  for (int tries = 0; tries < 4; ++tries, ++e) {
    const double scale = std::pow(10.0, std::abs(e));
    auto value = [&](long long units) {
      return e < 0 ? static_cast<double>(units) / scale : static_cast<double>(units) * scale;
    };
    for (long long m : {1, 2, 5}) {
      const double step = value(m);
      const auto first = static_cast<long long>(std::floor(lo / step + 1e-9));
      const auto last = static_cast<long long>(std::ceil(hi / step - 1e-9));
      if (last - first + 1 > maxTicks) continue;
      std::vector<double> ticks;
      for (long long k = first; k <= last; ++k) ticks.push_back(value(k * m));
      return ticks;
    }
  }
  return {lo, hi};
}

namespace {

// Steps a person reads at a glance on a time axis, in seconds.
constexpr std::array<double, 24> kDurationSteps{
    1,    2,    5,     10,    15,    30,    60,    120,   300,   600,    900,    1800,
    3600, 7200, 10800, 14400, 21600, 43200, 86400, 172800, 604800, 1209600, 2592000, 31536000};

}  // namespace

std::vector<double> durationTicks(double lo, double hi, int maxTicks, bool log) {
  std::vector<double> ticks;
  if (log) {
    // Of the steps inside [lo, hi], every k-th so that at most maxTicks remain.
    std::vector<double> inside;
    for (double s : kDurationSteps)
      if (s >= lo * (1 - 1e-9) && s <= hi * (1 + 1e-9)) inside.push_back(s);
    if (inside.empty()) return {lo};
    size_t every = (inside.size() + static_cast<size_t>(maxTicks) - 1) / static_cast<size_t>(maxTicks);
    for (size_t i = 0; i < inside.size(); i += every) ticks.push_back(inside[i]);
    return ticks;
  }
  double step = kDurationSteps.back();
  for (double s : kDurationSteps) {
    if (std::ceil(hi / s - 1e-9) + 1 <= maxTicks) {
      step = s;
      break;
    }
  }
  double last = std::ceil(hi / step - 1e-9) * step;
  for (double t = 0; t <= last + 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

std::string shortDuration(double seconds) {
  auto s = static_cast<long long>(std::llround(seconds));
  if (s == 0) return "0";
  std::string sign = s < 0 ? "-" : "";
  s = std::llabs(s);
  if (s % 86400 == 0) return fmt::format("{}{}d", sign, s / 86400);
  if (s % 3600 == 0) return fmt::format("{}{}h", sign, s / 3600);
  if (s >= 3600 && s % 60 == 0) return fmt::format("{}{}h {}m", sign, s / 3600, (s % 3600) / 60);
  if (s % 60 == 0) return fmt::format("{}{}m", sign, s / 60);
  if (s > 60) return fmt::format("{}{}m {}s", sign, s / 60, s % 60);
  return fmt::format("{}{}s", sign, s);
}

}  // namespace firstwork::report::svg
