#include "firstwork/sim/api_server.hpp"

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "fakes/manual_clock.hpp"
#include "firstwork/http/httplib.hpp"
#include "stream_client.hpp"
#include "support/process_threads.hpp"

using firstwork::sim::ApiServer;
using firstwork::sim::ApiServerOptions;
using firstwork::sim::testing::StreamClient;
using Json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* kToken = "test-token";

std::string pod(const std::string& ns, const std::string& name,
                const std::string& phase = "Running", const Json& labels = Json::object(),
                const std::string& node = "") {
  Json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
            {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "busybox"}}})}}},
            {"status", {{"phase", phase}}}};
  if (!node.empty()) p["spec"]["nodeName"] = node;
  return p.dump();
}

std::string workload(const std::string& ns, const std::string& name, const std::string& queue) {
  return Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
              {"kind", "Workload"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"queueName", queue}}}}
      .dump();
}

std::string node(const std::string& name) {
  return Json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}}.dump();
}

std::string pct(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

struct Reply {
  int status = 0;
  std::string body;
  httplib::Headers headers;
  httplib::Error error = httplib::Error::Unknown;
  Json json() const { return Json::parse(body); }
  std::string header(const char* name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

Reply get(const ApiServer& s, const std::string& target, const std::string& token = kToken) {
  httplib::Client cli("127.0.0.1", s.port());
  cli.set_read_timeout(10, 0);
  httplib::Headers h;
  if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
  auto r = cli.Get(target.c_str(), h);
  Reply out;
  out.error = r.error();
  if (r) {
    out.status = r->status;
    out.body = r->body;
    out.headers = r->headers;
  }
  return out;
}

uint64_t rvOf(const Json& obj) {
  return std::stoull(obj["metadata"]["resourceVersion"].get<std::string>());
}

Json parseLine(const std::string& line) { return Json::parse(line); }

std::string watchPath(const std::string& collection, const std::string& query) {
  return collection + "?watch=true" + (query.empty() ? "" : "&" + query);
}

// Polls `cond` until it holds or `limit` passes (bounded wait, never a fixed sleep).
template <class F>
bool eventuallyTrue(F cond, std::chrono::milliseconds limit = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return cond();
}

X509_STORE* storeFromPem(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, cert);
  X509_free(cert);
  BIO_free(bio);
  return store;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Discovery and auth

TEST_CASE("Discovery documents describe exactly the configured groups and versions", "[sim]") {
  ApiServer s;
  s.start();

  auto version = get(s, "/version");
  REQUIRE(version.status == 200);
  CHECK_FALSE(version.header("Date").empty());
  CHECK(version.header("Content-Type") == "application/json");
  CHECK(version.json()["gitVersion"] == "v1.34.1");
  CHECK(version.json()["major"] == "1");
  CHECK(version.json()["minor"] == "34");

  auto api = get(s, "/api").json();
  CHECK(api["kind"] == "APIVersions");
  CHECK(api["versions"] == Json::array({"v1"}));

  auto core = get(s, "/api/v1").json();
  CHECK(core["kind"] == "APIResourceList");
  CHECK(core["groupVersion"] == "v1");
  std::set<std::string> coreNames;
  for (const auto& r : core["resources"]) coreNames.insert(r["name"].get<std::string>());
  CHECK(coreNames == std::set<std::string>{"pods", "pods/status", "nodes", "nodes/status"});
  for (const auto& r : core["resources"]) {
    if (r["name"] == "pods") {
      CHECK(r["namespaced"] == true);
      CHECK(r["kind"] == "Pod");
    }
    if (r["name"] == "nodes") CHECK(r["namespaced"] == false);
  }

  auto apis = get(s, "/apis").json();
  CHECK(apis["kind"] == "APIGroupList");
  REQUIRE(apis["groups"].size() == 2);
  for (const auto& g : apis["groups"]) {
    if (g["name"] == "kueue.x-k8s.io") {
      CHECK(g["preferredVersion"]["groupVersion"] == "kueue.x-k8s.io/v1beta2");
      CHECK(g["versions"].size() == 1);
    } else {
      CHECK(g["name"] == "resource.k8s.io");
      CHECK(g["preferredVersion"]["version"] == "v1");
    }
  }

  auto group = get(s, "/apis/kueue.x-k8s.io").json();
  CHECK(group["kind"] == "APIGroup");
  CHECK(group["versions"][0]["version"] == "v1beta2");

  auto kueue = get(s, "/apis/kueue.x-k8s.io/v1beta2").json();
  CHECK(kueue["groupVersion"] == "kueue.x-k8s.io/v1beta2");
  std::map<std::string, bool> scoped;
  for (const auto& r : kueue["resources"]) {
    scoped[r["name"].get<std::string>()] = r["namespaced"].get<bool>();
  }
  CHECK(scoped.at("workloads") == true);
  CHECK(scoped.at("multikueueclusters") == false);
  CHECK(scoped.at("multikueueconfigs") == false);
  CHECK(scoped.at("admissionchecks") == false);
  CHECK(scoped.at("clusterqueues") == false);

  auto dra = get(s, "/apis/resource.k8s.io/v1").json();
  std::set<std::string> draNames;
  for (const auto& r : dra["resources"]) draNames.insert(r["name"].get<std::string>());
  CHECK(draNames.count("resourceclaims") == 1);
  CHECK(draNames.count("resourceslices") == 1);

  // An unserved version is 404 with a Status, like the real server.
  auto v1beta1 = get(s, "/apis/kueue.x-k8s.io/v1beta1/workloads");
  CHECK(v1beta1.status == 404);
  CHECK(v1beta1.json()["reason"] == "NotFound");
  CHECK(get(s, "/apis/kueue.x-k8s.io/v1beta1").status == 404);
  CHECK(get(s, "/apis/example.com/v1").status == 404);
  CHECK(get(s, "/api/v1/namespaces/x/nodes").status == 404);  // cluster-scoped
  CHECK(get(s, "/api/v1/configmaps").status == 404);
  // version, api, api/v1, apis, apis/kueue, kueue/v1beta2, resource/v1; the 404s are not discovery.
  CHECK(s.stats().discoveryRequests == 7);
}

TEST_CASE("A server without Kueue or with another DRA version serves only those", "[sim]") {
  ApiServerOptions o;
  o.workloadVersion = "";
  o.draVersion = "v1beta2";
  ApiServer s(o);
  s.start();
  auto apis = get(s, "/apis").json();
  REQUIRE(apis["groups"].size() == 1);
  CHECK(apis["groups"][0]["name"] == "resource.k8s.io");
  CHECK(apis["groups"][0]["preferredVersion"]["groupVersion"] == "resource.k8s.io/v1beta2");
  CHECK(get(s, "/apis/kueue.x-k8s.io").status == 404);
  CHECK(get(s, "/apis/kueue.x-k8s.io/v1beta2/workloads").status == 404);
  CHECK(get(s, "/apis/resource.k8s.io/v1/resourceslices").status == 404);
  auto slices = get(s, "/apis/resource.k8s.io/v1beta2/resourceslices");
  REQUIRE(slices.status == 200);
  CHECK(slices.json()["kind"] == "ResourceSliceList");
  CHECK(slices.json()["apiVersion"] == "resource.k8s.io/v1beta2");
}

TEST_CASE("Every path needs the current bearer token, failures are 401 Status", "[sim]") {
  ApiServer s;
  s.start();
  for (const char* path : {"/version", "/api/v1/pods", "/apis", "/healthz"}) {
    auto none = get(s, path, "");
    CHECK(none.status == 401);
    CHECK(none.json() == Json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
        "status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})"));
  }
  CHECK(get(s, "/api/v1/pods", "wrong").status == 401);
  CHECK(get(s, "/api/v1/pods").status == 200);
  // Its accept thread and the threads that served these requests are named for the process list
  // (a benchmark's per-thread CPU account tells them from the daemon's and its own).
  const auto names = firstwork::testing::threadNames();
  CHECK(std::count(names.begin(), names.end(), "sim-api") >= 2);

  s.rotateToken("second");
  CHECK(s.token() == "second");
  CHECK(get(s, "/api/v1/pods", kToken).status == 401);
  CHECK(get(s, "/api/v1/pods", "second").status == 200);
  CHECK(s.stats().unauthorized == 4 + 1 + 1);
  // A watch with the old token never starts.
  StreamClient w(s.port(), "/api/v1/pods?watch=1", kToken);
  REQUIRE(w.waitHeaders());
  CHECK(w.status() == 401);
  CHECK(s.stats().watchRequests == 0);
}

TEST_CASE("HTTPS: the server certificate verifies against caPem() only", "[sim]") {
  ApiServerOptions o;
  o.tls = true;
  ApiServer s(o);
  s.start();
  CHECK(s.baseUrl() == "https://127.0.0.1:" + std::to_string(s.port()));
  const std::string ca = s.caPem();
  REQUIRE(ca.rfind("-----BEGIN CERTIFICATE-----", 0) == 0);

  s.create("pods", pod("default", "p1"));
  httplib::SSLClient good("127.0.0.1", s.port());
  good.set_ca_cert_store(storeFromPem(ca));
  good.enable_server_certificate_verification(true);
  auto r = good.Get("/api/v1/pods", httplib::Headers{{"Authorization", "Bearer test-token"}});
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(Json::parse(r->body)["items"].size() == 1);

  // The name "localhost" is in the certificate too.
  httplib::SSLClient byName("localhost", s.port());
  byName.set_ca_cert_store(storeFromPem(ca));
  byName.enable_server_certificate_verification(true);
  auto rn = byName.Get("/version", httplib::Headers{{"Authorization", "Bearer test-token"}});
  REQUIRE(rn);
  CHECK(rn->status == 200);

  httplib::SSLClient noCa("127.0.0.1", s.port());
  noCa.enable_server_certificate_verification(true);
  auto bad = noCa.Get("/version", httplib::Headers{{"Authorization", "Bearer test-token"}});
  CHECK_FALSE(bad);
  CHECK(bad.error() == httplib::Error::SSLServerVerification);

  // The CA survives a restart, so a client configured before it still verifies.
  s.stop();
  s.start();
  CHECK(s.caPem() == ca);
  auto again = good.Get("/version", httplib::Headers{{"Authorization", "Bearer test-token"}});
  REQUIRE(again);
  CHECK(again->status == 200);

  const std::string kc = s.kubeconfig("worker-1");
  CHECK(kc.find("server: \"https://127.0.0.1:" + std::to_string(s.port()) + "\"") !=
        std::string::npos);
  CHECK(kc.find("token: \"test-token\"") != std::string::npos);
  CHECK(kc.find("current-context: \"worker-1\"") != std::string::npos);
  // certificate-authority-data is the base64 of the PEM; its first 24 input bytes
  // "-----BEGIN CERTIFICATE--" encode to "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0t".
  CHECK(kc.find("certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0t") !=
        std::string::npos);
}

TEST_CASE("Plain HTTP kubeconfig has no CA data and carries the rotated token", "[sim]") {
  ApiServer s;
  s.start();
  s.rotateToken("t2");
  const std::string kc = s.kubeconfig();
  CHECK(kc.find("certificate-authority-data") == std::string::npos);
  CHECK(kc.find("server: \"http://127.0.0.1:") != std::string::npos);
  CHECK(kc.find("token: \"t2\"") != std::string::npos);
  CHECK(s.caPem().empty());
}

// ------------------------------------------------------------------------------------------------
// Objects and LIST

TEST_CASE("Objects get uid, creationTimestamp and cluster-wide monotonic RVs", "[sim]") {
  ApiServer s;
  const auto p1 = Json::parse(s.create("pods", pod("ns1", "a")));
  const auto w1 = Json::parse(s.create("workloads", workload("ns1", "w", "q")));
  const auto n1 = Json::parse(s.create("nodes", node("n1")));
  // One counter for all resources, like etcd: 1, 2, 3.
  CHECK(rvOf(p1) == 1);
  CHECK(rvOf(w1) == 2);
  CHECK(rvOf(n1) == 3);
  CHECK(s.currentResourceVersion() == 3);
  const std::regex uuidV4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  CHECK(std::regex_match(p1["metadata"]["uid"].get<std::string>(), uuidV4));
  CHECK(p1["metadata"]["uid"] != w1["metadata"]["uid"]);
  CHECK(std::regex_match(p1["metadata"]["creationTimestamp"].get<std::string>(),
                         std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  CHECK(w1["apiVersion"] == "kueue.x-k8s.io/v1beta2");
  CHECK(w1["metadata"]["generation"] == 1);
  CHECK_FALSE(n1["metadata"].contains("namespace"));

  // Given uid/creationTimestamp are kept on create.
  auto given = Json::parse(pod("ns1", "b"));
  given["metadata"]["uid"] = "11111111-2222-4333-8444-555555555555";
  given["metadata"]["creationTimestamp"] = "2026-01-02T03:04:05Z";
  auto b = Json::parse(s.create("pods", given.dump()));
  CHECK(b["metadata"]["uid"] == "11111111-2222-4333-8444-555555555555");
  CHECK(b["metadata"]["creationTimestamp"] == "2026-01-02T03:04:05Z");

  CHECK_THROWS(s.create("pods", pod("ns1", "a")));
  CHECK_THROWS(s.create("pods", "{not json"));
  CHECK_THROWS(s.create("pods", R"({"metadata":{}})"));
  CHECK_THROWS(s.create("configmaps", pod("ns1", "x")));
  CHECK_THROWS(s.update("pods", pod("ns1", "missing")));

  // update keeps uid and creationTimestamp, bumps RV (4 was b), bumps generation on spec change.
  auto changed = Json::parse(workload("ns1", "w", "other-queue"));
  changed["metadata"]["uid"] = "ignored";
  auto w2 = Json::parse(s.update("workloads", changed.dump()));
  CHECK(w2["metadata"]["uid"] == w1["metadata"]["uid"]);
  CHECK(w2["metadata"]["creationTimestamp"] == w1["metadata"]["creationTimestamp"]);
  CHECK(rvOf(w2) == 5);
  CHECK(w2["metadata"]["generation"] == 2);
  // An update that changes nothing is not written: same RV, no new RV issued.
  auto same = Json::parse(s.apply("workloads", workload("ns1", "w", "other-queue")));
  CHECK(rvOf(same) == 5);
  CHECK(s.currentResourceVersion() == 5);
  // apply creates when absent.
  CHECK(rvOf(Json::parse(s.apply("workloads", workload("ns2", "w", "q")))) == 6);

  CHECK(s.count("pods") == 2);
  CHECK(s.objects("workloads").size() == 2);
  CHECK(s.remove("pods", "ns1", "a"));
  CHECK_FALSE(s.remove("pods", "ns1", "a"));
  CHECK(s.currentResourceVersion() == 7);
  CHECK(s.remove("nodes", "", "n1"));

  // Key order is not a change, as the API server compares objects: the Workload sent with its keys
  // in another order is not written, and with a status added it is written but keeps its
  // generation (its spec is the same).
  auto two = Json::parse(s.apply(
      "workloads",
      R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"w","namespace":"ns1"},)"
      R"("spec":{"priority":1,"queueName":"other-queue"}})"));
  CHECK(two["metadata"]["generation"] == 3);
  const auto rv = s.currentResourceVersion();
  const std::string reordered =
      R"({"spec":{"queueName":"other-queue","priority":1},"metadata":{"namespace":"ns1","name":"w"},)"
      R"("kind":"Workload","apiVersion":"kueue.x-k8s.io/v1beta2"})";
  CHECK(rvOf(Json::parse(s.apply("workloads", reordered))) == rv);
  CHECK(s.currentResourceVersion() == rv);
  auto withStatus = Json::parse(s.apply("workloads", R"({"status":{"conditions":[]},)" + reordered.substr(1)));
  CHECK(rvOf(withStatus) == rv + 1);
  CHECK(withStatus["metadata"]["generation"] == 3);
}

TEST_CASE("identities() gives each current object's uid and resourceVersion", "[sim]") {
  ApiServer s;
  const auto a = Json::parse(s.create("pods", pod("ns1", "a")));
  const auto b = Json::parse(s.create("pods", pod("ns1", "b")));
  s.create("workloads", workload("ns1", "w", "q"));  // another resource: not listed
  auto changed = Json::parse(pod("ns1", "b"));
  changed["metadata"]["labels"] = {{"x", "y"}};
  const auto b2 = Json::parse(s.update("pods", changed.dump()));
  s.create("pods", pod("ns2", "c"));
  REQUIRE(s.remove("pods", "ns2", "c"));
  using Ids = std::vector<std::pair<std::string, std::string>>;
  // In key order (namespace/name), as LIST; b's resourceVersion is its update's (4), not 2.
  const auto uid = [](const Json& o) { return o["metadata"]["uid"].get<std::string>(); };
  CHECK(s.identities("pods") == Ids{{uid(a), "1"}, {uid(b), "4"}});
  CHECK(b2["metadata"]["resourceVersion"] == "4");
  CHECK(b2["metadata"]["uid"] == b["metadata"]["uid"]);
  CHECK(s.identities("nodes").empty());
  CHECK_THROWS(s.identities("configmaps"));
}

TEST_CASE("Prepared objects are written as their JSON is, once each", "[sim]") {
  ApiServer s;
  // Preparing parses and shapes but writes nothing.
  auto a = s.prepare("pods", pod("ns1", "a"));
  auto w = s.prepare("workloads", workload("ns1", "w", "q"));
  CHECK_FALSE(a.empty());
  CHECK(s.currentResourceVersion() == 0);
  CHECK(s.count("pods") == 0);
  CHECK_THROWS_AS(s.prepare("pods", "{not json"), std::invalid_argument);
  CHECK_THROWS_AS(s.prepare("pods", R"({"metadata":{}})"), std::invalid_argument);
  CHECK_THROWS_AS(s.prepare("configmaps", pod("ns1", "x")), std::invalid_argument);

  CHECK(s.create(std::move(a)) == 1);  // the new resourceVersion
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): written objects are consumed
  REQUIRE(s.objects("pods").size() == 1);
  const auto p1 = Json::parse(s.objects("pods")[0]);
  CHECK(rvOf(p1) == 1);
  CHECK(p1["kind"] == "Pod");
  CHECK(p1["apiVersion"] == "v1");
  CHECK(p1["metadata"]["generation"] == 1);
  CHECK(s.apply(std::move(w)) == 2);  // apply creates when absent
  REQUIRE(s.objects("workloads").size() == 1);
  const auto w1 = Json::parse(s.objects("workloads")[0]);
  CHECK(rvOf(w1) == 2);

  // An empty (never prepared or already written) object is refused and writes nothing.
  firstwork::sim::PreparedObject none;
  CHECK_THROWS_AS(s.create(std::move(none)), std::invalid_argument);
  CHECK(s.currentResourceVersion() == 2);

  // update: uid kept, generation bumped on a spec change; apply of the same state: no write.
  CHECK(s.update(s.prepare("workloads", workload("ns1", "w", "other-queue"))) == 3);
  const auto w2 = Json::parse(s.objects("workloads")[0]);
  CHECK(w2["metadata"]["uid"] == w1["metadata"]["uid"]);
  CHECK(rvOf(w2) == 3);
  CHECK(w2["metadata"]["generation"] == 2);
  CHECK(s.apply(s.prepare("workloads", workload("ns1", "w", "other-queue"))) == 3);  // kept
  CHECK(s.currentResourceVersion() == 3);
  // A prepared object meets the store as it is when written, not when prepared.
  auto dup = s.prepare("pods", pod("ns1", "a"));
  auto missing = s.prepare("pods", pod("ns1", "b"));
  CHECK_THROWS(s.create(std::move(dup)));
  CHECK_THROWS(s.update(std::move(missing)));
  CHECK(s.currentResourceVersion() == 3);
}

TEST_CASE("A LIST item is the stored object, less kind and apiVersion for built-in kinds", "[sim]") {
  ApiServer s;
  s.start();
  const std::string p = s.create("pods", pod("ns1", "a", "Running", Json{{"app", "x"}}, "node-1"));
  const std::string w = s.create("workloads", workload("ns1", "w", "q"));
  // Byte for byte: the pod's item is its stored JSON without its first two members.
  const std::string head = R"({"kind":"Pod","apiVersion":"v1",)";
  REQUIRE(p.rfind(head, 0) == 0);
  const auto pods = get(s, "/api/v1/pods");
  REQUIRE(pods.status == 200);
  CHECK(pods.body.find(R"("items":[{)" + p.substr(head.size()) + "]}") != std::string::npos);
  Json expected = Json::parse(p);
  expected.erase("kind");
  expected.erase("apiVersion");
  CHECK(pods.json()["items"] == Json::array({expected}));
  // A CRD's item is the stored object itself.
  const auto workloads = get(s, "/apis/kueue.x-k8s.io/v1beta2/workloads");
  REQUIRE(workloads.status == 200);
  CHECK(workloads.body.find(R"("items":[)" + w + "]}") != std::string::npos);
  // After an update, the item follows the new state.
  const std::string p2 = s.update("pods", pod("ns1", "a", "Failed", Json{{"app", "x"}}, "node-1"));
  const auto after = get(s, "/api/v1/namespaces/ns1/pods");
  CHECK(after.body.find(R"("items":[{)" + p2.substr(head.size()) + "]}") != std::string::npos);
  CHECK(after.json()["items"][0]["status"]["phase"] == "Failed");
}

TEST_CASE("GET of one object, and 404 Status for a missing one", "[sim]") {
  ApiServer s;
  s.start();
  s.create("pods", pod("ns1", "a"));
  s.create("workloads", workload("ns1", "w", "q"));
  auto ok = get(s, "/api/v1/namespaces/ns1/pods/a");
  REQUIRE(ok.status == 200);
  CHECK(ok.json()["kind"] == "Pod");
  CHECK(ok.json()["metadata"]["name"] == "a");
  CHECK(get(s, "/api/v1/namespaces/ns1/pods/a/status").status == 200);
  auto missing = get(s, "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns1/workloads/nope");
  CHECK(missing.status == 404);
  CHECK(missing.json()["message"] == "workloads.kueue.x-k8s.io \"nope\" not found");
  CHECK(missing.json()["details"]["name"] == "nope");
  CHECK(get(s, "/api/v1/namespaces/ns1/pods/b").json()["message"] == "pods \"b\" not found");
}

TEST_CASE("A paginated LIST of 2,500 pods is one consistent snapshot", "[sim]") {
  ApiServer s;
  s.start();
  // 5 namespaces x 500 pods. Keys sort as "<ns>/<name>", so zero-padded names keep order.
  for (int n = 0; n < 5; ++n) {
    for (int i = 0; i < 500; ++i) {
      s.create("pods", pod("ns" + std::to_string(n), fmt::format("pod-{:04d}", i)));
    }
  }
  const uint64_t rvAtStart = s.currentResourceVersion();
  CHECK(rvAtStart == 2500);

  std::vector<std::string> keys;
  std::map<std::string, std::string> phase;
  std::string cont;
  std::string rv;
  int pages = 0;
  do {
    auto r = get(s, "/api/v1/pods?limit=500" + (cont.empty() ? "" : "&continue=" + pct(cont)));
    REQUIRE(r.status == 200);
    auto page = r.json();
    CHECK(page["kind"] == "PodList");
    CHECK(page["apiVersion"] == "v1");
    if (pages == 0) rv = page["metadata"]["resourceVersion"];
    CHECK(page["metadata"]["resourceVersion"] == rv);
    CHECK(page["items"].size() == 500);
    for (const auto& item : page["items"]) {
      // Built-in typed lists omit kind/apiVersion on items.
      CHECK_FALSE(item.contains("kind"));
      keys.push_back(item["metadata"]["namespace"].get<std::string>() + "/" +
                     item["metadata"]["name"].get<std::string>());
      phase[keys.back()] = item["status"]["phase"].get<std::string>();
    }
    cont = page["metadata"].value("continue", "");
    ++pages;
    if (!cont.empty()) {
      // remaining after page k (1-based) = 2500 - 500k
      CHECK(page["metadata"]["remainingItemCount"] == 2500 - 500 * pages);
    } else {
      CHECK_FALSE(page["metadata"].contains("remainingItemCount"));
    }
    if (pages == 2) {
      // Changes between pages must not show up in later pages of this list.
      s.create("pods", pod("ns4", "pod-9999"));
      s.remove("pods", "ns3", "pod-0000");
      s.update("pods", pod("ns4", "pod-0001", "Failed"));
    }
  } while (!cont.empty() && pages < 10);
  CHECK(pages == 5);
  CHECK(rv == std::to_string(rvAtStart));
  CHECK(keys.size() == 2500);
  CHECK(std::set<std::string>(keys.begin(), keys.end()).size() == 2500);
  CHECK(std::is_sorted(keys.begin(), keys.end()));
  CHECK(std::count(keys.begin(), keys.end(), "ns3/pod-0000") == 1);
  CHECK(std::count(keys.begin(), keys.end(), "ns4/pod-9999") == 0);

  // The snapshot shows ns4/pod-0001 as it was (Running); a fresh list sees the update.
  CHECK(phase.at("ns4/pod-0001") == "Running");
  auto nsList = get(s, "/api/v1/namespaces/ns4/pods?limit=2").json();
  CHECK(nsList["metadata"]["remainingItemCount"] == 499);  // ns4's 500 + pod-9999, less 2
  CHECK(nsList["items"][1]["metadata"]["name"] == "pod-0001");
  CHECK(nsList["items"][1]["status"]["phase"] == "Failed");

  // A namespaced list only returns that namespace; an unpaged list returns everything.
  auto ns0 = get(s, "/api/v1/namespaces/ns0/pods").json();
  CHECK(ns0["items"].size() == 500);
  CHECK_FALSE(ns0["metadata"].contains("continue"));
  CHECK(get(s, "/api/v1/pods").json()["items"].size() == 2500);  // +1 created, -1 deleted
  CHECK(s.stats().listRequests == 8);
}

TEST_CASE("Continue pages read the snapshot of the first page", "[sim]") {
  ApiServer s;
  s.start();
  for (int i = 0; i < 5; ++i) s.create("pods", pod("a", "p" + std::to_string(i)));
  auto first = get(s, "/api/v1/pods?limit=2").json();
  CHECK(first["metadata"]["remainingItemCount"] == 3);
  const std::string cont = first["metadata"]["continue"];
  s.update("pods", pod("a", "p3", "Failed"));
  s.remove("pods", "a", "p2");
  s.create("pods", pod("a", "p5"));
  s.create("pods", pod("a", "p6"));
  auto second = get(s, "/api/v1/pods?limit=2&continue=" + pct(cont)).json();
  CHECK(second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]);
  REQUIRE(second["items"].size() == 2);
  CHECK(second["items"][0]["metadata"]["name"] == "p2");
  CHECK(second["items"][1]["status"]["phase"] == "Running");
  CHECK(second["metadata"]["remainingItemCount"] == 1);  // p4, in the snapshot's count
  auto third = get(s, "/api/v1/pods?limit=2&continue=" +
                          pct(second["metadata"]["continue"].get<std::string>())).json();
  REQUIRE(third["items"].size() == 1);
  CHECK(third["items"][0]["metadata"]["name"] == "p4");
  CHECK_FALSE(third["metadata"].contains("continue"));
  CHECK_FALSE(third["metadata"].contains("remainingItemCount"));

  // A token made by hand that claims more items handed out than the snapshot holds: the count
  // left is 0, not a number wrapped around (the token is opaque base64url JSON; the server reads
  // either base64 alphabet).
  std::string b64 = cont;
  for (char& ch : b64) ch = ch == '-' ? '+' : ch == '_' ? '/' : ch;
  while (b64.size() % 4 != 0) b64 += '=';
  std::string raw(b64.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(raw.data()),
                                reinterpret_cast<const unsigned char*>(b64.data()), static_cast<int>(b64.size()));
  REQUIRE(n > 0);
  raw.resize(static_cast<size_t>(n));
  while (!raw.empty() && raw.back() != '}') raw.pop_back();  // the decoder's zero padding
  auto tok = nlohmann::json::parse(raw);
  REQUIRE(tok["n"] == 2);  // the first page's two
  tok["n"] = 1000;
  const std::string forged = tok.dump();
  std::string forgedB64(4 * ((forged.size() + 2) / 3) + 1, '\0');
  forgedB64.resize(static_cast<size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(forgedB64.data()),
                                                       reinterpret_cast<const unsigned char*>(forged.data()),
                                                       static_cast<int>(forged.size()))));
  auto lying = get(s, "/api/v1/pods?limit=2&continue=" + pct(forgedB64)).json();
  REQUIRE(lying["items"].size() == 2);
  CHECK(lying["metadata"]["remainingItemCount"] == 0);
}

