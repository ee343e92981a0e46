#pragma once
// Helpers for the tests of the operator artefacts (alert rules, PrometheusRule, dashboards,
// manifests): the metric families firstworkd registers, read from its sources; the PromQL
// expressions of the rules and dashboards; static checks on those expressions; running tools.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace firstwork::ops {

enum class MetricType { Counter, Gauge, Histogram };

/// One metric family as registered in src/app/engine_metrics.cpp or src/metrics/self_metrics.cpp.
struct Family {
  std::string name;
  MetricType type = MetricType::Gauge;
  std::set<std::string> labels;
  bool engine = false;  // what firstwork measures about the estate (not its own health)
  bool process = false;  // a standard process_* family (src/metrics/process_metrics.cpp)
};

/// Every family registered in the three metric sources, by name. Parsed from the sources so that
/// renaming a metric there breaks the dashboards' and rules' tests.
std::map<std::string, Family> registeredFamilies(const std::string& sourceDir);
/// The family parser on given texts (tests of the parser itself). `processSource` declares the
/// process_* families as `{"process_...", "help", prometheus::MetricType::Y}` entries of a table.
std::map<std::string, Family> parseFamilies(std::string_view engineSource,
                                            std::string_view selfSource,
                                            std::string_view processSource = {});

/// A PromQL expression and where it comes from (for messages).
struct Expression {
  std::string where;
  std::string expr;
  bool variable = false;  // a dashboard variable's label_values() selector, as `count by (label)`
};

/// Every alert/recording expression of a Prometheus rule file.
std::vector<Expression> ruleExpressions(const std::string& ruleFile);
/// Every panel target expression of a Grafana dashboard, plus the selectors of its
/// label_values() variable queries.
std::vector<Expression> dashboardExpressions(const std::string& dashboardFile);
/// The dashboards in dashboards/.
std::vector<std::string> dashboardFiles(const std::string& sourceDir);

/// Grafana's variables replaced by values PromQL accepts ($__range → 1h, $x → x).
std::string substituteGrafanaVariables(std::string_view expr);
/// The same with chosen values for some variables (by name without `$`, e.g. {"cluster", ".*"}).
std::string substituteGrafanaVariables(std::string_view expr,
                                       const std::map<std::string, std::string>& values);

/// Metric names (`firstwork_...`, `process_...`) used in an expression, in order of appearance.
std::vector<std::string> metricNames(std::string_view expr);
/// Problems with the metric and label names an expression uses; empty when all are registered
/// and at least one is firstwork's own (process_* families are every exporter's: an expression
/// picks firstwork's with `and on (job, instance) firstwork_build_info`).
std::vector<std::string> nameProblems(std::string_view expr,
                                      const std::map<std::string, Family>& families);
/// Problems with deduplication across HA replicas (estate metrics must sit inside
/// `max without (instance, pod) (...)`) and with device classes (never aggregated away).
std::vector<std::string> aggregationProblems(std::string_view expr,
                                             const std::map<std::string, Family>& families);

/// GitHub's anchor for a Markdown heading text ("Firstwork Watch Down" → "firstwork-watch-down").
std::string markdownAnchor(std::string_view heading);
/// Anchors of every heading in a Markdown file.
std::set<std::string> markdownAnchors(const std::string& file);

std::string readFile(const std::string& path);

struct ToolRun {
  int exitCode = -1;  // -1: did not finish in time
  std::string output;  // stdout (and stderr unless stderrSeparately)
  std::string errors;  // stderr when stderrSeparately
};
/// Runs argv[0] (an absolute path) with a bounded wait.
ToolRun runTool(const std::vector<std::string>& argv, bool stderrSeparately = false);

/// A directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace firstwork::ops
