// Hostile objects through the decoder and the engine (issue 8; docs/security.md lists the
// handling): each is skipped and counted where it cannot be read, or taken as it is where it can,
// and none of them changes anything about the other workloads. The check: the same healthy job,
// played with and without hostile objects mixed into its events, gives the same milestones,
// samples and device counts.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "firstwork/model/decode.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using namespace firstwork::testing;
using std::chrono::seconds;
using Json = nlohmann::ordered_json;

namespace {

/// What the reflector does before the engine: decode, skip and count what does not decode.
struct Pipeline {
  Harness h{standaloneConfig("c1")};
  int decodeErrors = 0;
  std::vector<std::string> errors;

  void feed(const std::string& json, model::Kind kind, SystemTime observedAt) {
    auto r = model::decodeObject(json, kind);
    if (!r) {
      ++decodeErrors;
      errors.push_back(r.error());
      return;
    }
    h.put("c1", *r, observedAt);
  }
};

std::string rfc(SystemTime t) { return formatRfc3339(t); }

Json workloadJson(const std::string& name, const std::string& uid, SystemTime created) {
  return Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
              {"kind", "Workload"},
              {"metadata",
               {{"name", name}, {"namespace", "team-b"}, {"uid", uid}, {"creationTimestamp", rfc(created)}}},
              {"spec",
               {{"queueName", "lq"},
                {"podSets",
                 Json::array({{{"name", "main"},
                               {"count", 1},
                               {"template",
                                {{"spec",
                                  {{"containers",
                                    Json::array({{{"name", "c"},
                                                  {"resources", {{"requests", {{"nvidia.com/gpu", "1"}}}}}}})}}}}}}})}}}};
}

Json podJson(const std::string& name, const std::string& uid, SystemTime created) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "team-b"}, {"uid", uid}, {"creationTimestamp", rfc(created)}}},
              {"spec", {{"containers", Json::array({{{"name", "c"}}})}}},
              {"status", {{"phase", "Pending"}}}};
}

/// One hostile object: its JSON, kind, and whether the decoder must refuse it.
struct Hostile {
  std::string what;
  std::string json;
  model::Kind kind;
  bool refused;
};

