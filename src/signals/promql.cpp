#include "firstwork/signals/promql.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>
#include <cmath>

namespace firstwork::signals {
namespace {

// Prometheus writes sample values as Go's strconv.FormatFloat strings: "5", "0.25", "1e+06",
// "NaN", "+Inf", "-Inf". from_chars reads all of them once a leading '+' is dropped.
bool parseSampleValue(std::string_view text, double& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

/// SystemTime counts nanoseconds in 64 bits (±292 years around 1970); a time outside ±9.2e9 s
/// (years 1678..2261) cannot be one, and converting it would overflow.
constexpr double kMaxUnixSeconds = 9.2e9;

/// False for a time SystemTime cannot hold (and for NaN or ±Inf).
bool fromUnixSeconds(double seconds, SystemTime& out) {
  if (!(std::abs(seconds) <= kMaxUnixSeconds)) return false;
  // Milliseconds: Prometheus timestamps have millisecond resolution, and rounding avoids
  // 1714557600.123 becoming ...122.99999 after the double conversion.
  auto ms = static_cast<int64_t>(std::llround(seconds * 1000.0));
  out = SystemTime{} + std::chrono::milliseconds(ms);
  return true;
}

// [<unix seconds>, "<value>"]
bool parseSample(simdjson::dom::element e, std::pair<SystemTime, double>& out) {
  simdjson::dom::array pair;
  if (e.get_array().get(pair) != simdjson::SUCCESS || pair.size() != 2) return false;
  double ts = 0;
  std::string_view value;
  if (pair.at(0).get_double().get(ts) != simdjson::SUCCESS) return false;
  if (pair.at(1).get_string().get(value) != simdjson::SUCCESS) return false;
  double v = 0;
  if (!parseSampleValue(value, v)) return false;
  SystemTime at;
  if (!fromUnixSeconds(ts, at)) return false;
  out = {at, v};
  return true;
}

}  // namespace

Result<PromQueryResult> parsePromQueryResponse(std::string_view body) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(body);
  simdjson::dom::element root;
  if (auto err = parser.parse(padded).get(root); err != simdjson::SUCCESS) {
    return makeError(fmt::format("response is not JSON: {}", simdjson::error_message(err)));
  }
  simdjson::dom::object top;
  if (root.get_object().get(top) != simdjson::SUCCESS) {
    return makeError("response is not a JSON object");
  }
  std::string_view status;
  if (top["status"].get_string().get(status) != simdjson::SUCCESS) {
    return makeError("response has no \"status\"");
  }
  if (status != "success") {
    std::string_view type;
    std::string_view message;
    if (top["errorType"].get_string().get(type) != simdjson::SUCCESS) type = "unknown";
    if (top["error"].get_string().get(message) != simdjson::SUCCESS) message = "(no message)";
    return makeError(fmt::format("Prometheus query failed ({}): {}", type, message));
  }
  PromQueryResult out;
  simdjson::dom::array warnings;
  if (top["warnings"].get_array().get(warnings) == simdjson::SUCCESS) {
    for (auto w : warnings) {
      std::string_view text;
      if (w.get_string().get(text) == simdjson::SUCCESS) out.warnings.emplace_back(text);
    }
  }
  simdjson::dom::object data;
  if (top["data"].get_object().get(data) != simdjson::SUCCESS) {
    return makeError("response has no \"data\" object");
  }
  std::string_view type;
  if (data["resultType"].get_string().get(type) != simdjson::SUCCESS) {
    return makeError("response has no \"data.resultType\"");
  }
  if (type != "vector" && type != "matrix") {
    return makeError(fmt::format("query returned a {}; it must return series labelled by pod "
                                 "(an instant vector or a range matrix)", type));
  }
  out.resultType = std::string(type);
  simdjson::dom::array result;
  if (data["result"].get_array().get(result) != simdjson::SUCCESS) {
    return makeError("response has no \"data.result\" array");
  }
  bool matrix = type == "matrix";
  for (auto entry : result) {
    PromSeries series;
    simdjson::dom::object obj;
    simdjson::dom::object metric;
    bool ok = entry.get_object().get(obj) == simdjson::SUCCESS &&
              obj["metric"].get_object().get(metric) == simdjson::SUCCESS;
    if (ok) {
      for (auto [key, value] : metric) {
        std::string_view v;
        if (value.get_string().get(v) != simdjson::SUCCESS) {
          ok = false;
          break;
        }
        series.labels.emplace(std::string(key), std::string(v));
      }
    }
    if (ok && !matrix) {
      std::pair<SystemTime, double> sample;
      simdjson::dom::element value;
      ok = obj["value"].get(value) == simdjson::SUCCESS && parseSample(value, sample);
      if (ok) series.samples.push_back(sample);
    } else if (ok) {
      simdjson::dom::array values;
      ok = obj["values"].get_array().get(values) == simdjson::SUCCESS;
      if (ok) {
        for (auto v : values) {
          std::pair<SystemTime, double> sample;
          if (!parseSample(v, sample)) {
            ok = false;
            break;
          }
          series.samples.push_back(sample);
        }
      }
    }
    if (!ok) {
      ++out.malformedSeries;
      continue;
    }
    out.series.push_back(std::move(series));
  }
  return out;
}

Extracted extractUsefulWork(const PromQueryResult& result, const ExtractOptions& options) {
  Extracted out;
  std::map<std::tuple<std::string, std::string, std::string>, UsefulWorkSignal> earliest;
  for (const auto& series : result.series) {
    auto ns = series.labels.find(options.namespaceLabel);
    auto pod = series.labels.find(options.podLabel);
    if (ns == series.labels.end() || pod == series.labels.end() || ns->second.empty() ||
        pod->second.empty()) {
      ++out.seriesWithoutPod;
      continue;
    }
    for (const auto& [ts, value] : series.samples) {
      if (!(value > 0) || !std::isfinite(value)) continue;  // NaN and ±Inf are no evidence
      SystemTime at = ts;
      // A "timestamp" value no clock can hold is no evidence either.
      if (options.valueIsTimestamp && !fromUnixSeconds(value, at)) continue;
      std::string cluster;
      if (!options.clusterLabel.empty()) {
        auto c = series.labels.find(options.clusterLabel);
        if (c != series.labels.end()) cluster = c->second;
      }
      auto key = std::make_tuple(ns->second, pod->second, cluster);
      auto it = earliest.find(key);
      if (it == earliest.end()) {
        earliest.emplace(key, UsefulWorkSignal{ns->second, pod->second, at, value, cluster});
      } else if (at < it->second.at) {
        it->second.at = at;
        it->second.value = value;
      }
      if (!options.valueIsTimestamp) break;  // samples are in time order: the first one wins
    }
  }
  for (auto& [key, signal] : earliest) out.signals.push_back(std::move(signal));
  return out;
}

}  // namespace firstwork::signals
