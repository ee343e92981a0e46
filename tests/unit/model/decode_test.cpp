// Watch events, LIST pages and Status bodies: the wire-level API the reflector uses.
#include "firstwork/model/decode.hpp"
#include <fmt/format.h>

#include "model_test_util.hpp"

using namespace firstwork;
using namespace firstwork::model;
using firstwork::testing::condition;
using firstwork::testing::fixtureLines;
using firstwork::testing::readFixture;
using firstwork::testing::rfc;

namespace {

WatchEvent event(const std::string& line, Kind kind) {
  auto r = decodeWatchEvent(std::string_view(line), kind);
  INFO(line << "\n=> " << (r ? std::string("ok") : r.error()));
  REQUIRE(r.ok());
  return std::move(*r);
}

std::string eventError(const std::string& line, Kind kind) {
  auto r = decodeWatchEvent(std::string_view(line), kind);
  INFO(line);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace

TEST_CASE("streaming-list pod watch: ADDED, initial-events-end bookmark, live events",
          "[model][watch]") {
  auto lines = fixtureLines("watch-stream-streaming-list-pods-CONSTRUCTED.jsonl");
  REQUIRE(lines.size() == 6);

  auto e0 = event(lines[0], Kind::Pod);
  CHECK(e0.type == EventType::Added);
  CHECK(e0.resourceVersion == "8467");
  REQUIRE(e0.object.has_value());
  const auto& foo = std::get<Pod>(*e0.object);
  CHECK(foo.meta.name == "foo");
  CHECK(foo.meta.uid == "0f0f0f0f-0000-4000-8000-000000000001");
  CHECK(foo.phase == PodPhase::Running);
  CHECK(e0.decodeError.empty());

  auto e1 = event(lines[1], Kind::Pod);
  CHECK(e1.resourceVersion == "5726");
  CHECK(std::get<Pod>(*e1.object).phase == PodPhase::Pending);

  auto e2 = event(lines[2], Kind::Pod);
  CHECK(e2.type == EventType::Bookmark);
  CHECK(e2.resourceVersion == "10245");
  CHECK(e2.initialEventsEnd);
  CHECK_FALSE(e2.object.has_value());
  CHECK(e2.decodeError.empty());

  auto e3 = event(lines[3], Kind::Pod);
  CHECK(e3.type == EventType::Modified);
  CHECK(e3.resourceVersion == "10301");
  CHECK(std::get<Pod>(*e3.object).meta.name == "bar");

  auto e4 = event(lines[4], Kind::Pod);
  CHECK(e4.type == EventType::Bookmark);
  CHECK(e4.resourceVersion == "10999");
  CHECK_FALSE(e4.initialEventsEnd);

  auto e5 = event(lines[5], Kind::Pod);
  CHECK(e5.type == EventType::Deleted);
  CHECK(e5.resourceVersion == "11020");
  CHECK(std::get<Pod>(*e5.object).phase == PodPhase::Succeeded);
}

TEST_CASE("workload watch: MODIFIED, BOOKMARK, then in-band ERROR 410", "[model][watch]") {
  auto lines = fixtureLines("watch-stream-workloads-bookmark-then-410-CONSTRUCTED.jsonl");
  REQUIRE(lines.size() == 3);
  auto m = event(lines[0], Kind::Workload);
  CHECK(m.type == EventType::Modified);
  CHECK(m.resourceVersion == "884213");
  const auto& w = std::get<Workload>(*m.object);
  CHECK(w.meta.name == "job-train-llm-3b9f2");
  CHECK(w.admission->clusterName == "worker1");
  CHECK(w.podSets[0].count == 4);
  CHECK(milliOf(w.podSets[0].perPodRequests, "nvidia.com/gpu") == 8000);
  CHECK(rfc(condition(w.conditions, "Admitted").lastTransitionTime) == "2026-08-20T10:00:07Z");

  auto b = event(lines[1], Kind::Workload);
  CHECK(b.type == EventType::Bookmark);
  CHECK(b.resourceVersion == "890000");
  CHECK_FALSE(b.initialEventsEnd);

  auto e = event(lines[2], Kind::Workload);
  CHECK(e.type == EventType::Error);
  CHECK(e.status.code == 410);
  CHECK(e.status.reason == "Expired");
  CHECK(e.status.message == "too old resource version: 884213 (889500)");
  CHECK_FALSE(e.status.resourceVersionTooLarge);
  CHECK(e.resourceVersion.empty());
  CHECK_FALSE(e.object.has_value());
  CHECK(e.decodeError.empty());
}

TEST_CASE("in-band 410 captured from a pod watch", "[model][watch]") {
  auto e = event(readFixture("status-410-expired-watch-error-event-CONSTRUCTED.json"), Kind::Pod);
  CHECK(e.type == EventType::Error);
  CHECK(e.status.code == 410);
  CHECK(e.status.reason == "Expired");
  CHECK(e.status.message == "too old resource version: 1 (3171407)");
}

TEST_CASE("ERROR with ResourceVersionTooLarge cause", "[model][watch]") {
  auto e = event(R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},
    "status":"Failure","message":"Too large resource version: 200, current: 100","reason":"Timeout",
    "details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],
    "retryAfterSeconds":1},"code":504}})",
                 Kind::Pod);
  CHECK(e.status.code == 504);
  CHECK(e.status.reason == "Timeout");
  CHECK(e.status.resourceVersionTooLarge);
}

