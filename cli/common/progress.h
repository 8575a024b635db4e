#pragma once
// A one-line progress bar for long work of the command-line programs (posecast run, replay
// --verify, regress; posecast-server --replay seeking): redrawn at most ten times a second,
// shown only when the output is a terminal and only once the work has taken `delay` (short
// work prints nothing). On a pipe or a file it never writes a byte, so logs and scripted
// output stay clean. The bar is erased when the object is destroyed.
//
// Not thread-safe: one thread calls update().

#include <chrono>
#include <cstdint>
#include <string>
#include <unistd.h>

namespace posecast::cli {

class Progress {
 public:
  // `total`: the amount of work (0: nothing is shown). `enabled` false shows nothing (a
  // --no-progress switch). `unit`: the word before the counts ("tick", "scenario").
  // `fd`: where to draw (stderr by default). `when`: kIfTerminal draws only if isatty(fd);
  // kAlways draws on whatever `fd` is (a caller that already knows, and the tests, which check
  // the drawing on a pipe because a pseudo-terminal is not available everywhere).
  enum class When { kIfTerminal, kAlways };
  Progress(uint64_t total, bool enabled, std::string unit = "tick", int fd = STDERR_FILENO,
           std::chrono::milliseconds delay = std::chrono::milliseconds(500), When when = When::kIfTerminal);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of `total` finished.
  void update(uint64_t done);
  // True when the bar can be drawn at all (enabled, a terminal, some work).
  bool active() const { return enabled_; }

 private:
  void write(const std::string& text) const;

  uint64_t total_;
  bool enabled_;
  std::string unit_;
  int fd_;
  std::chrono::milliseconds delay_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace posecast::cli
