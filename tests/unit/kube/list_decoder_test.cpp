#include "firstwork/kube/list_decoder.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <boost/asio/io_context.hpp>

#include <thread>
#include <vector>

#include "kube_test_util.hpp"

using namespace firstwork;
using namespace firstwork::kube;
using namespace std::chrono_literals;

namespace {

std::string page(int i, size_t padBytes = 0) {
  return fmt::format(
      R"({{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"10","continue":"t{}"}},)"
      R"("items":[{{"metadata":{{"name":"p{}","namespace":"ns","uid":"u{}","annotations":{{"a":"{}"}}}}}}]}})",
      i, i, i, std::string(padBytes, 'x'));
}

struct Got {
  std::thread::id thread;
  bool ok = false;
  std::string name;   // the item's
  std::string token;  // the page's continue token
  std::string error;
  const void* spentData = nullptr;  // the body handed back: its memory, and what it held
  size_t spentSize = 0;
};

ListDecoder::Done record(std::vector<Got>& out) {
  return [&out](Result<model::ListPage> p, std::string spent) {
    Got g;
    g.spentData = static_cast<const void*>(spent.data());
    g.spentSize = spent.size();
    g.thread = std::this_thread::get_id();
    g.ok = p.ok();
    if (p.ok()) {
      g.token = p->continueToken;
      if (!p->items.empty()) g.name = model::metaOf(p->items[0]).name;
    } else {
      g.error = p.error();
    }
    out.push_back(std::move(g));
  };
}

/// Keep below this: a watch line's worth. A page with a 3 MiB annotation grows a thread's
/// buffers past it.
constexpr size_t kSmall = size_t{64} << 10;

}  // namespace

TEST_CASE("a thread list decoder decodes off the loop and hands the pages back on it, in order",
          "[kube][list-decoder]") {
  boost::asio::io_context io;
  model::releaseDecodeBuffers(0);  // this (the loop's) thread starts with small buffers
  std::vector<Got> got;
  {
    auto decoder = makeThreadListDecoder(io, "fw-decode-test");
    std::string first = page(0, size_t{3} << 20);
    first.reserve(first.size() + 64);  // room for the padding, as the transport reserves it
    const void* firstData = first.data();
    const size_t firstSize = first.size();
    decoder->decode(std::move(first), model::Kind::Pod, nullptr, record(got));
    for (int i = 1; i < 20; ++i) decoder->decode(page(i), model::Kind::Pod, nullptr, record(got));
    decoder->decode("<html>502</html>", model::Kind::Pod, nullptr, record(got));
    decoder->decode(page(21), model::Kind::Pod, nullptr, record(got));
    REQUIRE(firstwork::testing::runUntil(io, [&] { return got.size() == 22; }));
    for (int i = 0; i < 22; ++i) {
      INFO("page " << i);
      CHECK(got[i].thread == std::this_thread::get_id());  // `done` runs on the loop
      if (i == 20) {
        CHECK_FALSE(got[i].ok);
        CHECK(got[i].error == "list: not a JSON object");
        continue;
      }
      CHECK(got[i].ok);
      CHECK(got[i].name == fmt::format("p{}", i));
      CHECK(got[i].token == fmt::format("t{}", i));
    }
    // Each body comes back with its page, the same memory (the next page is received in it).
    CHECK(got[0].spentData == firstData);
    CHECK(got[0].spentSize == firstSize);
    CHECK(got[20].spentSize == std::string("<html>502</html>").size());
    // The 3 MiB page grew the decoding thread's buffers, not the loop's; the decoder gives them
    // back on request, once.
    std::vector<size_t> released;
    decoder->releaseBuffers(kSmall, [&](size_t b) { released.push_back(b); });
    decoder->releaseBuffers(kSmall, [&](size_t b) { released.push_back(b); });
    decoder->releaseBuffers(kSmall);  // without a callback
    REQUIRE(firstwork::testing::runUntil(io, [&] { return released.size() == 2; }));
    CHECK(released[0] > (size_t{3} << 20));
    CHECK(released[1] == 0);
    CHECK(model::releaseDecodeBuffers(kSmall) == 0);
  }
}