TEST_CASE("An expired continue token gets 410 Expired with an inconsistent continuation", "[sim]") {
  ApiServer s;
  s.start();
  for (int i = 0; i < 5; ++i) s.create("pods", pod("a", "p" + std::to_string(i)));
  auto first = get(s, "/api/v1/pods?limit=2").json();
  const std::string cont = first["metadata"]["continue"];
  s.compactHistory();
  auto expired = get(s, "/api/v1/pods?limit=2&continue=" + pct(cont));
  REQUIRE(expired.status == 410);
  auto st = expired.json();
  CHECK(st["kind"] == "Status");
  CHECK(st["status"] == "Failure");
  CHECK(st["reason"] == "Expired");
  CHECK(st["code"] == 410);
  CHECK(st["message"] ==
        "The provided continue parameter is too old to display a consistent list result. You "
        "can start a new list without the continue parameter, or use the continue token in this "
        "response to retrieve the remainder of the results. Continuing with the provided token "
        "results in an inconsistent list - objects that were created, modified, or deleted "
        "between the time the first chunk was returned and now may show up in the list.");
  CHECK(s.stats().expiredContinue == 1);
  // The inconsistent token continues after p1 at the current state.
  const std::string inconsistent = st["metadata"]["continue"];
  auto rest = get(s, "/api/v1/pods?limit=10&continue=" + pct(inconsistent)).json();
  REQUIRE(rest["items"].size() == 3);
  CHECK(rest["items"][0]["metadata"]["name"] == "p2");
  // In pages, counted from the current state too (the pages before read another).
  auto restPaged = get(s, "/api/v1/pods?limit=2&continue=" + pct(inconsistent)).json();
  CHECK(restPaged["metadata"]["remainingItemCount"] == 1);

  // History trimmed past the token's RV expires it too (historyLimit 2: after 3 more events the
  // oldest retained event is above the token's RV 5).
  ApiServerOptions o;
  o.historyLimit = 2;
  ApiServer small(o);
  small.start();
  for (int i = 0; i < 5; ++i) small.create("pods", pod("a", "p" + std::to_string(i)));
  auto page = get(small, "/api/v1/pods?limit=2").json();
  for (int i = 5; i < 8; ++i) small.create("pods", pod("a", "p" + std::to_string(i)));
  const std::string smallCont = page["metadata"]["continue"].get<std::string>();
  CHECK(get(small, "/api/v1/pods?limit=2&continue=" + pct(smallCont)).status == 410);

  CHECK(get(s, "/api/v1/pods?limit=2&continue=garbage!").status == 400);
  // Specifying an RV together with continue is rejected like the real server.
  auto withRv = get(s, "/api/v1/pods?limit=2&resourceVersion=3&continue=" + pct(inconsistent));
  CHECK(withRv.status == 400);
  CHECK(withRv.json()["message"] ==
        "specifying resource version is not allowed when using continue");
}

