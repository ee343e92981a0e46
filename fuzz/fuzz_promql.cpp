// libFuzzer target: the Prometheus query-response parser (signals::parsePromQueryResponse) and the
// useful-work extraction that runs on its result, in both value modes.
//
// Properties: a parsed result is a vector or a matrix, a vector series has exactly one sample;
// extraction (counter values or timestamps, with and without a cluster label) yields at most one
// signal per (namespace, pod, cluster), sorted, each with a finite positive value and both labels.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "firstwork/signals/promql.hpp"
#include "fuzz_check.hpp"

using namespace firstwork;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto r = signals::parsePromQueryResponse(body);
  if (!r.ok()) {
    FW_FUZZ_CHECK(!r.error().empty());
    return 0;
  }
  FW_FUZZ_CHECK(r->resultType == "vector" || r->resultType == "matrix");
  if (r->resultType == "vector") {
    for (const auto& s : r->series) FW_FUZZ_CHECK(s.samples.size() == 1);
  }
  for (int mode = 0; mode < 4; ++mode) {
    signals::ExtractOptions options;
    options.valueIsTimestamp = (mode & 1) != 0;
    if (mode & 2) options.clusterLabel = "cluster";
    signals::Extracted e = signals::extractUsefulWork(*r, options);
    FW_FUZZ_CHECK(e.signals.size() + e.seriesWithoutPod <= r->series.size());
    for (size_t i = 0; i < e.signals.size(); ++i) {
      const auto& s = e.signals[i];
      FW_FUZZ_CHECK(!s.podNamespace.empty() && !s.podName.empty());
      FW_FUZZ_CHECK(std::isfinite(s.value) && s.value > 0);
      if (i > 0) {
        const auto& prev = e.signals[i - 1];
        FW_FUZZ_CHECK(std::tie(prev.podNamespace, prev.podName, prev.cluster) <
                      std::tie(s.podNamespace, s.podName, s.cluster));
      }
    }
  }
  return 0;
}
