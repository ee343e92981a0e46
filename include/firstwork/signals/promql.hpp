#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/result.hpp"

namespace firstwork::signals {

/// One series of a PromQL result: its labels and samples in time order (one sample for an
/// instant vector, several for a range query's matrix).
struct PromSeries {
  std::map<std::string, std::string> labels;
  std::vector<std::pair<SystemTime, double>> samples;
};

/// A parsed `/api/v1/query` response.
struct PromQueryResult {
  std::string resultType;  // "vector" or "matrix"
  std::vector<PromSeries> series;
  std::vector<std::string> warnings;
  size_t malformedSeries = 0;  // result entries skipped because they did not have the expected form
};

/// Parses the JSON body of a Prometheus `/api/v1/query` response (simdjson). A `status: error`
/// body becomes an error carrying Prometheus' errorType and message; a scalar or string result is
/// an error (the probe needs one series per pod). A malformed entry inside `result` is skipped and
/// counted, not fatal. Sample values are Prometheus' strings ("5", "NaN", "+Inf").
Result<PromQueryResult> parsePromQueryResponse(std::string_view body);

/// A pod's first useful work, as seen by the PromQL probe.
struct UsefulWorkSignal {
  std::string podNamespace;
  std::string podName;
  SystemTime at;  // the first positive sample's time (or the sample value, see ExtractOptions)
  double value = 0;
  /// The series' cluster label value when ExtractOptions::clusterLabel is set and present;
  /// empty: the series does not say which cluster the pod runs on.
  std::string cluster;

  bool operator==(const UsefulWorkSignal&) const = default;
};

struct ExtractOptions {
  std::string namespaceLabel = "namespace";
  std::string podLabel = "pod";
  /// The sample value is the Unix time (seconds) of first work, not a work counter.
  bool valueIsTimestamp = false;
  /// Label naming the cluster a pod runs on (e.g. `cluster`, as a Thanos or federation external
  /// label); empty: not read. Series of the same pod name on different clusters stay apart.
  std::string clusterLabel;
};

struct Extracted {
  std::vector<UsefulWorkSignal> signals;  // one per pod, sorted by (namespace, pod)
  size_t seriesWithoutPod = 0;            // series lacking the namespace or pod label
};

/// Design §4 signal 3: per pod, the earliest sample whose value is finite and > 0, across all
/// of the pod's series. With valueIsTimestamp, the earliest finite positive value, read as a Unix
/// time. Pods with no positive sample produce no signal. Pure.
Extracted extractUsefulWork(const PromQueryResult& result, const ExtractOptions& options);

}  // namespace firstwork::signals
