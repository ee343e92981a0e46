#include "firstwork/signals/promql.hpp"

#include <catch2/catch.hpp>

#include "firstwork/core/rfc3339.hpp"

using namespace firstwork;
using namespace firstwork::signals;

namespace {
// 1777629600 s after the epoch is 2026-05-01T10:00:00Z (`date -u -d @1777629600`).
SystemTime at(const char* rfc3339) { return parseRfc3339(rfc3339).value(); }
}  // namespace

TEST_CASE("an instant vector parses into series with labels and one sample", "[signals][promql]") {
  auto r = parsePromQueryResponse(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"__name__":"training_steps_total","namespace":"ns","pod":"p","job":"j"},
     "value":[1777629600.25,"5"]},
    {"metric":{"namespace":"ns","pod":"q"},"value":[1777629600,"NaN"]}]}})");
  REQUIRE(r.ok());
  CHECK(r->resultType == "vector");
  REQUIRE(r->series.size() == 2);
  CHECK(r->series[0].labels.at("pod") == "p");
  CHECK(r->series[0].labels.at("__name__") == "training_steps_total");
  REQUIRE(r->series[0].samples.size() == 1);
  CHECK(r->series[0].samples[0].first == at("2026-05-01T10:00:00.250Z"));
  CHECK(r->series[0].samples[0].second == 5.0);
  CHECK(std::isnan(r->series[1].samples[0].second));
  CHECK(r->malformedSeries == 0);
}

TEST_CASE("a range matrix keeps every sample in order", "[signals][promql]") {
  auto r = parsePromQueryResponse(R"({"status":"success","warnings":["w1"],"data":{
    "resultType":"matrix","result":[{"metric":{"namespace":"ns","pod":"p"},
    "values":[[1777629600,"0"],[1777629615,"+Inf"],[1777629630,"1e+06"]]}]}})");
  REQUIRE(r.ok());
  CHECK(r->warnings == std::vector<std::string>{"w1"});
  REQUIRE(r->series[0].samples.size() == 3);
  CHECK(std::isinf(r->series[0].samples[1].second));
  CHECK(r->series[0].samples[2].second == 1e6);
  CHECK(r->series[0].samples[2].first == at("2026-05-01T10:00:30Z"));
}

TEST_CASE("malformed responses are errors with a reason", "[signals][promql]") {
  struct Case {
    const char* body;
    const char* error;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"", "response is not JSON"},
           {"<html>502 Bad Gateway</html>", "response is not JSON"},
           {"[1,2]", "response is not a JSON object"},
           {R"({"data":{}})", "response has no \"status\""},
           {R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})",
            "Prometheus query failed (bad_data): parse error at char 3"},
           {R"({"status":"success"})", "response has no \"data\" object"},
           {R"({"status":"success","data":{"result":[]}})", "response has no \"data.resultType\""},
           {R"({"status":"success","data":{"resultType":"scalar","result":[1777629600,"1"]}})",
            "query returned a scalar; it must return series labelled by pod"},
           {R"({"status":"success","data":{"resultType":"vector","result":{}}})",
            "response has no \"data.result\" array"},
           {R"({"status":"success","data":{"resultType":"vector","result":[)",
            "response is not JSON"},
       }) {
    INFO(c.body);
    auto r = parsePromQueryResponse(c.body);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find(c.error) != std::string::npos);
  }
}

TEST_CASE("malformed series are skipped and counted, the rest kept", "[signals][promql]") {
  auto r = parsePromQueryResponse(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"namespace":"ns","pod":"ok"},"value":[1777629600,"1"]},
    "not an object",
    {"value":[1777629600,"1"]},
    {"metric":{"pod":7},"value":[1777629600,"1"]},
    {"metric":{"pod":"a"},"value":[1777629600]},
    {"metric":{"pod":"b"},"value":["1777629600","1"]},
    {"metric":{"pod":"c"},"value":[1777629600,1]},
    {"metric":{"pod":"d"},"value":[1777629600,"five"]},
    {"metric":{"pod":"e"},"values":[[1777629600,"1"]]}]}})");
  REQUIRE(r.ok());
  CHECK(r->series.size() == 1);
  CHECK(r->malformedSeries == 8);
}

TEST_CASE("the first positive sample per pod is its useful-work signal", "[signals][promql]") {
  PromQueryResult result;
  result.resultType = "matrix";
  auto series = [&](std::map<std::string, std::string> labels,
                    std::vector<std::pair<SystemTime, double>> samples) {
    result.series.push_back({std::move(labels), std::move(samples)});
  };
  SystemTime t0 = at("2026-05-01T10:00:00Z");
  using std::chrono::seconds;
  // Pod p: two GPUs' series; the second turns positive earlier (t0+15 s) than the first (t0+30 s).
  series({{"namespace", "ns"}, {"pod", "p"}, {"gpu", "0"}},
         {{t0, 0}, {t0 + seconds(15), 0}, {t0 + seconds(30), 3}});
  series({{"namespace", "ns"}, {"pod", "p"}, {"gpu", "1"}}, {{t0 + seconds(15), 2}});
  // Pod idle never does work; NaN and +Inf are not evidence.
  series({{"namespace", "ns"}, {"pod", "idle"}},
         {{t0, 0}, {t0 + seconds(15), std::nan("")}, {t0 + seconds(30), INFINITY}});
  // No pod label: counted, not reported.
  series({{"namespace", "ns"}}, {{t0, 1}});
  series({{"namespace", "other"}, {"pod", "a"}}, {{t0 + seconds(45), 0.5}});

  Extracted e = extractUsefulWork(result, {});
  CHECK(e.seriesWithoutPod == 1);
  CHECK(e.signals == std::vector<UsefulWorkSignal>{
                         {"ns", "p", t0 + seconds(15), 2, ""},
                         {"other", "a", t0 + seconds(45), 0.5, ""}});
}

