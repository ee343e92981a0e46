// Hostile and broken input: every fixture cut at every length, every field given the wrong type,
// deep nesting, invalid UTF-8, huge objects, duplicate keys and out-of-range numbers. The decoders
// must return an error (naming the field when the JSON itself is fine) or skip — never crash.
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "firstwork/model/decode.hpp"
#include "model_test_util.hpp"

using namespace firstwork;
using namespace firstwork::model;
using firstwork::testing::decodeError;
using firstwork::testing::decodeJson;
using firstwork::testing::fixtureLines;
using firstwork::testing::readFixture;

namespace {

struct FixtureKind {
  const char* file;
  Kind kind;
};

// Every single-object fixture of a watched kind.
const FixtureKind kObjects[] = {
    {"kueue-workload-v1beta1-admitted-rayjob-issue5711.json", Kind::Workload},
    {"kueue-workload-v1beta1-pod-owned-gpu-admissioncheck-issue2213.json", Kind::Workload},
    {"kueue-workload-status-evicted-deactivated-admissioncheck-issue6035.json", Kind::Workload},
    {"kueue-workload-status-finished-succeeded-issue6998.json", Kind::Workload},
    {"kueue-workload-status-pending-quota-docs.json", Kind::Workload},
    {"kueue-workload-status-preempted-docs.json", Kind::Workload},
    {"kueue-workload-v1beta2-dra-rct-admitted-CONSTRUCTED.json", Kind::Workload},
    {"kueue-workload-v1beta2-multikueue-manager-admitted-CONSTRUCTED.json", Kind::Workload},
    {"kueue-workload-v1beta2-multikueue-worker-copy-CONSTRUCTED.json", Kind::Workload},
    {"kueue-workload-v1beta2-podsreadytimeout-evicted-CONSTRUCTED.json", Kind::Workload},
    {"kueue-workload-v1beta2-preempted-fairsharing-requeued-CONSTRUCTED.json", Kind::Workload},
    {"kueue-multikueue-status-objects-CONSTRUCTED-1.json", Kind::MultiKueueCluster},
    {"kueue-multikueue-status-objects-CONSTRUCTED-2.json", Kind::MultiKueueCluster},
    {"kueue-multikueue-status-objects-CONSTRUCTED-3.json", Kind::AdmissionCheck},
    {"kueue-multikueue-setup-2.json", Kind::ClusterQueue},
    {"kueue-multikueue-setup-4.json", Kind::AdmissionCheck},
    {"kueue-multikueue-setup-5.json", Kind::MultiKueueConfig},
    {"kueue-multikueue-setup-6.json", Kind::MultiKueueCluster},
    {"kueue-dra-sample-queues-2.json", Kind::ClusterQueue},
    {"pod-dra-resourceclaimstatuses-running-CONSTRUCTED.json", Kind::Pod},
    {"pod-job-kueue-admitted-running-gpu-CONSTRUCTED.json", Kind::Pod},
    {"pod-kueue-gated-admission-pending-CONSTRUCTED.json", Kind::Pod},
    {"pod-kueue-plain-pod-unschedulable-stoppedbykueue-issue2213.json", Kind::Pod},
    {"pod-waiting-crashloopbackoff-CONSTRUCTED.json", Kind::Pod},
    {"pod-waiting-createcontainerconfigerror-CONSTRUCTED.json", Kind::Pod},
    {"pod-waiting-errimagepull-CONSTRUCTED.json", Kind::Pod},
    {"pod-waiting-imagepullbackoff-CONSTRUCTED.json", Kind::Pod},
    {"dra-resourceclaimtemplate-v1-and-pods-dra-example-driver-3.json", Kind::Pod},
    {"dra-resourceclaim-v1-status-config-fromclass-issue134789.json", Kind::ResourceClaim},
    {"dra-resourceslice-v1-nvidia-gpu-openshift-conformance.json", Kind::ResourceSlice},
    {"dra-resourceslice-v1-partitionable-two-slice-pool-kep2941-1.json", Kind::ResourceSlice},
    {"dra-resourceslice-v1-partitionable-two-slice-pool-kep2941-2.json", Kind::ResourceSlice},
    {"dra-resourceslice-v1beta1-basic-wrapper-CONSTRUCTED.json", Kind::ResourceSlice},
    {"node-gpu-ready-CONSTRUCTED.json", Kind::Node},
    {"node-gpu-mig-notready-cordoned-CONSTRUCTED.json", Kind::Node},
};

const FixtureKind kLists[] = {
    {"list-podlist-paginated-page1-CONSTRUCTED.json", Kind::Pod},
    {"dra-resourceclaim-v1-allocated-reserved-nvidia.json", Kind::ResourceClaim},
    {"dra-resourceslice-v1-list-dra-example-driver.json", Kind::ResourceSlice},
    {"dra-resourceslice-v1-pool-generation-rollover-incomplete-CONSTRUCTED.json",
     Kind::ResourceSlice},
};

bool validUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

/// Our error path with map keys written like object keys: `a["b/c"].d` → `a.b/c.d`.
std::string normalisePath(std::string p) {
  for (size_t at; (at = p.find("[\"")) != std::string::npos;) p.replace(at, 2, ".");
  for (size_t at; (at = p.find("\"]")) != std::string::npos;) p.erase(at, 2);
  return p;
}

/// Every node of `j` with the field path the decoder reports for it.
void collectPaths(const nlohmann::json& j, const nlohmann::json::json_pointer& ptr,
                  const std::string& path,
                  std::vector<std::pair<nlohmann::json::json_pointer, std::string>>& out) {
  if (!path.empty()) out.emplace_back(ptr, path);
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      collectPaths(it.value(), ptr / it.key(), path.empty() ? it.key() : path + "." + it.key(), out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      collectPaths(j[i], ptr / i, path + "[" + std::to_string(i) + "]", out);
    }
  }
}

}  // namespace

