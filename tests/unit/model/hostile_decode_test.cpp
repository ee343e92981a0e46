// Hostile input at the decoder (issue 8; the handling of each is listed in docs/security.md):
// what is skipped and why, and that one bad object never costs its neighbours in a LIST page or
// the event's place in a watch stream. robustness_test.cpp covers malformed JSON in general; this
// file covers the named hostile cases the daemon must survive.
#include <nlohmann/json.hpp>

#include "firstwork/model/decode.hpp"
#include "model_test_util.hpp"

using namespace firstwork;
using namespace firstwork::model;
using firstwork::testing::decodeError;
using firstwork::testing::decodeJson;

namespace {

std::string podItem(const std::string& name, const std::string& uid, const std::string& extra = {}) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":")" + uid +
         R"(","resourceVersion":"7")" + extra + R"(},"status":{"phase":"Running"}})";
}

std::string podList(const std::vector<std::string>& items) {
  std::string s = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + items[i];
  return s + "]}";
}

}  // namespace

TEST_CASE("invalid UTF-8 costs only the item that holds it, never the LIST page", "[model][hostile]") {
  // Before: the whole page failed UTF-8 validation, so one such object stopped a resource from
  // ever syncing (the LIST was retried for ever).
  auto page = decodeList(podList({podItem("a", "u1"), podItem("b\xff\xfe", "u2"),
                                  podItem("c", "u3", ",\"annotations\":{\"x\":\"\xc0\xaf\"}"),
                                  podItem("d", "u4")}),
                         Kind::Pod);
  REQUIRE(page.ok());
  REQUIRE(page->items.size() == 2);
  CHECK(metaOf(page->items[0]).uid == "u1");
  CHECK(metaOf(page->items[1]).uid == "u4");
  CHECK(page->skippedItems == 2);
  REQUIRE(page->itemErrors.size() == 2);
  CHECK(page->itemErrors[0].rfind("items[1]: invalid UTF-8", 0) == 0);
  CHECK(page->itemErrors[1] == "items[2]: invalid UTF-8 (Pod ns/c)");
  CHECK(page->resourceVersion == "42");
  // The last item as well (its span ends at the end of the items array).
  auto last = decodeList(podList({podItem("a", "u1"), podItem("z\xff", "u9")}), Kind::Pod);
  REQUIRE(last.ok());
  REQUIRE(last->items.size() == 1);
  CHECK(metaOf(last->items[0]).uid == "u1");
  // Outside every item (in the list's own metadata) nothing is dropped.
  auto meta = decodeList("{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"42\",\"x\":\"\xff\"},\"items\":[" +
                             podItem("a", "u1") + "]}",
                         Kind::Pod);
  REQUIRE(meta.ok());
  CHECK(meta->items.size() == 1);
  CHECK(meta->skippedItems == 0);
}

TEST_CASE("a watch event with invalid UTF-8 keeps its type and resourceVersion, not its object",
          "[model][hostile]") {
  std::string line = R"({"type":"MODIFIED","object":)" + podItem("bad\xed\xa0\x80", "u1") + "}";
  const std::string copy = line;
  auto ev = decodeWatchEvent(line, Kind::Pod);
  REQUIRE(ev.ok());
  CHECK(ev->type == EventType::Modified);
  CHECK(ev->resourceVersion == "7");
  CHECK_FALSE(ev->object.has_value());
  CHECK(ev->decodeError == "invalid UTF-8 (3 bytes)");
  CHECK(line == copy);  // the caller's buffer is given back as it was
  // A bookmark's RV is read all the same.
  auto bm = decodeWatchEvent(
      "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\",\"x\":\"\xff\"}}}",
      Kind::Pod);
  REQUIRE(bm.ok());
  CHECK(bm->resourceVersion == "9");
  // A single object with invalid UTF-8 is an error naming it.
  CHECK(decodeError(podItem("p\xff", "u1"), Kind::Pod) == "invalid UTF-8 (1 bytes) (Pod ns/p\xef\xbf\xbd)");
}

