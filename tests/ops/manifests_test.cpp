// deploy/: kustomize renders it, RBAC is read-only, and the ConfigMap's configuration loads and
// agrees with the StatefulSet, the worker kubeconfig Secret and the alert thresholds.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "firstwork/config/config.hpp"
#include "ops_support.hpp"

using namespace firstwork::ops;

namespace {

const std::string kSource = FIRSTWORK_SOURCE_DIR;

std::vector<YAML::Node> render(const std::string& dir) {
  auto run = runTool({FIRSTWORK_KUBECTL, "kustomize", kSource + "/" + dir}, true);
  INFO("kubectl kustomize " << dir << "\n" << run.errors);
  REQUIRE(run.exitCode == 0);
  std::vector<YAML::Node> docs;
  for (const auto& d : YAML::LoadAll(run.output))
    if (d.IsMap()) docs.push_back(d);
  REQUIRE_FALSE(docs.empty());
  return docs;
}

const YAML::Node* find(const std::vector<YAML::Node>& docs, const std::string& kind,
                       const std::string& name) {
  for (const auto& d : docs)
    if (d["kind"].as<std::string>() == kind && d["metadata"]["name"].as<std::string>() == name)
      return &d;
  return nullptr;
}

// Problems with the RBAC objects of a rendering: any verb beyond get/list/watch, wildcards, a
// binding to a role that the rendering does not define (e.g. cluster-admin).
std::vector<std::string> rbacProblems(const std::vector<YAML::Node>& docs) {
  const std::set<std::string> readOnly{"get", "list", "watch"};
  std::vector<std::string> problems;
  std::set<std::string> roles;
  for (const auto& d : docs) {
    const std::string kind = d["kind"].as<std::string>();
    const std::string name = d["metadata"]["name"].as<std::string>();
    if (kind == "ClusterRole" || kind == "Role") {
      roles.insert(kind + "/" + name);
      if (d["aggregationRule"]) problems.push_back(name + ": aggregationRule");
      for (const auto& rule : d["rules"]) {
        for (const auto& v : rule["verbs"])
          if (!readOnly.count(v.as<std::string>()))
            problems.push_back(name + ": verb " + v.as<std::string>());
        for (const char* key : {"resources", "apiGroups", "nonResourceURLs"})
          if (rule[key])
            for (const auto& r : rule[key])
              if (r.as<std::string>().find('*') != std::string::npos)
                problems.push_back(name + ": wildcard in " + key);
        if (rule["resources"])
          for (const auto& r : rule["resources"])
            if (r.as<std::string>() == "secrets")
              problems.push_back(name + ": reads secrets");
      }
    }
  }
  for (const auto& d : docs) {
    const std::string kind = d["kind"].as<std::string>();
    if (kind != "ClusterRoleBinding" && kind != "RoleBinding") continue;
    const std::string ref =
        d["roleRef"]["kind"].as<std::string>() + "/" + d["roleRef"]["name"].as<std::string>();
    if (!roles.count(ref))
      problems.push_back(d["metadata"]["name"].as<std::string>() + ": binds " + ref +
                         ", not defined here");
  }
  return problems;
}

}  // namespace

TEST_CASE("the RBAC check rejects write verbs and wildcards and foreign roles", "[ops][manifests]") {
  auto docs = YAML::LoadAll(R"(
kind: ClusterRole
metadata: {name: r}
rules:
  - {apiGroups: [""], resources: [pods], verbs: [get, list, watch, patch]}
  - {apiGroups: ["*"], resources: [nodes], verbs: [get]}
  - {apiGroups: [""], resources: [secrets], verbs: [get]}
---
kind: ClusterRoleBinding
metadata: {name: b}
roleRef: {kind: ClusterRole, name: cluster-admin}
)");
  CHECK(rbacProblems(docs) ==
        std::vector<std::string>{"r: verb patch", "r: wildcard in apiGroups", "r: reads secrets",
                                 "b: binds ClusterRole/cluster-admin, not defined here"});
}

TEST_CASE("kubectl kustomize renders deploy/ with read-only RBAC and every piece",
          "[ops][manifests]") {
  const auto docs = render("deploy");
  CHECK(rbacProblems(docs) == std::vector<std::string>{});
  for (auto [kind, name] : std::vector<std::pair<std::string, std::string>>{
           {"Namespace", "firstwork"},
           {"ServiceAccount", "firstwork"},
           {"ClusterRole", "firstwork-reader"},
           {"ClusterRoleBinding", "firstwork-reader"},
           {"ConfigMap", "firstwork-config"},
           {"Secret", "firstwork-worker-kubeconfigs"},
           {"Service", "firstwork"},
           {"StatefulSet", "firstwork"},
           {"ServiceMonitor", "firstwork"},
           {"PrometheusRule", "firstwork"}}) {
    INFO(kind << "/" << name);
    const YAML::Node* d = find(docs, kind, name);
    REQUIRE(d);
    if (kind != "Namespace" && kind != "ClusterRole" && kind != "ClusterRoleBinding")
      CHECK((*d)["metadata"]["namespace"].as<std::string>() == "firstwork");
  }
  // The rendered PrometheusRule still holds every alert.
  const YAML::Node* rule = find(docs, "PrometheusRule", "firstwork");
  size_t rendered = 0;
  for (const auto& g : (*rule)["spec"]["groups"]) rendered += g["rules"].size();
  CHECK(rendered == ruleExpressions(kSource + "/deploy/rules/firstwork-alerts.yaml").size());
}