std::vector<Hostile> hostileObjects() {
  std::vector<Hostile> out;
  const SystemTime t = at(seconds(30));
  {  // a field we read, mistyped
    auto w = workloadJson("job-mistyped", "h-1", t);
    w["status"] = {{"conditions", "Admitted"}};
    out.push_back({"mistyped conditions", w.dump(), model::Kind::Workload, true});
  }
  {  // nothing but metadata: no spec, no status
    Json w{{"metadata", {{"name", "job-bare"}, {"namespace", "team-b"}, {"uid", "h-2"}, {"creationTimestamp", rfc(t)}}}};
    out.push_back({"missing spec and status", w.dump(), model::Kind::Workload, false});
  }
  {  // 1.5 MB: a huge annotation and args
    auto p = podJson("huge", "h-3", t);
    p["metadata"]["annotations"] = {{"kubectl.kubernetes.io/last-applied-configuration", std::string(1500000, 'x')}};
    out.push_back({"1.5 MB pod", p.dump(), model::Kind::Pod, false});
  }
  {  // 10,000 labels, some with kept prefixes
    auto w = workloadJson("job-labels", "h-4", t);
    for (int i = 0; i < 10000; ++i) w["metadata"]["labels"]["firstwork.dev/l" + std::to_string(i)] = "v";
    out.push_back({"10,000 labels", w.dump(), model::Kind::Workload, false});
  }
  {  // nesting 50,000 deep where a kept label value belongs, and where nothing is read
    std::string deep;
    for (int i = 0; i < 50000; ++i) deep += "{\"a\":";
    deep += "1" + std::string(50000, '}');
    auto w = workloadJson("job-deep", "h-5", t);
    std::string text = w.dump();
    std::string read = text;
    read.insert(read.find("\"uid\""), "\"labels\":{\"firstwork.dev/x\":" + deep + "},");
    out.push_back({"deep nesting in a label", read, model::Kind::Workload, true});
    std::string unread = text;
    unread.insert(unread.size() - 1, ",\"extra\":" + deep);
    out.push_back({"deep nesting unread", unread, model::Kind::Workload, false});
  }
  {  // invalid UTF-8 in the name
    std::string s = workloadJson("job-utf8", "h-6", t).dump();
    s.replace(s.find("job-utf8"), 8, "job-\xff\xfe");
    out.push_back({"invalid UTF-8", s, model::Kind::Workload, true});
  }
  {  // timestamps before 1970 and far in the future
    auto old = workloadJson("job-old", "h-7", t);
    old["metadata"]["creationTimestamp"] = "1960-05-01T10:00:00Z";
    out.push_back({"before 1970", old.dump(), model::Kind::Workload, true});
    auto future = workloadJson("job-future", "h-8", t);
    future["metadata"]["creationTimestamp"] = "2199-05-01T10:00:00Z";
    future["status"] = {{"admission", {{"clusterQueue", "cq-b"}}},
                        {"conditions",
                         Json::array({{{"type", "QuotaReserved"}, {"status", "True"}, {"reason", "QuotaReserved"},
                                       {"lastTransitionTime", "2199-05-01T10:01:00Z"}}})}};
    out.push_back({"far future", future.dump(), model::Kind::Workload, false});
  }
  {  // negative quantities
    auto w = workloadJson("job-negative", "h-9", t);
    w["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "-4";
    out.push_back({"negative request", w.dump(), model::Kind::Workload, true});
    Json n{{"metadata", {{"name", "n-negative"}, {"uid", "h-10"}, {"creationTimestamp", rfc(t)}}},
           {"status", {{"allocatable", {{"nvidia.com/gpu", "-8"}}}, {"capacity", {{"nvidia.com/gpu", "-8"}}}}}};
    out.push_back({"negative allocatable", n.dump(), model::Kind::Node, true});
  }
  return out;
}

/// The healthy job of milestones_test (2 pods × 1 GPU on an 8-GPU node) with `extra` objects fed
/// at +30 s, after the reservation and at the end. Returns the figures that must not change.
struct Figures {
  std::vector<std::pair<std::string, SystemTime>> milestones;  // wl-1: key, event time
  std::vector<std::pair<std::string, double>> samples;         // wl-1 observations
  int64_t usable = 0, allocated = 0, productive = 0;
};

Figures play(const std::vector<Hostile>& extra, Pipeline& p) {
  auto& h = p.h;
  WorkloadBuilder wl("team-a", "job-train-3b9f2", "wl-1", at(seconds(0)));
  wl.ownedByJob("train", "job-1").podSet(2, 1);
  PodBuilder p1("team-a", "train-0", "pod-1", at(seconds(60)));
  PodBuilder p2("team-a", "train-1", "pod-2", at(seconds(60)));
  for (auto* pod : {&p1, &p2}) pod->ownedByJob("train", "job-1").gpus(1);
  h.put("c1", gpuNode("n1", 8, at(seconds(-7200))), at(seconds(-3600)));
  h.put("c1", wl.pending(at(seconds(0))).obj(), at(seconds(1)));
  h.step(at(seconds(1)));
  for (const auto& x : extra) p.feed(x.json, x.kind, at(seconds(31)));
  h.step(at(seconds(31)));
  h.put("c1", wl.reserved("cq-a", at(seconds(60))).admitted(at(seconds(60))).obj(), at(seconds(61)));
  h.put("c1", p1.scheduled("n1", at(seconds(90))).running(at(seconds(180))).obj(), at(seconds(181)));
  h.put("c1", p2.scheduled("n1", at(seconds(120))).running(at(seconds(240))).obj(), at(seconds(241)));
  h.step(at(seconds(241)));
  for (const auto& x : extra) p.feed(x.json, x.kind, at(seconds(242)));
  h.put("c1", p1.firstWork(at(seconds(300))).obj(), at(seconds(301)));
  h.put("c1", p2.firstWork(at(seconds(360))).obj(), at(seconds(361)));
  h.step(at(seconds(361)));
  for (const auto& x : extra) p.feed(x.json, x.kind, at(seconds(400)));
  h.step(at(seconds(400)));

  Figures f;
  for (const auto& m : h.milestones("wl-1")) f.milestones.emplace_back(m.key, m.eventTime);
  for (const auto& o : h.all.observations)
    if (o.key.find("wl-1") != std::string::npos) f.samples.emplace_back(o.key, o.seconds);
  auto snap = h.e.snapshot();
  f.usable = gpusNow(snap, "c1", "nvidia.com/gpu", "usable");
  f.allocated = gpusNow(snap, "c1", "nvidia.com/gpu", "allocated");
  f.productive = gpusNow(snap, "c1", "nvidia.com/gpu", "productive");
  return f;
}

}  // namespace

