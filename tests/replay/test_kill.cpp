// A recording process killed with SIGKILL mid-run: the file stays readable up to its last
// complete chunk and loses only what had not been written: the ticks not yet handed to the
// recorder's writer thread (under one flush interval: half a second by default) and what the
// writer had not yet taken (it looks every few milliseconds): at most about one second at the
// default interval, in real time.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "replay_test_support.h"

namespace posecast::test {
namespace {

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What the child reports after recording each tick.
struct Progress {
  uint64_t tick;
  int64_t recorded_ns;  // steady clock (CLOCK_MONOTONIC: the same in both processes)
};

// The child: records a session forever, one tick a millisecond (a fast real-time loop, so
// that the writer's few milliseconds of delay are a few ticks), reporting each recorded tick
// on `progress_fd`.
[[noreturn]] void record_until_killed(const std::string& path, int progress_fd) {
  std::unique_ptr<World> world = make_world(30);
  auto rec = Recorder::create(path, *world, {kRigSource});
  if (!rec.ok()) _exit(3);
  for (uint64_t t = 0;; ++t) {
    submit_decisions(*world, t, 30, 20);
    world->tick();
    if (!rec.value()->record_tick(*world).ok()) _exit(4);
    const Progress p{t, monotonic_ns()};
    if (::write(progress_fd, &p, sizeof p) != static_cast<ssize_t>(sizeof p)) _exit(5);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(KillDuringRecording, FileIsReadableToItsLastChunkAndLosesOnlyWhatWasNotWritten) {
  // The writer takes a handed-over batch within its poll interval (5 ms) when it gets a core;
  // this allows for a loaded test machine.
  constexpr int64_t kWriterDelayNs = 200'000'000;
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
    std::vector<Progress> reported;
    int64_t kill_ns = 0;
    Progress p{};
    while (true) {
      const ssize_t n = ::read(fds[0], &p, sizeof p);
      if (n < 0 && errno == EINTR) continue;
      if (n != static_cast<ssize_t>(sizeof p)) break;  // the child is gone
      reported.push_back(p);
      if (kill_ns == 0 && p.tick >= kill_after) {
        kill_ns = monotonic_ns();
        ASSERT_EQ(::kill(child, SIGKILL), 0);  // keep draining: what it reported was recorded
      }
    }
    ::close(fds[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
    ASSERT_FALSE(reported.empty());
    const uint64_t last = reported.back().tick;

    Result<std::shared_ptr<const Recording>> r = read_recording_file(file.path);
    ASSERT_TRUE(r.ok()) << r.error().message;
    const Recording& rec = *r.value();
    EXPECT_TRUE(rec.stop.reason == StopReason::kUnclosed || rec.stop.reason == StopReason::kTruncated)
        << to_string(rec.stop.reason) << ": " << rec.stop.message;
    // The child reports a tick after recording it, so the kill can land between the two: the
    // file may then hold one tick more than was reported (end_tick() == last + 2).
    EXPECT_LE(rec.end_tick(), last + 2);
    // Tick t is handed over by the time tick t + interval is recorded. Every tick handed over
    // more than the writer's delay before the kill must be in the file.
    const uint64_t interval = rec.header.flush_interval_ticks;
    EXPECT_EQ(interval, 30u);  // half a second at 60 Hz
    uint64_t must_hold = 0;    // ticks [0, must_hold) must be in the file
    for (const Progress& q : reported) {
      if (q.tick >= interval && q.recorded_ns + kWriterDelayNs < kill_ns) must_hold = q.tick - interval + 1;
    }
    EXPECT_GE(rec.end_tick(), must_hold) << "killed after tick " << last << ", file ends at " << rec.end_tick();
    EXPECT_EQ(verify_all(r.value()), -1) << "the kept prefix replays bit-exactly";
  }
}

}  // namespace
}  // namespace posecast::test