TEST_CASE("every prefix of every fixture is rejected without crashing", "[model][robustness]") {
  for (const auto& f : kObjects) {
    std::string s = readFixture(f.file);
    size_t complete = s.find_last_of('}') + 1;
    INFO(f.file);
    for (size_t n = 0; n < s.size(); ++n) {
      auto r = decodeObject(std::string_view(s.data(), n), f.kind);
      if (n < complete && r.ok()) FAIL("prefix of " << n << " bytes decoded");
    }
    CHECK(decodeObject(s, f.kind).ok());
  }
  for (const auto& f : kLists) {
    std::string s = readFixture(f.file);
    size_t complete = s.find_last_of('}') + 1;
    INFO(f.file);
    for (size_t n = 0; n < s.size(); ++n) {
      auto r = decodeList(std::string_view(s.data(), n), f.kind);
      if (n < complete && r.ok()) FAIL("prefix of " << n << " bytes decoded");
    }
    CHECK(decodeList(s, f.kind).ok());
  }
  for (auto [file, kind] : {std::pair{"watch-stream-streaming-list-pods-CONSTRUCTED.jsonl", Kind::Pod},
                            std::pair{"watch-stream-workloads-bookmark-then-410-CONSTRUCTED.jsonl",
                                      Kind::Workload}}) {
    for (const auto& line : fixtureLines(file)) {
      INFO(line);
      for (size_t n = 0; n < line.size(); ++n) {
        std::string prefix = line.substr(0, n);
        if (decodeWatchEvent(prefix, kind).ok()) FAIL("prefix of " << n << " bytes decoded");
        CHECK(prefix.size() == n);  // the in-place overload restores the caller's string
      }
    }
  }
}

