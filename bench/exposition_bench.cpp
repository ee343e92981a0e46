// firstwork_exposition_bench: rendering /metrics — http::serializeText (change 42) against the
// library's prometheus::TextSerializer on the same collected families, and the registry's
// Collect() beside them, per rendering (CPU time of this thread; wall time alongside).
//
// The registry is shaped like the daemon's at an estate (the gauges and counters of
// docs/metrics.md labelled by cluster, cluster queue, device class, unit and state, and the
// latency histograms by cluster): `--queues N` ClusterQueues (default 20) on `--clusters N`
// worker clusters (default 4). Values are random but fixed (seed 1). Both serializers' outputs
// are compared; a difference fails the run.
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include "firstwork/http/text_exposition.hpp"

namespace {

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  double cpuMs = 0;
  double wallMs = 0;
};

template <typename Fn>
Timing timeEach(int iterations, Fn&& fn) {
  const double cpu0 = threadCpuSeconds();
  const auto wall0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) fn();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return {(threadCpuSeconds() - cpu0) * 1e3 / iterations, wall * 1e3 / iterations};
}

void fill(prometheus::Registry& r, int clusters, int queues) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> value(0, 1e6);
  const char* states[] = {"reserved", "allocated", "productive", "idle"};
  for (int f = 0; f < 12; ++f) {  // by cluster queue and state
    auto& g = prometheus::BuildGauge()
                  .Name("firstwork_queue_family_" + std::to_string(f))
                  .Help("A gauge family labelled like the daemon's per-queue figures.")
                  .Register(r);
    for (int c = 0; c < clusters; ++c)
      for (int q = 0; q < queues; ++q)
        for (const char* s : states)
          g.Add({{"cluster", "worker-" + std::to_string(c)},
                 {"cluster_queue", "team-" + std::to_string(q) + "-cq"},
                 {"device_class", "nvidia.com/gpu"},
                 {"unit", "gpu"},
                 {"state", s}})
              .Set(std::floor(value(rng)));
  }
  for (int f = 0; f < 12; ++f) {  // by cluster
    auto& c = prometheus::BuildCounter()
                  .Name("firstwork_cluster_family_" + std::to_string(f) + "_total")
                  .Help("A counter family labelled like the daemon's per-cluster figures.")
                  .Register(r);
    for (int k = 0; k < clusters; ++k)
      c.Add({{"cluster", "worker-" + std::to_string(k)}, {"device_class", "nvidia.com/gpu"}, {"unit", "gpu"}})
          .Increment(value(rng) / 7);
  }
  for (int f = 0; f < 8; ++f) {  // latency histograms by cluster
    auto& h = prometheus::BuildHistogram()
                  .Name("firstwork_latency_family_" + std::to_string(f) + "_seconds")
                  .Help("A histogram family labelled like the daemon's latencies.")
                  .Register(r);
    for (int k = 0; k < clusters; ++k) {
      auto& x = h.Add({{"cluster", "worker-" + std::to_string(k)}},
                      prometheus::Histogram::BucketBoundaries{5, 15, 30, 60, 120, 300, 600, 900, 1200,
                                                             1800, 3600, 7200, 14400});
      for (int i = 0; i < 200; ++i) x.Observe(value(rng) / 50);
    }
  }
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--smoke] [--clusters N] [--queues N] [--iterations N]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int clusters = 4, queues = 20, iterations = 300;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--smoke") {
      clusters = 1;
      queues = 2;
      iterations = 3;
      continue;
    }
    if (i + 1 >= argc) return usage(argv[0]);
    const int v = std::atoi(argv[++i]);
    if (v <= 0) return usage(argv[0]);
    if (a == "--clusters") {
      clusters = v;
    } else if (a == "--queues") {
      queues = v;
    } else if (a == "--iterations") {
      iterations = v;
    } else {
      return usage(argv[0]);
    }
  }
  prometheus::Registry registry;
  fill(registry, clusters, queues);
  auto families = registry.Collect();
  std::string ours, theirs;
  const Timing collect = timeEach(iterations, [&] { families = registry.Collect(); });
  const Timing library = timeEach(iterations, [&] {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, families);
    theirs = out.str();
  });
  const Timing serialize = timeEach(iterations, [&] { ours = firstwork::http::serializeText(families); });
  size_t series = 0;
  for (const auto& f : families) series += f.metric.size();
  std::printf("firstwork_exposition_bench: %d clusters, %d queues: %zu families, %zu series, %zu bytes; "
              "%d renderings each\n",
              clusters, queues, families.size(), series, ours.size(), iterations);
  std::printf("  Collect()                     %.3f ms CPU (%.3f ms wall)\n", collect.cpuMs, collect.wallMs);
  std::printf("  prometheus::TextSerializer    %.3f ms CPU (%.3f ms wall)   [reference]\n", library.cpuMs, library.wallMs);
  std::printf("  http::serializeText           %.3f ms CPU (%.3f ms wall)   %.1fx the reference's speed\n",
              serialize.cpuMs, serialize.wallMs, library.cpuMs / serialize.cpuMs);
  if (ours != theirs) {
    std::fprintf(stderr, "error: serializeText's output differs from the library's\n");
    return 1;
  }
  std::printf("  outputs identical\n");
  return 0;
}
