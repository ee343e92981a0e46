#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/kube/backoff.hpp"
#include "firstwork/kube/kube_transport.hpp"
#include "firstwork/kube/line_framer.hpp"
#include "firstwork/kube/observer.hpp"
#include "firstwork/model/decode.hpp"
#include "firstwork/model/object.hpp"
#include "firstwork/model/uid_key.hpp"

namespace boost::asio {
class io_context;
}

namespace firstwork::kube {

class ApiDiscovery;
class ConnectionMonitor;
class ListDecoder;

/// Where an event came from.
enum class EventOrigin : uint8_t {
  Watch,        // a watch event
  InitialList,  // the first LIST (every object arrives as Added)
  Relist,       // a later LIST reconciled against the store (synthetic Added/Modified/Deleted)
};

/// One change of one object, as delivered to the sink.
struct ObjectEvent {
  std::string_view cluster;  // valid during the callback
  model::Kind kind = model::Kind::Pod;
  model::EventType type = model::EventType::Added;  // Added, Modified or Deleted
  /// The new state; for Deleted the last state (from the DELETED event, or the stored one for a
  /// synthetic delete). Never null.
  std::shared_ptr<const model::Object> object;
  SystemTime observedAt{};
  EventOrigin origin = EventOrigin::Watch;
  /// A synthetic delete (relist, resource gone) from a reflector that keeps no objects
  /// (ReflectorOptions::keepObjects false): `object` is of the right kind but carries only its
  /// metadata.uid, and the last state is what the sink kept (client-go's
  /// DeletedFinalStateUnknown).
  bool finalStateUnknown = false;
  /// With finalStateUnknown: model::hashOf of the object's namespace and name as the store kept
  /// it, for a sink that keeps its records by name (the inventory's claims) to find the uid's
  /// among them without an index by uid. 0 otherwise.
  uint64_t nameHash = 0;
  bool synthetic() const { return origin != EventOrigin::Watch; }
};

/// Receives a reflector's events. Called on the event-loop thread.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void onEvent(const ObjectEvent& event) = 0;
  /// The first LIST of this resource finished (all its Added events were delivered).
  virtual void onSynced(std::string_view cluster, model::Kind kind) {
    (void)cluster, (void)kind;
  }
};

struct ReflectorOptions {
  size_t pageSize = 500;
  /// WATCH timeoutSeconds is uniform in [min, 2·min] (client-go: 5–10 min).
  std::chrono::seconds minWatchTimeout{300};
  /// No byte (event or bookmark) for this long ⇒ the watch is considered dead (≈3 bookmark
  /// intervals of a real API server, which sends one about every minute).
  std::chrono::milliseconds stallTimeout{180000};
  /// A resource the server does not serve is looked at again this often.
  std::chrono::milliseconds unavailableRecheck{300000};
  /// Largest accepted Retry-After (a broken proxy must not park the watch for a day).
  std::chrono::milliseconds maxRetryAfter{300000};
  /// Largest watch event line buffered. An API server stores objects up to etcd's 1.5 MiB, and
  /// their JSON (built-in kinds are stored as protobuf) plus the event wrapper can exceed that, so
  /// the bound is well above it; a longer line is not buffered and the reflector relists (LIST
  /// pages have their own, larger bound) instead of meeting the same line again.
  size_t maxLineBytes = size_t{8} << 20;
  /// A watch that (re)opens after being down is "up" (caught up) once its stream has been quiet
  /// this long, a BOOKMARK came, or catchUpLimit has passed since its head: a watch resumed from
  /// an RV replays what it missed after the head, and judging the cluster's objects between the
  /// head and that replay would judge them before they arrive. The quiet interval must stay well
  /// above the transport's read coalescing (TransportOptions::readCoalesce, 50 ms), which delays
  /// a read by up to one of its intervals.
  std::chrono::milliseconds catchUpQuiet{250};
  std::chrono::milliseconds catchUpLimit{2000};
  BackoffOptions backoff;
  uint64_t seed = 0;  // 0 = random (jitter, watch timeouts)
  /// What the decoder keeps of each object (LIST pages and watch events alike); null keeps
  /// everything. Shared: LIST pages are decoded on the decoder's thread.
  std::shared_ptr<const model::DecodeOptions> decode;
  /// Whether the store keeps the objects (shared with the sink) or, for a sink that keeps what it
  /// needs of them itself, their identity alone: uid, resourceVersion and a hash of namespace and
  /// name, 32 bytes, which is all that relists, duplicate events and uid clashes are told by.
  /// Without the objects a synthetic delete carries the uid alone (finalStateUnknown), and
  /// find() and forEach() see nothing.
  bool keepObjects = true;
};