TEST_CASE("a bad object inside a good event keeps type and resourceVersion", "[model][watch]") {
  SECTION("metadata read before the bad field") {
    auto e = event(R"({"type":"MODIFIED","object":{"metadata":{"name":"p","namespace":"ns",
      "uid":"u","resourceVersion":"77"},"status":{"startTime":5}}})",
                   Kind::Pod);
    CHECK(e.type == EventType::Modified);
    CHECK(e.resourceVersion == "77");
    CHECK_FALSE(e.object.has_value());
    CHECK(e.decodeError == "status.startTime: expected string, got number (Pod ns/p)");
  }
  SECTION("bad field before metadata: the resourceVersion is found by a second look") {
    auto e = event(R"({"type":"ADDED","object":{"status":{"phase":1},
      "metadata":{"resourceVersion":"88","name":"p","uid":"u"}}})",
                   Kind::Pod);
    CHECK(e.resourceVersion == "88");
    CHECK(e.decodeError == "status.phase: expected string, got number");
  }
  SECTION("missing uid") {
    auto e = event(R"({"type":"DELETED","object":{"metadata":{"name":"p","resourceVersion":"9"}}})",
                   Kind::Pod);
    CHECK(e.type == EventType::Deleted);
    CHECK(e.resourceVersion == "9");
    CHECK(e.decodeError == "metadata.uid: missing (Pod p)");
  }
  SECTION("no object, null object, bookmark without resourceVersion, bad Status") {
    CHECK(event(R"({"type":"ADDED"})", Kind::Pod).decodeError == "object: missing");
    CHECK(event(R"({"type":"ADDED","object":null})", Kind::Pod).decodeError == "object: missing");
    CHECK(event(R"({"type":"BOOKMARK","object":{"metadata":{}}})", Kind::Pod).decodeError ==
          "metadata.resourceVersion: missing");
    auto bad = event(R"({"type":"ERROR","object":{"kind":"Status","code":"410"}})", Kind::Pod);
    CHECK(bad.type == EventType::Error);
    CHECK(bad.decodeError == "code: expected integer, got string");
  }
}

TEST_CASE("event fields in any order and unknown fields ignored", "[model][watch]") {
  auto e = event(R"({"object":{"metadata":{"name":"p","uid":"u","resourceVersion":"5"}},
                     "future":{"x":[1,2]},"type":"DELETED"})",
                 Kind::Pod);
  CHECK(e.type == EventType::Deleted);
  CHECK(e.resourceVersion == "5");
  REQUIRE(e.object.has_value());
  CHECK(std::get<Pod>(*e.object).meta.uid == "u");
  auto b = event(R"({"object":{"metadata":{"resourceVersion":"6",
                     "annotations":{"k8s.io/initial-events-end":"true"}}},"type":"BOOKMARK"})",
                 Kind::Workload);
  CHECK(b.resourceVersion == "6");
  CHECK(b.initialEventsEnd);
}

