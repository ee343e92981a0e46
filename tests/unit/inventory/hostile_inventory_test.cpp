// Hostile capacity objects through the decoder and the inventory (issue 8; docs/security.md lists
// the handling): a DRA pool whose slices disagree on resourceSliceCount, negative and absurd
// quantities, 10,000 labels, invalid UTF-8. Each is refused at decode (skipped and counted by the
// reflector) or contained in its own pool or node; the rest of the estate keeps its figures.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "firstwork/inventory/inventory.hpp"
#include "firstwork/model/decode.hpp"
#include "fixtures.hpp"

using namespace firstwork;
using namespace firstwork::inventory;
using firstwork::testing::at;
using Json = nlohmann::json;

namespace {

constexpr auto kAdd = model::EventType::Added;

/// Decodes like the reflector and hands what decodes to the inventory; counts the rest.
struct Feed {
  Inventory inv;
  int decodeErrors = 0;
  std::vector<std::string> errors;

  bool object(const std::string& json, model::Kind kind) {
    auto r = model::decodeObject(json, kind);
    if (!r) {
      ++decodeErrors;
      errors.push_back(r.error());
      return false;
    }
    if (auto* s = std::get_if<model::ResourceSlice>(&*r)) return inv.onSlice("w1", kAdd, *s, at(0));
    if (auto* n = std::get_if<model::Node>(&*r)) return inv.onNode("w1", kAdd, *n);
    if (auto* p = std::get_if<model::Pod>(&*r)) return inv.onPod("w1", kAdd, *p);
    return false;
  }
};

std::string readyNode(const std::string& name, int gpus = 0) {
  Json n = {{"metadata", {{"name", name}, {"uid", "uid-" + name}}},
            {"status",
             {{"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})},
              {"allocatable", Json::object()}}}};
  if (gpus > 0) n["status"]["allocatable"]["nvidia.com/gpu"] = std::to_string(gpus);
  return n.dump();
}

/// A gpu.nvidia.com slice of pool `pool` on node `pool`: `gpus` whole GPUs named <prefix>0...
std::string slice(const std::string& name, const std::string& pool, int64_t count, int gpus,
                  const std::string& prefix) {
  Json devices = Json::array();
  for (int i = 0; i < gpus; ++i)
    devices.push_back({{"name", prefix + std::to_string(i)},
                       {"attributes", {{"type", {{"string", "gpu"}}}}}});
  return Json{{"metadata", {{"name", name}, {"uid", "uid-" + name}}},
              {"spec",
               {{"driver", "gpu.nvidia.com"},
                {"nodeName", pool},
                {"pool", {{"name", pool}, {"generation", 1}, {"resourceSliceCount", count}}},
                {"devices", devices}}}}
      .dump();
}

const PoolStatus* poolNamed(const std::vector<PoolStatus>& pools, const std::string& name) {
  for (const auto& p : pools)
    if (p.pool == name) return &p;
  return nullptr;
}

int64_t usableGpus(const Inventory& inv) {
  int64_t n = 0;
  for (const auto& c : inv.classes("w1")) n += c.usable;
  return n;
}

}  // namespace

TEST_CASE("a pool whose slices disagree on resourceSliceCount is unavailable, other pools are not",
          "[inventory][hostile]") {
  Feed f;
  REQUIRE(f.object(readyNode("node-a"), model::Kind::Node));
  REQUIRE(f.object(readyNode("node-b"), model::Kind::Node));
  // node-b: one complete pool of 4 GPUs.
  REQUIRE(f.object(slice("b-0", "node-b", 1, 4, "b-gpu-"), model::Kind::ResourceSlice));
  const int64_t before = usableGpus(f.inv);
  CHECK(before == 4);
  // node-a: same generation, one slice says 2 slices, the other 3 (a driver bug or a forgery).
  REQUIRE(f.object(slice("a-0", "node-a", 2, 4, "a-gpu-"), model::Kind::ResourceSlice));
  REQUIRE(f.object(slice("a-1", "node-a", 3, 4, "a-gpu-x"), model::Kind::ResourceSlice));
  const auto pools = f.inv.pools();
  const PoolStatus* a = poolNamed(pools, "node-a");
  const PoolStatus* b = poolNamed(pools, "node-b");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a->state == PoolState::Incomplete);
  CHECK(poolProblemName(a->problem) == "resource_slice_count_mismatch");
  CHECK(a->devices == 8);
  CHECK(a->usable == 0);  // none of its 8 devices is counted as usable
  CHECK(a->unavailable == 8);
  CHECK(b->state == PoolState::Complete);
  CHECK(b->usable == 4);
  CHECK(usableGpus(f.inv) == before);
  // Counted where an operator sees it: firstwork_dra_pools{state="incomplete"} (and the pool's
  // `problem` in /api/v1/pools).
  int64_t incomplete = 0, invalid = 0;
  for (const auto& c : f.inv.poolCounts()) {
    incomplete += c.byState[static_cast<size_t>(PoolState::Incomplete)];
    invalid += c.invalid;
  }
  CHECK(incomplete == 1);
  CHECK(invalid == 1);
  CHECK(f.decodeErrors == 0);
}

TEST_CASE("negative, absurd and oversized capacity objects never reach the figures",
          "[inventory][hostile]") {
  Feed f;
  REQUIRE(f.object(readyNode("good", 8), model::Kind::Node));
  const auto good = f.inv.classes("w1");
  REQUIRE(good.size() == 1);
  CHECK(good[0].usable == 8);

  // Refused at decode: negative and out-of-range allocatable, a slice with 257 devices, a name
  // with invalid UTF-8.
  Json negative = Json::parse(readyNode("neg", 8));
  negative["status"]["allocatable"]["nvidia.com/gpu"] = "-8";
  Json absurd = Json::parse(readyNode("absurd", 8));
  absurd["status"]["allocatable"]["nvidia.com/gpu"] = "9223372036854775807";
  std::string utf8 = readyNode("bad-name", 8);
  utf8.replace(utf8.find("bad-name"), 8, "bad\xff");
  CHECK_FALSE(f.object(negative.dump(), model::Kind::Node));
  CHECK_FALSE(f.object(absurd.dump(), model::Kind::Node));
  CHECK_FALSE(f.object(slice("huge", "good", 1, 257, "g-"), model::Kind::ResourceSlice));
  CHECK_FALSE(f.object(utf8, model::Kind::Node));
  CHECK(f.decodeErrors == 4);
  CHECK(f.errors[0].rfind("status.allocatable[\"nvidia.com/gpu\"]: ", 0) == 0);
  CHECK(f.errors[2].rfind("spec.devices[256]: more than 256 entries", 0) == 0);
  CHECK(f.errors[3].rfind("invalid UTF-8", 0) == 0);

  // Taken: 10,000 labels (64 kept) on a second good node.
  Json labelled = Json::parse(readyNode("labelled", 8));
  for (int i = 0; i < 10000; ++i) labelled["metadata"]["labels"]["nvidia.com/l" + std::to_string(i)] = "v";
  CHECK(f.object(labelled.dump(), model::Kind::Node));
  const auto after = f.inv.classes("w1");
  REQUIRE(after.size() == 1);
  CHECK(after[0].usable == 16);  // 8 + 8: the refused nodes added nothing
  CHECK(f.inv.rejectedObjects() == 0);
}