/// Restarts by reason plus a few totals (tests, diagnostics; the observer gets the same).
struct ReflectorStats {
  std::array<uint64_t, kRestartReasonCount> restarts{};
  uint64_t decodeErrors = 0;
  uint64_t listRequests = 0;
  uint64_t watchRequests = 0;
  uint64_t events = 0;
  uint64_t relists = 0;  // LISTs after the first
  uint64_t listBuffersReused = 0;  // LIST page requests given a spent page's buffer to fill
  uint64_t restarts_for(RestartReason r) const { return restarts[static_cast<size_t>(r)]; }
};

/// client-go's reflector for one (cluster, resource): version discovery, paginated LIST,
/// WATCH from the list's resourceVersion with bookmarks, resume from the last RV, relist on
/// 410/Expired with synthetic events so the sink converges to the server's set, backoff with
/// jitter, Retry-After, 401 refresh, stall watchdog. Keeps the objects by UID as decoded slim
/// structs. Event-loop thread only; all time reads through Clock, timers on the io_context.
class Reflector {
 public:
  struct Context {
    std::string cluster;                    // label value
    KubeTransport* transport = nullptr;     // required
    ApiDiscovery* discovery = nullptr;      // required for non-core groups
    ConnectionMonitor* monitor = nullptr;   // optional
    KubeObserver* observer = nullptr;       // optional
    /// Where LIST pages are decoded (the daemon's decoding thread); without one, on the loop.
    ListDecoder* decoder = nullptr;
  };

  Reflector(boost::asio::io_context& io, const Clock& clock, Context context, model::Kind kind,
            EventSink& sink, ReflectorOptions options = {});
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  /// Begins discovery → LIST → WATCH. Call on the loop thread (or before it runs).
  void start();
  /// Cancels requests and timers; no sink calls afterwards.
  void stop();

  ReflectorState state() const { return state_; }
  /// The first LIST finished.
  bool synced() const { return synced_; }
  /// The server does not serve this resource (reported once; re-checked rarely).
  bool unavailable() const { return state_ == ReflectorState::Unavailable; }
  /// Synced or unavailable: what readiness waits for.
  bool settled() const { return synced_ || unavailable(); }

  model::Kind kind() const { return kind_; }
  std::string_view resource() const;
  /// The discovered API version ("" before discovery).
  const std::string& version() const { return version_; }
  /// Last resourceVersion seen (LIST, events, bookmarks).
  const std::string& resourceVersion() const { return lastRv_; }

  /// Objects held (their identities when the store keeps no objects).
  size_t size() const { return options_.keepObjects ? store_.size() : keys_.size(); }
  /// The object held under `uid`; null when none is, or the store keeps no objects.
  std::shared_ptr<const model::Object> find(std::string_view uid) const;
  /// Every object held (none when the store keeps no objects).
  void forEach(const std::function<void(const model::Object&)>& fn) const;
  const ReflectorStats& stats() const { return stats_; }
  /// Bytes held in decoded LIST pages' buffers kept for the next pages (none outside a LIST).
  size_t spareListBufferBytes() const {
    size_t n = 0;
    for (const auto& b : spareBodies_) n += b.capacity();
    return n;
  }

 private:
  enum class Phase : uint8_t { Discover, List, Watch };

  void setState(ReflectorState s);
  void discover(bool refresh);
  void beginList();
  void requestPage();
  void onPage(HttpResult result);
  /// A decoded page is back: takes it, and the ones after it that are back too, in order.
  void onDecoded(uint64_t seq, Result<model::ListPage> page, std::string spent);
  /// Takes a decoded LIST page's items. `askedAhead`: the continue token the next page was
  /// already asked for (read from this page's head), checked against the page's own. False when
  /// the page was bad (the LIST is retried) or the page asked ahead for was the wrong one (asked
  /// again): the pages after it are then not this LIST's.
  bool takePage(HttpResult& response, Result<model::ListPage>& page,
                const std::optional<std::string>& askedAhead);
  /// A page of a streamed LIST (see streamingList_): its items go to the store and the sink now.
  /// False when the sink stopped the reflector meanwhile.
  bool takeStreamed(std::vector<model::Object>& items);
  /// Pages out for decoding are not taken (the LIST they belong to ended); their spent buffers
  /// go too.
  void dropDecoding() {
    decoding_.clear();
    spareBodies_.clear();
  }
  /// Keeps a decoded page's body for the next page's request to be received in (at most
  /// kPagesAhead + 1: as many as a LIST has out at once).
  void keepSpare(std::string body);
  void completeList();
  void beginWatch();
  void onWatchHead(uint64_t gen, const ResponseHead& head);
  void onWatchData(uint64_t gen, std::string_view chunk);
  void onWatchDone(uint64_t gen, HttpResult result);
  bool onWatchLine(std::string_view line);
  void armStallTimer(uint64_t gen, std::chrono::milliseconds after);
  void armCatchUpTimer(uint64_t gen);
  void endCatchUp();  // the watch is up, down or begins again: no catch-up pending
  void endWatch();
  void markUnavailable(const std::string& why);