TEST_CASE("a wrong type anywhere is reported at exactly that field", "[model][robustness]") {
  size_t erroring = 0, mutations = 0;
  std::vector<std::string> managerErrors;
  for (const auto& f : kObjects) {
    const auto doc = nlohmann::json::parse(readFixture(f.file));
    std::vector<std::pair<nlohmann::json::json_pointer, std::string>> nodes;
    collectPaths(doc, nlohmann::json::json_pointer(), "", nodes);
    for (const auto& [ptr, path] : nodes) {
      const auto& original = doc.at(ptr);
      if (original.is_null()) continue;
      auto mutated = doc;
      mutated.at(ptr) = original.is_string() ? nlohmann::json(12345) : nlohmann::json("x");
      auto r = decodeObject(mutated.dump(), f.kind);
      ++mutations;
      if (r.ok()) continue;  // a field the decoder does not read
      ++erroring;
      INFO(f.file << " " << path << " => " << r.error());
      CHECK(normalisePath(r.error()).rfind(path + ": ", 0) == 0);
      if (std::string(f.file) == "kueue-workload-v1beta2-multikueue-manager-admitted-CONSTRUCTED.json") {
        managerErrors.push_back(path);
      }
    }
  }
  INFO(erroring << " of " << mutations << " mutations rejected");
  // Fields the engine depends on must be among the rejected ones (and an assignment's flavors and
  // resourceUsage, which are checked though not kept: change 106).
  for (const char* p : {"metadata.uid", "metadata.name", "metadata.creationTimestamp",
                        "metadata.labels.kueue.x-k8s.io/job-uid", "metadata.ownerReferences[0].uid",
                        "spec.podSets[0].count",
                        "spec.podSets[0].template.spec.containers[0].resources.requests",
                        "status.admission.clusterQueue",
                        "status.admission.podSetAssignments[0].resourceUsage",
                        "status.admission.podSetAssignments[0].flavors.nvidia.com/gpu",
                        "status.admissionChecks[0].state", "status.clusterName",
                        "status.conditions[1].lastTransitionTime", "status.conditions[1].status"}) {
    INFO(p);
    CHECK(std::find(managerErrors.begin(), managerErrors.end(), p) != managerErrors.end());
  }
  // And fields nobody reads must stay ignored (the API adds fields over time).
  for (const char* p : {"metadata.finalizers", "spec.priorityClassRef.group",
                        "status.conditions[0].observedGeneration",
                        "spec.podSets[0].template.spec.containers[0].image"}) {
    INFO(p);
    CHECK(std::find(managerErrors.begin(), managerErrors.end(), p) == managerErrors.end());
  }
}

TEST_CASE("deep nesting is skipped or rejected, never recursed into", "[model][robustness]") {
  const size_t depth = 100000;
  std::string arrays = std::string(depth, '[') + std::string(depth, ']');
  std::string objects;
  for (size_t i = 0; i < depth; ++i) objects += "{\"a\":";
  objects += "1" + std::string(depth, '}');

  auto ignored = decodeObject(R"({"metadata":{"name":"p","uid":"u"},"x":)" + arrays +
                                  R"(,"spec":{"y":)" + objects + "}}",
                              Kind::Pod);
  CHECK(ignored.ok());
  CHECK(decodeError(R"({"metadata":{"name":"p","uid":"u"},"status":{"conditions":)" + arrays + "}}",
                    Kind::Pod) == "status.conditions[0]: expected object, got array (Pod p)");
  CHECK(decodeError(R"({"metadata":{"name":"p","uid":"u","labels":{"firstwork.dev/a":)" + objects +
                        "}}}",
                    Kind::Pod) ==
        "metadata.labels[\"firstwork.dev/a\"]: expected string, got object (Pod p)");
  std::string basic;
  for (int i = 0; i < 10000; ++i) basic += R"({"basic":)";
  basic += R"({"name":"deep"})" + std::string(10000, '}');
  auto slice = decodeJson<ResourceSlice>(
      R"({"metadata":{"name":"s","uid":"u"},"spec":{"devices":[)" + basic + "]}}",
      Kind::ResourceSlice);
  REQUIRE(slice.devices.size() == 1);
  CHECK(slice.devices[0].name.empty());  // only one level of `basic` is unwrapped
  auto ev = decodeWatchEvent(R"({"type":"ADDED","x":)" + arrays + R"(,"object":{"metadata":{"name":"p","uid":"u"}}})",
                             Kind::Pod);
  REQUIRE(ev.ok());
  CHECK(ev->object.has_value());
}