TEST_CASE("hostile objects through decoder and engine change nothing about the other workloads",
          "[engine][hostile]") {
  Pipeline clean;
  const Figures baseline = play({}, clean);
  // By hand: queued 0 s, reserved/admitted 60 s, scheduled 120 s (later pod), running 240 s,
  // first work 300 s (the earliest pod's signal); 8 usable, 2 allocated, 2 productive.
  REQUIRE(baseline.milestones.size() == 6);
  CHECK(baseline.usable == 8);
  CHECK(baseline.allocated == 2);
  CHECK(baseline.productive == 2);
  CHECK(clean.decodeErrors == 0);

  const auto all = hostileObjects();
  int refused = 0;
  for (const auto& x : all) refused += x.refused ? 1 : 0;
  for (const auto& x : all) {
    INFO(x.what);
    Pipeline p;
    const Figures f = play({x}, p);
    // Fed three times (the watch may well deliver an object again): refused each time, or taken.
    CHECK(p.decodeErrors == (x.refused ? 3 : 0));
    CHECK(f.milestones == baseline.milestones);
    CHECK(f.samples == baseline.samples);
    CHECK(f.usable == baseline.usable);
    CHECK(f.allocated == baseline.allocated);
    CHECK(f.productive == baseline.productive);
  }
  // All of them at once, each three times.
  Pipeline p;
  const Figures f = play(all, p);
  CHECK(p.decodeErrors == 3 * refused);
  CHECK(f.milestones == baseline.milestones);
  CHECK(f.samples == baseline.samples);
  CHECK(f.usable == baseline.usable);
  // Every refusal names the field (or the encoding) that made it.
  for (const auto& e : p.errors) {
    INFO(e);
    CHECK((e.find("status.conditions") == 0 || e.find("metadata.labels") == 0 ||
           e.find("invalid UTF-8") == 0 || e.find("metadata.creationTimestamp") == 0 ||
           e.find("spec.podSets[0]") == 0 || e.find("status.allocatable") == 0 ||
           e.find("status.capacity") == 0));
  }
}

TEST_CASE("an object from the far future keeps its own times and waits for them", "[engine][hostile]") {
  Pipeline p;
  auto future = workloadJson("job-future", "h-8", parseRfc3339("2199-05-01T10:00:00Z").value());
  future["status"] = {{"admission", {{"clusterQueue", "cq-b"}}},
                      {"conditions",
                       Json::array({{{"type", "QuotaReserved"}, {"status", "True"}, {"reason", "QuotaReserved"},
                                     {"lastTransitionTime", "2199-05-01T10:01:00Z"}}})}};
  p.h.put("c1", gpuNode("n1", 8, at(seconds(-7200))), at(seconds(-3600)));
  p.feed(future.dump(), model::Kind::Workload, at(seconds(1)));
  p.h.step(at(seconds(1)));
  // Its milestones carry the times it says (a clock ahead is the cluster's, not ours to fix);
  // the queued→reserved stage is one minute, as written.
  auto queued = p.h.milestone("h-8", Milestone::Queued);
  REQUIRE(queued);
  CHECK(queued->eventTime == parseRfc3339("2199-05-01T10:00:00Z").value());
  auto stage = p.h.observations(HistogramKind::Stage);
  REQUIRE(stage.size() == 1);
  CHECK(stage[0].seconds == 60);
  // Nothing negative anywhere in the snapshot.
  auto snap = p.h.e.snapshot();
  for (const auto& g : snap.gpus) CHECK(g.gpus >= 0);
  for (const auto& s : snap.stranded) CHECK(s.gpus >= 0);
  for (const auto& s : snap.strandedSeconds) CHECK(s.seconds >= 0);
}