TEST_CASE("LIST resourceVersion semantics: NotOlderThan, Exact, too large", "[sim]") {
  ApiServerOptions o;
  o.tooLargeResourceVersionWait = 100ms;
  ApiServer s(o);
  s.start();
  s.create("pods", pod("a", "p1"));               // rv 1
  s.create("pods", pod("a", "p2"));               // rv 2
  s.update("pods", pod("a", "p1", "Succeeded"));  // rv 3
  s.remove("pods", "a", "p2");                    // rv 4
  s.create("nodes", node("n1"));                  // rv 5

  auto latest = get(s, "/api/v1/pods?resourceVersion=2").json();  // not older than 2 ⇒ latest
  CHECK(latest["metadata"]["resourceVersion"] == "5");
  CHECK(latest["items"].size() == 1);
  CHECK(get(s, "/api/v1/pods?resourceVersion=0").json()["metadata"]["resourceVersion"] == "5");

  // Exact at rv 2: both pods, p1 still Running.
  auto exact = get(s, "/api/v1/pods?resourceVersion=2&resourceVersionMatch=Exact").json();
  CHECK(exact["metadata"]["resourceVersion"] == "2");
  REQUIRE(exact["items"].size() == 2);
  CHECK(exact["items"][0]["status"]["phase"] == "Running");
  CHECK(exact["items"][0]["metadata"]["resourceVersion"] == "1");

  auto tooLarge = get(s, "/api/v1/pods?resourceVersion=99");
  CHECK(tooLarge.status == 504);
  CHECK(tooLarge.json()["reason"] == "Timeout");
  CHECK(tooLarge.json()["message"] == "Too large resource version: 99, current: 5");
  CHECK(tooLarge.json()["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge");
  CHECK(tooLarge.header("Retry-After") == "1");

  s.compactHistory();
  auto old = get(s, "/api/v1/pods?resourceVersion=2&resourceVersionMatch=Exact");
  CHECK(old.status == 410);
  CHECK(old.json()["reason"] == "Expired");

  // ListOptions validation is 422 Invalid with field causes.
  auto invalid = get(s, "/api/v1/pods?resourceVersionMatch=Exact");
  CHECK(invalid.status == 422);
  CHECK(invalid.json()["reason"] == "Invalid");
  CHECK(invalid.json()["message"] ==
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
        "resourceVersionMatch is forbidden unless resourceVersion is provided");
  CHECK(get(s, "/api/v1/pods?resourceVersion=abc").status == 400);
  CHECK(get(s, "/api/v1/pods?limit=x").status == 400);
}

TEST_CASE("Label and field selectors filter LIST", "[sim]") {
  ApiServer s;
  s.start();
  s.create("pods", pod("a", "p1", "Running", {{"team", "x"}}, "n1"));
  s.create("pods", pod("a", "p2", "Pending", {{"team", "y"}}, "n2"));
  s.create("pods", pod("b", "p3", "Running", Json::object(), "n1"));
  auto names = [&](const std::string& query) {
    std::vector<std::string> out;
    auto r = get(s, "/api/v1/pods?" + query);
    REQUIRE(r.status == 200);
    const Json list = r.json();
    for (const auto& i : list["items"]) out.push_back(i["metadata"]["name"].get<std::string>());
    return out;
  };
  CHECK(names("labelSelector=" + pct("team=x")) == std::vector<std::string>{"p1"});
  CHECK(names("labelSelector=" + pct("team in (x,y)")) == std::vector<std::string>{"p1", "p2"});
  CHECK(names("labelSelector=" + pct("team!=x")) == std::vector<std::string>{"p2", "p3"});
  CHECK(names("labelSelector=" + pct("!team")) == std::vector<std::string>{"p3"});
  CHECK(names("fieldSelector=" + pct("spec.nodeName=n1")) == std::vector<std::string>{"p1", "p3"});
  CHECK(names("fieldSelector=" + pct("spec.nodeName=n1,status.phase!=Running")).empty());
  CHECK(names("fieldSelector=" + pct("metadata.namespace=b")) == std::vector<std::string>{"p3"});
  auto bad = get(s, "/api/v1/pods?fieldSelector=" + pct("spec.foo=1"));
  CHECK(bad.status == 400);
  CHECK(bad.json()["message"] == "field label not supported: spec.foo");
  CHECK(get(s, "/api/v1/pods?labelSelector=" + pct("a b c")).status == 400);
  // With a selector the list still pages, but remainingItemCount is omitted.
  auto paged = get(s, "/api/v1/pods?limit=1&fieldSelector=" + pct("spec.nodeName=n1")).json();
  CHECK(paged["items"].size() == 1);
  CHECK(paged["metadata"].contains("continue"));
  CHECK_FALSE(paged["metadata"].contains("remainingItemCount"));
}

TEST_CASE("CRD lists carry kind/apiVersion on items, defaultPageLimit pages", "[sim]") {
  ApiServerOptions o;
  o.defaultPageLimit = 2;
  ApiServer s(o);
  s.start();
  for (int i = 0; i < 3; ++i) s.create("workloads", workload("ns", "w" + std::to_string(i), "q"));
  auto page = get(s, "/apis/kueue.x-k8s.io/v1beta2/workloads").json();
  CHECK(page["kind"] == "WorkloadList");
  CHECK(page["apiVersion"] == "kueue.x-k8s.io/v1beta2");
  REQUIRE(page["items"].size() == 2);
  CHECK(page["items"][0]["kind"] == "Workload");
  CHECK(page["items"][0]["apiVersion"] == "kueue.x-k8s.io/v1beta2");
  CHECK(page["metadata"]["remainingItemCount"] == 1);
  CHECK(get(s, "/apis/kueue.x-k8s.io/v1beta2/workloads?limit=0").json()["items"].size() == 3);
}

// ------------------------------------------------------------------------------------------------
// WATCH

TEST_CASE("A watch is a chunked stream of newline-delimited JSON events", "[sim]") {
  ApiServer s;
  s.start();
  // The client asks for gzip: a watch must still come back uncompressed and unbuffered.
  StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken,
                 "Accept-Encoding: gzip\r\n");
  REQUIRE(w.waitHeaders());
  CHECK(w.status() == 200);
  CHECK(w.header("Transfer-Encoding") == "chunked");
  CHECK(w.header("Content-Type") == "application/json");
  CHECK(w.header("Content-Encoding").empty());
  CHECK_FALSE(w.header("Date").empty());
  REQUIRE(s.openWatches("pods") == 1);
  s.create("pods", pod("a", "p1"));
  REQUIRE(w.waitLines(1));
  auto ev = parseLine(w.lines()[0]);
  CHECK(ev["type"] == "ADDED");
  CHECK(ev["object"]["kind"] == "Pod");
  CHECK(ev["object"]["apiVersion"] == "v1");
  CHECK(ev["object"]["metadata"]["name"] == "p1");
  CHECK(s.stats().watchRequests == 1);
  CHECK(s.stats().eventsSent == 1);
}