TEST_CASE("invalid UTF-8, control characters and NUL bytes are rejected", "[model][robustness]") {
  const std::string bad[] = {
      std::string(R"({"metadata":{"name":"p)") + "\xff" + R"(","uid":"u"}})",
      std::string(R"({"metadata":{"name":"p)") + "\xc0\xaf" + R"(","uid":"u"}})",
      std::string(R"({"metadata":{"name":"p)") + "\xed\xa0\x80" + R"(","uid":"u"}})",
      std::string(R"({"metadata":{"name":"p)") + "\x01" + R"(","uid":"u"}})",
      std::string(R"({"metadata":{"name":"p)") + std::string(1, '\0') + R"(","uid":"u"}})",
      std::string(R"({"metadata":{"name":"p","uid":"u"}})") + std::string(1, '\0'),
  };
  for (size_t i = 0; i < std::size(bad); ++i) {
    const auto& s = bad[i];
    INFO(s);
    auto r = decodeObject(s, Kind::Pod);
    CHECK_FALSE(r.ok());
    auto ev = decodeWatchEvent(R"({"type":"ADDED","object":)" + s + "}", Kind::Pod);
    if (i < 3) {
      // Invalid UTF-8 (the first three): the line is repaired to find its place in the stream,
      // the object is skipped (docs/security.md, hostile input).
      REQUIRE(ev.ok());
      CHECK_FALSE(ev->object.has_value());
      CHECK(ev->decodeError.rfind("invalid UTF-8", 0) == 0);
    } else {
      CHECK_FALSE(ev.ok());  // control characters and NUL bytes are not JSON at all
    }
  }
  // An escaped lone surrogate is valid JSON text; whatever the parser makes of it, what we keep
  // must be valid UTF-8 (downstream JSON writers reject anything else).
  auto r = decodeObject(R"({"metadata":{"name":"p\ud800x","uid":"u"}})", Kind::Pod);
  if (r.ok()) CHECK(validUtf8(metaOf(*r).name));
  // Escaped keys are unescaped before they are matched.
  auto escaped = decodeJson<Pod>(R"({"metad\u0061ta":{"n\u0061me":"p\"q","uid":"u"}})", Kind::Pod);
  CHECK(escaped.meta.name == "p\"q");
}

TEST_CASE("a key is matched whatever its length and wherever an escape sits in it",
          "[model][robustness]") {
  // Keys of 1 to 17 characters, and an escape at each position of the longest, unescaped before
  // matching.
  const std::string time = "2026-03-01T10:00:00Z";
  auto meta = [&](const std::string& tsKey, const std::string& rvKey) {
    return R"({"metadata":{"name":"p","uid":"u",")" + tsKey + R"(":")" + time + R"(",")" + rvKey +
           R"(":"42","x":1,"abcdefg":2,"abcdefgh":3,"abcdefghi":4}})";
  };
  const auto plain = decodeJson<Pod>(meta("creationTimestamp", "resourceVersion"), Kind::Pod);
  REQUIRE(plain.meta.creationTimestamp != firstwork::SystemTime{});
  REQUIRE(plain.meta.resourceVersion.str() == "42");
  const std::string key = "creationTimestamp";
  for (size_t i = 0; i < key.size(); ++i) {
    INFO("escape at " << i);
    char esc[8];
    std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(key[i]));
    const std::string spelled = key.substr(0, i) + esc + key.substr(i + 1);
    const auto p = decodeJson<Pod>(meta(spelled, "resourceVersion"), Kind::Pod);
    CHECK(p.meta.creationTimestamp == plain.meta.creationTimestamp);
    CHECK(p.meta.resourceVersion.str() == "42");
  }
  // An escaped quote ends no key: a key that only looks like "name" up to it is another key.
  const auto quoted =
      decodeJson<Pod>(R"({"metadata":{"name\"x":"no","name":"yes","uid":"u"}})", Kind::Pod);
  CHECK(quoted.meta.name == "yes");
}

