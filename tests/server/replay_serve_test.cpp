// Serving a recording (posecast-server --replay): the program's ReplayDriver on a real Server
// and a real NetClient over loopback UDP, driven in simulated time. The recording is a
// decision-driven World session (every command kind, some rejected on purpose) with a
// checkpoint every second; a Replayer's straight run over it is the reference.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "../replay/replay_test_support.h"
#include "posecast/client/net_client.h"
#include "posecast/hash.h"
#include "posecast/server/server.h"
#include "posecast/rig/model_source.h"
#include "posecast/rig/rig_generator.h"
#include "replay_driver.h"

namespace posecast::test {
namespace {

constexpr uint32_t kEntities = 6;
constexpr uint64_t kTicks = 480;  // 8 s at 60 Hz: ticks 0..479
constexpr uint32_t kCheckpointInterval = 60;
constexpr int64_t kTickUs = 1'000'000 / 60;
constexpr int64_t kFrameUs = 4'000;

// The recording every test serves, written once per process.
const std::string& recording_path() {
  static TempFile file("served.pcrec");
  static const bool recorded = [] {
    RecorderConfig config;
    config.checkpoint_interval_ticks = kCheckpointInterval;
    record_session(file.path, kTicks, kEntities, config);
    return true;
  }();
  (void)recorded;
  return file.path;
}

std::vector<uint64_t> entity_hashes(const sim::World& world) {
  std::vector<uint64_t> out;
  for (std::size_t i = 0; i < world.entity_count(); ++i) out.push_back(hash_palette(world.palette_at(i)));
  return out;
}

// The Recorder's world hash definition over the server's (non-hashing) World: palettes, roots
// and the tick's animation events.
uint64_t world_hash(const sim::World& world) { return world.world_hash_of_palettes(); }

// Every entity's palette hash at every recorded tick, from a Replayer's straight run.
const std::vector<std::vector<uint64_t>>& reference() {
  static const std::vector<std::vector<uint64_t>> hashes = [] {
    std::vector<std::vector<uint64_t>> out;
    auto replayer = Replayer::create(read_ok(read_bytes(recording_path())), rig_loader());
    EXPECT_TRUE(replayer.ok());
    if (!replayer.ok()) return out;
    while (!replayer.value()->at_end()) {
      EXPECT_TRUE(replayer.value()->step().matches());
      out.push_back(entity_hashes(replayer.value()->world()));
    }
    return out;
  }();
  return hashes;
}

// What one server tick showed.
struct Shown {
  uint64_t replay_tick = 0;      // the driver's position for that tick
  uint32_t session_tick = 0;     // the snapshot tick it was sent as
  uint64_t world_hash = 0;       // of the server's World after the tick
  std::vector<uint64_t> entity_hashes;
};

// A replay server (ReplayDriver + Server, every tick a snapshot) and one NetClient.
class ServedReplay {
 public:
  explicit ServedReplay(bool replay = true) {
    auto* library = new client::AssetLibrary();
    library_.reset(library);
    EXPECT_TRUE(library_->add(rig_model()).ok());
    server::ServerOptions options;
    options.listen = net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    options.cookie_key = std::array<uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    options.threads = 1;
    options.send_rate_hz = 60;
    options.world_palettes = true;  // the ReplayDriver checks tick checks, as posecast-server does
    options.tick_checks = true;
    std::vector<std::shared_ptr<const Model>> models{rig_model()};
    if (replay) {
      auto loaded = server::ReplayDriver::load(recording_path());
      if (!loaded) {
        ADD_FAILURE() << loaded.error().message;
        return;
      }
      driver_ = std::move(loaded).value();
      options.tick_rate_hz = driver_->tick_rate_hz();
      models = driver_->models();
    }
    auto created = server::Server::create(io_, options, models);
    if (!created) {
      ADD_FAILURE() << created.error().message;
      return;
    }
    server_ = std::move(created).value();
    if (driver_) {
      const Status attached = driver_->attach(*server_);
      if (!attached) {
        ADD_FAILURE() << attached.error().message;
        return;
      }
    } else {
      server_->spawn(0);
    }
    server_->on_pose_quantized([this](uint32_t tick, sim::EntityId id, uint16_t, const protocol::QuantizedPose& pose) {
      session_tick_ = tick;
      served_[(uint64_t{tick} << 32) | id] = pose.values;
    });
    client::NetClientOptions o;
    o.server = server_->local_endpoint();
    o.local = net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    o.assets = library_;
    o.load_missing_assets = false;
    o.nonce = 77;
    o.channel_arrival_times = false;  // simulated time over a plain socket
    client_ = std::make_unique<client::NetClient>(io_, o);
    EXPECT_TRUE(client_->connect(0).ok());
    ok_ = true;
  }

