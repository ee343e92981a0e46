#include <array>
#include <charconv>
#include <chrono>
#include <vector>

#include "detail/util.hpp"
#include "firstwork/kube/kube_transport.hpp"

namespace firstwork::kube {

namespace {

std::optional<int> month(std::string_view m) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (detail::iequals(kMonths[i], m)) return static_cast<int>(i) + 1;
  }
  return std::nullopt;
}

std::optional<int> number(std::string_view s) {
  int v = 0;
  if (s.empty() || s.size() > 4) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "08:49:37"
bool parseClock(std::string_view s, int& h, int& m, int& sec) {
  if (s.size() != 8 || s[2] != ':' || s[5] != ':') return false;
  auto hh = number(s.substr(0, 2));
  auto mm = number(s.substr(3, 2));
  auto ss = number(s.substr(6, 2));
  if (!hh || !mm || !ss || *hh > 23 || *mm > 59 || *ss > 60) return false;
  h = *hh;
  m = *mm;
  sec = *ss;
  return true;
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<SystemTime> build(int y, int mon, int d, int h, int m, int s) {
  using namespace std::chrono;
  year_month_day ymd{year{y}, std::chrono::month{static_cast<unsigned>(mon)},
                     day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return std::nullopt;
  return SystemTime(sys_days(ymd)) + hours(h) + minutes(m) + seconds(s);
}

}  // namespace

std::optional<SystemTime> parseHttpDate(std::string_view text) {
  auto parts = split(detail::trim(text));
  int h = 0, mi = 0, s = 0;
  if (parts.size() == 6 && parts[0].size() == 4 && parts[0].back() == ',' &&
      parts[5] == "GMT") {
    // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
    auto d = number(parts[1]);
    auto mon = month(parts[2]);
    auto y = number(parts[3]);
    if (!d || !mon || !y || parts[3].size() != 4 || !parseClock(parts[4], h, mi, s)) {
      return std::nullopt;
    }
    return build(*y, *mon, *d, h, mi, s);
  }
  if (parts.size() == 4 && parts[0].back() == ',' && parts[3] == "GMT") {
    // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT (two-digit year: RFC 9110 §5.6.7 50-year rule,
    // applied simply as 19xx/20xx around 70).
    std::string_view dmy = parts[1];
    if (dmy.size() != 9 || dmy[2] != '-' || dmy[6] != '-') return std::nullopt;
    auto d = number(dmy.substr(0, 2));
    auto mon = month(dmy.substr(3, 3));
    auto yy = number(dmy.substr(7, 2));
    if (!d || !mon || !yy || !parseClock(parts[2], h, mi, s)) return std::nullopt;
    return build(*yy < 70 ? 2000 + *yy : 1900 + *yy, *mon, *d, h, mi, s);
  }
  if (parts.size() == 5) {
    // asctime: Sun Nov  6 08:49:37 1994
    auto mon = month(parts[1]);
    auto d = number(parts[2]);
    auto y = number(parts[4]);
    if (!mon || !d || !y || !parseClock(parts[3], h, mi, s)) return std::nullopt;
    return build(*y, *mon, *d, h, mi, s);
  }
  return std::nullopt;
}

std::optional<std::chrono::seconds> parseRetryAfter(std::string_view text, SystemTime now) {
  std::string_view t = detail::trim(text);
  if (!t.empty() && t.size() <= 10 && t.find_first_not_of("0123456789") == std::string_view::npos) {
    long long v = 0;
    std::from_chars(t.data(), t.data() + t.size(), v);
    return std::chrono::seconds(v);
  }
  auto date = parseHttpDate(t);
  if (!date) return std::nullopt;
  if (*date <= now) return std::chrono::seconds(0);
  return std::chrono::ceil<std::chrono::seconds>(*date - now);
}

}  // namespace firstwork::kube