TEST_CASE("Watch from an RV replays exactly the later events, in order, then live ones", "[sim]") {
  ApiServer s;
  s.start();
  s.create("pods", pod("a", "p1"));               // 1
  s.create("nodes", node("n1"));                  // 2 (other resource)
  s.create("pods", pod("a", "p2"));               // 3
  s.update("pods", pod("a", "p1", "Succeeded"));  // 4
  s.create("pods", pod("b", "p3"));               // 5
  s.remove("pods", "a", "p2");                    // 6

  StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=3"), kToken);
  REQUIRE(w.waitLines(3));
  s.create("pods", pod("a", "p4"));  // 7, live
  REQUIRE(w.waitLines(4));
  auto lines = w.lines();
  REQUIRE(lines.size() == 4);
  std::vector<std::pair<std::string, uint64_t>> got;
  for (const auto& l : lines) {
    auto e = parseLine(l);
    got.emplace_back(e["type"].get<std::string>(), rvOf(e["object"]));
  }
  CHECK(got == std::vector<std::pair<std::string, uint64_t>>{
                   {"MODIFIED", 4}, {"ADDED", 5}, {"DELETED", 6}, {"ADDED", 7}});
  // DELETED carries the last state with the deletion RV.
  auto del = parseLine(lines[2]);
  CHECK(del["object"]["metadata"]["name"] == "p2");
  CHECK(del["object"]["spec"]["containers"][0]["name"] == "c");

  // Namespaced watch: only namespace a (events 4 and 6 after rv 3, then 7).
  StreamClient nsw(s.port(), watchPath("/api/v1/namespaces/a/pods", "resourceVersion=3"), kToken);
  REQUIRE(nsw.waitLines(3));
  CHECK(parseLine(nsw.lines()[1])["type"] == "DELETED");
  CHECK(parseLine(nsw.lines()[2])["object"]["metadata"]["name"] == "p4");
  // Node watch sees none of the pod events.
  StreamClient nodes(s.port(), watchPath("/api/v1/nodes", "resourceVersion=2"), kToken);
  REQUIRE(nodes.waitHeaders());
  s.create("nodes", node("n2"));  // 8
  REQUIRE(nodes.waitLines(1));
  CHECK(parseLine(nodes.lines()[0])["object"]["metadata"]["name"] == "n2");
  CHECK(nodes.lines().size() == 1);
}