TEST_CASE("lines that are not watch events are errors", "[model][watch]") {
  CHECK(eventError(R"({"type":"SNAPSHOT","object":{}})", Kind::Pod) ==
        "unknown watch event type \"SNAPSHOT\"");
  CHECK(eventError(R"({"object":{}})", Kind::Pod) == "watch event without a type");
  CHECK(eventError(R"({"type":7})", Kind::Pod) == "watch event: type: expected string, got number");
  CHECK(eventError(R"([{"type":"ADDED"}])", Kind::Pod) ==
        "watch event: not a JSON object but array");
  CHECK(eventError("", Kind::Pod).rfind("invalid JSON", 0) == 0);
  CHECK(eventError("not json", Kind::Pod) == "watch event: not a JSON object");
  CHECK(eventError(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"1"}}} {"x":1})",
                   Kind::Pod) == "watch event: trailing content after the event object");
  CHECK(eventError(R"({"type":"ADDED","object":{"metadata":{"name":"p","uid":"u"})", Kind::Pod)
            .find("invalid JSON") != std::string::npos);
}

TEST_CASE("decoding a std::string in place leaves it unchanged", "[model][watch]") {
  auto lines = fixtureLines("watch-stream-workloads-bookmark-then-410-CONSTRUCTED.jsonl");
  std::string line = lines[0];
  const std::string copy = line;
  auto inPlace = decodeWatchEvent(line, Kind::Workload);
  REQUIRE(inPlace.ok());
  CHECK(line == copy);
  CHECK(line.size() == copy.size());
  CHECK(line.capacity() >= line.size() + 64);  // the padding stays reserved for the next line
  CHECK(inPlace->resourceVersion == "884213");
  CHECK(std::get<Workload>(*inPlace->object).meta.uid == "6a1c2f9e-1111-4c3d-9e2a-000000000001");
}

TEST_CASE("paginated pod list page", "[model][list]") {
  std::string body = readFixture("list-podlist-paginated-page1-CONSTRUCTED.json");
  auto page = decodeList(body, Kind::Pod);
  REQUIRE(page.ok());
  CHECK(page->resourceVersion == "10245");
  CHECK(page->continueToken == "ENCODED_CONTINUE_TOKEN");
  CHECK(page->remainingItemCount == 1);
  REQUIRE(page->items.size() == 1);
  const auto& p = std::get<Pod>(page->items[0]);
  CHECK(p.meta.name == "foo");
  CHECK(p.meta.namespace_ == "test");
  CHECK(p.meta.resourceVersion == "8467");
  CHECK(rfc(p.meta.creationTimestamp) == "2026-08-20T10:00:00Z");
  CHECK(p.phase == PodPhase::Running);
  CHECK(page->itemErrors.empty());
  CHECK(page->skippedItems == 0);
}

TEST_CASE("list items that fail are skipped and reported, the rest kept", "[model][list]") {
  auto page = decodeList(R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},
    "items":[
      {"metadata":{"name":"a","uid":"1"}},
      {"metadata":{"name":"b"}},
      {"metadata":{"name":"c","uid":"3"}},
      {"metadata":{"name":"d","namespace":"ns","uid":"4"},"status":{"conditions":[{"type":"Ready","lastTransitionTime":false}]}},
      {"metadata":{"name":"e","uid":"5"}}]})",
                         Kind::Pod);
  REQUIRE(page.ok());
  CHECK(page->remainingItemCount == -1);
  CHECK(page->continueToken.empty());
  REQUIRE(page->items.size() == 3);
  CHECK(metaOf(page->items[0]).name == "a");
  CHECK(metaOf(page->items[1]).name == "c");
  CHECK(metaOf(page->items[2]).name == "e");
  CHECK(page->skippedItems == 2);
  REQUIRE(page->itemErrors.size() == 2);
  CHECK(page->itemErrors[0] == "items[1]: metadata.uid: missing (Pod b)");
  CHECK(page->itemErrors[1] ==
        "items[3]: status.conditions[0].lastTransitionTime: expected string, got boolean (Pod "
        "ns/d)");
}

TEST_CASE("item errors are capped, the count is not", "[model][list]") {
  std::string items;
  for (int i = 0; i < 150; ++i) items += std::string(i ? "," : "") + R"({"metadata":{"name":"x"}})";
  auto page = decodeList(R"({"items":[)" + items + "]}", Kind::Node);
  REQUIRE(page.ok());
  CHECK(page->items.empty());
  CHECK(page->skippedItems == 150);
  CHECK(page->itemErrors.size() == kMaxItemErrors);
}

