// A recording process killed with SIGKILL mid-run: the file stays readable up to its last
// complete chunk and loses at most one flush interval (one second of ticks).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "replay_test_support.h"

namespace posecast::test {
namespace {

// The child: records a session forever, reporting each recorded tick on `progress_fd`.
[[noreturn]] void record_until_killed(const std::string& path, int progress_fd) {
  std::unique_ptr<World> world = make_world(30);
  auto rec = Recorder::create(path, *world, {kRigSource});
  if (!rec.ok()) _exit(3);
  for (uint64_t t = 0;; ++t) {
    submit_decisions(*world, t, 30, 20);
    world->tick();
    if (!rec.value()->record_tick(*world).ok()) _exit(4);
    if (::write(progress_fd, &t, sizeof t) != static_cast<ssize_t>(sizeof t)) _exit(5);
  }
}

TEST(KillDuringRecording, FileIsReadableToItsLastChunkAndLosesAtMostOneSecond) {
  for (uint64_t kill_after : {70u, 400u, 1234u}) {
    TempFile file("killed_" + std::to_string(kill_after) + ".pcrec");
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(fds[0]);
      record_until_killed(file.path, fds[1]);
    }
    ::close(fds[1]);
    uint64_t last = 0;
    bool killed = false;
    uint64_t t = 0;
    while (true) {
      const ssize_t n = ::read(fds[0], &t, sizeof t);
      if (n < 0 && errno == EINTR) continue;
      if (n != static_cast<ssize_t>(sizeof t)) break;  // the child is gone
      last = t;
      if (!killed && t >= kill_after) {
        ASSERT_EQ(::kill(child, SIGKILL), 0);
        killed = true;  // keep draining: whatever it reported before dying was recorded
      }
    }
    ::close(fds[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;

    Result<std::shared_ptr<const Recording>> r = read_recording_file(file.path);
    ASSERT_TRUE(r.ok()) << r.error().message;
    const Recording& rec = *r.value();
    EXPECT_TRUE(rec.stop.reason == StopReason::kUnclosed || rec.stop.reason == StopReason::kTruncated)
        << to_string(rec.stop.reason) << ": " << rec.stop.message;
    // Ticks 0..last were recorded; at most one flush interval of them may be missing. The
    // child reports a tick after recording it, so the kill can land between the two: the file
    // may then hold one tick more than was reported (end_tick() == last + 2).
    EXPECT_LE(rec.end_tick(), last + 2);
    EXPECT_GE(rec.end_tick() + rec.header.flush_interval_ticks, last + 1)
        << "killed after tick " << last << ", file ends at " << rec.end_tick();
    EXPECT_EQ(verify_all(r.value()), -1) << "the kept prefix replays bit-exactly";
  }
}

}  // namespace
}  // namespace posecast::test