TEST_CASE("A watch without RV starts with synthetic ADDED for the current objects", "[sim]") {
  ApiServer s;
  s.start();
  s.create("pods", pod("a", "p1"));
  s.create("pods", pod("a", "p2"));
  s.remove("pods", "a", "p1");
  StreamClient w(s.port(), watchPath("/api/v1/pods", ""), kToken);
  REQUIRE(w.waitLines(1));
  s.create("pods", pod("a", "p3"));
  REQUIRE(w.waitLines(2));
  CHECK(parseLine(w.lines()[0])["type"] == "ADDED");
  CHECK(parseLine(w.lines()[0])["object"]["metadata"]["name"] == "p2");
  CHECK(parseLine(w.lines()[1])["object"]["metadata"]["name"] == "p3");
}

TEST_CASE("A watch from a compacted RV gets an in-band ERROR 410 and a clean end", "[sim]") {
  ApiServer s;
  s.start();
  for (int i = 0; i < 3; ++i) s.create("pods", pod("a", "p" + std::to_string(i)));
  s.compactHistory();  // history forgotten through rv 3
  StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=1"), kToken);
  REQUIRE(w.waitFinalChunk());
  REQUIRE(w.lines().size() == 1);
  CHECK(w.status() == 200);
  CHECK(parseLine(w.lines()[0]) ==
        Json::parse(R"J({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},
          "status":"Failure","message":"too old resource version: 1 (3)","reason":"Expired",
          "code":410}})J"));
  CHECK(s.stats().watchExpired == 1);
  CHECK(s.stats().eventsSent == 0);  // an ERROR is not an object event
  // From the compaction point itself nothing was lost: the watch is accepted.
  StreamClient ok(s.port(), watchPath("/api/v1/pods", "resourceVersion=3"), kToken);
  REQUIRE(ok.waitHeaders());
  s.create("pods", pod("a", "p9"));
  REQUIRE(ok.waitLines(1));
  CHECK(parseLine(ok.lines()[0])["type"] == "ADDED");

  // historyLimit trims the oldest events: limit 2 after 4 events keeps rv 3..4.
  ApiServerOptions o;
  o.historyLimit = 2;
  ApiServer small(o);
  small.start();
  for (int i = 0; i < 4; ++i) small.create("pods", pod("a", "p" + std::to_string(i)));
  StreamClient tooOld(small.port(), watchPath("/api/v1/pods", "resourceVersion=1"), kToken);
  REQUIRE(tooOld.waitFinalChunk());
  CHECK(parseLine(tooOld.lines()[0])["object"]["message"] == "too old resource version: 1 (2)");
  StreamClient replay(small.port(), watchPath("/api/v1/pods", "resourceVersion=2"), kToken);
  REQUIRE(replay.waitLines(2));
  CHECK(rvOf(parseLine(replay.lines()[0])["object"]) == 3);
}

TEST_CASE("compactHistory expires open streams only when asked", "[sim]") {
  ApiServer s;
  s.start();
  s.create("pods", pod("a", "p1"));
  StreamClient kept(s.port(), watchPath("/api/v1/pods", "resourceVersion=1"), kToken);
  REQUIRE(kept.waitHeaders());
  REQUIRE(s.openWatches() == 1);
  s.compactHistory(/*expireOpenStreams=*/false);
  s.create("pods", pod("a", "p2"));
  REQUIRE(kept.waitLines(1));
  CHECK(parseLine(kept.lines()[0])["type"] == "ADDED");

  s.compactHistory(/*expireOpenStreams=*/true);
  REQUIRE(kept.waitFinalChunk());
  auto err = parseLine(kept.lines().back());
  CHECK(err["type"] == "ERROR");
  CHECK(err["object"]["code"] == 410);
  CHECK(err["object"]["reason"] == "Expired");
  CHECK(err["object"]["message"] == "too old resource version: 2 (2)");
}

