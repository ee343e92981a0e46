#pragma once
#include <cstddef>
#include <iterator>
#include <map>
#include <optional>
#include <utility>

#include "firstwork/core/clock.hpp"

namespace firstwork::engine {

/// A piecewise-constant function of event time, stored as the value before any change (`base`)
/// plus deltas at change points. Intervals can be added and removed in any order, including
/// retroactively (late events), and the function stays exact: that is what makes an incident's
/// integral independent of when its events were observed. `V` is a small value type with `+=`,
/// `-=` and `==`, default-constructed to zero. Pure; single-threaded (owned by the engine).
template <typename V>
class StepTimeline {
 public:
  /// Adds `delta` on [from, to) (to unset: forever).
  void add(SystemTime from, std::optional<SystemTime> to, const V& delta) {
    point(from, delta, true);
    if (to) point(*to, delta, false);
  }
  /// Removes what add(from, to, delta) added.
  void remove(SystemTime from, std::optional<SystemTime> to, const V& delta) {
    point(from, delta, false);
    if (to) point(*to, delta, true);
  }
  /// The value at `t` (a change at exactly `t` is included).
  V at(SystemTime t) const { return valueFrom(t).first; }
  /// Calls fn(from, to, value) for each constant piece of [a, b), in order. Pieces are maximal
  /// between change points (adjacent pieces may have equal values).
  template <typename Fn>
  void forEachPiece(SystemTime a, SystemTime b, Fn&& fn) const {
    if (!(a < b)) return;
    auto [v, it] = valueFrom(a);
    SystemTime t = a;
    for (; it != deltas_.end() && it->first < b; ++it) {
      if (t < it->first) fn(t, it->first, v);
      v += it->second;
      t = it->first;
    }
    if (t < b) fn(t, b, v);
  }
  /// Change points in (a, b), in order.
  template <typename Fn>
  void forEachChange(SystemTime a, SystemTime b, Fn&& fn) const {
    for (auto it = deltas_.upper_bound(a); it != deltas_.end() && it->first < b; ++it) fn(it->first);
  }
  /// Folds every change before `t` into the base: the function is unchanged from `t` on, and
  /// nothing earlier than `t` can be asked for any more (later adds before `t` land at `t`'s base).
  void pruneBefore(SystemTime t) {
    if (floor_ && !(*floor_ < t)) return;
    auto end = deltas_.lower_bound(t);
    for (auto it = deltas_.begin(); it != end; ++it) base_ += it->second;
    deltas_.erase(deltas_.begin(), end);
    floor_ = t;
  }
  size_t points() const { return deltas_.size(); }
  std::optional<SystemTime> floor() const { return floor_; }

 private:
  // The value at `t` and the first change after `t`. Walks back from the latest value: queries
  // are almost always about recent times, so this costs the changes after `t`, not the whole
  // retained history (which grows with the timeline retention and the event rate).
  std::pair<V, typename std::map<SystemTime, V>::const_iterator> valueFrom(SystemTime t) const {
    V v = total_;
    auto first = deltas_.upper_bound(t);
    for (auto it = deltas_.end(); it != first;) {
      --it;
      v -= it->second;
    }
    return {v, first};
  }

  void point(SystemTime t, const V& delta, bool plus) {
    if (plus) {
      total_ += delta;
    } else {
      total_ -= delta;
    }
    if (floor_ && t < *floor_) {
      if (plus) {
        base_ += delta;
      } else {
        base_ -= delta;
      }
      return;
    }
    auto [it, inserted] = deltas_.try_emplace(t);
    if (plus) {
      it->second += delta;
    } else {
      it->second -= delta;
    }
    if (it->second == V{}) deltas_.erase(it);
  }

  V base_{};
  V total_{};  // base_ plus every delta: the value after the last change
  std::map<SystemTime, V> deltas_;
  std::optional<SystemTime> floor_;
};

}  // namespace firstwork::engine
