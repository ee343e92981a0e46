// serializeText must write what prometheus-cpp's TextSerializer writes, byte for byte: it
// replaced the library's serializer on /metrics (change 42), and dashboards, alerts and parsers
// read that text. Every expectation here is the library's own output for the same families.
#include "firstwork/http/text_exposition.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/summary.h>
#include <prometheus/text_serializer.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

using namespace firstwork;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

namespace {

std::string library(const std::vector<MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

/// Values where formatting choices show: the 16-digit cut, exponents either way, signed zero,
/// integers past 2^53, the smallest and largest doubles, NaN and infinities.
const std::vector<double>& edgeValues() {
  static const std::vector<double> v = {
      0, -0.0, 1, -1, 0.1, 0.5, 2.5, 1.0 / 3, 2.0 / 3, 0.30000000000000004, 19200, 1e15, 1e16, 1e17,
      123456789012345678.0, 9007199254740993.0, 12345.678901234567, 1e-5, 1e-7, 1.5e-300,
      std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::min(),
      std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(),
      std::numeric_limits<double>::epsilon(), 1e21, 1e22, 123456.5, 0.000123456789,
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
      -std::numeric_limits<double>::infinity()};
  return v;
}

ClientMetric metricWith(std::vector<ClientMetric::Label> labels, int64_t timestamp = 0) {
  ClientMetric m;
  m.label = std::move(labels);
  m.timestamp_ms = timestamp;
  return m;
}

}  // namespace

TEST_CASE("text exposition: every metric type with edge values as the library writes them", "[http][exposition]") {
  std::vector<MetricFamily> families;
  MetricFamily gauge{"edge_gauge", "A gauge of edge values", MetricType::Gauge, {}};
  for (double v : edgeValues()) {
    auto m = metricWith({{"cluster", "worker-1"}, {"unit", "gpu"}});
    m.gauge.value = v;
    gauge.metric.push_back(m);
  }
  families.push_back(gauge);
  MetricFamily counter{"edge_total", "", MetricType::Counter, {}};  // no HELP line
  for (double v : edgeValues()) {
    auto m = metricWith({});
    m.counter.value = v;
    counter.metric.push_back(m);
  }
  families.push_back(counter);
  MetricFamily untyped{"edge_untyped", "untyped, with a timestamp", MetricType::Untyped, {}};
  auto u = metricWith({{"a", "b"}}, 1764633600123);
  u.untyped.value = 42.125;
  untyped.metric.push_back(u);
  families.push_back(untyped);
  MetricFamily hist{"edge_seconds", "histograms: with and without an explicit +Inf bucket", MetricType::Histogram, {}};
  auto h1 = metricWith({{"cluster", "c"}});
  h1.histogram.sample_count = 7;
  h1.histogram.sample_sum = 1234.5678;
  h1.histogram.bucket = {{1, 0.005}, {2, 0.1}, {3, 2.5}, {5, 120}, {6, 14400}, {7, 1e5}};
  hist.metric.push_back(h1);
  auto h2 = metricWith({{"cluster", "d"}}, -5);
  h2.histogram.sample_count = 3;
  h2.histogram.sample_sum = std::numeric_limits<double>::quiet_NaN();
  h2.histogram.bucket = {{1, 1}, {3, std::numeric_limits<double>::infinity()}};
  hist.metric.push_back(h2);
  auto h3 = metricWith({});  // no labels: `le` alone in braces
  h3.histogram.sample_count = 0;
  h3.histogram.sample_sum = 0;
  hist.metric.push_back(h3);
  families.push_back(hist);
  MetricFamily summary{"edge_summary", "summary", MetricType::Summary, {}};
  auto s = metricWith({{"q", "x"}}, 99);
  s.summary.sample_count = 18446744073709551615ULL;
  s.summary.sample_sum = -0.25;
  s.summary.quantile = {{0.5, 1.0}, {0.9, 0.1}, {0.99, std::numeric_limits<double>::quiet_NaN()}};
  summary.metric.push_back(s);
  families.push_back(summary);
  families.push_back(MetricFamily{"edge_empty", "a family without series", MetricType::Gauge, {}});

  const std::string expected = library(families);
  REQUIRE(expected.find("edge_seconds_bucket{cluster=\"c\",le=\"+Inf\"} 7") != std::string::npos);
  CHECK(http::serializeText(families) == expected);
}

TEST_CASE("text exposition: label values with quotes, backslashes, newlines and UTF-8 as the library escapes them",
          "[http][exposition]") {
  MetricFamily f{"escapes", "HELP text is written as it is: back\\slash", MetricType::Gauge, {}};
  for (const char* v : {"", "plain", "quote\"d", "back\\slash", "new\nline", "\"\\\n\"\\\n", "end\\",
                        "\"", "ümlaut — 日本", "tab\there", "a,b=c{d}"}) {
    auto m = metricWith({{"value", v}, {"second", v}});
    m.gauge.value = 1;
    f.metric.push_back(m);
  }
  const std::string expected = library({f});
  REQUIRE(expected.find("quote\\\"d") != std::string::npos);
  CHECK(http::serializeText({f}) == expected);
}

TEST_CASE("text exposition: a registry's families, and 20000 random doubles, as the library writes them",
          "[http][exposition]") {
  prometheus::Registry registry;
  auto& c = prometheus::BuildCounter().Name("firstwork_test_total").Help("a counter").Register(registry);
  auto& g = prometheus::BuildGauge().Name("firstwork_test_gpus").Help("a gauge").Register(registry);
  auto& h = prometheus::BuildHistogram().Name("firstwork_test_seconds").Help("a histogram").Register(registry);
  auto& s = prometheus::BuildSummary().Name("firstwork_test_summary").Help("a summary").Register(registry);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> seconds(0, 20000);
  for (int i = 0; i < 20; ++i) {
    const std::string cluster = "worker-" + std::to_string(i);
    c.Add({{"cluster", cluster}}).Increment(seconds(rng));
    g.Add({{"cluster", cluster}, {"state", "usable"}}).Set(std::floor(seconds(rng)));
    auto& hist = h.Add({{"cluster", cluster}}, prometheus::Histogram::BucketBoundaries{15, 30, 60, 120, 300, 600, 1200, 3600, 14400});
    for (int k = 0; k < 50; ++k) hist.Observe(seconds(rng));
    auto& sum = s.Add({{"cluster", cluster}}, prometheus::Summary::Quantiles{{0.5, 0.05}, {0.99, 0.001}});
    for (int k = 0; k < 50; ++k) sum.Observe(seconds(rng));
  }
  const auto families = registry.Collect();
  CHECK(http::serializeText(families) == library(families));

  // Doubles from every magnitude: random bit patterns (NaN payloads and infinities included).
  MetricFamily f{"random_values", "", MetricType::Gauge, {}};
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    ClientMetric m;
    m.gauge.value = v;
    f.metric.push_back(m);
  }
  CHECK(http::serializeText({f}) == library({f}));
}