TEST_CASE("a key is read whole wherever its closing quote or an escape falls in a 16-byte block",
          "[model][robustness]") {
  // The decoder looks for a key's closing quote, or a backslash before it, 16 bytes at a time
  // (detail::findQuoteOrBackslash). Labels whose keys are 15 to 54 characters long put the quote
  // at every place in a block; annotations spell the same keys with their last character
  // escaped, so the backslash falls at every place too and the key must be unescaped.
  std::string labels;
  std::string annotations;
  for (int n = 1; n <= 40; ++n) {
    const std::string key = "firstwork.dev/" + std::string(static_cast<size_t>(n), 'k');
    char esc[8];
    std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>('k'));
    const std::string escaped = key.substr(0, key.size() - 1) + esc;
    labels += (n > 1 ? "," : "") + ("\"" + key + "\":\"l" + std::to_string(n) + "\"");
    annotations += (n > 1 ? "," : "") + ("\"" + escaped + "\":\"a" + std::to_string(n) + "\"");
  }
  const auto p = decodeJson<Pod>(R"({"metadata":{"name":"p","uid":"u","labels":{)" + labels +
                                     R"(},"annotations":{)" + annotations + "}}}",
                                 Kind::Pod);
  REQUIRE(p.meta.labels.size() == 40);
  REQUIRE(p.meta.annotations.size() == 40);
  for (int n = 1; n <= 40; ++n) {
    INFO("key length " << 14 + n);
    const std::string key = "firstwork.dev/" + std::string(static_cast<size_t>(n), 'k');
    const auto* label = findValue(p.meta.labels, key);
    REQUIRE(label != nullptr);
    CHECK(*label == "l" + std::to_string(n));
    const auto* annotation = findValue(p.meta.annotations, key);
    REQUIRE(annotation != nullptr);
    CHECK(*annotation == "a" + std::to_string(n));
  }
}

TEST_CASE("a 1.5 MB object decodes into a slim one", "[model][robustness]") {
  std::string big(1500000, 'x');
  std::string json = R"({"metadata":{"name":"p","uid":"u","annotations":{"firstwork.dev/blob":")" +
                     std::string(300000, 'a') + R"(","kubectl.kubernetes.io/last-applied-configuration":")" +
                     big + R"("},"managedFields":[)";
  for (int i = 0; i < 2000; ++i) json += std::string(i ? "," : "") + R"({"manager":"kubelet","fieldsV1":{"f:status":{}}})";
  json += R"(]},"spec":{"containers":[{"name":"c","args":[")" + big + R"("]}]}})";
  REQUIRE(json.size() > 3000000);
  auto p = decodeJson<Pod>(json, Kind::Pod);
  CHECK(p.meta.annotations.size() == 1);
  CHECK(p.meta.annotations[0].second.size() == 256);
  // The same through the in-place overload, as a watch line.
  std::string line = R"({"type":"MODIFIED","object":)" + json + "}";
  const size_t len = line.size();
  auto ev = decodeWatchEvent(line, Kind::Pod);
  REQUIRE(ev.ok());
  CHECK(ev->object.has_value());
  CHECK(line.size() == len);
}

TEST_CASE("after a very large document the thread's parser is replaced and still works",
          "[model][robustness]") {
  // Above the 16 MiB retention threshold: the decode succeeds, then the buffers are released.
  std::string huge = R"({"metadata":{"name":"p","uid":"u"},"x":")" + std::string(17u << 20, 'x') + "\"}";
  CHECK(decodeObject(huge, Kind::Pod).ok());
  std::string owned = huge;
  CHECK(decodeWatchEvent(R"({"type":"ADDED","object":)" + owned + "}", Kind::Pod).ok());
  auto small = decodeObject(R"({"metadata":{"name":"q","uid":"v"}})", Kind::Pod);
  REQUIRE(small.ok());
  CHECK(metaOf(*small).name == "q");
}

TEST_CASE("10,000 labels and annotations in a watch event", "[model][robustness]") {
  std::string kv;
  for (int i = 0; i < 10000; ++i) kv += std::string(i ? "," : "") + "\"firstwork.dev/k" + std::to_string(i) + "\":\"v\"";
  std::string line = R"({"type":"ADDED","object":{"metadata":{"name":"p","uid":"u","resourceVersion":"1","labels":{)" +
                     kv + R"(},"annotations":{)" + kv + "}}}}";
  auto ev = decodeWatchEvent(line, Kind::Pod);
  REQUIRE(ev.ok());
  const auto& p = std::get<Pod>(*ev->object);
  CHECK(p.meta.labels.size() == 64);
  CHECK(p.meta.annotations.size() == 64);
}