TEST_CASE("destroying a thread list decoder with pages queued: those decoded come back in order",
          "[kube][list-decoder]") {
  boost::asio::io_context io;
  std::vector<Got> got;
  {
    auto decoder = makeThreadListDecoder(io, "fw-decode-test");
    for (int i = 0; i < 40; ++i)
      decoder->decode(page(i, 200'000), model::Kind::Pod, nullptr, record(got));
  }  // waits for the page in hand; the rest are dropped, their `done` never runs
  firstwork::testing::drain(io);
  REQUIRE(got.size() <= 40);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].name == fmt::format("p{}", i));
}

TEST_CASE("the loop list decoder decodes in a handler posted to the loop", "[kube][list-decoder]") {
  boost::asio::io_context io;
  model::releaseDecodeBuffers(0);
  auto decoder = makeLoopListDecoder(io);
  std::vector<Got> got;
  std::string first = page(0, size_t{3} << 20);
  first.reserve(first.size() + 64);  // room for the padding, as the transport reserves it
  const void* firstData = first.data();
  decoder->decode(std::move(first), model::Kind::Pod, nullptr, record(got));
  decoder->decode(page(1), model::Kind::Pod, nullptr, record(got));
  CHECK(got.empty());  // not from decode() itself: the caller's request goes out first
  std::vector<size_t> released;
  decoder->releaseBuffers(kSmall, [&](size_t b) { released.push_back(b); });
  firstwork::testing::drain(io);
  REQUIRE(got.size() == 2);
  CHECK(got[0].name == "p0");
  CHECK(got[1].name == "p1");
  CHECK(got[1].thread == std::this_thread::get_id());
  CHECK(got[0].spentData == firstData);  // the body comes back with its page
  // The page grew this thread's buffers, and the release after it gave them back.
  REQUIRE(released.size() == 1);
  CHECK(released[0] > (size_t{3} << 20));
  CHECK(model::releaseDecodeBuffers(kSmall) == 0);
}

TEST_CASE("both list decoders keep what the options given with a page say",
          "[kube][list-decoder]") {
  const std::string slices =
      R"({"kind":"ResourceSliceList","apiVersion":"resource.k8s.io/v1",)"
      R"("metadata":{"resourceVersion":"7"},)"
      R"("items":[{"metadata":{"name":"s","uid":"u"},"spec":{"driver":"gpu.nvidia.com",)"
      R"("pool":{"name":"n","generation":1,"resourceSliceCount":1},"nodeName":"n","devices":[)"
      R"({"name":"gpu-0","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-1"},)"
      R"("gpu.nvidia.com/profile":{"string":"1g.10gb"}}}]}}]})";
  auto onlyTypeAndProfile = std::make_shared<model::DecodeOptions>();
  onlyTypeAndProfile->deviceAttributes = std::vector<std::string>{"type", "profile"};
  boost::asio::io_context io;
  for (bool thread : {false, true}) {
    INFO((thread ? "thread" : "loop"));
    auto decoder = thread ? makeThreadListDecoder(io, "fw-decode-test") : makeLoopListDecoder(io);
    std::vector<std::vector<std::string>> kept;
    auto names = [&](Result<model::ListPage> p, std::string) {
      REQUIRE(p.ok());
      REQUIRE(p->items.size() == 1);
      const auto& slice = std::get<model::ResourceSlice>(p->items[0]);
      REQUIRE(slice.devices.size() == 1);
      std::vector<std::string> n;
      for (const auto& a : slice.devices[0].attributes) n.push_back(a.name.str());
      kept.push_back(std::move(n));
    };
    decoder->decode(slices, model::Kind::ResourceSlice, nullptr, names);
    decoder->decode(slices, model::Kind::ResourceSlice, onlyTypeAndProfile, names);
    REQUIRE(firstwork::testing::runUntil(io, [&] { return kept.size() == 2; }));
    CHECK(kept[0] == std::vector<std::string>{"type", "uuid", "gpu.nvidia.com/profile"});
    CHECK(kept[1] == std::vector<std::string>{"type", "gpu.nvidia.com/profile"});
  }
}
