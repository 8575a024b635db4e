#include "progress.h"

#include <cinttypes>
#include <cstdio>
#include <utility>

namespace posecast::cli {

Progress::Progress(uint64_t total, bool enabled, std::string unit, int fd, std::chrono::milliseconds delay,
                   When when)
    : total_(total),
      enabled_(enabled && total > 0 && (when == When::kAlways || isatty(fd) != 0)),
      unit_(std::move(unit)),
      fd_(fd),
      delay_(delay) {}

Progress::~Progress() {
  if (shown_) write("\r" + std::string(72, ' ') + "\r");
}

void Progress::update(uint64_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < delay_ || (shown_ && now - last_ < std::chrono::milliseconds(100))) return;
  last_ = now;
  if (done > total_) done = total_;
  const int width = 40;
  const auto filled = static_cast<int>(done * width / total_);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(width, '.');
  char line[160];
  std::snprintf(line, sizeof line, "\r[%s] %3d%% %s %" PRIu64 "/%" PRIu64, bar.c_str(),
                static_cast<int>(done * 100 / total_), unit_.c_str(), done, total_);
  write(line);
  shown_ = true;
}

void Progress::write(const std::string& text) const {
  std::size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + at, text.size() - at);
    if (n <= 0) return;  // a terminal that went away: the bar is only a courtesy
    at += static_cast<std::size_t>(n);
  }
}

}  // namespace posecast::cli
