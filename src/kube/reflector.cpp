#include "firstwork/kube/reflector.hpp"

#include <algorithm>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "detail/log.hpp"
#include "detail/util.hpp"
#include "firstwork/kube/api_discovery.hpp"
#include "firstwork/kube/connection_monitor.hpp"
#include "firstwork/kube/list_decoder.hpp"

namespace firstwork::kube {
namespace {

// A held entry of either store: the object (ReflectorOptions::keepObjects), or its identity.
template <typename H>
constexpr bool kHeldObject = std::is_same_v<H, std::shared_ptr<const model::Object>>;

template <typename H>
const model::ResourceVersion& heldRv(const H& held) {
  if constexpr (kHeldObject<H>) {
    return model::metaOf(*held).resourceVersion;
  } else {
    return held.rv;
  }
}

// What a store of either kind is looked up by: a uid's text, or that text read once.
template <typename S>
auto lookupKey(std::string_view uid) {
  if constexpr (kHeldObject<typename S::value_type>) {
    return uid;
  } else {
    return model::UidKey::Probe(uid);
  }
}

// Whether the held entry is the object `m` names (uids are unique: one that is not is hostile).
template <typename H>
bool sameName(const H& held, const model::ObjectMeta& m) {
  if constexpr (kHeldObject<H>) {
    const model::ObjectMeta& h = model::metaOf(*held);
    return h.name == m.name && h.namespace_ == m.namespace_;
  } else {
    return held.name == model::hashOf(model::namespacedName(m));
  }
}

// What a synthetic delete of the held entry tells of its namespace and name: the hash the
// identity keeps (ObjectEvent::nameHash); nothing for an object, which carries them itself.
template <typename H>
uint64_t nameHashOf(const H& held) {
  if constexpr (kHeldObject<H>) {
    return 0;
  } else {
    return held.name;
  }
}

// An object of `kind` with nothing set.
model::Object emptyObject(model::Kind kind) {
  switch (kind) {
    case model::Kind::Workload: return model::Workload{};
    case model::Kind::MultiKueueCluster: return model::MultiKueueCluster{};
    case model::Kind::ClusterQueue: return model::ClusterQueue{};
    case model::Kind::AdmissionCheck: return model::AdmissionCheck{};
    case model::Kind::MultiKueueConfig: return model::MultiKueueConfig{};
    case model::Kind::Pod: return model::Pod{};
    case model::Kind::ResourceClaim: return model::ResourceClaim{};
    case model::Kind::ResourceSlice: return model::ResourceSlice{};
    case model::Kind::Node: return model::Node{};
  }
  return model::Pod{};
}

}  // namespace

struct Reflector::Change {
  model::EventType type;
  std::shared_ptr<const model::Object> object;
  bool finalStateUnknown = false;
  uint64_t nameHash = 0;  // ObjectEvent::nameHash
};

std::string_view restartReasonName(RestartReason reason) {
  switch (reason) {
    case RestartReason::StreamEnd: return "stream_end";
    case RestartReason::Expired: return "expired";
    case RestartReason::HttpError: return "http_error";
    case RestartReason::TransportError: return "transport_error";
    case RestartReason::DecodeError: return "decode_error";
    case RestartReason::Stall: return "stall";
    case RestartReason::Unauthorized: return "unauthorized";
    case RestartReason::Throttled: return "throttled";
    case RestartReason::TooLarge: return "too_large";
  }
  return "unknown";
}

std::string_view reflectorStateName(ReflectorState state) {
  switch (state) {
    case ReflectorState::Idle: return "idle";
    case ReflectorState::Discovering: return "discovering";
    case ReflectorState::Listing: return "listing";
    case ReflectorState::Watching: return "watching";
    case ReflectorState::Backoff: return "backoff";
    case ReflectorState::Unavailable: return "unavailable";
    case ReflectorState::Stopped: return "stopped";
  }
  return "unknown";
}

std::string_view watchEventTypeName(model::EventType type) {
  switch (type) {
    case model::EventType::Added: return "ADDED";
    case model::EventType::Modified: return "MODIFIED";
    case model::EventType::Deleted: return "DELETED";
    case model::EventType::Bookmark: return "BOOKMARK";
    case model::EventType::Error: return "ERROR";
  }
  return "UNKNOWN";
}

std::string_view requestKindName(RequestKind kind) {
  return kind == RequestKind::List ? "list" : "watch";
}

namespace {

RestartReason classify(const HttpResult& r) {
  if (r.credentialsFailed) return RestartReason::Unauthorized;
  switch (r.head.status) {
    case 0: return RestartReason::TransportError;
    case 401: return RestartReason::Unauthorized;
    case 410: return RestartReason::Expired;
    case 429: return RestartReason::Throttled;
    default: return RestartReason::HttpError;
  }
}

bool isExpiredStatus(const model::ApiStatus& s) {
  return s.code == 410 || s.reason == "Expired" || s.reason == "Gone" || s.resourceVersionTooLarge;
}

// A very short clean watch with nothing in it is treated as a failure (client-go's "very short
// watch"), so a server that closes every watch at once cannot drive a hot loop.
constexpr std::chrono::seconds kShortWatch{1};

}  // namespace

struct Reflector::Timers {
  explicit Timers(boost::asio::io_context& io) : retry(io), stall(io), catchUp(io) {}
  boost::asio::steady_timer retry;
  boost::asio::steady_timer stall;
  boost::asio::steady_timer catchUp;
};

Reflector::Reflector(boost::asio::io_context& io, const Clock& clock, Context context,
                     model::Kind kind, EventSink& sink, ReflectorOptions options)
    : clock_(clock),
      ctx_(std::move(context)),
      kind_(kind),
      sink_(sink),
      options_(options),
      backoff_(clock, options.backoff, options.seed),
      rng_(options.seed != 0 ? options.seed + 1 : std::random_device{}()),
      framer_(options.maxLineBytes),
      alive_(std::make_shared<bool>(true)),
      timers_(std::make_unique<Timers>(io)) {
  if (ctx_.decoder == nullptr) loopDecoder_ = makeLoopListDecoder(io);
  decoder_ = ctx_.decoder != nullptr ? ctx_.decoder : loopDecoder_.get();
}

Reflector::~Reflector() {
  // No observer or sink calls from here: they may already be gone.
  if (requestActive_ && ctx_.transport) ctx_.transport->cancel(request_);
  timers_->retry.cancel();
  timers_->stall.cancel();
  timers_->catchUp.cancel();
  alive_.reset();
}

std::string_view Reflector::resource() const { return model::kindInfo(kind_).resource; }

size_t Reflector::UidHash::operator()(std::string_view uid) const noexcept {
  return std::hash<std::string_view>{}(uid);
}
size_t Reflector::UidHash::operator()(const std::shared_ptr<const model::Object>& obj) const noexcept {
  return (*this)(model::metaOf(*obj).uid);
}
bool Reflector::UidEqual::operator()(const std::shared_ptr<const model::Object>& a,
                                     const std::shared_ptr<const model::Object>& b) const noexcept {
  return model::metaOf(*a).uid == model::metaOf(*b).uid;
}
bool Reflector::UidEqual::operator()(std::string_view uid,
                                     const std::shared_ptr<const model::Object>& b) const noexcept {
  return uid == model::metaOf(*b).uid;
}
bool Reflector::UidEqual::operator()(const std::shared_ptr<const model::Object>& a,
                                     std::string_view uid) const noexcept {
  return model::metaOf(*a).uid == uid;
}

void Reflector::replaceHeld(Store& store, Store::iterator it,
                            std::shared_ptr<const model::Object> obj) {
  // The node is moved, not reallocated: it is given the new object (the same uid, so the same
  // hash and bucket) and put back.
  auto node = store.extract(it);
  node.value() = std::move(obj);
  store.insert(std::move(node));
}

std::shared_ptr<const model::Object> Reflector::find(std::string_view uid) const {
  auto it = store_.find(uid);
  return it == store_.end() ? nullptr : *it;
}

void Reflector::forEach(const std::function<void(const model::Object&)>& fn) const {
  for (const auto& obj : store_) fn(*obj);
}

void Reflector::start() {
  if (state_ != ReflectorState::Idle && state_ != ReflectorState::Stopped) return;
  ++watchGen_;
  state_ = ReflectorState::Idle;
  runPhase(Phase::Discover);
}

void Reflector::stop() {
  if (requestActive_ && ctx_.transport) ctx_.transport->cancel(request_);
  requestActive_ = false;
  watchActive_ = false;
  dropDecoding();
  ++watchGen_;
  timers_->retry.cancel();
  timers_->stall.cancel();
  setWatchUp(false);  // ends a catch-up too
  if (state_ != ReflectorState::Idle) setState(ReflectorState::Stopped);
}

void Reflector::setState(ReflectorState s) {
  if (state_ == s) return;
  state_ = s;
  if (ctx_.observer) ctx_.observer->onStateChange(ctx_.cluster, resource(), s);
}

void Reflector::setWatchUp(bool up) {
  endCatchUp();
  if (watchUp_ == up) return;
  watchUp_ = up;
  if (ctx_.observer) ctx_.observer->onWatchUp(ctx_.cluster, resource(), up);
}

void Reflector::restart(RestartReason reason) {
  ++stats_.restarts[static_cast<size_t>(reason)];
  if (ctx_.observer) ctx_.observer->onRestart(ctx_.cluster, resource(), reason);
}

void Reflector::reportTracked() {
  if (ctx_.observer) ctx_.observer->onTrackedObjects(ctx_.cluster, resource(), size());
}

void Reflector::noteResponse(const HttpResult& result) {
  if (!ctx_.monitor) return;
  if (result.head.status != 0) {
    ctx_.monitor->onResponse(result.head);
  } else if (!result.credentialsFailed) {
    ctx_.monitor->onUnreachable(result.error);
  }
}

std::string Reflector::basePath() const {
  const model::KindInfo& ki = model::kindInfo(kind_);
  std::string p = ki.group.empty() ? "/api/" + version_
                                   : "/apis/" + std::string(ki.group) + "/" + version_;
  return p + "/" + std::string(ki.resource);
}

bool Reflector::isExpired(const HttpResult& result) const {
  if (result.head.status == 410) return true;
  if (result.head.status < 400 || result.body.empty()) return false;
  // "Too large resource version" arrives as 504 Timeout with a ResourceVersionTooLarge cause.
  auto st = model::decodeStatus(result.body);
  return st && (st->reason == "Expired" || st->reason == "Gone" || st->resourceVersionTooLarge);
}

void Reflector::runPhase(Phase p) {
  if (state_ == ReflectorState::Stopped) return;
  switch (p) {
    case Phase::Discover:
      // Fresh answer when re-checking an unavailable resource or after a 404 on a known one.
      discover(state_ == ReflectorState::Unavailable || !version_.empty());
      break;
    case Phase::List: beginList(); break;
    case Phase::Watch: beginWatch(); break;
  }
}

void Reflector::schedule(std::chrono::milliseconds delay, Phase next) {
  if (delay.count() > 0 && state_ != ReflectorState::Unavailable) setState(ReflectorState::Backoff);
  std::weak_ptr<bool> alive = alive_;
  uint64_t gen = watchGen_;
  timers_->retry.expires_after(delay);
  timers_->retry.async_wait([this, alive, gen, next](const boost::system::error_code& ec) {
    if (ec || alive.expired() || gen != watchGen_) return;
    runPhase(next);
  });
}

void Reflector::retryAfterFailure(RestartReason reason, const HttpResult& result, Phase next,
                                  const std::string& what) {
  restart(reason);
  setWatchUp(false);
  std::chrono::milliseconds delay{0};
  if (reason == RestartReason::Unauthorized && ++consecutiveUnauthorized_ == 1) {
    // The transport has invalidated the credentials; the first retry fetches fresh ones at
    // once (rotated token). Repeated 401s back off like any other failure.
    delay = std::chrono::milliseconds(0);
  } else {
    delay = backoff_.next();
    if (result.head.retryAfter && (result.head.status == 429 || result.head.status >= 500)) {
      auto ra = std::min<std::chrono::milliseconds>(*result.head.retryAfter,
                                                    options_.maxRetryAfter);
      delay = std::max(delay, ra);
    }
  }
  std::string detail = result.error;
  if (detail.empty() && result.head.status >= 400 && !result.body.empty()) {
    if (auto st = model::decodeStatus(result.body); st && !st->message.empty()) {
      detail = st->message;
    }
  }
  detail::logger()->warn(
      "watch restarted cluster={} resource={} reason={} during={} status={} backoff_ms={} "
      "error=\"{}\"",
      ctx_.cluster, resource(), restartReasonName(reason), what, result.head.status,
      delay.count(), detail);
  schedule(delay, next);
}

// --- discovery --------------------------------------------------------------------------------

void Reflector::discover(bool refresh) {
  const model::KindInfo& ki = model::kindInfo(kind_);
  if (ki.group.empty()) {
    version_ = std::string(ki.versions[0]);
    beginList();
    return;
  }
  if (state_ != ReflectorState::Unavailable) setState(ReflectorState::Discovering);
  std::weak_ptr<bool> alive = alive_;
  uint64_t gen = watchGen_;
  ctx_.discovery->lookup(
      std::string(ki.group), refresh,
      [this, alive, gen](const ApiDiscovery::GroupInfo& info) {
        if (alive.expired() || gen != watchGen_ || state_ == ReflectorState::Stopped) return;
        const model::KindInfo& k = model::kindInfo(kind_);
        using Outcome = ApiDiscovery::GroupInfo::Outcome;
        if (info.outcome == Outcome::Failed) {
          retryAfterFailure(classify(info.failure), info.failure, Phase::Discover, "discovery");
          return;
        }
        std::vector<std::string> preferred;
        for (auto v : k.versions) {
          if (!v.empty()) preferred.emplace_back(v);
        }
        std::optional<std::string> chosen;
        if (info.outcome == Outcome::Served) chosen = chooseVersion(info.versions, preferred);
        if (!chosen) {
          std::string served;
          for (const auto& v : info.versions) served += (served.empty() ? "" : ",") + v;
          markUnavailable(info.outcome == Outcome::NotServed
                              ? "API group " + std::string(k.group) + " is not served"
                              : "API group " + std::string(k.group) + " serves [" + served +
                                    "], none of the supported versions");
          return;
        }
        if (state_ == ReflectorState::Unavailable || unavailableReported_) {
          detail::logger()->info("resource now served cluster={} resource={} version={}",
                                 ctx_.cluster, resource(), *chosen);
          unavailableReported_ = false;
        }
        version_ = *chosen;
        beginList();
      });
}

std::shared_ptr<const model::Object> Reflector::lastState(const HeldKey& held) const {
  auto obj = std::make_shared<model::Object>(emptyObject(kind_));
  std::visit(
      [&](auto& o) {
        o.meta.uid = held.uid.str();
        o.meta.resourceVersion = held.rv;
      },
      *obj);
  return obj;
}

template <typename S>
bool Reflector::deleteAll(S& store) {
  auto old = std::move(store);
  store.clear();
  reportTracked();
  for (const auto& held : old) {
    deliver(model::EventType::Deleted, lastState(held), EventOrigin::Relist,
            !kHeldObject<typename S::value_type>, nameHashOf(held));
    if (state_ == ReflectorState::Stopped) return false;
  }
  return true;
}

void Reflector::markUnavailable(const std::string& why) {
  setWatchUp(false);
  setState(ReflectorState::Unavailable);
  if (!unavailableReported_) {
    unavailableReported_ = true;
    detail::logger()->warn("resource unavailable cluster={} resource={} reason=\"{}\" recheck_s={}",
                           ctx_.cluster, resource(), why,
                           std::chrono::duration_cast<std::chrono::seconds>(
                               options_.unavailableRecheck)
                               .count());
  }
  // The resource went away (CRD removed, group disabled): so did its objects.
  if (size() != 0 && !(options_.keepObjects ? deleteAll(store_) : deleteAll(keys_))) return;
  schedule(options_.unavailableRecheck, Phase::Discover);
}

// --- LIST ---------------------------------------------------------------------------------------

void Reflector::beginList() {
  setState(ReflectorState::Listing);
  setWatchUp(false);
  // client-go relistResourceVersion(): "0" first (served from the watch cache), then the last
  // RV seen ("not older than"), and "" (a quorum read) once a LIST at that RV was refused.
  listRv_ = lastRvUnusable_ ? std::string() : lastRv_.empty() ? std::string("0") : lastRv_;
  continue_.clear();
  listed_.clear();
  listedRv_.clear();
  dropDecoding();
  streamingList_ = !synced_ && size() == 0;
  requestPage();
}

void Reflector::requestPage() {
  std::string path = basePath();
  char sep = '?';
  auto add = [&](const std::string& kv) {
    path += sep;
    path += kv;
    sep = '&';
  };
  if (!unpaginated_) add("limit=" + std::to_string(options_.pageSize));
  if (!continue_.empty()) {
    // The RV must not be repeated with a continue token (the token carries it).
    add("continue=" + detail::urlEncode(continue_));
  } else if (!listRv_.empty()) {
    add("resourceVersion=" + detail::urlEncode(listRv_));
  }
  ++stats_.listRequests;
  std::weak_ptr<bool> alive = alive_;
  uint64_t gen = watchGen_;
  RequestCallbacks cb;
  cb.onDone = [this, alive, gen](HttpResult r) {
    if (alive.expired() || gen != watchGen_) return;
    onPage(std::move(r));
  };
  HttpRequest request{path, false, lastPageBytes_};
  if (!spareBodies_.empty()) {
    request.bodyBuffer = std::move(spareBodies_.back());
    spareBodies_.pop_back();
    ++stats_.listBuffersReused;
  }
  request_ = ctx_.transport->start(std::move(request), std::move(cb));
  requestActive_ = true;
}

void Reflector::onPage(HttpResult result) {
  requestActive_ = false;
  noteResponse(result);
  if (ctx_.observer) {
    ctx_.observer->onRequest(ctx_.cluster, resource(), RequestKind::List, result.head.status);
  }
  if (result.head.status == 200 && result.error.empty()) {
    lastPageBytes_ = result.body.size();
    DecodingPage d;
    d.seq = ++decodeSeq_;
    if (!unpaginated_ && decoding_.size() < kPagesAhead) {
      // Ask for the next page first, then decode this one: the server prepares and sends it
      // meanwhile. The transport sends the request from its launch (see CurlTransport), before
      // the loop turns to anything else.
      auto ahead = model::peekListContinue(result.body);
      if (ahead && !ahead->empty()) {
        continue_ = *ahead;
        requestPage();
        d.askedAhead = std::move(ahead);
      }
    }
    if (ctx_.decoder == nullptr && !d.askedAhead && decoding_.empty()) {
      // Decoding on the loop, with no request to let out first and no page before it: now.
      auto page = model::decodeList(result.body, kind_, decodeOptions());
      keepSpare(std::move(result.body));
      result.body = std::string();
      takePage(result, page, std::nullopt);
      return;
    }
    std::string body = std::move(result.body);
    result.body.clear();
    d.response = std::move(result);
    decoding_.push_back(std::move(d));
    std::weak_ptr<bool> alive = alive_;
    decoder_->decode(std::move(body), kind_, options_.decode,
                     [this, alive, seq = decodeSeq_](Result<model::ListPage> page, std::string spent) {
                       if (alive.expired()) return;
                       onDecoded(seq, std::move(page), std::move(spent));
                     });
    return;
  }
  // This LIST ends here (retried, started over or given up): the pages before are not taken.
  dropDecoding();
  if (result.error.empty() && isExpired(result)) {
    if (!continue_.empty()) {
      restart(RestartReason::Expired);
      // The continue token outlived etcd compaction: start the LIST over for a consistent
      // snapshot; after a second expiry in a row fetch it in one piece (client-go's pager).
      if (++expiredContinues_ >= 2) unpaginated_ = true;
      detail::logger()->info(
          "list continue token expired cluster={} resource={} items_so_far={} unpaginated={}",
          ctx_.cluster, resource(), listed_.size(), unpaginated_);
      continue_.clear();
      listed_.clear();
      streamingList_ = !synced_ && size() == 0;  // objects taken already are reconciled
      requestPage();
      return;
    }
    if (!listRv_.empty() && listRv_ != "0") {
      restart(RestartReason::Expired);
      detail::logger()->info("list at last resourceVersion refused cluster={} resource={} rv={}",
                             ctx_.cluster, resource(), listRv_);
      lastRvUnusable_ = true;
      beginList();
      return;
    }
  }
  if (result.head.status == 404 && result.error.empty()) {
    markUnavailable("LIST " + basePath() + " returned 404");
    return;
  }
  retryAfterFailure(classify(result), result, Phase::List, "list");
}

void Reflector::onDecoded(uint64_t seq, Result<model::ListPage> page, std::string spent) {
  // A page of a LIST that ended meanwhile (stopped, retried, started over) is not found.
  auto it = std::find_if(decoding_.begin(), decoding_.end(),
                         [seq](const DecodingPage& d) { return d.seq == seq; });
  if (it == decoding_.end()) return;
  keepSpare(std::move(spent));
  it->page = std::move(page);
  while (!decoding_.empty() && decoding_.front().page) {
    DecodingPage d = std::move(decoding_.front());
    decoding_.pop_front();
    if (!takePage(d.response, *d.page, d.askedAhead)) {
      dropDecoding();
      return;
    }
  }
}

void Reflector::keepSpare(std::string body) {
  // A body that fits in the string itself holds no memory worth keeping.
  if (body.capacity() <= std::string().capacity() || spareBodies_.size() > kPagesAhead) return;
  body.clear();
  spareBodies_.push_back(std::move(body));
}

bool Reflector::takePage(HttpResult& response, Result<model::ListPage>& page,
                         const std::optional<std::string>& askedAhead) {
  auto dropAskedAhead = [&] {
    // A request out belongs to this LIST (asked for from this page's head or a later one's).
    if (requestActive_) {
      ctx_.transport->cancel(request_);
      requestActive_ = false;
    }
  };
  if (!page) {
    dropAskedAhead();
    HttpResult r = std::move(response);
    r.error = "LIST body: " + page.error();
    retryAfterFailure(RestartReason::DecodeError, r, Phase::List, "list");
    return false;
  }
  consecutiveUnauthorized_ = 0;
  for (const auto& err : page->itemErrors) {
    ++stats_.decodeErrors;
    if (ctx_.observer) ctx_.observer->onDecodeError(ctx_.cluster, resource());
    if (stats_.decodeErrors <= 10 || stats_.decodeErrors % 1000 == 0) {
      detail::logger()->warn("object skipped cluster={} resource={} decode_errors={} error=\"{}\"",
                             ctx_.cluster, resource(), stats_.decodeErrors, err);
    }
  }
  if (streamingList_) {
    if (!takeStreamed(page->items)) return false;  // the sink stopped the reflector
  } else {
    for (auto& item : page->items) listed_.push_back(std::move(item));
  }
  listedRv_ = page->resourceVersion;
  const std::string next = unpaginated_ ? std::string() : std::move(page->continueToken);
  if (askedAhead) {
    if (next == *askedAhead) return true;  // the next page is on its way
    // The head said otherwise than the whole page (a body with a second `metadata` after its
    // items, or a head misread): the page's own decode decides.
    dropAskedAhead();
    detail::logger()->warn(
        "list page head and body disagree on the continue token cluster={} resource={}",
        ctx_.cluster, resource());
  }
  if (!next.empty()) {
    continue_ = next;
    requestPage();
  } else {
    completeList();
  }
  return !askedAhead;
}

std::shared_ptr<const model::Object> Reflector::admitListed(Store& into, model::Object& item) {
  if (model::metaOf(item).uid.empty()) return rejectListed();
  auto obj = std::make_shared<const model::Object>(std::move(item));
  // Two items claiming one uid (hostile: uids are unique per cluster): the first is kept.
  if (!into.insert(obj).second) return rejectListed();
  return obj;
}

std::shared_ptr<const model::Object> Reflector::admitListed(KeyStore& into, model::Object& item) {
  const model::ObjectMeta& m = model::metaOf(item);
  if (m.uid.empty()) return rejectListed();
  if (!into.insert(heldKeyOf(m)).second) return rejectListed();
  return std::make_shared<const model::Object>(std::move(item));
}

std::shared_ptr<const model::Object> Reflector::rejectListed() {
  ++stats_.decodeErrors;
  if (ctx_.observer) ctx_.observer->onDecodeError(ctx_.cluster, resource());
  return nullptr;
}

bool Reflector::takeStreamed(std::vector<model::Object>& items) {
  for (auto& item : items) {
    auto obj = options_.keepObjects ? admitListed(store_, item) : admitListed(keys_, item);
    if (!obj) continue;
    deliver(model::EventType::Added, std::move(obj), EventOrigin::InitialList);
    if (state_ == ReflectorState::Stopped) return false;
  }
  reportTracked();
  return true;
}

void Reflector::completeList() {
  spareBodies_.clear();  // the watch's lines are read into a buffer of their own
  EventOrigin origin = synced_ ? EventOrigin::Relist : EventOrigin::InitialList;
  if (synced_) ++stats_.relists;
  std::vector<Change> changes;
  if (!streamingList_) {
    if (options_.keepObjects) {
      reconcile(store_, changes);
    } else {
      reconcile(keys_, changes);
    }
  }
  streamingList_ = false;
  lastRv_ = listedRv_;
  lastRvUnusable_ = false;
  malformedAt_.reset();
  expiredContinues_ = 0;
  unpaginated_ = false;
  consecutiveUnauthorized_ = 0;
  reportTracked();
  for (auto& c : changes) {
    deliver(c.type, std::move(c.object), origin, c.finalStateUnknown, c.nameHash);
    if (state_ == ReflectorState::Stopped) return;
  }
  if (!synced_) {
    synced_ = true;
    detail::logger()->info("synced cluster={} resource={} version={} objects={} rv={}",
                           ctx_.cluster, resource(), version_, size(), lastRv_);
    sink_.onSynced(ctx_.cluster, kind_);
    if (state_ == ReflectorState::Stopped) return;
  } else {
    detail::logger()->info("relisted cluster={} resource={} objects={} changes={} rv={}",
                           ctx_.cluster, resource(), size(), changes.size(), lastRv_);
  }
  beginWatch();
}

// Reconciled against the store: what was held before the LIST is compared with what it says.
template <typename S>
void Reflector::reconcile(S& store, std::vector<Change>& changes) {
  constexpr bool kObjects = kHeldObject<typename S::value_type>;
  S next;
  next.reserve(listed_.size());
  std::vector<std::shared_ptr<const model::Object>> order;
  order.reserve(listed_.size());
  for (auto& item : listed_) {
    if (auto obj = admitListed(next, item)) order.push_back(std::move(obj));
  }
  listed_.clear();
  listed_.shrink_to_fit();
  // Deletions first: objects that vanished while we were not watching.
  for (const auto& old : store) {
    if (!next.count(old)) {
      changes.push_back({model::EventType::Deleted, lastState(old), !kObjects, nameHashOf(old)});
    }
  }
  for (const auto& obj : order) {
    const model::ObjectMeta& m = model::metaOf(*obj);
    auto it = store.find(lookupKey<S>(m.uid));
    if (it == store.end()) {
      changes.push_back({model::EventType::Added, obj});
    } else if (heldRv(*it) != m.resourceVersion) {
      changes.push_back({model::EventType::Modified, obj});
    } else if constexpr (kObjects) {
      // Unchanged: keep the object the sink already knows (the listed copy goes).
      replaceHeld(next, next.find(obj), *it);
    }
  }
  store = std::move(next);
}

// --- WATCH --------------------------------------------------------------------------------------

void Reflector::beginWatch() {
  setState(ReflectorState::Watching);
  uint64_t gen = ++watchGen_;
  framer_.reset();
  watchActive_ = true;
  watchEnding_ = false;
  endCatchUp();  // a catch-up of a stream that ended cleanly starts again at this head
  watchStartedAt_ = clock_.monotonicNow();
  lastBytes_ = watchStartedAt_;
  watchBytes_ = 0;
  auto minS = options_.minWatchTimeout.count();
  std::uniform_int_distribution<int64_t> dist(minS, 2 * minS);
  std::string path = basePath() + "?allowWatchBookmarks=true";
  if (!lastRv_.empty()) path += "&resourceVersion=" + detail::urlEncode(lastRv_);
  path += "&timeoutSeconds=" + std::to_string(dist(rng_)) + "&watch=true";
  ++stats_.watchRequests;
  std::weak_ptr<bool> alive = alive_;
  RequestCallbacks cb;
  cb.onHead = [this, alive, gen](const ResponseHead& h) {
    if (!alive.expired()) onWatchHead(gen, h);
  };
  cb.onData = [this, alive, gen](std::string_view chunk) {
    if (!alive.expired()) onWatchData(gen, chunk);
  };
  cb.onDone = [this, alive, gen](HttpResult r) {
    if (!alive.expired()) onWatchDone(gen, std::move(r));
  };
  request_ = ctx_.transport->start(HttpRequest{path, true}, std::move(cb));
  requestActive_ = true;
  armStallTimer(gen, options_.stallTimeout);
}

void Reflector::armStallTimer(uint64_t gen, std::chrono::milliseconds after) {
  std::weak_ptr<bool> alive = alive_;
  timers_->stall.expires_after(after);
  timers_->stall.async_wait([this, alive, gen](const boost::system::error_code& ec) {
    if (ec || alive.expired() || gen != watchGen_ || !watchActive_) return;
    auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(clock_.monotonicNow() -
                                                                      lastBytes_);
    if (idle < options_.stallTimeout) {
      armStallTimer(gen, options_.stallTimeout - idle);
      return;
    }
    // A watch that never sent a byte, not even a bookmark, may be waiting for a
    // resourceVersion the server will not reach soon (an API server restored with a lower RV
    // base accepts such a watch and stays silent). Re-watching from the same RV would hang
    // again, so relist: a LIST at that RV is refused as too large and the reflector falls back
    // to a fresh read. A watch that went quiet after sending data resumes from its last RV.
    bool silent = watchBytes_ == 0;
    endWatch();
    std::string detail = "no data for " + std::to_string(idle.count()) + " ms" +
                         (silent ? " since the watch opened" : "");
    if (ctx_.monitor) ctx_.monitor->onUnreachable(detail);
    HttpResult r;
    r.error = detail;
    retryAfterFailure(RestartReason::Stall, r, silent ? Phase::List : Phase::Watch, "watch");
  });
}

void Reflector::endWatch() {
  watchEnding_ = true;
  watchActive_ = false;
  if (requestActive_) ctx_.transport->cancel(request_);
  requestActive_ = false;
  timers_->stall.cancel();
  setWatchUp(false);
}

void Reflector::onWatchHead(uint64_t gen, const ResponseHead& head) {
  if (gen != watchGen_ || !watchActive_) return;
  if (head.status != 200) return;  // the body (a Status) is judged when the request ends
  if (ctx_.monitor) ctx_.monitor->onResponse(head);
  consecutiveUnauthorized_ = 0;
  // A watch that stayed up across a clean end (timeoutSeconds) re-opened at once: nothing to
  // catch up. One that was down resumes from its last RV, and the server replays what it
  // missed after this head, possibly over several reads: the cluster's objects are behind until
  // the stream has gone quiet (or sent a BOOKMARK) — what the daemon waits for before judging
  // them (a recovery closed on the manager's view between a worker's head and its replay).
  if (watchUp_) return;
  catchingUp_ = true;
  watchHeadAt_ = clock_.monotonicNow();
  armCatchUpTimer(gen);
}

void Reflector::armCatchUpTimer(uint64_t gen) {
  catchUpBytes_ = watchBytes_;
  std::weak_ptr<bool> alive = alive_;
  timers_->catchUp.expires_after(options_.catchUpQuiet);
  timers_->catchUp.async_wait([this, alive, gen](const boost::system::error_code& ec) {
    if (ec || alive.expired() || gen != watchGen_ || !watchActive_ || !catchingUp_) return;
    // Quiet for a whole interval (the replay is done), or long enough that a busy stream's
    // backlog has been read: either way the watch is current.
    if (watchBytes_ == catchUpBytes_ ||
        clock_.monotonicNow() - watchHeadAt_ >= options_.catchUpLimit) {
      setWatchUp(true);
      return;
    }
    armCatchUpTimer(gen);
  });
}

void Reflector::endCatchUp() {
  if (!catchingUp_) return;
  catchingUp_ = false;
  timers_->catchUp.cancel();
}

void Reflector::onWatchData(uint64_t gen, std::string_view chunk) {
  if (gen != watchGen_ || !watchActive_ || watchEnding_) return;
  lastBytes_ = clock_.monotonicNow();
  watchBytes_ += chunk.size();
  if (ctx_.monitor) ctx_.monitor->onBytes();
  auto outcome = framer_.feed(chunk, [this](std::string_view line) { return onWatchLine(line); });
  if (outcome == LineFramer::Outcome::LineTooLong) {
    endWatch();
    HttpResult r;
    r.head.status = 200;
    r.error = "watch event larger than " + std::to_string(options_.maxLineBytes) +
              " bytes; relisting";
    // Watching again from the same RV would meet the same line again (for ever); a LIST brings
    // the object within its own bound and the next watch starts after it.
    retryAfterFailure(RestartReason::TooLarge, r, Phase::List, "watch");
  }
}

bool Reflector::onWatchLine(std::string_view line) {
  // A reused buffer: the decoder pads it in place instead of allocating a padded copy per event.
  lineBuf_.assign(line.data(), line.size());
  auto ev = model::decodeWatchEvent(lineBuf_, kind_, decodeOptions());
  if (!ev) {
    // Not a watch event at all (truncated or garbled line): the stream cannot be trusted past
    // this point, but everything before it was applied; re-watch from the last good RV. If the
    // line comes again at the same place, the server serves it there (it is not a glitch of
    // the connection): relist, so the next watch starts past it, instead of looping on it.
    endWatch();
    const bool again = malformedAt_ && *malformedAt_ == lastRv_;
    malformedAt_ = lastRv_;
    HttpResult r;
    r.head.status = 200;
    r.error = "malformed watch line (" + std::to_string(line.size()) + " bytes): " + ev.error() +
              (again ? "; again at the same resourceVersion, relisting" : "");
    retryAfterFailure(RestartReason::DecodeError, r, again ? Phase::List : Phase::Watch, "watch");
    return false;
  }
  if (ctx_.observer) ctx_.observer->onWatchEvent(ctx_.cluster, resource(), ev->type);
  switch (ev->type) {
    case model::EventType::Bookmark:
      if (!ev->resourceVersion.empty()) lastRv_ = ev->resourceVersion;
      // Sent after every event up to its RV: the replay is in.
      if (catchingUp_) setWatchUp(true);
      return true;
    case model::EventType::Error: {
      endWatch();
      const model::ApiStatus& st = ev->status;
      if (isExpiredStatus(st)) {
        restart(RestartReason::Expired);
        auto delay = backoff_.next();
        detail::logger()->info(
            "watch expired, relisting cluster={} resource={} rv={} backoff_ms={} message=\"{}\"",
            ctx_.cluster, resource(), lastRv_, delay.count(), st.message);
        schedule(delay, Phase::List);
      } else {
        HttpResult r;
        r.head.status = 200;
        r.error = "watch ERROR event code=" + std::to_string(st.code) + " reason=" + st.reason +
                  " message=" + st.message;
        retryAfterFailure(RestartReason::HttpError, r, Phase::Watch, "watch");
      }
      return false;
    }
    case model::EventType::Added:
    case model::EventType::Modified:
    case model::EventType::Deleted:
      break;
  }
  if (!ev->object || model::metaOf(*ev->object).uid.empty()) {
    // A well-formed event whose object we cannot read: skip it but keep our place.
    ++stats_.decodeErrors;
    if (ctx_.observer) ctx_.observer->onDecodeError(ctx_.cluster, resource());
    if (stats_.decodeErrors <= 10 || stats_.decodeErrors % 1000 == 0) {
      detail::logger()->warn(
          "watch event skipped cluster={} resource={} rv={} decode_errors={} error=\"{}\"",
          ctx_.cluster, resource(), ev->resourceVersion, stats_.decodeErrors,
          ev->object ? std::string("object without metadata.uid") : ev->decodeError);
    }
    if (!ev->resourceVersion.empty()) lastRv_ = ev->resourceVersion;
    return true;
  }
  auto obj = std::make_shared<const model::Object>(std::move(*ev->object));
  const model::ObjectMeta& meta = model::metaOf(*obj);
  if (!ev->resourceVersion.empty()) {
    lastRv_ = ev->resourceVersion;
  } else if (!meta.resourceVersion.empty()) {
    lastRv_ = meta.resourceVersion.str();
  }
  ++watchEvents_;
  return options_.keepObjects ? applyWatched(store_, ev->type, std::move(obj))
                              : applyWatched(keys_, ev->type, std::move(obj));
}

template <typename S>
bool Reflector::applyWatched(S& store, model::EventType type,
                             std::shared_ptr<const model::Object> obj) {
  const model::ObjectMeta& meta = model::metaOf(*obj);
  auto it = store.find(lookupKey<S>(meta.uid));
  if (it != store.end()) {
    if (!sameName(*it, meta)) {
      // Names and namespaces never change and uids are unique: another object claiming a uid
      // already held is hostile. Skipped and counted; the object holding it stays as it was.
      ++stats_.decodeErrors;
      if (ctx_.observer) ctx_.observer->onDecodeError(ctx_.cluster, resource());
      if (stats_.decodeErrors <= 10 || stats_.decodeErrors % 1000 == 0) {
        detail::logger()->warn(
            "watch event skipped cluster={} resource={} rv={} decode_errors={} error=\"uid {} "
            "is held by another object\"",
            ctx_.cluster, resource(), lastRv_, stats_.decodeErrors, meta.uid);
      }
      return true;
    }
  }
  if (type == model::EventType::Deleted) {
    if (it == store.end()) return true;  // never seen (or already gone): nothing to tell
    store.erase(it);
    reportTracked();
    deliver(model::EventType::Deleted, std::move(obj), EventOrigin::Watch);
  } else if (it == store.end()) {
    if constexpr (kHeldObject<typename S::value_type>) {
      store.insert(obj);
    } else {
      store.insert(heldKeyOf(meta));
    }
    reportTracked();
    deliver(model::EventType::Added, std::move(obj), EventOrigin::Watch);
  } else {
    if (heldRv(*it) == meta.resourceVersion) return true;  // dup
    if constexpr (kHeldObject<typename S::value_type>) {
      replaceHeld(store, it, obj);
    } else {
      it->rv = meta.resourceVersion;
    }
    deliver(model::EventType::Modified, std::move(obj), EventOrigin::Watch);
  }
  return state_ != ReflectorState::Stopped && watchActive_;
}

void Reflector::onWatchDone(uint64_t gen, HttpResult result) {
  if (gen != watchGen_ || !watchActive_) return;
  watchActive_ = false;
  requestActive_ = false;
  timers_->stall.cancel();
  noteResponse(result);
  if (ctx_.observer) {
    ctx_.observer->onRequest(ctx_.cluster, resource(), RequestKind::Watch, result.head.status);
  }
  if (result.head.status == 200) {
    if (!result.error.empty()) {
      // Cut mid-stream: whatever was complete has been applied; resume from the last RV.
      retryAfterFailure(RestartReason::TransportError, result, Phase::Watch, "watch");
      return;
    }
    restart(RestartReason::StreamEnd);
    bool tooShort = clock_.monotonicNow() - watchStartedAt_ < kShortWatch && watchBytes_ == 0;
    if (framer_.pending() > 0) {
      detail::logger()->warn("watch ended inside an event cluster={} resource={} dropped_bytes={}",
                             ctx_.cluster, resource(), framer_.pending());
    }
    if (tooShort) {
      auto delay = backoff_.next();
      detail::logger()->warn("very short watch cluster={} resource={} backoff_ms={}",
                             ctx_.cluster, resource(), delay.count());
      schedule(delay, Phase::Watch);
    } else {
      detail::logger()->debug("watch ended cluster={} resource={} rv={}", ctx_.cluster,
                              resource(), lastRv_);
      schedule(std::chrono::milliseconds(0), Phase::Watch);
    }
    return;
  }
  setWatchUp(false);
  if (result.error.empty() && isExpired(result)) {
    restart(RestartReason::Expired);
    auto delay = backoff_.next();
    detail::logger()->info("watch expired, relisting cluster={} resource={} rv={} backoff_ms={}",
                           ctx_.cluster, resource(), lastRv_, delay.count());
    schedule(delay, Phase::List);
    return;
  }
  if (result.head.status == 404 && result.error.empty()) {
    // The resource may have been removed (CRD deleted): ask discovery again.
    retryAfterFailure(RestartReason::HttpError, result, Phase::Discover, "watch");
    return;
  }
  retryAfterFailure(classify(result), result, Phase::Watch, "watch");
}

void Reflector::deliver(model::EventType type, std::shared_ptr<const model::Object> object,
                        EventOrigin origin, bool finalStateUnknown, uint64_t nameHash) {
  ++stats_.events;
  if (ctx_.observer) {
    ctx_.observer->onEvent(ctx_.cluster, resource(), type, origin != EventOrigin::Watch);
  }
  ObjectEvent ev;
  ev.cluster = ctx_.cluster;
  ev.kind = kind_;
  ev.type = type;
  ev.object = std::move(object);
  ev.observedAt = clock_.systemNow();
  ev.origin = origin;
  ev.finalStateUnknown = finalStateUnknown;
  ev.nameHash = nameHash;
  sink_.onEvent(ev);
}

}  // namespace firstwork::kube
