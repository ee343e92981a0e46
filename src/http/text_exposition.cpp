#include "firstwork/http/text_exposition.hpp"

#include <prometheus/metric_family.h>

#include <charconv>
#include <cstdint>
#include <cmath>
#include <limits>
#include <string_view>

namespace firstwork::http {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// The library sets its stream's precision to max_digits10 - 1 (16) in the default float format:
// printf's %.16g, which std::to_chars with chars_format::general and that precision is
// specified to match (C locale).
constexpr int kPrecision = std::numeric_limits<double>::max_digits10 - 1;

void appendDouble(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "Nan";
  } else if (std::isinf(v)) {
    out += v < 0 ? "-Inf" : "+Inf";
  } else {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, kPrecision);
    out.append(buf, r.ptr);
  }
}

template <typename Int>
void appendInt(std::string& out, Int v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

/// A label value: backslash, double quote and newline escaped with a backslash.
void appendEscaped(std::string& out, std::string_view v) {
  size_t start = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c != '\\' && c != '"' && c != '\n') continue;
    out.append(v.substr(start, i - start));
    out += '\\';
    out += c == '\n' ? 'n' : c;
    start = i + 1;
  }
  out.append(v.substr(start));
}

/// Name, suffix and labels (and one extra label, as histograms' `le` and summaries' `quantile`),
/// then the space before the value.
void appendHead(std::string& out, const MetricFamily& family, const ClientMetric& metric,
                std::string_view suffix = {}, std::string_view extraName = {},
                const double* extraNumber = nullptr, std::string_view extraText = {}) {
  out += family.name;
  out += suffix;
  if (!metric.label.empty() || !extraName.empty()) {
    out += '{';
    const char* sep = "";
    for (const auto& lp : metric.label) {
      out += sep;
      out += lp.name;
      out += "=\"";
      appendEscaped(out, lp.value);
      out += '"';
      sep = ",";
    }
    if (!extraName.empty()) {
      out += sep;
      out += extraName;
      out += "=\"";
      if (extraNumber != nullptr)
        appendDouble(out, *extraNumber);
      else
        appendEscaped(out, extraText);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
}

void appendTail(std::string& out, const ClientMetric& metric) {
  if (metric.timestamp_ms != 0) {
    out += ' ';
    appendInt(out, metric.timestamp_ms);
  }
  out += '\n';
}

/// The `_count` and `_sum` lines of a histogram or summary.
void appendCountAndSum(std::string& out, const MetricFamily& family, const ClientMetric& metric,
                       uint64_t count, double sum) {
  appendHead(out, family, metric, "_count");
  appendInt(out, count);
  appendTail(out, metric);
  appendHead(out, family, metric, "_sum");
  appendDouble(out, sum);
  appendTail(out, metric);
}

void appendHistogram(std::string& out, const MetricFamily& family, const ClientMetric& metric) {
  const auto& h = metric.histogram;
  appendCountAndSum(out, family, metric, h.sample_count, h.sample_sum);
  double last = -std::numeric_limits<double>::infinity();
  for (const auto& b : h.bucket) {
    appendHead(out, family, metric, "_bucket", "le", &b.upper_bound);
    last = b.upper_bound;
    appendInt(out, b.cumulative_count);
    appendTail(out, metric);
  }
  if (last != std::numeric_limits<double>::infinity()) {
    appendHead(out, family, metric, "_bucket", "le", nullptr, "+Inf");
    appendInt(out, h.sample_count);
    appendTail(out, metric);
  }
}

void appendSummary(std::string& out, const MetricFamily& family, const ClientMetric& metric) {
  const auto& s = metric.summary;
  appendCountAndSum(out, family, metric, s.sample_count, s.sample_sum);
  for (const auto& q : s.quantile) {
    appendHead(out, family, metric, "", "quantile", &q.quantile);
    appendDouble(out, q.value);
    appendTail(out, metric);
  }
}

/// A plain value line (counter, gauge, untyped).
void appendValue(std::string& out, const MetricFamily& family, const ClientMetric& metric, double v) {
  appendHead(out, family, metric);
  appendDouble(out, v);
  appendTail(out, metric);
}

const char* typeName(MetricType t) {
  switch (t) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Summary:
      return "summary";
    case MetricType::Untyped:
      return "untyped";
    case MetricType::Histogram:
      return "histogram";
  }
  return nullptr;
}

}  // namespace

std::string serializeText(const std::vector<MetricFamily>& families) {
  std::string out;
  size_t lines = 0;
  for (const auto& f : families) lines += 2 + f.metric.size();
  out.reserve(lines * 96);
  for (const auto& f : families) {
    if (!f.help.empty()) {
      out += "# HELP ";
      out += f.name;
      out += ' ';
      out += f.help;
      out += '\n';
    }
    const char* type = typeName(f.type);
    if (type == nullptr) continue;  // a type the library does not know writes nothing either
    out += "# TYPE ";
    out += f.name;
    out += ' ';
    out += type;
    out += '\n';
    for (const auto& m : f.metric) {
      switch (f.type) {
        case MetricType::Counter:
          appendValue(out, f, m, m.counter.value);
          break;
        case MetricType::Gauge:
          appendValue(out, f, m, m.gauge.value);
          break;
        case MetricType::Untyped:
          appendValue(out, f, m, m.untyped.value);
          break;
        case MetricType::Summary:
          appendSummary(out, f, m);
          break;
        case MetricType::Histogram:
          appendHistogram(out, f, m);
          break;
      }
    }
  }
  return out;
}

}  // namespace firstwork::http
