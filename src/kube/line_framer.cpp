#include "firstwork/kube/line_framer.hpp"

namespace firstwork::kube {

namespace {
std::string_view stripCr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}
}  // namespace

LineFramer::Outcome LineFramer::feed(std::string_view chunk,
                                     const std::function<bool(std::string_view)>& onLine) {
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      if (buffer_.size() + chunk.size() > maxLineBytes_) {
        buffer_.clear();
        return Outcome::LineTooLong;
      }
      buffer_.append(chunk);
      return Outcome::Ok;
    }
    std::string_view line;
    if (buffer_.empty()) {
      // Common case: the whole line is inside this chunk, no copy.
      line = chunk.substr(0, nl);
    } else {
      if (buffer_.size() + nl > maxLineBytes_) {
        buffer_.clear();
        return Outcome::LineTooLong;
      }
      buffer_.append(chunk.substr(0, nl));
      line = buffer_;
    }
    chunk.remove_prefix(nl + 1);
    if (line.size() > maxLineBytes_) {
      buffer_.clear();
      return Outcome::LineTooLong;
    }
    line = stripCr(line);
    bool keepGoing = line.empty() || onLine(line);
    buffer_.clear();
    if (!keepGoing) return Outcome::Stopped;
  }
  return Outcome::Ok;
}

}  // namespace firstwork::kube