TEST_CASE("label names are configurable and values can be timestamps", "[signals][promql]") {
  PromQueryResult result;
  SystemTime t0 = at("2026-05-01T10:00:00Z");
  // The app exports the time of its first step: 1777629500.5 = 2026-05-01T09:58:20.500Z.
  result.series.push_back(
      {{{"exported_namespace", "ns"}, {"exported_pod", "p"}}, {{t0, 1777629500.5}}});
  result.series.push_back({{{"exported_namespace", "ns"}, {"exported_pod", "q"}}, {{t0, 0}}});
  Extracted e = extractUsefulWork(result, {"exported_namespace", "exported_pod", true, ""});
  CHECK(e.signals ==
        std::vector<UsefulWorkSignal>{{"ns", "p", at("2026-05-01T09:58:20.500Z"), 1777629500.5, ""}});
  // With the default labels nothing matches.
  CHECK(extractUsefulWork(result, {}).seriesWithoutPod == 2);
}

TEST_CASE("a cluster label keeps same-named pods of different clusters apart", "[signals][promql]") {
  PromQueryResult result;
  SystemTime t0 = at("2026-05-01T10:00:00Z");
  using std::chrono::seconds;
  // research/train-0 exists on two workers (MultiKueue copies keep namespace/name); each worker's
  // pod starts work at its own time. A third series carries no cluster label.
  result.series.push_back({{{"namespace", "research"}, {"pod", "train-0"}, {"cluster", "worker-1"}},
                           {{t0 + seconds(30), 1}}});
  result.series.push_back({{{"namespace", "research"}, {"pod", "train-0"}, {"cluster", "worker-2"}},
                           {{t0 + seconds(90), 4}}});
  result.series.push_back({{{"namespace", "research"}, {"pod", "eval-0"}}, {{t0 + seconds(60), 1}}});
  ExtractOptions o;
  o.clusterLabel = "cluster";
  Extracted e = extractUsefulWork(result, o);
  CHECK(e.signals == std::vector<UsefulWorkSignal>{
                         {"research", "eval-0", t0 + seconds(60), 1, ""},
                         {"research", "train-0", t0 + seconds(30), 1, "worker-1"},
                         {"research", "train-0", t0 + seconds(90), 4, "worker-2"}});
  // Without clusterLabel the two series are one pod, and the earlier sample wins.
  Extracted merged = extractUsefulWork(result, {});
  CHECK(merged.signals == std::vector<UsefulWorkSignal>{
                              {"research", "eval-0", t0 + seconds(60), 1, ""},
                              {"research", "train-0", t0 + seconds(30), 1, ""}});
}

// Found by fuzz/fuzz_promql: a sample at 177762929630 s (year 7603) overflowed SystemTime's 64-bit
// nanoseconds (1.78e14 ms × 1e6 > 9.22e18): undefined behaviour. SystemTime holds ±9.2e9 s.
TEST_CASE("samples at times no clock can hold are malformed, not overflowed", "[signals][promql]") {
  auto r = parsePromQueryResponse(R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"namespace":"ns","pod":"far"},"values":[[177762929630,"1"]]},
    {"metric":{"namespace":"ns","pod":"past"},"values":[[-9300000000,"1"]]},
    {"metric":{"namespace":"ns","pod":"huge"},"values":[[1e300,"1"]]},
    {"metric":{"namespace":"ns","pod":"ok"},"values":[[9100000000,"1"]]}]}})");
  REQUIRE(r.ok());
  CHECK(r->malformedSeries == 3);
  REQUIRE(r->series.size() == 1);
  // 9100000000 s after the epoch, as milliseconds.
  CHECK(r->series[0].samples[0].first == SystemTime{} + std::chrono::milliseconds(9100000000000LL));
}

TEST_CASE("a timestamp value no clock can hold is no useful-work evidence", "[signals][promql]") {
  PromQueryResult result;
  SystemTime t0 = at("2026-05-01T10:00:00Z");
  result.series.push_back({{{"namespace", "ns"}, {"pod", "p"}}, {{t0, 1e15}}});
  result.series.push_back({{{"namespace", "ns"}, {"pod", "q"}}, {{t0, 1777629500.5}}});
  ExtractOptions options;
  options.valueIsTimestamp = true;
  Extracted e = extractUsefulWork(result, options);
  CHECK(e.signals ==
        std::vector<UsefulWorkSignal>{{"ns", "q", at("2026-05-01T09:58:20.500Z"), 1777629500.5, ""}});
}
