#include "firstwork/core/rfc3339.hpp"

#include <fmt/format.h>

#include <chrono>

namespace firstwork {
namespace {

bool digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    char c = s[i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

}  // namespace

Result<SystemTime> parseRfc3339(std::string_view s) {
  using namespace std::chrono;
  auto bad = [&](const char* why) {
    return makeError(fmt::format("invalid RFC 3339 time \"{}\": {}", s.substr(0, 64), why));
  };
  int y, mo, d, h, mi, se;
  if (!digits(s, 0, 4, y) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d))
    return bad("expected YYYY-MM-DD");
  if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return bad("expected 'T' after the date");
  if (!digits(s, 11, 2, h) || s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' ||
      !digits(s, 17, 2, se))
    return bad("expected hh:mm:ss");
  if (mo < 1 || mo > 12) return bad("month out of range");
  // SystemTime counts nanoseconds in 64 bits: 1678-09-21 .. 2262-04-11. Kubernetes writes
  // nothing outside that; Go's zero time (year 1) and corrupt years are rejected, not wrapped.
  if (y < 1679 || y > 2261) return bad("year outside 1679..2261");
  year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return bad("day out of range");
  // Leap seconds (ss = 60) are folded into the next second, as Go's time package does not accept
  // them at all; Kubernetes never writes them.
  if (h > 23 || mi > 59 || se > 60) return bad("time of day out of range");
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    int64_t scale = 100000000;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (scale > 0) {
        nanos += (s[pos] - '0') * scale;
        scale /= 10;
      }
      ++pos;
    }
    if (pos == start) return bad("empty fraction");
  }
  int offsetMinutes = 0;
  if (pos >= s.size()) return bad("missing zone offset");
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    int oh, om;
    if (!digits(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !digits(s, pos + 4, 2, om))
      return bad("expected ±hh:mm offset");
    if (oh > 23 || om > 59) return bad("offset out of range");
    offsetMinutes = (oh * 60 + om) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return bad("expected 'Z' or an offset");
  }
  if (pos != s.size()) return bad("trailing characters");
  auto tp = sys_days{ymd} + hours{h} + minutes{mi} + seconds{se} - minutes{offsetMinutes};
  // The same bound on the instant itself: with its offset, a time written in 2261 (1679) can fall
  // in 2262 (1678), which formatRfc3339 would then write as a year this parser refuses.
  if (tp < sys_days{year{1679} / January / 1} || tp >= sys_days{year{2262} / January / 1}) {
    return bad("instant outside 1679..2261 UTC");
  }
  return SystemTime{duration_cast<system_clock::duration>(tp.time_since_epoch()) +
                    duration_cast<system_clock::duration>(nanoseconds{nanos})};
}

std::string formatRfc3339(SystemTime t) {
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  int64_t secs = ms / 1000;
  int64_t frac = ms % 1000;
  if (frac < 0) {
    frac += 1000;
    secs -= 1;
  }
  auto dp = sys_days{days{secs >= 0 ? secs / 86400 : (secs - 86399) / 86400}};
  int64_t sod = secs - static_cast<int64_t>(dp.time_since_epoch().count()) * 86400;
  year_month_day ymd{dp};
  auto base = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", static_cast<int>(ymd.year()),
                          static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                          sod / 3600, (sod / 60) % 60, sod % 60);
  if (frac == 0) return base + "Z";
  return fmt::format("{}.{:03}Z", base, frac);
}

}  // namespace firstwork