  bool ok() const { return ok_; }
  server::Server& server() { return *server_; }
  server::ReplayDriver& driver() { return *driver_; }
  client::NetClient& client() { return *client_; }
  const std::vector<Shown>& shown() const { return shown_; }
  int64_t now() const { return now_; }

  // Advances simulated time by `us`: a server tick (the driver first) every 1/60 s, a client
  // update every 4 ms; datagrams cross loopback within the sending call.
  void run_for(int64_t us) {
    const int64_t end = now_ + us;
    while (true) {
      const int64_t t = std::min(next_tick_, next_frame_);
      if (t > end) break;
      now_ = t;
      if (t == next_tick_) {
        if (driver_) driver_->before_tick();
        server_->tick(now_);
        if (driver_) {
          const sim::World& world = server_->world();
          shown_.push_back(Shown{driver_->shown_tick(), session_tick_, world_hash(world), entity_hashes(world)});
        }
        next_tick_ += kTickUs;
      }
      if (t == next_frame_) {
        client_->update(now_);
        next_frame_ += kFrameUs;
      }
    }
  }

  void control(protocol::ReplayAction action, uint32_t tick = 0, uint32_t ticks = 0, int32_t speed_q16 = 0) {
    protocol::ReplayControl c;
    c.action = action;
    c.tick = tick;
    c.ticks = ticks;
    c.speed_q16 = speed_q16;
    EXPECT_NE(client_->send_replay_control(c, now_), 0u);
  }

  // The quantised pose the server sent for `id` at snapshot tick `tick`, or nullptr.
  const std::vector<int32_t>* served(uint32_t tick, uint32_t id) const {
    auto it = served_.find((uint64_t{tick} << 32) | id);
    return it == served_.end() ? nullptr : &it->second;
  }