TEST_CASE("Bookmarks arrive every bookmarkInterval with the latest RV", "[sim]") {
  ApiServerOptions o;
  o.bookmarkInterval = 50ms;
  ApiServer s(o);
  s.start();
  s.create("workloads", workload("a", "w1", "q"));
  s.create("pods", pod("a", "p1"));  // rv 2: bookmarks carry the cluster-wide RV
  StreamClient w(s.port(),
                 watchPath("/apis/kueue.x-k8s.io/v1beta2/workloads",
                           "resourceVersion=1&allowWatchBookmarks=true"),
                 kToken);
  REQUIRE(w.waitLines(2));
  for (const auto& l : w.lines()) {
    CHECK(parseLine(l) == Json::parse(R"({"type":"BOOKMARK","object":{
        "apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload",
        "metadata":{"resourceVersion":"2"}}})"));
  }
  CHECK(s.stats().bookmarksSent >= 2);
  // Without allowWatchBookmarks nothing is sent while idle.
  StreamClient quiet(s.port(), watchPath("/api/v1/pods", "resourceVersion=2&timeoutSeconds=1"),
                     kToken);
  REQUIRE(quiet.waitFinalChunk());
  CHECK(quiet.lines().empty());
  // Typed built-ins serialise the empty object's fields (shared fixture form).
  StreamClient pods(s.port(), watchPath("/api/v1/pods", "resourceVersion=2&allowWatchBookmarks=1"),
                    kToken);
  REQUIRE(pods.waitLines(1));
  CHECK(parseLine(pods.lines()[0]) ==
        Json::parse(R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1",
          "metadata":{"resourceVersion":"2","creationTimestamp":null},
          "spec":{"containers":null},"status":{}}})"));
}

TEST_CASE("timeoutSeconds ends the stream cleanly", "[sim]") {
  ApiServer s;
  s.start();
  const auto t0 = std::chrono::steady_clock::now();
  StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=0&timeoutSeconds=1"), kToken);
  REQUIRE(w.waitFinalChunk());
  CHECK(std::chrono::steady_clock::now() - t0 >= 1s);  // not before the timeout
  CHECK(w.lines().empty());
  CHECK(w.partial().empty());
  REQUIRE(eventuallyTrue([&] { return s.openWatches() == 0; }));
}

TEST_CASE("sendInitialEvents: ADDED for all, then the initial-events-end bookmark", "[sim]") {
  ApiServer s;
  s.start();
  s.create("pods", pod("a", "p1"));
  s.create("pods", pod("a", "p2"));
  StreamClient w(s.port(),
                 watchPath("/api/v1/pods",
                           "sendInitialEvents=true&allowWatchBookmarks=true&"
                           "resourceVersionMatch=NotOlderThan&resourceVersion="),
                 kToken);
  REQUIRE(w.waitLines(3));
  s.update("pods", pod("a", "p1", "Failed"));
  REQUIRE(w.waitLines(4));
  auto lines = w.lines();
  CHECK(parseLine(lines[0])["type"] == "ADDED");
  CHECK(parseLine(lines[1])["type"] == "ADDED");
  auto marker = parseLine(lines[2]);
  CHECK(marker["type"] == "BOOKMARK");
  CHECK(marker["object"]["metadata"]["resourceVersion"] == "2");
  CHECK(marker["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true");
  CHECK(parseLine(lines[3])["type"] == "MODIFIED");
  CHECK(rvOf(parseLine(lines[3])["object"]) == 3);

  // sendInitialEvents without resourceVersionMatch=NotOlderThan is 422 Invalid.
  StreamClient bad(s.port(), watchPath("/api/v1/pods", "sendInitialEvents=true"), kToken);
  REQUIRE(bad.waitHeaders());
  CHECK(bad.status() == 422);
  auto badReply = get(s, watchPath("/api/v1/pods", "sendInitialEvents=true"));
  CHECK(badReply.json()["reason"] == "Invalid");
  CHECK(badReply.json()["details"]["causes"][0]["field"] == "resourceVersionMatch");

  // A server with the WatchList gate off rejects it, so clients can fall back.
  ApiServerOptions o;
  o.watchList = false;
  ApiServer old(o);
  old.start();
  auto rejected = get(old, watchPath("/api/v1/pods",
                                     "sendInitialEvents=true&allowWatchBookmarks=true&"
                                     "resourceVersionMatch=NotOlderThan"));
  CHECK(rejected.status == 422);
}

TEST_CASE("Selectors on a watch turn transitions into ADDED/DELETED", "[sim]") {
  ApiServer s;
  s.start();
  s.create("pods", pod("a", "p1", "Pending", {{"team", "x"}}));
  StreamClient w(
      s.port(),
      watchPath("/api/v1/pods", "resourceVersion=1&fieldSelector=" + pct("status.phase=Running")),
      kToken);
  REQUIRE(w.waitHeaders());
  s.update("pods", pod("a", "p1", "Running", {{"team", "x"}}));    // 2: starts matching
  s.update("pods", pod("a", "p1", "Running", {{"team", "y"}}));    // 3: still matching
  s.update("pods", pod("a", "p1", "Succeeded", {{"team", "y"}}));  // 4: stops matching
  s.update("pods", pod("a", "p1", "Failed", {{"team", "y"}}));     // 5: not matching
  REQUIRE(w.waitLines(3));
  auto lines = w.lines();
  CHECK(parseLine(lines[0])["type"] == "ADDED");
  CHECK(parseLine(lines[1])["type"] == "MODIFIED");
  auto gone = parseLine(lines[2]);
  CHECK(gone["type"] == "DELETED");
  CHECK(rvOf(gone["object"]) == 4);
  CHECK(gone["object"]["status"]["phase"] == "Running");  // the last matching state
  s.create("pods", pod("a", "p2"));
  REQUIRE(w.waitLines(4));
  CHECK(parseLine(w.lines()[3])["object"]["metadata"]["name"] == "p2");
}

// ------------------------------------------------------------------------------------------------
// Faults

TEST_CASE("cutStreamsMidEvent writes half an event and drops the connection", "[sim]") {
  ApiServer s;
  s.start();
  StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken);
  REQUIRE(w.waitHeaders());
  s.create("pods", pod("a", "p1"));
  REQUIRE(w.waitLines(1));
  s.cutStreamsMidEvent();
  const std::string full = R"({"type":"ADDED","object":)" + s.create("pods", pod("a", "p2")) + "}";
  REQUIRE(w.waitClosed());
  CHECK(w.lines().size() == 1);
  CHECK_FALSE(w.finalChunk());  // no terminating chunk: the body is incomplete
  const std::string partial = w.partial();
  CHECK(partial.size() == full.size() / 2);  // half of the event line without its newline
  CHECK(full.compare(0, partial.size(), partial) == 0);
  REQUIRE(eventuallyTrue([&] { return s.openWatches() == 0; }));
}

TEST_CASE("truncateNextEvent writes one invalid line, then the stream goes on", "[sim]") {
  ApiServer s;
  s.start();
  StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken);
  REQUIRE(w.waitHeaders());
  s.truncateNextEvent();
  s.create("pods", pod("a", "p1"));
  s.create("pods", pod("a", "p2"));
  REQUIRE(w.waitLines(2));
  CHECK_THROWS(Json::parse(w.lines()[0]));
  CHECK(parseLine(w.lines()[1])["object"]["metadata"]["name"] == "p2");
  CHECK_FALSE(w.closed());
}

TEST_CASE("stallStreams holds every byte for the duration, then sends the kept events", "[sim]") {
  ApiServer s;
  s.start();
  StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken);
  REQUIRE(w.waitHeaders());
  s.create("pods", pod("a", "p0"));
  REQUIRE(w.waitLines(1));  // the stream is live and nothing else is in flight
  const size_t bytesBefore = w.body().size();
  const auto t0 = std::chrono::steady_clock::now();
  s.stallStreams(300ms);
  s.create("pods", pod("a", "p1"));
  s.create("pods", pod("a", "p2"));
  REQUIRE(w.waitLines(3));
  // The first byte after the stall began completed line 2; it cannot arrive before t0 + 300 ms.
  const auto times = w.lineTimes();
  CHECK(times[1] - t0 >= 300ms);
  CHECK(w.body().size() > bytesBefore);
  CHECK(parseLine(w.lines()[1])["object"]["metadata"]["name"] == "p1");
  CHECK(parseLine(w.lines()[2])["object"]["metadata"]["name"] == "p2");
}