  /// A failed request: count `reason`, wait (backoff / Retry-After), then run `next`.
  void retryAfterFailure(RestartReason reason, const HttpResult& result, Phase next,
                         const std::string& detail);
  void schedule(std::chrono::milliseconds delay, Phase next);
  void runPhase(Phase p);
  void restart(RestartReason reason);
  void setWatchUp(bool up);
  void deliver(model::EventType type, std::shared_ptr<const model::Object> object,
               EventOrigin origin, bool finalStateUnknown = false, uint64_t nameHash = 0);
  void reportTracked();
  void noteResponse(const HttpResult& result);
  std::string basePath() const;
  bool isExpired(const HttpResult& result) const;
  const model::DecodeOptions& decodeOptions() const {
    static const model::DecodeOptions kEverything;
    return options_.decode ? *options_.decode : kEverything;
  }

  const Clock& clock_;
  Context ctx_;
  model::Kind kind_;
  EventSink& sink_;
  ReflectorOptions options_;
  Backoff backoff_;
  std::mt19937_64 rng_;
  LineFramer framer_;
  std::shared_ptr<bool> alive_;

  struct Timers;
  std::unique_ptr<Timers> timers_;

  ReflectorState state_ = ReflectorState::Idle;
  bool synced_ = false;
  bool watchUp_ = false;
  bool unavailableReported_ = false;
  std::string version_;
  std::string lastRv_;
  bool lastRvUnusable_ = false;  // a LIST at lastRv_ said Expired/too large: relist with RV=""
  uint32_t consecutiveUnauthorized_ = 0;
  /// lastRv_ when the last malformed watch line came: the same again at the same place is not a
  /// transport glitch but what the server serves there, so the reflector relists past it.
  std::optional<std::string> malformedAt_;

  // LIST in progress
  std::string listRv_;        // the RV the LIST was asked for ("0", last RV, or "")
  std::string continue_;
  size_t lastPageBytes_ = 0;  // the last LIST page's size: the next page's buffer is reserved for it
  bool unpaginated_ = false;  // after a second expired continue token (client-go fallback)
  uint32_t expiredContinues_ = 0;
  std::vector<model::Object> listed_;
  /// The first LIST into an empty store: each page's items are stored and delivered (Added) as
  /// the page is taken, not when the LIST completes, so that the sink's work on them overlaps
  /// the fetching and decoding of the pages after. Any other LIST (a relist, or a first LIST
  /// started over after some of its objects were taken) is reconciled against the store whole.
  bool streamingList_ = false;
  std::string listedRv_;
  /// Pages given to the decoder and not yet taken, oldest first: pages are taken in order. The
  /// next page is asked for before a page is decoded (read from its head), so that the server
  /// prepares and sends it meanwhile, unless kPagesAhead pages wait already: per resource at
  /// most three pages are held, or two and a request out (client-go's pager buffers pages ahead
  /// of their consumer likewise).
  struct DecodingPage {
    uint64_t seq = 0;
    HttpResult response;                     // without its body (it went to the decoder)
    std::optional<std::string> askedAhead;   // the next page was asked for with this token
    std::optional<Result<model::ListPage>> page;  // back from the decoder
  };
  static constexpr size_t kPagesAhead = 2;
  std::deque<DecodingPage> decoding_;
  uint64_t decodeSeq_ = 0;
  /// Decoded pages' bodies, given to the next pages' requests (HttpRequest::bodyBuffer): a LIST
  /// of 300 pages was otherwise received through a fresh 2.5 MB buffer per page, whose first
  /// touches were 9 % of the loop's time in the sync (the freed bodies' memory went to the
  /// objects, which now take most of those pages: the sync's page faults fell 6 %,
  /// bench/README.md, change 56). Dropped when the LIST completes or ends.
  std::vector<std::string> spareBodies_;
  std::unique_ptr<ListDecoder> loopDecoder_;  // when the context brings none
  ListDecoder* decoder_ = nullptr;

