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

void run_bar(int fd) {
  Progress progress(10, true, "tick", fd, std::chrono::milliseconds(0));
  for (uint64_t i = 0; i <= 10; ++i) {
    progress.update(i);
    std::this_thread::sleep_for(std::chrono::milliseconds(110));
  }
}

TEST(Progress, APipeGetsNothing) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  run_bar(fds[1]);
  close(fds[1]);
  EXPECT_EQ(drain(fds[0]), "");
  close(fds[0]);
}

TEST(Progress, ATerminalGetsTheBarAndItsErasure) {
  Pty pty;
  ASSERT_GE(pty.terminal, 0);
  run_bar(pty.terminal);
  const std::string shown = drain(pty.master);
  EXPECT_NE(shown.find("] 100% tick 10/10"), std::string::npos) << shown;
  EXPECT_NE(shown.find("tick 5/10"), std::string::npos) << shown;
  EXPECT_EQ(shown.back(), '\r');  // erased at the end
}

TEST(Progress, DisabledOrEmptyWorkDrawsNothingEvenOnATerminal) {
  Pty pty;
  ASSERT_GE(pty.terminal, 0);
  EXPECT_FALSE(Progress(10, false, "tick", pty.terminal).active());
  EXPECT_FALSE(Progress(0, true, "tick", pty.terminal).active());
  EXPECT_TRUE(Progress(10, true, "tick", pty.terminal).active());
}

}  // namespace
}  // namespace posecast::cli
