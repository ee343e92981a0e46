#pragma once
// A real Prometheus server (Debian's /usr/bin/prometheus) for end-to-end tests: a free loopback
// port, a temporary data directory, a 1 s scrape and evaluation interval, and a small query
// client for its HTTP API.

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "firstwork/http/httplib.hpp"
#include "support/net.hpp"
#include "support/subprocess.hpp"

namespace firstwork::testing {

class PrometheusServer {
 public:
  /// Scrapes each of `targets` ("127.0.0.1:port", path /metrics) every second as job `job`.
  /// `dir` holds the config, the data directory and prometheus.log.
  PrometheusServer(const std::filesystem::path& dir, const std::vector<std::string>& targets,
                   const std::string& job = "firstwork") {
    std::ofstream cfg(dir / "prometheus.yml");
    cfg << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
           "scrape_configs:\n  - job_name: "
        << job << "\n    static_configs:\n      - targets: [";
    for (size_t i = 0; i < targets.size(); ++i) cfg << (i ? ", '" : "'") << targets[i] << "'";
    cfg << "]\n";
    cfg.close();
    int port = freeLoopbackPort();
    if (port <= 0) throw std::runtime_error("no free loopback port for Prometheus");
    url_ = "http://127.0.0.1:" + std::to_string(port);
    process_ = std::make_unique<Subprocess>(
        std::vector<std::string>{"/usr/bin/prometheus",
                                 "--config.file=" + (dir / "prometheus.yml").string(),
                                 "--storage.tsdb.path=" + (dir / "data").string(),
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port),
                                 "--log.level=warn"},
        (dir / "prometheus.log").string());
  }
  ~PrometheusServer() {
    process_->signal(SIGTERM);
    process_->wait(std::chrono::seconds(20));
  }
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  const std::string& url() const { return url_; }
  Subprocess& process() { return *process_; }

  /// The `data.result` array of an instant query; nullopt when the request or the query fails
  /// (then `error`, when given, holds Prometheus' message).
  std::optional<nlohmann::json> queryResult(const std::string& promql,
                                            std::string* error = nullptr) const {
    return get("/api/v1/query", httplib::Params{{"query", promql}}, error);
  }

  /// The `data.result` matrix of a range query over [start, end] (Unix seconds) every `step`
  /// seconds — what a Grafana time-series panel asks for; nullopt when the query fails (then
  /// `error`, when given, holds Prometheus' message).
  std::optional<nlohmann::json> queryRangeResult(const std::string& promql, double start,
                                                 double end, double step,
                                                 std::string* error = nullptr) const {
    return get("/api/v1/query_range",
               httplib::Params{{"query", promql},
                               {"start", std::to_string(start)},
                               {"end", std::to_string(end)},
                               {"step", std::to_string(step)}},
               error);
  }

  /// The value of an instant query returning one sample; nullopt when empty or failing.
  std::optional<double> query(const std::string& promql) const {
    auto r = queryResult(promql);
    if (!r || r->empty()) return std::nullopt;
    return std::stod((*r)[0]["value"][1].get<std::string>());
  }

 private:
  std::optional<nlohmann::json> get(const std::string& path, const httplib::Params& params,
                                    std::string* error) const {
    httplib::Client c(url_);
    c.set_connection_timeout(2);
    c.set_read_timeout(10);
    auto res = c.Get(path.c_str(), params, httplib::Headers{});
    if (!res) {
      if (error) *error = "no answer from Prometheus";
      return std::nullopt;
    }
    auto j = nlohmann::json::parse(res->body, nullptr, false);
    if (res->status != 200 || j.is_discarded() || !j.contains("data")) {
      if (error) *error = j.is_discarded() || !j.contains("error") ? res->body : j["error"].dump();
      return std::nullopt;
    }
    return j["data"]["result"];
  }

  std::string url_;
  std::unique_ptr<Subprocess> process_;
};

}  // namespace firstwork::testing
