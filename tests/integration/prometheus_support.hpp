#pragma once
// `firstworkd demo` scraped every second by a real Prometheus, for end-to-end tests that read the
// daemon's figures back through PromQL.
#include <catch2/catch.hpp>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "support/prometheus.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "support/test_logs.hpp"

namespace firstwork::testing {

/// Starts `firstworkd demo` with `demoArgs` (looping unless they say --once) and a Prometheus
/// scraping it each second. Stops both at scope exit (Ctrl-C must exit the demo with 0).
struct Estate {
  TempDir dir{"firstwork-prom"};
  std::unique_ptr<Subprocess> demo;
  std::unique_ptr<PrometheusServer> prometheus;

  /// The demo looping one scenario at 120×.
  explicit Estate(const std::string& scenario)
      : Estate(std::vector<std::string>{"--scenario", scenario, "--speed", "120"}) {}

  explicit Estate(const std::vector<std::string>& demoArgs) {
    using namespace std::chrono_literals;
    std::vector<std::string> argv{FIRSTWORKD_PATH, "demo", "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), demoArgs.begin(), demoArgs.end());
    demo = std::make_unique<Subprocess>(argv, testLogPath("prometheus-demo"));
    std::string target;
    eventually(
        [&] {
          std::smatch m;
          auto out = demo->output();
          static const std::regex re("metrics: +http://(127\\.0\\.0\\.1:[0-9]+)/metrics");
          if (std::regex_search(out, m, re)) target = m[1];
          return !target.empty() || !demo->running();
        },
        30s);
    INFO(demo->output());
    REQUIRE(!target.empty());
    prometheus = std::make_unique<PrometheusServer>(dir.path, std::vector<std::string>{target});
  }
  ~Estate() {
    using namespace std::chrono_literals;
    prometheus.reset();
    if (demo->running()) {
      demo->signal(SIGINT);
      auto code = demo->wait(30s);
      CHECK(code == std::optional<int>(0));  // Ctrl-C exits cleanly
    }
  }
  Estate(const Estate&) = delete;
  Estate& operator=(const Estate&) = delete;

  /// The value of an instant PromQL query returning one sample; nullopt when empty or failing.
  std::optional<double> query(const std::string& promql) { return prometheus->query(promql); }
};

}  // namespace firstwork::testing