TEST_CASE("resumeStreams ends a stall at once and sends the kept events", "[sim]") {
  ApiServer s;
  s.start();
  StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken);
  REQUIRE(w.waitHeaders());
  s.create("pods", pod("a", "p0"));
  REQUIRE(w.waitLines(1));
  const auto t0 = std::chrono::steady_clock::now();
  s.stallStreams(60s);
  s.create("pods", pod("a", "p1"));
  s.create("pods", pod("a", "p2"));
  std::this_thread::sleep_for(200ms);
  CHECK(w.lines().size() == 1);  // held
  s.resumeStreams();
  REQUIRE(w.waitLines(3));  // long before the minute the stall was set for
  CHECK(std::chrono::steady_clock::now() - t0 < 30s);
  CHECK(parseLine(w.lines()[1])["object"]["metadata"]["name"] == "p1");
  CHECK(parseLine(w.lines()[2])["object"]["metadata"]["name"] == "p2");
  // Not a standing exemption: a later stall holds again.
  s.stallStreams(60s);
  s.create("pods", pod("a", "p3"));
  std::this_thread::sleep_for(200ms);
  CHECK(w.lines().size() == 3);
  s.resumeStreams();
  REQUIRE(w.waitLines(4));
  CHECK(parseLine(w.lines()[3])["object"]["metadata"]["name"] == "p3");
}

TEST_CASE("failNextRequests answers the next requests with the given status", "[sim]") {
  ApiServer s;
  s.start();
  s.failNextRequests(429, 2, 7);
  auto a = get(s, "/api/v1/pods");
  CHECK(a.status == 429);
  CHECK(a.header("Retry-After") == "7");
  CHECK(a.json()["reason"] == "TooManyRequests");
  CHECK(a.json()["details"]["retryAfterSeconds"] == 7);
  auto b = get(s, watchPath("/api/v1/pods", ""));  // a watch is a request too
  CHECK(b.status == 429);
  CHECK(get(s, "/api/v1/pods").status == 200);

  s.failNextRequests(500, 1);
  auto c = get(s, "/version");  // discovery too
  CHECK(c.status == 500);
  CHECK(c.json()["reason"] == "InternalError");
  CHECK(c.header("Retry-After").empty());
  CHECK(get(s, "/version").status == 200);
  auto st = s.stats();
  CHECK(st.injectedFailures == 3);
  CHECK(st.listRequests == 2);
  CHECK(st.watchRequests == 1);
  // 401 comes first: an unauthenticated request does not consume an injected failure.
  s.failNextRequests(503, 1);
  CHECK(get(s, "/version", "").status == 401);
  CHECK(get(s, "/version").status == 503);
}

TEST_CASE("restartWithNewRvBase closes streams, forgets history, issues RVs from the base",
          "[sim]") {
  ApiServer s;
  s.start();
  s.create("pods", pod("a", "p1"));
  StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=1"), kToken);
  REQUIRE(w.waitHeaders());
  s.restartWithNewRvBase(1000);
  REQUIRE(w.waitClosed());
  CHECK_FALSE(w.finalChunk());
  CHECK(s.currentResourceVersion() == 1000);
  CHECK(rvOf(Json::parse(s.create("pods", pod("a", "p2")))) == 1001);
  StreamClient old(s.port(), watchPath("/api/v1/pods", "resourceVersion=1"), kToken);
  REQUIRE(old.waitFinalChunk());
  CHECK(parseLine(old.lines()[0])["object"]["message"] == "too old resource version: 1 (1000)");
  CHECK(get(s, "/api/v1/pods").json()["metadata"]["resourceVersion"] == "1001");
  // A lower base is allowed (restore from an older backup).
  s.restartWithNewRvBase(10);
  CHECK(rvOf(Json::parse(s.create("pods", pod("a", "p3")))) == 11);
}

TEST_CASE("stop() ends open watches at once, start() serves the same port with state kept",
          "[sim]") {
  ApiServerOptions o;
  o.tls = true;
  ApiServer s(o);
  s.start();
  const int port = s.port();
  s.create("pods", pod("a", "p1"));

  // An HTTPS watch through a full client, plus an idle keep-alive connection.
  httplib::SSLClient cli("127.0.0.1", port);
  cli.set_ca_cert_store(storeFromPem(s.caPem()));
  cli.enable_server_certificate_verification(true);
  cli.set_keep_alive(true);
  REQUIRE(cli.Get("/version", httplib::Headers{{"Authorization", "Bearer test-token"}}));
  std::mutex mu;
  std::string received;
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    httplib::SSLClient wc("127.0.0.1", port);
    wc.set_ca_cert_store(storeFromPem(s.caPem()));
    wc.enable_server_certificate_verification(true);
    wc.set_read_timeout(30, 0);
    wc.Get("/api/v1/pods?watch=1&resourceVersion=0",
           httplib::Headers{{"Authorization", "Bearer test-token"}}, [&](const char* d, size_t n) {
             std::lock_guard<std::mutex> lk(mu);
             received.append(d, n);
             return true;
           });
    done = true;
  });
  REQUIRE(eventuallyTrue([&] { return s.openWatches() == 1; }));
  REQUIRE(eventuallyTrue([&] {
    std::lock_guard<std::mutex> lk(mu);
    return received.find("\"p1\"") != std::string::npos;
  }));

  s.stop();  // returns only after every connection, the idle keep-alive one too, is gone
  CHECK_FALSE(s.running());
  CHECK(eventuallyTrue([&] { return done.load(); }));
  watcher.join();
  CHECK(s.openWatches() == 0);
  CHECK(get(s, "/version").error == httplib::Error::Connection);

  s.create("pods", pod("a", "p2"));  // objects can change while stopped
  s.start();
  CHECK(s.port() == port);
  CHECK(s.running());
  httplib::SSLClient fresh("127.0.0.1", port);
  fresh.set_ca_cert_store(storeFromPem(s.caPem()));
  fresh.enable_server_certificate_verification(true);
  auto list = fresh.Get("/api/v1/pods", httplib::Headers{{"Authorization", "Bearer test-token"}});
  REQUIRE(list);
  CHECK(Json::parse(list->body)["items"].size() == 2);
  CHECK(Json::parse(list->body)["metadata"]["resourceVersion"] == "2");
  s.stop();
  s.stop();  // idempotent
}

// httplib's own pool started all 256 threads before accepting anything: seconds under TSan on a
// loaded machine, when the server's tests missed their deadlines.
TEST_CASE("The server starts worker threads as connections need them and no more than its limit", "[sim]") {
  const int before = firstwork::testing::processThreads();
  REQUIRE(before > 0);
  ApiServerOptions o;
  o.workerThreads = 256;
  ApiServer s(o);
  s.start();
  REQUIRE(get(s, "/healthz").status == 200);
  // The accept loop and the one worker that served the request (kept for the next).
  CHECK(s.workerThreads() == 1);
  CHECK(firstwork::testing::processThreads() <= before + 3);
  {
    std::vector<std::unique_ptr<StreamClient>> watches;
    for (int i = 0; i < 30; ++i) {
      watches.push_back(std::make_unique<StreamClient>(
          s.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken));
    }
    REQUIRE(eventuallyTrue([&] { return s.openWatches("pods") == 30; }));
    // Each open watch holds a worker (and each client here has a reader thread).
    CHECK(s.workerThreads() >= 30);
    CHECK(s.workerThreads() <= 31);
    CHECK(firstwork::testing::processThreads() >= before + 1 + 30 + 30);
    CHECK(firstwork::testing::processThreads() < before + 1 + 30 + 30 + 8);
  }
  s.stop();
  CHECK(s.workerThreads() == 0);  // joined (the process's count is no measure of it under TSan,
                                  // whose own background thread may start meanwhile)

  // Up to the limit: a server allowed 4 serves a fifth request once one of them is free.
  ApiServerOptions small;
  small.workerThreads = 4;
  ApiServer t(small);
  t.start();
  std::vector<std::unique_ptr<StreamClient>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<StreamClient>(
        t.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken));
  }
  REQUIRE(eventuallyTrue([&] { return t.openWatches("pods") == 4; }));
  auto fifth = std::make_unique<StreamClient>(
      t.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(t.openWatches("pods") == 4);  // all four workers busy: the fifth waits
  CHECK(t.workerThreads() == 4);
  held.pop_back();                    // a client goes: its worker is freed
  CHECK(eventuallyTrue([&] { return t.openWatches("pods") == 4 && fifth->waitHeaders(); }));
  t.stop();
}

TEST_CASE("Many concurrent watches are all served", "[sim]") {
  ApiServer s;
  s.start();
  // 1 management + 2 workers × 5 resources is 15 watches; 40 leaves headroom.
  std::vector<std::unique_ptr<StreamClient>> watches;
  for (int i = 0; i < 40; ++i) {
    watches.push_back(std::make_unique<StreamClient>(
        s.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken));
  }
  REQUIRE(eventuallyTrue([&] { return s.openWatches("pods") == 40; }));
  s.create("pods", pod("a", "p1"));
  for (auto& w : watches) {
    REQUIRE(w->waitLines(1));
    CHECK(parseLine(w->lines()[0])["type"] == "ADDED");
  }
  // Lists still get through while all those watches are open.
  CHECK(get(s, "/api/v1/pods").status == 200);
}

