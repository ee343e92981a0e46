#include "ops_support.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "support/subprocess.hpp"

namespace fs = std::filesystem;

namespace firstwork::ops {
namespace {

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Labels every scrape adds (Prometheus Operator target labels); not part of a family.
const std::set<std::string> kTargetLabels{"job",     "instance", "pod",      "namespace",
                                          "service", "endpoint", "container"};

std::vector<std::string> splitLabels(std::string_view list) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : list) {
    if (isWordChar(c)) {
      cur += c;
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Index of the parenthesis closing the one at `open`, or npos.
size_t closingParen(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// Positions of `firstwork_` and `process_` metric tokens with their names, in order.
std::vector<std::pair<size_t, std::string>> metricTokens(std::string_view expr) {
  std::vector<std::pair<size_t, std::string>> out;
  for (const std::string_view prefix : {"firstwork_", "process_"}) {
    for (size_t p = expr.find(prefix); p != std::string_view::npos; p = expr.find(prefix, p + 1)) {
      if (p > 0 && (isWordChar(expr[p - 1]) || expr[p - 1] == ':')) continue;
      size_t e = p;
      while (e < expr.size() && (isWordChar(expr[e]) || expr[e] == ':')) ++e;
      out.emplace_back(p, std::string(expr.substr(p, e - p)));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The family a metric name belongs to: itself, or a histogram's _bucket/_sum/_count series.
const Family* familyOf(const std::string& name, const std::map<std::string, Family>& families) {
  if (auto it = families.find(name); it != families.end()) {
    // A histogram is only ever queried through its series.
    return it->second.type == MetricType::Histogram ? nullptr : &it->second;
  }
  for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      auto it = families.find(name.substr(0, name.size() - suffix.size()));
      if (it != families.end() && it->second.type == MetricType::Histogram) return &it->second;
    }
  }
  return nullptr;
}

struct Clause {
  std::string keyword;  // by, without, on, ignoring, group_left, group_right
  std::vector<std::string> labels;
  size_t position;
};

std::vector<Clause> clauses(std::string_view expr) {
  static const std::regex re(R"(\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\))");
  std::vector<Clause> out;
  std::string s(expr);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({(*it)[1].str(), splitLabels((*it)[2].str()), static_cast<size_t>(it->position())});
  return out;
}

}  // namespace

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, Family> parseFamilies(std::string_view engineSource,
                                            std::string_view selfSource,
                                            std::string_view processSource) {
  std::map<std::string, Family> families;
  // process_metrics.cpp: `{"process_...", "help", prometheus::MetricType::Y}` in its table.
  {
    std::string src(processSource);
    static const std::regex decl(
        R"re(\{\s*"(process_\w+)",\s*"[^"]*",\s*prometheus::MetricType::(Counter|Gauge)\s*\})re");
    for (auto it = std::sregex_iterator(src.begin(), src.end(), decl); it != std::sregex_iterator();
         ++it) {
      Family f;
      f.name = (*it)[1].str();
      f.type = (*it)[2].str() == "Counter" ? MetricType::Counter : MetricType::Gauge;
      f.process = true;
      families[f.name] = f;
    }
  }
  // engine_metrics.cpp: `member(kind(r, "firstwork_..."`; labels from the member's
  // `.Add(...)`, `.set(...)`, `.total(...)` statements, or `queueHistogram(s_->member, ...)`.
  std::map<std::string, std::string> memberToName;
  {
    std::string src(engineSource);
    static const std::regex decl(R"re((\w+)\(\s*(gauge|counter|histogram)\(\s*r,\s*"(firstwork_\w+)")re");
    for (auto it = std::sregex_iterator(src.begin(), src.end(), decl); it != std::sregex_iterator();
         ++it) {
      Family f;
      f.name = (*it)[3].str();
      const std::string kind = (*it)[2].str();
      f.type = kind == "gauge"     ? MetricType::Gauge
               : kind == "counter" ? MetricType::Counter
                                   : MetricType::Histogram;
      f.engine = true;
      memberToName[(*it)[1].str()] = f.name;
      families[f.name] = f;
    }
    static const std::regex use(
        R"((?:s(?:_->|\.)(\w+)\s*\.\s*(?:Add|set|total)\()|(?:queueHistogram\(\s*s_->(\w+),))");
    static const std::regex label(R"re(\{"([a-z_]+)",)re");
    for (auto it = std::sregex_iterator(src.begin(), src.end(), use); it != std::sregex_iterator();
         ++it) {
      auto member = memberToName.find((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
      if (member == memberToName.end()) continue;
      const size_t start = static_cast<size_t>(it->position() + it->length());
      const size_t end = src.find(';', start);
      const std::string statement = src.substr(start, end - start);
      for (auto l = std::sregex_iterator(statement.begin(), statement.end(), label);
           l != std::sregex_iterator(); ++l)
        families[member->second].labels.insert((*l)[1].str());
    }
  }
  // self_metrics.cpp: `Build<Kind>().Name("firstwork_...")...Register(registry), {labels}`.
  {
    std::string src(selfSource);
    const size_t ctorEnd = std::min(src.find("SelfMetrics::~SelfMetrics"), src.size());
    static const std::regex name(R"re(\.Name\("(firstwork_\w+)"\))re");
    static const std::regex word(R"re("([a-z_]+)")re");
    std::vector<std::pair<size_t, std::string>> names;
    for (auto it = std::sregex_iterator(src.begin(), src.begin() + static_cast<long>(ctorEnd), name);
         it != std::sregex_iterator(); ++it)
      names.emplace_back(static_cast<size_t>(it->position()), (*it)[1].str());
    for (size_t i = 0; i < names.size(); ++i) {
      Family f;
      f.name = names[i].second;
      const size_t at = names[i].first;
      const size_t gauge = src.rfind("BuildGauge()", at);
      const size_t counter = src.rfind("BuildCounter()", at);
      const size_t histogram = src.rfind("BuildHistogram()", at);
      auto dist = [&](size_t p) { return p == std::string::npos ? std::string::npos : at - p; };
      const size_t dg = dist(gauge), dc = dist(counter), dh = dist(histogram);
      f.type = dh <= dg && dh <= dc ? MetricType::Histogram
               : dc <= dg           ? MetricType::Counter
                                    : MetricType::Gauge;
      const size_t chunkEnd = i + 1 < names.size() ? names[i + 1].first : ctorEnd;
      const std::string chunk = src.substr(at, chunkEnd - at);
      for (auto w = std::sregex_iterator(chunk.begin(), chunk.end(), word);
           w != std::sregex_iterator(); ++w)
        if ((*w)[1].str() != f.name) f.labels.insert((*w)[1].str());
      families[f.name] = f;
    }
  }
  return families;
}

std::map<std::string, Family> registeredFamilies(const std::string& sourceDir) {
  return parseFamilies(readFile(sourceDir + "/src/app/engine_metrics.cpp"),
                       readFile(sourceDir + "/src/metrics/self_metrics.cpp"),
                       readFile(sourceDir + "/src/metrics/process_metrics.cpp"));
}

std::vector<Expression> ruleExpressions(const std::string& ruleFile) {
  std::vector<Expression> out;
  YAML::Node doc = YAML::LoadFile(ruleFile);
  for (const auto& group : doc["groups"]) {
    for (const auto& rule : group["rules"]) {
      std::string name = rule["alert"] ? rule["alert"].as<std::string>()
                                       : rule["record"].as<std::string>();
      out.push_back({ruleFile + ": " + name, rule["expr"].as<std::string>()});
    }
  }
  return out;
}

namespace {
void collectPanels(const nlohmann::json& panels, const std::string& file,
                   std::vector<Expression>& out) {
  for (const auto& panel : panels) {
    if (panel.contains("panels")) collectPanels(panel["panels"], file, out);
    if (!panel.contains("targets")) continue;
    for (const auto& target : panel["targets"])
      if (target.contains("expr"))
        out.push_back({file + ": panel \"" + panel.value("title", "") + "\" " +
                           target.value("refId", ""),
                       target["expr"].get<std::string>()});
  }
}
}  // namespace

std::vector<Expression> dashboardExpressions(const std::string& dashboardFile) {
  std::vector<Expression> out;
  auto doc = nlohmann::json::parse(readFile(dashboardFile));
  collectPanels(doc["panels"], dashboardFile, out);
  static const std::regex labelValues(R"(^\s*label_values\((.*),\s*(\w+)\)\s*$)");
  for (const auto& var : doc["templating"]["list"]) {
    if (var.value("type", "") != "query") continue;
    std::smatch m;
    const std::string def = var.value("definition", "");
    if (std::regex_match(def, m, labelValues))
      out.push_back({dashboardFile + ": variable " + var.value("name", ""),
                     "count by (" + m[2].str() + ") (" + m[1].str() + ")", true});
  }
  return out;
}

std::vector<std::string> dashboardFiles(const std::string& sourceDir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(sourceDir + "/dashboards"))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string substituteGrafanaVariables(std::string_view expr) {
  return substituteGrafanaVariables(expr, {});
}

std::string substituteGrafanaVariables(std::string_view expr,
                                       const std::map<std::string, std::string>& values) {
  static const std::regex var(R"(\$\{?(\w+)(?::\w+)?\}?)");
  std::string s(expr);
  std::string out;
  auto last = s.cbegin();
  for (auto it = std::sregex_iterator(s.begin(), s.end(), var); it != std::sregex_iterator(); ++it) {
    out.append(last, s.cbegin() + it->position());
    const std::string name = (*it)[1].str();
    if (auto v = values.find(name); v != values.end())
      out += v->second;
    else if (name == "__range" || name == "__range_s")
      out += "1h";
    else if (name == "__rate_interval")
      out += "5m";
    else if (name == "__interval")
      out += "1m";
    else
      out += "x";
    last = s.cbegin() + it->position() + it->length();
  }
  out.append(last, s.cend());
  return out;
}

std::vector<std::string> metricNames(std::string_view expr) {
  std::vector<std::string> out;
  for (auto& [pos, name] : metricTokens(expr)) out.push_back(name);
  return out;
}

std::vector<std::string> nameProblems(std::string_view expr,
                                      const std::map<std::string, Family>& families) {
  std::vector<std::string> problems;
  std::set<std::string> allowed = kTargetLabels;
  auto tokens = metricTokens(expr);
  if (std::none_of(tokens.begin(), tokens.end(),
                   [](const auto& t) { return t.second.starts_with("firstwork_"); }))
    problems.push_back("uses no firstwork metric");
  for (auto& [pos, name] : tokens) {
    const Family* f = familyOf(name, families);
    if (!f) {
      problems.push_back("unknown metric " + name);
      continue;
    }
    allowed.insert(f->labels.begin(), f->labels.end());
    if (f->type == MetricType::Histogram) allowed.insert("le");
  }
  // Label matchers of every selector.
  static const std::regex matcher(R"((\w+)\s*(=~|!~|!=|=)\s*")");
  for (auto& [pos, name] : tokens) {
    size_t p = pos + name.size();
    if (p >= expr.size() || expr[p] != '{') continue;
    const size_t close = expr.find('}', p);
    std::string body(expr.substr(p + 1, close - p - 1));
    for (auto it = std::sregex_iterator(body.begin(), body.end(), matcher);
         it != std::sregex_iterator(); ++it)
      if (!allowed.count((*it)[1].str()))
        problems.push_back("label " + (*it)[1].str() + " is not a label of " + name);
  }
  for (const auto& c : clauses(expr))
    for (const auto& l : c.labels)
      if (!allowed.count(l)) problems.push_back(c.keyword + " (" + l + "): no such label here");
  return problems;
}

std::vector<std::string> aggregationProblems(std::string_view expr,
                                             const std::map<std::string, Family>& families) {
  std::vector<std::string> problems;
  // Spans inside `max without (instance, pod) ( ... )`.
  std::vector<std::pair<size_t, size_t>> dedup;
  const std::string_view dedupHead = "max without (instance, pod) (";
  for (size_t p = expr.find(dedupHead); p != std::string_view::npos;
       p = expr.find(dedupHead, p + 1)) {
    const size_t open = p + dedupHead.size() - 1;
    dedup.emplace_back(open, closingParen(expr, open));
  }
  // Labels that name a unit: figures that differ in them are never added up (docs/metrics.md).
  std::vector<std::string> unitLabels;
  auto keep = [&](const char* l) {
    if (std::find(unitLabels.begin(), unitLabels.end(), l) == unitLabels.end()) unitLabels.push_back(l);
  };
  for (auto& [pos, name] : metricTokens(expr)) {
    const Family* f = familyOf(name, families);
    if (!f) continue;
    if (f->labels.count("device_class")) keep("device_class");
    if (f->labels.count("unit")) keep("unit");
    if (!f->engine) continue;
    bool inside = std::any_of(dedup.begin(), dedup.end(),
                              [&, p = pos](auto& s) { return p > s.first && p < s.second; });
    if (!inside)
      problems.push_back(name + " is not deduplicated with max without (instance, pod)");
  }
  for (const auto& kept : unitLabels) {
    for (const auto& c : clauses(expr)) {
      const bool has = std::find(c.labels.begin(), c.labels.end(), kept) != c.labels.end();
      if (c.keyword == "by" && !has) problems.push_back("by-clause drops " + kept);
      if (c.keyword == "without" && has) problems.push_back("without-clause drops " + kept);
    }
  }
  if (!unitLabels.empty()) {
    static const std::regex bare(R"(\b(sum|avg|min|max|count|stddev|stdvar|topk|bottomk|quantile|group)\s*\()");
    std::string s(expr);
    if (std::regex_search(s, bare))
      problems.push_back("aggregation without by/without adds up device classes");
  }
  return problems;
}

std::string markdownAnchor(std::string_view heading) {
  std::string out;
  for (char c : heading) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_')
      out += static_cast<char>(std::tolower(u));
    else if (c == ' ')
      out += '-';
    else if (u >= 0x80)
      out += c;  // GitHub keeps non-ASCII letters
  }
  return out;
}

std::set<std::string> markdownAnchors(const std::string& file) {
  std::set<std::string> out;
  std::istringstream in(readFile(file));
  std::string line;
  bool fenced = false;
  while (std::getline(in, line)) {
    if (line.starts_with("```")) fenced = !fenced;
    if (fenced || !line.starts_with("#")) continue;
    const size_t text = line.find_first_not_of('#');
    if (text == std::string::npos || line[text] != ' ') continue;
    std::string heading = line.substr(text + 1);
    while (!heading.empty() && std::isspace(static_cast<unsigned char>(heading.back())))
      heading.pop_back();
    out.insert(markdownAnchor(heading));
  }
  return out;
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = (fs::temp_directory_path() /
           ("firstwork-ops-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
              .string();
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

ToolRun runTool(const std::vector<std::string>& argv, bool stderrSeparately) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  const std::string err = dir.path() + "/err";
  std::vector<std::string> args = argv;
  if (stderrSeparately) {
    // Subprocess sends stderr to the same file; a shell splits the two for tools (kubectl) whose
    // warnings would otherwise land inside the YAML they print.
    std::string cmd = "exec";
    for (const auto& a : argv) cmd += " '" + a + "'";
    cmd += " 2>'" + err + "'";
    args = {"/bin/sh", "-c", cmd};
  }
  testing::Subprocess p(args, out);
  ToolRun run;
  run.exitCode = p.wait(std::chrono::seconds(120)).value_or(-1);
  run.output = p.output();
  if (stderrSeparately && fs::exists(err)) run.errors = readFile(err);
  return run;
}

}  // namespace firstwork::ops