  // WATCH in progress
  uint64_t watchGen_ = 0;
  bool watchActive_ = false;
  bool watchEnding_ = false;  // a restart was decided inside the stream
  KubeTransport::RequestId request_ = 0;
  bool requestActive_ = false;
  MonotonicTime lastBytes_{};
  MonotonicTime watchStartedAt_{};
  uint64_t watchBytes_ = 0;
  bool catchingUp_ = false;          // the head came; the replay of what was missed may follow
  MonotonicTime watchHeadAt_{};
  uint64_t catchUpBytes_ = 0;        // watchBytes_ when the catch-up timer was armed
  uint64_t watchEvents_ = 0;
  std::string lineBuf_;

  /// The objects held, found by uid: a set hashed and compared by the uid inside each object, so
  /// an entry is its shared pointer alone (a 32-byte node; a map keyed by a view of the uid took
  /// 48, bench/README.md change 63, and a copy of the uid 64 more before change 35). An entry whose
  /// object is replaced is given the new object in place (replaceHeld): same uid, same bucket.
  struct UidHash {
    using is_transparent = void;
    size_t operator()(std::string_view uid) const noexcept;
    size_t operator()(const std::shared_ptr<const model::Object>& obj) const noexcept;
  };
  struct UidEqual {
    using is_transparent = void;
    bool operator()(const std::shared_ptr<const model::Object>& a,
                    const std::shared_ptr<const model::Object>& b) const noexcept;
    bool operator()(std::string_view uid, const std::shared_ptr<const model::Object>& b) const noexcept;
    bool operator()(const std::shared_ptr<const model::Object>& a, std::string_view uid) const noexcept;
  };
  using Store = std::unordered_set<std::shared_ptr<const model::Object>, UidHash, UidEqual>;
  static void replaceHeld(Store& store, Store::iterator it, std::shared_ptr<const model::Object> obj);

  /// What a store that keeps no objects holds of one (ReflectorOptions::keepObjects false): 32
  /// bytes, a 48-byte node (the uid packed by model::UidKey). The object with its lists takes
  /// 500-800 bytes, which its sink replaces with records of its own.
  struct HeldKey {
    model::UidKey uid;
    mutable model::ResourceVersion rv;  // not part of the key
    mutable uint64_t name = 0;          // model::hashOf(namespace/name)
  };
  struct KeyHash {  // found by a uid's text read once (UidKey::Probe)
    using is_transparent = void;
    size_t operator()(const model::UidKey::Probe& uid) const noexcept { return uid.hash(); }
    size_t operator()(const HeldKey& k) const noexcept { return k.uid.hash(); }
  };
  struct KeyEqual {
    using is_transparent = void;
    bool operator()(const HeldKey& a, const HeldKey& b) const noexcept { return a.uid == b.uid; }
    bool operator()(const model::UidKey::Probe& uid, const HeldKey& b) const noexcept {
      return b.uid == uid;
    }
    bool operator()(const HeldKey& a, const model::UidKey::Probe& uid) const noexcept {
      return a.uid == uid;
    }
  };
  using KeyStore = std::unordered_set<HeldKey, KeyHash, KeyEqual>;

  /// A listed item entered into `into` under its uid (the object, or its identity); the object,
  /// or null (counted as a decode error) when it has no uid or one already entered.
  std::shared_ptr<const model::Object> admitListed(Store& into, model::Object& item);
  std::shared_ptr<const model::Object> admitListed(KeyStore& into, model::Object& item);
  std::shared_ptr<const model::Object> rejectListed();  // counted as a decode error; null
  /// completeList's reconciliation of the store against a LIST's items, for either store.
  struct Change;
  template <typename S>
  void reconcile(S& store, std::vector<Change>& changes);
  /// A watch event's object applied to either store; false when the sink stopped the watch.
  template <typename S>
  bool applyWatched(S& store, model::EventType type, std::shared_ptr<const model::Object> obj);
  /// Every object held delivered as deleted, the store left empty (the resource went away).
  template <typename S>
  bool deleteAll(S& store);
  /// What a synthetic delete of a held entry carries: the object, or its uid alone.
  std::shared_ptr<const model::Object> lastState(
      const std::shared_ptr<const model::Object>& held) const {
    return held;
  }
  std::shared_ptr<const model::Object> lastState(const HeldKey& held) const;
  static HeldKey heldKeyOf(const model::ObjectMeta& m) {
    return {model::UidKey(m.uid), m.resourceVersion, model::hashOf(model::namespacedName(m))};
  }

  Store store_;    // keepObjects
  KeyStore keys_;  // !keepObjects
  ReflectorStats stats_;
};

}  // namespace firstwork::kube