TEST_CASE("A watch from an RV above the latest sends nothing until the RV is passed", "[sim]") {
  ApiServerOptions o;
  o.bookmarkInterval = 20ms;
  o.tooLargeResourceVersionWait = 50ms;
  ApiServer s(o);
  s.start();
  s.create("pods", pod("a", "p1"));  // rv 1
  StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=3&allowWatchBookmarks=1"),
                 kToken);
  REQUIRE(eventuallyTrue([&] { return s.openWatches() == 1; }));
  s.create("pods", pod("a", "p2"));  // rv 2: below the watch's RV
  s.create("pods", pod("a", "p3"));  // rv 3: equal, already "seen"
  s.create("pods", pod("a", "p4"));  // rv 4: sent
  REQUIRE(w.waitBodyContains("\"p4\""));
  // Nothing at or below RV 3 was sent; a bookmark may come once the latest RV reaches 3.
  size_t events = 0;
  for (const auto& l : w.lines()) {
    auto e = parseLine(l);
    if (e["type"] == "BOOKMARK") {
      CHECK(rvOf(e["object"]) >= 3);
    } else {
      ++events;
      CHECK(e["type"] == "ADDED");
      CHECK(e["object"]["metadata"]["name"] == "p4");
    }
  }
  CHECK(events == 1);
  // Bookmarks go on with the latest RV.
  const size_t seen = w.lines().size();
  REQUIRE(w.waitLines(seen + 1));
  CHECK(parseLine(w.lines()[seen])["object"]["metadata"]["resourceVersion"] == "4");

  // A watch-list from a too-large RV waits, then ends with an in-band 504.
  StreamClient wl(s.port(),
                  watchPath("/api/v1/pods",
                            "sendInitialEvents=true&allowWatchBookmarks=true&"
                            "resourceVersionMatch=NotOlderThan&resourceVersion=50"),
                  kToken);
  REQUIRE(wl.waitFinalChunk());
  REQUIRE(wl.lines().size() == 1);
  auto err = parseLine(wl.lines()[0]);
  CHECK(err["type"] == "ERROR");
  CHECK(err["object"]["code"] == 504);
  CHECK(err["object"]["message"] == "Too large resource version: 50, current: 4");
}

TEST_CASE("A watch whose client hangs up is released without waiting for an event", "[sim]") {
  ApiServer s;
  s.start();
  {
    StreamClient w(s.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken);
    REQUIRE(w.waitHeaders());
    REQUIRE(eventuallyTrue([&] { return s.openWatches("pods") == 1; }));
  }  // the client closes its socket; no event or bookmark is ever written
  CHECK(eventuallyTrue([&] { return s.openWatches("pods") == 0; }));
  // A client that is still there keeps its watch.
  StreamClient kept(s.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken);
  REQUIRE(kept.waitHeaders());
  CHECK_FALSE(eventuallyTrue([&] { return s.openWatches("pods") == 0; }, 300ms));
  s.create("pods", pod("a", "p1"));
  CHECK(kept.waitLines(1));
}

// kube-apiserver closes a watcher that does not keep up with its events; the test server ends a
// stream whose write waited writeTimeout for the client to take bytes, and counts it (the estate
// benchmark tells a burst whose streams were dropped from one the daemon took whole).
TEST_CASE("A watch whose client stops reading is dropped after the write timeout and counted",
          "[sim]") {
  ApiServerOptions o;
  o.writeTimeout = 200ms;
  ApiServer s(o);
  s.start();
  // A client that sends its request and never reads, with a small receive buffer.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(s.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  const std::string req = "GET " + watchPath("/api/v1/pods", "resourceVersion=0") +
                          " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kToken +
                          "\r\n\r\n";
  REQUIRE(::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()));
  REQUIRE(eventuallyTrue([&] { return s.openWatches("pods") == 1; }));
  CHECK(s.stats().watchesDropped == 0);
  // Events of ~16 KiB each until the kernel's buffers are full and a write waits: the stream is
  // dropped, counted once.
  const std::string filler(16'000, 'x');
  for (int i = 0; i < 2'000 && s.openWatches("pods") == 1; ++i) {
    Json p = Json::parse(pod("a", "p" + std::to_string(i)));
    p["metadata"]["annotations"] = {{"filler", filler}};
    s.create("pods", p.dump());
  }
  CHECK(eventuallyTrue([&] { return s.openWatches("pods") == 0; }));
  CHECK(s.stats().watchesDropped == 1);
  ::close(fd);
  // A client that keeps reading is not dropped.
  StreamClient kept(s.port(), watchPath("/api/v1/pods", "resourceVersion=0"), kToken);
  REQUIRE(kept.waitHeaders());
  s.create("pods", pod("a", "last"));
  CHECK(kept.waitBodyContains("\"last\""));
  CHECK(s.openWatches("pods") == 1);
  CHECK(s.stats().watchesDropped == 1);
}

TEST_CASE("Writes over HTTP are refused with 405", "[sim]") {
  ApiServer s;
  s.start();
  httplib::Client cli("127.0.0.1", s.port());
  cli.set_read_timeout(30, 0);  // a deadline (httplib's 5 s missed under TSan on a loaded machine)
  auto r = cli.Post("/api/v1/namespaces/a/pods",
                    httplib::Headers{{"Authorization", "Bearer test-token"}}, pod("a", "p1"),
                    "application/json");
  REQUIRE(r);
  CHECK(r->status == 405);
  CHECK(Json::parse(r->body)["reason"] == "MethodNotAllowed");
  CHECK(s.count("pods") == 0);
}

TEST_CASE("Requests are recorded without credentials", "[sim]") {
  ApiServer s;
  s.start();
  get(s, "/api/v1/pods?limit=5&resourceVersion=0");
  get(s, "/api/v1/pods", "bad");
  auto recs = s.requests();
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].method == "GET");
  CHECK(recs[0].path == "/api/v1/pods");
  CHECK(recs[0].param("limit") == "5");
  CHECK(recs[0].param("resourceVersion") == "0");
  CHECK(recs[0].status == 200);
  CHECK_FALSE(recs[0].watch);
  CHECK(recs[1].status == 401);
  s.clearRequests();
  CHECK(s.requests().empty());
}

// ------------------------------------------------------------------------------------------------
// Added for the fault soak and the hostile-input tests

TEST_CASE("A skewed cluster clock dates every response and stamps creationTimestamp", "[sim]") {
  firstwork::testing::ManualClock clock;  // 2026-05-01T10:00:00Z, a Friday
  clock.advance(std::chrono::minutes(7));  // the cluster runs on its own, skewed time
  ApiServerOptions o;
  o.clock = &clock;
  ApiServer s(o);
  s.start();
  auto r = get(s, "/api/v1/pods");
  CHECK(r.header("Date") == "Fri, 01 May 2026 10:07:00 GMT");
  CHECK(get(s, "/version").header("Date") == "Fri, 01 May 2026 10:07:00 GMT");
  auto created = Json::parse(s.create("pods", pod("a", "p1")));
  CHECK(created["metadata"]["creationTimestamp"] == "2026-05-01T10:07:00Z");
  // A timestamp the caller gives is kept.
  auto given = Json::parse(pod("a", "p2"));
  given["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
  CHECK(Json::parse(s.create("pods", given.dump()))["metadata"]["creationTimestamp"] ==
        "2026-01-01T00:00:00Z");
}

TEST_CASE("injectRawEvent sends the object bytes verbatim and keeps them in the watch history",
          "[sim]") {
  ApiServer s;
  s.start();
  s.create("pods", pod("a", "p1"));
  StreamClient live(s.port(), watchPath("/api/v1/pods", "resourceVersion=1"), kToken);
  REQUIRE(live.waitHeaders());
  const uint64_t next = s.currentResourceVersion() + 1;
  const std::string raw = "{\"metadata\":{\"name\":\"bad\xff\xfe\",\"uid\":\"u-raw\",\"resourceVersion\":\"" +
                          std::to_string(next) + "\"}}";
  CHECK(s.injectRawEvent("pods", "ADDED", raw) == next);
  s.create("pods", pod("a", "p2"));
  REQUIRE(live.waitLines(2));
  CHECK(live.lines()[0] == "{\"type\":\"ADDED\",\"object\":" + raw + "}");
  CHECK(parseLine(live.lines()[1])["object"]["metadata"]["name"] == "p2");
  // A watch from before it gets it again, like a corrupt object an API server keeps serving.
  StreamClient replay(s.port(), watchPath("/api/v1/pods", "resourceVersion=1"), kToken);
  REQUIRE(replay.waitLines(2));
  CHECK(replay.lines()[0] == live.lines()[0]);
  // No object is stored: LIST and count() do not show it, also as of an RV before p2.
  CHECK(s.count("pods") == 2);
  auto list = get(s, "/api/v1/pods");
  REQUIRE(list.status == 200);
  CHECK(list.json()["items"].size() == 2);
  auto exact = get(s, "/api/v1/pods?resourceVersion=" + std::to_string(next) +
                          "&resourceVersionMatch=Exact");
  REQUIRE(exact.status == 200);
  CHECK(exact.json()["items"].size() == 1);
  CHECK(exact.json()["metadata"]["resourceVersion"] == std::to_string(next));
}