TEST_CASE("DRA List fixtures decode with decodeList", "[model][list][dra]") {
  auto claims = decodeList(readFixture("dra-resourceclaim-v1-allocated-reserved-nvidia.json"),
                           Kind::ResourceClaim);
  REQUIRE(claims.ok());
  CHECK(claims->resourceVersion.empty());
  CHECK(claims->items.size() == 1);
  auto slices = decodeList(readFixture("dra-resourceslice-v1-list-dra-example-driver.json"),
                           Kind::ResourceSlice);
  REQUIRE(slices.ok());
  CHECK(slices->items.size() == 1);
  CHECK(std::get<ResourceSlice>(slices->items[0]).devices.size() == 8);
}

TEST_CASE("a workload list's apiVersion and its items' are checked, not kept", "[model][list]") {
  // No kind keeps its apiVersion (change 80): an item without one decodes, and one that is not
  // a string is an error naming the field, as is the list's.
  auto page = decodeList(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"WorkloadList",
    "metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"w","uid":"u"}},
    {"apiVersion":"kueue.x-k8s.io/v1beta2","metadata":{"name":"v","uid":"v"}}]})",
                         Kind::Workload);
  REQUIRE(page.ok());
  REQUIRE(page->items.size() == 2);
  CHECK(std::get<Workload>(page->items[0]).meta.name == "w");
  CHECK(std::get<Workload>(page->items[1]).meta.name == "v");
  auto bad = decodeList(R"({"apiVersion":1,"kind":"WorkloadList","metadata":{},"items":[]})",
                        Kind::Workload);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("apiVersion: expected string, got number") != std::string::npos);
}

TEST_CASE("bodies that are not lists are errors", "[model][list]") {
  auto status = decodeList(readFixture("status-410-expired-list-continue-CONSTRUCTED.json"),
                           Kind::Pod);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error() == "list: the response is a Status, not a list");
  CHECK(decodeList(R"({"kind":"PodList","metadata":{}})", Kind::Pod).error() ==
        "list: no items field (not a list)");
  CHECK(decodeList("[]", Kind::Pod).error() == "list: not a JSON object but array");
  CHECK_FALSE(decodeList(R"({"items":[{"metadata":{"name":"a","uid":"1"}})", Kind::Pod).ok());
  CHECK(decodeList(R"({"items":{}})", Kind::Pod).error() == "list: items: expected array, got object");
  auto empty = decodeList(R"({"kind":"PodList","metadata":{"resourceVersion":"3"},"items":null})",
                          Kind::Pod);
  REQUIRE(empty.ok());
  CHECK(empty->items.empty());
  CHECK(empty->resourceVersion == "3");
}

TEST_CASE("a LIST body's continue token is read from its head, before its items", "[model][list]") {
  // The API server's order: kind, apiVersion, metadata, items (the fixture, indented).
  const std::string fixture = readFixture("list-podlist-paginated-page1-CONSTRUCTED.json");
  CHECK(peekListContinue(fixture) == std::optional<std::string>("ENCODED_CONTINUE_TOKEN"));
  // Compact, as sent; the items need not be valid JSON for the head to be read.
  CHECK(peekListContinue(R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9",)"
                         R"("continue":"eyJ2Ijoi\/bWV0YSJ9"},"items":[{"metadata":)") ==
        std::optional<std::string>("eyJ2Ijoi/bWV0YSJ9"));  // unescaped, as decodeList gives it
  // The last page: metadata without a token.
  CHECK(peekListContinue(R"({"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[]})") ==
        std::optional<std::string>(""));
  CHECK(peekListContinue(R"({"kind":"PodList","metadata":{"continue":""},"items":[]})") ==
        std::optional<std::string>(""));
  // "items" inside a string of the head, or as a key nested in the metadata, is not the list's.
  CHECK(peekListContinue(R"({"x,\"items":1,"kind":"\"items\":","metadata":{"continue":"t1"},"items":[]})") ==
        std::optional<std::string>("t1"));
  CHECK(peekListContinue(R"({"kind":"PodList","metadata":{"a":1,"items":[],"continue":"t2"},"items":[]})") ==
        std::optional<std::string>("t2"));
  // Nothing to tell from the head: metadata after the items, no metadata at all, no items, a
  // Status, not JSON, a token too long to be one.
  CHECK_FALSE(peekListContinue(R"({"items":[],"metadata":{"continue":"t"}})"));
  CHECK_FALSE(peekListContinue(R"({"kind":"PodList","items":[],"metadata":{"continue":"t"}})"));
  CHECK_FALSE(peekListContinue(R"({"kind":"PodList","metadata":{"continue":"t"}})"));
  CHECK_FALSE(peekListContinue(readFixture("status-410-expired-list-continue-CONSTRUCTED.json")));
  CHECK_FALSE(peekListContinue("<html>502 Bad Gateway</html>"));
  CHECK_FALSE(peekListContinue(""));
  CHECK_FALSE(peekListContinue(R"({"metadata":{"continue":")" + std::string(9000, 'a') +
                               R"("},"items":[]})"));
  CHECK_FALSE(peekListContinue(R"({"metadata":{"continue":7},"items":[]})"));
  // A head past 64 KiB is not looked for.
  CHECK_FALSE(peekListContinue(R"({"kind":")" + std::string(70'000, 'k') +
                               R"(","metadata":{"continue":"t"},"items":[]})"));
  // The token read from the head is the one the whole decode reads.
  auto page = decodeList(fixture, Kind::Pod);
  REQUIRE(page.ok());
  CHECK(peekListContinue(fixture) == std::optional<std::string>(page->continueToken));
}