TEST_CASE("kubectl kustomize renders deploy/worker-rbac with read-only RBAC", "[ops][manifests]") {
  const auto docs = render("deploy/worker-rbac");
  CHECK(rbacProblems(docs) == std::vector<std::string>{});
  CHECK(find(docs, "ClusterRole", "firstwork-reader"));
  CHECK(find(docs, "ServiceAccount", "firstwork"));
}

TEST_CASE("the ConfigMap's configuration loads and matches the StatefulSet and the Secret",
          "[ops][manifests]") {
  const YAML::Node cm = YAML::LoadFile(kSource + "/deploy/base/config-map.yaml");
  const YAML::Node sts = YAML::LoadFile(kSource + "/deploy/base/stateful-set.yaml");
  const YAML::Node secret =
      YAML::LoadFile(kSource + "/deploy/base/worker-kubeconfigs-secret.example.yaml");
  const std::string cmName = cm["metadata"]["name"].as<std::string>();
  REQUIRE(cm["data"].size() == 1);
  const std::string key = cm["data"].begin()->first.as<std::string>();
  const std::string text = cm["data"].begin()->second.as<std::string>();

  // check-config's rules, all but the existence of files that only the pod has.
  auto load = firstwork::config::loadConfigFromStringDetailed(text, {.checkFiles = false});
  INFO(firstwork::config::formatProblems(load.problems));
  REQUIRE(load.ok());
  const auto& config = load.config;

  // The pod: where the ConfigMap and the Secret are mounted, what the daemon is told.
  const YAML::Node pod = sts["spec"]["template"]["spec"];
  // Its shutdown commits what it holds: 19 s measured after a full-estate sync (bench/README.md).
  REQUIRE(pod["terminationGracePeriodSeconds"]);
  CHECK(pod["terminationGracePeriodSeconds"].as<int>() >= 60);
  const YAML::Node container = pod["containers"][0];
  std::map<std::string, std::string> mountOfVolume;
  for (const auto& m : container["volumeMounts"])
    mountOfVolume[m["name"].as<std::string>()] = m["mountPath"].as<std::string>();
  std::string configDir, workersDir;
  for (const auto& v : pod["volumes"]) {
    if (v["configMap"] && v["configMap"]["name"].as<std::string>() == cmName)
      configDir = mountOfVolume[v["name"].as<std::string>()];
    if (v["secret"] &&
        v["secret"]["secretName"].as<std::string>() == secret["metadata"]["name"].as<std::string>())
      workersDir = mountOfVolume[v["name"].as<std::string>()];
  }
  REQUIRE_FALSE(configDir.empty());
  REQUIRE_FALSE(workersDir.empty());
  std::vector<std::string> args;
  for (const auto& a : container["args"]) args.push_back(a.as<std::string>());
  auto flag = [&](const std::string& f) {
    auto it = std::find(args.begin(), args.end(), f);
    return it != args.end() && it + 1 != args.end() ? *(it + 1) : std::string();
  };
  CHECK(flag("--config") == configDir + "/" + key);
  const std::string store = flag("--store").empty() ? config.store.path : flag("--store");
  CHECK(store == config.store.path);
  bool storeOnVolume = false;
  for (const auto& [volume, path] : mountOfVolume)
    storeOnVolume |= volume == "store" && store.starts_with(path + "/");
  CHECK(storeOnVolume);
  CHECK(config.server.listen.ends_with(":" + container["ports"][0]["containerPort"].as<std::string>()));

  // Clusters: the management cluster in-cluster; each worker from its key in the Secret, and
  // every key of the Secret used by a worker.
  std::set<std::string> secretKeys;
  for (const auto& kv : secret["stringData"]) secretKeys.insert(kv.first.as<std::string>());
  std::set<std::string> usedKeys;
  int management = 0;
  for (const auto& c : config.clusters) {
    INFO("cluster " << c.name);
    if (c.role == firstwork::config::ClusterRole::Management) {
      ++management;
      CHECK(c.inCluster);
      continue;
    }
    CHECK(c.role == firstwork::config::ClusterRole::Worker);
    CHECK(c.kubeconfig == workersDir + "/" + c.name + ".kubeconfig");
    CHECK(secretKeys.count(c.name + ".kubeconfig"));
    usedKeys.insert(c.name + ".kubeconfig");
    CHECK_FALSE(c.insecureSkipTLSVerifyAllowed);
  }
  CHECK(management == 1);
  CHECK(usedKeys == secretKeys);

  // The alert thresholds sit on bucket boundaries: 900 s for the slow tails, 300 s for the lag.
  const auto& b = config.metrics.buckets;
  CHECK(std::find(b.begin(), b.end(), 900.0) != b.end());
  const auto& lb = config.metrics.lagBuckets;
  CHECK(std::find(lb.begin(), lb.end(), 300.0) != lb.end());
}