TEST_CASE("duplicate keys: the last occurrence wins", "[model][robustness]") {
  auto w = decodeJson<Workload>(R"({"metadata":{"name":"a","name":"b","uid":"u"},
    "status":{"conditions":[{"type":"Admitted","status":"True"}],
              "conditions":[{"type":"Finished","status":"True"}],
              "clusterName":"w1","clusterName":"w2"},
    "spec":{"podSets":[{"name":"x"},{"name":"y"}],"podSets":[{"name":"z","count":2,"count":3}]}})",
                                Kind::Workload);
  CHECK(w.meta.name == "b");
  REQUIRE(w.conditions.size() == 1);
  CHECK(w.conditions[0].type == "Finished");
  CHECK(w.admission->clusterName == "w2");
  REQUIRE(w.podSets.size() == 1);
  CHECK(w.podSets[0].count == 3);
  auto ev = decodeWatchEvent(R"({"type":"ADDED","type":"DELETED","object":{"metadata":{"name":"p","uid":"u"}}})",
                             Kind::Pod);
  REQUIRE(ev.ok());
  CHECK(ev->type == EventType::Deleted);
  // A type repeated after the object decides how the object is read: a bookmark keeps no object.
  auto late = decodeWatchEvent(R"({"type":"ADDED","object":{"metadata":{"name":"p","uid":"u",
    "resourceVersion":"41"}},"type":"BOOKMARK"})",
                               Kind::Pod);
  REQUIRE(late.ok());
  CHECK(late->type == EventType::Bookmark);
  CHECK(late->resourceVersion == "41");
  CHECK_FALSE(late->object.has_value());
  CHECK_FALSE(decodeWatchEvent(R"({"object":{"metadata":{"resourceVersion":"1"}},"type":"BOOKMARK"} x)",
                               Kind::Pod)
                  .ok());
}

TEST_CASE("numbers and quantities out of range are errors, sums saturate", "[model][robustness]") {
  CHECK(decodeError(R"({"metadata":{"name":"n","uid":"u","generation":18446744073709551615}})",
                    Kind::Node) ==
        "metadata.generation: expected a 64-bit integer, got 18446744073709551615 (Node n)");
  CHECK(decodeError(R"({"metadata":{"name":"n","uid":"u","generation":1.5}})", Kind::Node) ==
        "metadata.generation: expected a 64-bit integer, got 1.5 (Node n)");
  CHECK(decodeError(R"({"metadata":{"name":"n","uid":"u"},"status":{"capacity":{"nvidia.com/gpu":")" +
                        std::string(10000, '9') + R"("}}})",
                    Kind::Node) == "status.capacity[\"nvidia.com/gpu\"]: quantity longer than 64 bytes (Node n)");
  CHECK(decodeError(R"({"metadata":{"name":"n","uid":"u"},"status":{"capacity":{"nvidia.com/gpu":)" +
                        std::string(10000, '9') + "}}}",
                    Kind::Node) == "status.capacity[\"nvidia.com/gpu\"]: quantity longer than 64 bytes (Node n)");
  CHECK_FALSE(decodeObject(R"({"metadata":{"name":"n","uid":"u"},"status":{"capacity":{"nvidia.com/gpu":"1e999"}}})",
                           Kind::Node)
                  .ok());
  CHECK_FALSE(decodeObject(R"({"metadata":{"name":"n","uid":"u"},"status":{"capacity":{"nvidia.com/gpu":"9223372036854775807"}}})",
                           Kind::Node)
                  .ok());
  // 9e15 units = 9e18 milli each (representable); two of them saturate instead of wrapping.
  auto p = decodeJson<Pod>(R"({"metadata":{"name":"p","uid":"u"},"spec":{"containers":[
    {"name":"a","resources":{"requests":{"example.com/x":"9000000000000000"}}},
    {"name":"b","resources":{"requests":{"example.com/x":"9000000000000000"}}}]}})",
                           Kind::Pod);
  CHECK(milliOf(p.requests, "example.com/x") == std::numeric_limits<int64_t>::max());
}

