// cli::Progress, the progress bar every command-line program shares: drawn on a terminal,
// never a byte on a pipe.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "progress.h"

namespace posecast::cli {
namespace {

// Everything readable on `fd` right now.
std::string drain(int fd) {
  std::string out;
  char buf[512];
  pollfd p{fd, POLLIN, 0};
  while (poll(&p, 1, 50) > 0 && (p.revents & POLLIN) != 0) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// A pseudo-terminal: `terminal` is what a program sees as its terminal, `master` reads what it drew.
struct Pty {
  Pty() {
    master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0) terminal = open(ptsname(master), O_RDWR | O_NOCTTY);
  }
  ~Pty() {
    if (terminal >= 0) close(terminal);
    if (master >= 0) close(master);
  }
  int master = -1;
  int terminal = -1;
};

void run_bar(int fd, Progress::When when) {
  Progress progress(10, true, "tick", fd, std::chrono::milliseconds(0), when);
  for (uint64_t i = 0; i <= 10; ++i) {
    progress.update(i);
    std::this_thread::sleep_for(std::chrono::milliseconds(110));
  }
}

// A pipe: what was written to its write end is read from `read_end`.
struct Pipe {
  Pipe() {
    int fds[2];
    if (pipe(fds) == 0) {
      read_end = fds[0];
      write_end = fds[1];
    }
  }
  ~Pipe() {
    if (read_end >= 0) close(read_end);
    if (write_end >= 0) close(write_end);
  }
  int read_end = -1;
  int write_end = -1;
};

TEST(Progress, APipeGetsNothing) {
  Pipe pipe;
  ASSERT_GE(pipe.write_end, 0);
  run_bar(pipe.write_end, Progress::When::kIfTerminal);
  EXPECT_EQ(drain(pipe.read_end), "");
}

TEST(Progress, TheBarCountsUpToTheTotalAndIsErasedAtTheEnd) {
  Pipe pipe;
  ASSERT_GE(pipe.write_end, 0);
  run_bar(pipe.write_end, Progress::When::kAlways);
  const std::string shown = drain(pipe.read_end);
  EXPECT_NE(shown.find("] 100% tick 10/10"), std::string::npos) << shown;
  EXPECT_NE(shown.find("tick 5/10"), std::string::npos) << shown;
  ASSERT_FALSE(shown.empty());
  EXPECT_EQ(shown.back(), '\r');  // erased at the end
}

TEST(Progress, DisabledOrEmptyWorkDrawsNothingEvenWhereItWouldDraw) {
  Pipe pipe;
  ASSERT_GE(pipe.write_end, 0);
  const auto always = Progress::When::kAlways;
  const auto no_delay = std::chrono::milliseconds(0);
  EXPECT_FALSE(Progress(10, false, "tick", pipe.write_end, no_delay, always).active());
  EXPECT_FALSE(Progress(0, true, "tick", pipe.write_end, no_delay, always).active());
  EXPECT_TRUE(Progress(10, true, "tick", pipe.write_end, no_delay, always).active());
}

// The terminal check itself needs a pseudo-terminal, which a chroot without /dev/pts (such as
// scripts' fresh-machine check) cannot open; the drawing is covered above on a pipe.
TEST(Progress, ATerminalIsRecognisedAndGetsTheBar) {
  Pty pty;
  if (pty.terminal < 0) GTEST_SKIP() << "no pseudo-terminal can be opened here (/dev/pts absent)";
  EXPECT_TRUE(Progress(10, true, "tick", pty.terminal).active());
  run_bar(pty.terminal, Progress::When::kIfTerminal);
  const std::string shown = drain(pty.master);
  EXPECT_NE(shown.find("] 100% tick 10/10"), std::string::npos) << shown;
}

}  // namespace
}  // namespace posecast::cli
