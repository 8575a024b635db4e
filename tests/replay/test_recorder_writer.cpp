// The recorder's writer thread: a write that fails reaches the recording thread's next call and
// every later one; flush() waits for everything handed over.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "replay_test_support.h"

namespace posecast::test {
namespace {

// /dev/full takes the open and refuses every write (ENOSPC): the first checkpoint fails, and
// create() says so.
TEST(RecorderErrors, AFileThatRefusesTheFirstWriteFailsCreate) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  std::unique_ptr<World> world = make_world(4);
  Result<std::unique_ptr<Recorder>> rec = Recorder::create("/dev/full", *world, {kRigSource});
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.error().message.find("writing '/dev/full' failed"), std::string::npos) << rec.error().message;
}

// A FIFO whose reader goes away mid-recording: writes fail with EPIPE on the writer thread.
// record_tick returns the error from then on (it learns of it at its next call after the
// failure), flush() and close() too, and the calls return instead of blocking.
TEST(RecorderErrors, AWriteFailureMidRecordingReachesEveryLaterCall) {
  TempFile fifo("recorder.fifo");
  const std::string& path = fifo.path;
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  struct sigaction ignore = {}, previous = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &previous), 0);  // EPIPE instead of a signal
  const int reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);

  std::unique_ptr<World> world = make_world(8);
  RecorderConfig config;
  config.flush_interval_ticks = 1;
  Result<std::unique_ptr<Recorder>> rec = Recorder::create(path, *world, {kRigSource}, config);
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  ::close(reader);  // from now on every write() fails

  Status failure;
  for (int t = 0; t < 2000 && failure.ok(); ++t) {
    world->tick();
    failure = rec.value()->record_tick(*world);
    if (failure.ok() && t % 10 == 9) failure = rec.value()->flush();  // waits for the writer
  }
  ASSERT_FALSE(failure.ok()) << "no write failed";
  EXPECT_NE(failure.error().message.find("failed"), std::string::npos) << failure.error().message;
  world->tick();
  const Status later = rec.value()->record_tick(*world);
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.error().message, failure.error().message);
  const Status flushed = rec.value()->flush();
  ASSERT_FALSE(flushed.ok());
  EXPECT_EQ(flushed.error().message, failure.error().message);
  const Status closed = rec.value()->close();
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.error().message, failure.error().message);

  ::sigaction(SIGPIPE, &previous, nullptr);
}

// flush() hands the buffered ticks to the writer thread and waits until it has written
// everything: the open recording then reads up to the last recorded tick.
TEST(RecorderFlush, WritesEverythingRecordedBeforeItReturns) {
  TempFile file("flushed.pcrec");
  std::unique_ptr<World> world = make_world(6);
  Result<std::unique_ptr<Recorder>> rec = Recorder::create(file.path, *world, {kRigSource});
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  for (uint64_t t = 0; t < 100; ++t) {
    submit_decisions(*world, t, 6, 10);
    world->tick();
    ASSERT_TRUE(rec.value()->record_tick(*world).ok());
    if (t == 40 || t == 99) {  // mid-batch (30-tick batches), then at the end
      ASSERT_TRUE(rec.value()->flush().ok());
      EXPECT_EQ(rec.value()->stats().buffered_ticks, 0u);
      Result<std::shared_ptr<const Recording>> r = read_recording_file(file.path);
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(r.value()->end_tick(), t + 1);
      EXPECT_EQ(r.value()->stop.reason, StopReason::kUnclosed);
      EXPECT_EQ(rec.value()->stats().bytes, std::filesystem::file_size(file.path));
    }
  }
  ASSERT_TRUE(rec.value()->close().ok());
}

}  // namespace
}  // namespace posecast::test