TEST_CASE("lists beyond their bounds are rejected, not truncated", "[model][robustness]") {
  std::string conds;
  for (int i = 0; i < 65; ++i) conds += std::string(i ? "," : "") + R"({"type":"T)" + std::to_string(i) + R"("})";
  CHECK(decodeError(R"({"metadata":{"name":"p","uid":"u"},"status":{"conditions":[)" + conds + "]}}",
                    Kind::Pod) == "status.conditions[64]: more than 64 entries (Pod p)");
  std::string devices;
  for (int i = 0; i < 257; ++i) devices += std::string(i ? "," : "") + R"({"name":"d)" + std::to_string(i) + R"("})";
  CHECK(decodeError(R"({"metadata":{"name":"s","uid":"u"},"spec":{"devices":[)" + devices + "]}}",
                    Kind::ResourceSlice) ==
        "spec.devices[256]: more than 256 entries (ResourceSlice s)");
  std::string resources;
  for (int i = 0; i < 33; ++i) resources += std::string(i ? "," : "") + "\"example.com/r" + std::to_string(i) + "\":\"1\"";
  CHECK(decodeError(R"({"metadata":{"name":"n","uid":"u"},"status":{"allocatable":{)" + resources + "}}}",
                    Kind::Node) == "status.allocatable[\"example.com/r32\"]: more than 32 entries (Node n)");
}

TEST_CASE("degenerate inputs are errors for every entry point", "[model][robustness]") {
  const std::string inputs[] = {"", " ", "\n", "null", "[]", "{}", "\"s\"", "123", "true",
                                "{\"a\":}", "{\"a\" 1}", "{", "}", "{{}}", "[{]", "\xff",
                                "{\"a\":1}}", "{\"a\":1} {\"b\":2}", "{\"a\":tru}"};
  for (const auto& in : inputs) {
    INFO("input: " << in);
    for (const auto& k : allKinds()) CHECK_FALSE(decodeObject(in, k.kind).ok());
    CHECK_FALSE(decodeList(in, Kind::Pod).ok());
    CHECK_FALSE(decodeWatchEvent(in, Kind::Pod).ok());
    std::string owned = in;
    CHECK_FALSE(decodeWatchEvent(owned, Kind::Pod).ok());
    CHECK(owned == in);
    CHECK_FALSE(decodeStatus(in).ok());
  }
}

TEST_CASE("randomly corrupted fixtures never crash the decoders", "[model][robustness]") {
  // Deterministic (fixed seed) byte-level corruption: structural characters, escapes, invalid
  // UTF-8 and NUL bytes dropped in, bytes deleted, spans duplicated.
  std::mt19937 rng(20260820);
  const char noise[] = {'"', '{', '}', '[', ']', ',', ':', '\\', '0', '-', 'e', 'x', ' ', 'n', '\xff', '\0'};
  size_t decoded = 0, rejected = 0;
  for (const auto& f : kObjects) {
    const std::string original = readFixture(f.file);
    for (int round = 0; round < 200; ++round) {
      std::string s = original;
      for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0 && !s.empty(); --edits) {
        size_t at = rng() % s.size();
        switch (rng() % 3) {
          case 0:
            s[at] = noise[rng() % sizeof(noise)];
            break;
          case 1:
            s.erase(at, 1 + rng() % 8);
            break;
          default:
            s.insert(at, s.substr(rng() % s.size(), rng() % 64));
        }
      }
      auto r = decodeObject(s, f.kind);
      (r.ok() ? decoded : rejected)++;
      if (!r.ok()) CHECK_FALSE(r.error().empty());
      std::string line = R"({"type":"MODIFIED","object":)" + s + "}";
      auto e = decodeWatchEvent(line, f.kind);
      if (e.ok() && e->object) CHECK(e->decodeError.empty());
    }
  }
  INFO(decoded << " decoded, " << rejected << " rejected");
  CHECK(rejected > 0);
}