 private:
  asio::io_context io_;
  std::shared_ptr<client::AssetLibrary> library_;
  std::unique_ptr<server::ReplayDriver> driver_;
  std::unique_ptr<server::Server> server_;
  std::unique_ptr<client::NetClient> client_;
  std::map<uint64_t, std::vector<int32_t>> served_;
  std::vector<Shown> shown_;
  uint32_t session_tick_ = 0;
  int64_t now_ = 0, next_tick_ = 0, next_frame_ = 0;
  bool ok_ = false;
};

// Every shown tick: the server World's hash is the recorded one, and each entity's palette is
// the straight replay's.
void expect_bit_exact(const std::vector<Shown>& shown, std::size_t from = 0) {
  const auto rec = read_ok(read_bytes(recording_path()));
  ASSERT_TRUE(rec);
  for (std::size_t i = from; i < shown.size(); ++i) {
    const Shown& s = shown[i];
    ASSERT_LT(s.replay_tick, kTicks);
    ASSERT_EQ(s.world_hash, rec->tick_record(s.replay_tick)->world_hash) << "replay tick " << s.replay_tick;
    ASSERT_EQ(s.entity_hashes, reference()[s.replay_tick]) << "replay tick " << s.replay_tick;
  }
}

TEST(ServedReplay, PlaysEveryRecordedTickBitExactlyAtSpeedOne) {
  ServedReplay r;
  ASSERT_TRUE(r.ok());
  r.run_for(2'000'000);
  ASSERT_TRUE(r.client().connected());
  const std::vector<Shown>& shown = r.shown();
  ASSERT_GE(shown.size(), 119u);
  for (std::size_t i = 0; i < shown.size(); ++i) {
    ASSERT_EQ(shown[i].replay_tick, i) << "server tick " << i << " shows the next recording tick";
    if (i > 0) {
      EXPECT_GT(shown[i].session_tick, shown[i - 1].session_tick);
    }
  }
  expect_bit_exact(shown);
  const server::ReplayDriverStats& stats = r.driver().stats();
  EXPECT_EQ(stats.divergences, 0u);
  EXPECT_GE(stats.ticks_verified + 1, stats.ticks_shown);
  EXPECT_EQ(stats.seeks, 0u);

  // The client sees a replay session at the driver's position, and decodes exactly the poses
  // the server quantised from those ticks.
  const protocol::SessionStatus& status = r.client().session_status();
  ASSERT_TRUE(status.is_replay());
  EXPECT_EQ(status.replay_first_tick, 0u);
  EXPECT_EQ(status.replay_last_tick, kTicks - 1);
  EXPECT_EQ(status.replay_speed_q16, 65536);
  // The status names the replay tick shown at its server tick (it is refreshed once a second
  // while playing; a viewer extrapolates with the speed in between).
  bool found = false;
  for (const Shown& s : shown) {
    if (s.session_tick != status.server_tick) continue;
    EXPECT_EQ(status.replay_tick, s.replay_tick);
    found = true;
  }
  EXPECT_TRUE(found) << "server tick " << status.server_tick;
  const client::SnapshotBuffer& buffer = r.client().buffer();
  std::size_t compared = 0;
  for (std::size_t v = 0; v < buffer.size(); ++v) {
    const client::SnapshotView& view = buffer.view_at(v);
    for (const client::ViewEntry& entry : view.entries) {
      if (!entry.decoded) continue;
      const client::PoseSample* sample = buffer.sample(view.tick, entry.entity_id, entry.generation);
      const std::vector<int32_t>* served = r.served(view.tick, entry.entity_id);
      ASSERT_NE(sample, nullptr);
      ASSERT_NE(served, nullptr) << "tick " << view.tick;
      ASSERT_TRUE(sample->decoded());  // exact records are stored deferred
      EXPECT_EQ(sample->quantized.values, *served) << "tick " << view.tick << " entity " << entry.entity_id;
      ++compared;
    }
  }
  EXPECT_GT(compared, 100u);
  EXPECT_EQ(r.client().stats(r.now()).decode_errors, 0u);
}

TEST(ServedReplay, PauseHoldsTheReplayTickWhileSnapshotsContinue) {
  ServedReplay r;
  ASSERT_TRUE(r.ok());
  r.run_for(1'000'000);
  r.control(protocol::ReplayAction::kPause);
  r.run_for(300'000);
  const uint64_t held = r.driver().shown_tick();
  const std::size_t from = r.shown().size();
  const uint32_t newest_before = r.client().buffer().newest_tick();
  r.run_for(1'000'000);
  ASSERT_GE(r.shown().size(), from + 59);
  for (std::size_t i = from; i < r.shown().size(); ++i) ASSERT_EQ(r.shown()[i].replay_tick, held);
  expect_bit_exact(r.shown());
  EXPECT_GE(r.driver().stats().holds_restored, 59u);
  EXPECT_EQ(r.driver().stats().divergences, 0u);
  // Snapshots kept coming with increasing ticks; the client is told the position and speed 0.
  EXPECT_GE(r.client().buffer().newest_tick(), newest_before + 55);
  EXPECT_EQ(r.client().session_status().replay_tick, held);
  EXPECT_EQ(r.client().session_status().replay_speed_q16, 0);
  EXPECT_TRUE(r.client().connected());
}

TEST(ServedReplay, SeekBackwardsThenPlayGivesTheStraightRunsPoses) {
  ServedReplay r;
  ASSERT_TRUE(r.ok());
  r.run_for(2'500'000);  // ticks 0..~150: past two checkpoints
  std::map<uint64_t, std::vector<uint64_t>> straight;
  for (const Shown& s : r.shown()) straight[s.replay_tick] = s.entity_hashes;
  const std::size_t before = r.shown().size();
  r.control(protocol::ReplayAction::kSeek, 20);
  r.run_for(200'000);
  // The first tick after the seek shows exactly tick 20, then play goes on at speed 1.
  std::size_t seek_index = before;
  while (seek_index < r.shown().size() && r.shown()[seek_index].replay_tick != 20) ++seek_index;
  ASSERT_LT(seek_index, r.shown().size());
  for (std::size_t i = before; i < seek_index; ++i) EXPECT_GT(r.shown()[i].replay_tick, 100u) << "before the seek";
  const std::size_t after_seek = r.shown().size();
  r.run_for(2'000'000);
  std::size_t compared = 0;
  for (std::size_t i = seek_index; i < r.shown().size(); ++i) {
    const Shown& s = r.shown()[i];
    EXPECT_EQ(s.replay_tick, 20 + (i - seek_index));
    auto it = straight.find(s.replay_tick);
    if (it == straight.end()) continue;
    EXPECT_EQ(s.entity_hashes, it->second) << "replay tick " << s.replay_tick;
    ++compared;
  }
  EXPECT_GT(compared, 100u);
  EXPECT_GT(r.shown().size(), after_seek);
  expect_bit_exact(r.shown());
  const server::ReplayDriverStats& stats = r.driver().stats();
  EXPECT_EQ(stats.seeks, 1u);
  EXPECT_EQ(stats.divergences, 0u);
  EXPECT_GT(stats.max_seek_ms, 0.0);
  // The seek fast-forwarded ticks 0..19 from the checkpoint (no poses, nothing verified); the
  // shown ticks after it were evaluated and verified, and matched the straight run above.
  EXPECT_EQ(stats.ticks_fast_forwarded, 20u);
  EXPECT_EQ(stats.ticks_stepped_over, 0u);
  EXPECT_GT(stats.ticks_verified, compared);
  std::printf("seek back to tick 20 (checkpoint 0, 20 ticks re-simulated, %u entities): %.3f ms\n", kEntities,
              stats.max_seek_ms);
}

TEST(ServedReplay, StepAdvancesExactlyTheAskedTicks) {
  ServedReplay r;
  ASSERT_TRUE(r.ok());
  r.run_for(500'000);
  r.control(protocol::ReplayAction::kPause);
  r.run_for(200'000);
  const uint64_t held = r.driver().shown_tick();
  ASSERT_TRUE(r.driver().paused());
  r.control(protocol::ReplayAction::kStep, 0, 5);
  r.run_for(300'000);
  EXPECT_EQ(r.driver().shown_tick(), held + 5);
  EXPECT_EQ(r.shown().back().replay_tick, held + 5);
  EXPECT_EQ(r.shown()[r.shown().size() - 10].replay_tick, held + 5) << "and stays there";
  r.control(protocol::ReplayAction::kStep);  // ticks 0: one tick
  r.run_for(300'000);
  EXPECT_EQ(r.driver().shown_tick(), held + 6);
  EXPECT_TRUE(r.driver().paused());
  EXPECT_EQ(r.client().session_status().replay_tick, held + 6);
  expect_bit_exact(r.shown());
  EXPECT_EQ(r.driver().stats().divergences, 0u);
}

TEST(ServedReplay, SpeedTwoAdvancesTwoRecordingTicksPerServerTick) {
  ServedReplay r;
  ASSERT_TRUE(r.ok());
  r.run_for(500'000);
  r.control(protocol::ReplayAction::kSetSpeed, 0, 0, 2 * 65536);
  r.run_for(200'000);
  const std::size_t from = r.shown().size();
  r.run_for(1'000'000);
  ASSERT_GE(r.shown().size(), from + 59);
  for (std::size_t i = from + 1; i < r.shown().size(); ++i) {
    ASSERT_EQ(r.shown()[i].replay_tick, r.shown()[i - 1].replay_tick + 2) << "server tick " << i;
  }
  EXPECT_EQ(r.client().session_status().replay_speed_q16, 2 * 65536);
  // The ticks stepped over were evaluated and verified too.
  EXPECT_GE(r.driver().stats().ticks_stepped_over, 59u);
  EXPECT_EQ(r.driver().stats().divergences, 0u);
  expect_bit_exact(r.shown());

  // A quarter speed shows every tick four times.
  r.control(protocol::ReplayAction::kSetSpeed, 0, 0, 65536 / 4);
  r.run_for(200'000);
  const std::size_t slow = r.shown().size();
  r.run_for(500'000);
  const uint64_t first = r.shown()[slow].replay_tick;
  const uint64_t advanced = r.shown().back().replay_tick - first;
  const double server_ticks = static_cast<double>(r.shown().size() - 1 - slow);
  EXPECT_NEAR(static_cast<double>(advanced), server_ticks / 4, 1.0);
  expect_bit_exact(r.shown());
  EXPECT_EQ(r.driver().stats().divergences, 0u);
}

TEST(ServedReplay, TheEndOfTheRecordingHoldsItsLastTick) {
  ServedReplay r;
  ASSERT_TRUE(r.ok());
  r.run_for(300'000);
  r.control(protocol::ReplayAction::kSeek, kTicks - 10);
  r.run_for(1'000'000);
  EXPECT_EQ(r.driver().shown_tick(), kTicks - 1);
  EXPECT_TRUE(r.driver().paused());
  EXPECT_EQ(r.client().session_status().replay_speed_q16, 0);
  expect_bit_exact(r.shown());
  // Resume at the end plays from the start again.
  r.control(protocol::ReplayAction::kResume);
  r.run_for(200'000);
  EXPECT_LT(r.driver().shown_tick(), 20u);
  EXPECT_FALSE(r.driver().paused());
  expect_bit_exact(r.shown());
}

TEST(ServedReplay, OutOfRangeControlsAreClampedOrRefused) {
  ServedReplay r;
  ASSERT_TRUE(r.ok());
  r.run_for(300'000);
  r.control(protocol::ReplayAction::kSetSpeed, 0, 0, -65536);
  r.run_for(100'000);
  EXPECT_EQ(r.driver().stats().controls_refused, 1u);
  EXPECT_EQ(r.driver().speed_q16(), 65536);
  r.control(protocol::ReplayAction::kSetSpeed, 0, 0, 64 * 65536);
  r.run_for(100'000);
  EXPECT_EQ(r.driver().speed_q16(), server::kMaxServedReplaySpeedQ16);
  r.control(protocol::ReplayAction::kSeek, 0xFFFFFF00u);
  r.run_for(100'000);
  EXPECT_EQ(r.driver().shown_tick(), kTicks - 1);
  expect_bit_exact(r.shown());
}

TEST(ServedReplay, ALiveServerDropsReplayControls) {
  ServedReplay r(/*replay=*/false);
  ASSERT_TRUE(r.ok());
  r.run_for(500'000);
  ASSERT_TRUE(r.client().connected());
  const auto unexpected = [&] {
    return r.server().metrics().drops[static_cast<std::size_t>(server::DropReason::kUnexpected)];
  };
  const uint64_t before = unexpected();
  r.control(protocol::ReplayAction::kPause);
  r.run_for(300'000);
  EXPECT_GE(unexpected(), before + 1) << "dropped and counted (sent three times)";
  EXPECT_FALSE(r.client().session_status().is_replay());
  EXPECT_TRUE(r.client().connected());
}

// ---- The program ----------------------------------------------------------------------------

struct ProgramResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

ProgramResult run_server(const std::string& args) {
  ProgramResult result;
  const std::string command = std::string(POSECAST_SERVER) + " " + args + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) result.output += buffer;
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TEST(ServerProgramReplay, AMissingRecordingIsAClearErrorWithExitCode2) {
  const ProgramResult r = run_server("--replay /nonexistent/session.pcrec --listen 127.0.0.1:0 --duration 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--replay"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("/nonexistent/session.pcrec"), std::string::npos) << r.output;
}

TEST(ServerProgramReplay, ACorruptRecordingIsAClearErrorWithExitCode2) {
  TempFile corrupt("corrupt.pcrec");
  write_bytes(corrupt.path, std::vector<uint8_t>{'n', 'o', 't', ' ', 'a', ' ', 'r', 'e', 'c', 'o', 'r', 'd', 'i', 'n', 'g'});
  const ProgramResult r = run_server("--replay " + corrupt.path + " --listen 127.0.0.1:0 --duration 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--replay"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not a"), std::string::npos) << r.output;
}

TEST(ServerProgramReplay, AModelThatIsNotTheRecordedAssetIsRefusedWithExitCode2) {
  TempFile file("other_asset.pcrec");
  Model altered = *rig_model();
  altered.content_hash ^= 1;  // the recording then names another asset than gen-rig:24 loads
  World world(WorldOptions{60, 1, true, true, true});
  ASSERT_TRUE(world.add_model(std::make_shared<const Model>(std::move(altered))).ok());
  auto recorder = Recorder::create(file.path, world, {kRigSource});
  ASSERT_TRUE(recorder.ok()) << recorder.error().message;
  for (int t = 0; t < 10; ++t) {
    world.tick();
    ASSERT_TRUE(recorder.value()->record_tick(world).ok());
  }
  ASSERT_TRUE(recorder.value()->close().ok());
  const ProgramResult r = run_server("--replay " + file.path + " --listen 127.0.0.1:0 --duration 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("asset hash mismatch"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gen-rig:24"), std::string::npos) << r.output;
}

// A recording whose model file moved: the recorded absolute path no longer exists, and
// --assets names the folder it is in now.
TEST(ServerProgramReplay, AMovedModelIsFoundWithAssetsAndAClearErrorWithout) {
  TempFile moved_to("models");
  std::filesystem::create_directories(moved_to.path);
  const std::string model_file = moved_to.path + "/walker.glb";
  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(rig::RigOptions{});
  ASSERT_TRUE(glb.ok()) << glb.error().message;
  write_bytes(model_file, glb.value());
  Result<Model> model = rig::load_model_source(model_file);
  ASSERT_TRUE(model.ok()) << model.error().message;

  TempFile file("moved_model.pcrec");
  World world(WorldOptions{60, 1, true, true, true});
  ASSERT_TRUE(world.add_model(std::make_shared<const Model>(std::move(model).value())).ok());
  constexpr uint32_t kWalkers = 3;
  for (EntityId e = 1; e <= kWalkers; ++e) {
    world.submit(0, Command{0, e, SpawnCommand{0, 0, {}}});
    world.submit(0, Command{0, e, PlayCommand{0, motion(static_cast<uint16_t>(e % 4))}});
  }
  const std::string recorded_source = "/nonexistent/posecast/assets/walker.glb";
  auto recorder = Recorder::create(file.path, world, {recorded_source});
  ASSERT_TRUE(recorder.ok()) << recorder.error().message;
  for (uint64_t t = 0; t < 30; ++t) {
    submit_decisions(world, t, kWalkers, 10);
    world.tick();
    ASSERT_TRUE(recorder.value()->record_tick(world).ok());
  }
  ASSERT_TRUE(recorder.value()->close().ok());

  const ProgramResult lost = run_server("--replay " + file.path + " --listen 127.0.0.1:0 --duration 1");
  EXPECT_EQ(lost.exit_code, 2) << lost.output;
  EXPECT_NE(lost.output.find(recorded_source), std::string::npos) << lost.output;

  const ProgramResult found = run_server("--replay " + file.path + " --assets " + moved_to.path +
                                         " --listen 127.0.0.1:0 --duration 1 --metrics-interval 0");
  EXPECT_EQ(found.exit_code, 0) << found.output;
  EXPECT_NE(found.output.find("divergences 0"), std::string::npos) << found.output;
  std::filesystem::remove_all(moved_to.path);
}

TEST(ServerProgramReplay, ReplayWithScenarioOrRecordIsAUsageError) {
  const ProgramResult a = run_server("--replay x.pcrec --scenario demo.json");
  EXPECT_EQ(a.exit_code, 2) << a.output;
  EXPECT_NE(a.output.find("--replay cannot be combined with --scenario"), std::string::npos) << a.output;
  const ProgramResult b = run_server("--replay x.pcrec --record y.pcrec");
  EXPECT_EQ(b.exit_code, 2) << b.output;
  EXPECT_NE(b.output.find("--record"), std::string::npos) << b.output;
}

TEST(ServerProgramReplay, ServesARecordingAndVerifiesEveryTick) {
  const ProgramResult r = run_server("--replay " + recording_path() + " --listen 127.0.0.1:0 --duration 1 --metrics-interval 0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("divergences 0"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("diverges"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace posecast::test