TEST_CASE("timestamps before 1970 are refused, future ones are kept as written", "[model][hostile]") {
  CHECK(decodeError(R"({"metadata":{"name":"p","uid":"u","creationTimestamp":"1969-12-31T23:59:59Z"}})",
                    Kind::Pod) ==
        "metadata.creationTimestamp: time \"1969-12-31T23:59:59Z\" is before 1970-01-01 (Pod p)");
  CHECK(decodeError(R"({"metadata":{"name":"w","uid":"u"},"status":{"conditions":[
      {"type":"QuotaReserved","status":"True","lastTransitionTime":"1900-01-01T00:00:00Z"}]}})",
                    Kind::Workload)
            .rfind("status.conditions[0].lastTransitionTime: time \"1900-01-01T00:00:00Z\" is before", 0) == 0);
  auto epoch = decodeJson<Pod>(R"({"metadata":{"name":"p","uid":"u","creationTimestamp":"1970-01-01T00:00:00Z"}})",
                               Kind::Pod);
  CHECK(epoch.meta.creationTimestamp == SystemTime{});
  // A clock far ahead is not decidable here (the decoder has no "now"): kept, see the engine test.
  auto future = decodeJson<Pod>(R"({"metadata":{"name":"p","uid":"u","creationTimestamp":"2199-01-01T00:00:00Z"}})",
                                Kind::Pod);
  CHECK(future.meta.creationTimestamp == parseRfc3339("2199-01-01T00:00:00Z").value());
}

TEST_CASE("negative quantities are refused wherever devices are counted", "[model][hostile]") {
  CHECK(decodeError(R"({"metadata":{"name":"n","uid":"u"},"status":{"allocatable":{"nvidia.com/gpu":"-8"}}})",
                    Kind::Node)
            .rfind("status.allocatable[\"nvidia.com/gpu\"]: ", 0) == 0);
  CHECK(decodeError(R"({"metadata":{"name":"n","uid":"u"},"status":{"capacity":{"nvidia.com/gpu":-1}}})",
                    Kind::Node)
            .rfind("status.capacity[\"nvidia.com/gpu\"]: ", 0) == 0);
  CHECK(decodeError(R"({"metadata":{"name":"p","uid":"u"},"spec":{"containers":[
      {"name":"c","resources":{"requests":{"nvidia.com/gpu":"-1"}}}]}})",
                    Kind::Pod)
            .rfind("spec.containers[0].resources.requests[\"nvidia.com/gpu\"]: ", 0) == 0);
  CHECK(decodeError(R"({"metadata":{"name":"w","uid":"u"},"spec":{"podSets":[{"name":"m","count":-3}]}})",
                    Kind::Workload)
            .rfind("spec.podSets[0].count: ", 0) == 0);
}

TEST_CASE("missing optional parts decode to empty values, missing identity is left to the caller",
          "[model][hostile]") {
  // Only metadata: no spec, no status (a Workload created by hand, a Node not yet reported).
  auto w = decodeJson<Workload>(R"({"metadata":{"name":"w","namespace":"ns","uid":"u"}})", Kind::Workload);
  CHECK(w.podSets.empty());
  CHECK(w.conditions.empty());
  auto n = decodeJson<Node>(R"({"metadata":{"name":"n","uid":"u"}})", Kind::Node);
  CHECK(n.allocatable.empty());
  // No uid: an error (nothing can be tracked without one); the reflector skips and counts it.
  CHECK(decodeError(R"({"metadata":{"name":"p"}})", Kind::Pod) == "metadata.uid: missing (Pod p)");
  // A mistyped field we read is an error at that field; one we do not read is ignored.
  CHECK(decodeError(R"({"metadata":{"name":"w","uid":"u"},"status":{"conditions":"Admitted"}})",
                    Kind::Workload) == "status.conditions: expected array, got string (Workload w)");
  CHECK(decodeObject(R"({"metadata":{"name":"w","uid":"u","finalizers":7}})", Kind::Workload).ok());
}