TEST_CASE("Status bodies: expired continue token", "[model][status]") {
  auto s = decodeStatus(readFixture("status-410-expired-list-continue-CONSTRUCTED.json"));
  REQUIRE(s.ok());
  CHECK(s->code == 410);
  CHECK(s->reason == "Expired");
  CHECK(s->message.rfind("The provided continue parameter is too old to display a consistent "
                         "list result.",
                         0) == 0);
  // 417 bytes: Status messages are kept up to 1024 bytes (logged, not stored per object).
  CHECK(s->message.size() == 417);
  CHECK_FALSE(s->resourceVersionTooLarge);
  CHECK(decodeStatus(R"({"kind":"PodList","items":[]})").error() ==
        "status: kind: expected Status, got \"PodList\"");
  CHECK(decodeStatus("{}").error() == "status: no code, reason or message (not a Status)");
  CHECK(decodeStatus("<html>502 Bad Gateway</html>").error() == "status: not a JSON object");
}

TEST_CASE("decodeObject rejects trailing content", "[model][object]") {
  auto r = decodeObject(R"({"metadata":{"name":"n","uid":"u"}} x)", Kind::Node);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error() == "trailing content after the object");
  CHECK(decodeObject("  {\"metadata\":{\"name\":\"n\",\"uid\":\"u\"}}\n\n", Kind::Node).ok());
}

TEST_CASE("a large LIST page's decode buffers are released on request, and decoding goes on", "[model][list]") {
  // 4,000 nodes of ≈ 970 bytes: a 3.7 MiB page, well over the 2 MiB kept.
  std::string items;
  const std::string pad(900, 'x');
  for (int i = 0; i < 4000; ++i)
    items += fmt::format(R"({}{{"metadata":{{"name":"n{}","uid":"u{}","annotations":{{"a":"{}"}}}}}})", i ? "," : "",
                         i, i, pad);
  const std::string body = R"({"items":[)" + items + "]}";
  REQUIRE(body.size() > (size_t{3} << 20));
  auto page = decodeList(body, Kind::Node);
  REQUIRE(page.ok());
  CHECK(page->items.size() == 4000);
  // The thread's buffers grew to the page (≥ its size) and are released past 2 MiB ...
  CHECK(releaseDecodeBuffers(size_t{2} << 20) >= body.size());
  // ... once: nothing large is left to release.
  CHECK(releaseDecodeBuffers(size_t{2} << 20) == 0);
  // A small document after the release decodes (the parser is usable again), and one that small
  // does not grow the buffers past what is kept.
  auto small = decodeList(R"({"items":[{"metadata":{"name":"a","uid":"b"}}]})", Kind::Node);
  REQUIRE(small.ok());
  CHECK(small->items.size() == 1);
  CHECK(releaseDecodeBuffers(size_t{2} << 20) == 0);
  // The page decodes again after the release, the same.
  auto again = decodeList(body, Kind::Node);
  REQUIRE(again.ok());
  CHECK(again->items.size() == 4000);
}
