// Client-side prediction over real loopback UDP through the network simulator (100 ms round
// trip, +-20 ms jitter each way, 5 % loss each way) with the real server: the owner sees its
// commands in the frame after it gives them, a run with nothing interfering has no correction,
// the prediction's state and palette equal the server World's at every tick both ran, bit for
// bit, and a server-side change is corrected within the smoothing time without a pop. Bad
// OwnerStates and commands stamped absurdly far ahead are dropped and counted.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "loopback_session.h"
#include "posecast/hash.h"

namespace posecast::client::testing {
namespace {

constexpr int64_t kFrameUs = 4'000;

SessionSetup latency_setup() {
  SessionSetup setup;
  setup.model_source = "gen-rig:24:travel";  // walk and run clips that carry the root
  setup.entities = 3;
  setup.frame_us = kFrameUs;
  setup.server.world_palettes = true;  // the server World's palette hashes, to compare
  setup.server.world_hashes = true;
  return setup;
}

NetClientOptions latency_client(LoopbackSession& session, uint64_t seed) {
  NetClientOptions options = session.client_options(seed);
  net::SimulatorConfig link;
  link.seed = seed;
  for (net::LinkConditions* c : {&link.outbound, &link.inbound}) {
    c->latency_us = 50'000;
    c->jitter_us = 20'000;
    c->loss_percent = 5.0;
  }
  options.simulator = link;
  return options;
}

// Per tick, the server World's state bytes hash and palette hash of one entity, recorded after
// each server tick (frames are shorter than ticks, so every tick is seen).
class ServerHashes {
 public:
  ServerHashes(LoopbackSession& session, uint32_t id) : session_(session), id_(id) {}
  void record() {
    const sim::World& world = session_.server().world();
    if (world.tick_index() == 0) return;
    const uint32_t tick = static_cast<uint32_t>(world.tick_index() - 1);
    if (hashes_.count(tick) != 0) return;
    for (std::size_t i = 0; i < world.entity_count(); ++i) {
      if (world.entity_id_at(i) != id_) continue;
      hashes_[tick] = {hash_bytes(world.entity_snapshot(id_)), world.palette_hash_at(i)};
    }
  }
  // Ticks in [from, to] both sides know: how many agree on state and palette, how many differ.
  void compare(const Predictor& predictor, uint32_t from, uint32_t to, int& same, int& different) const {
    same = different = 0;
    for (uint32_t t = from; t <= to; ++t) {
      auto it = hashes_.find(t);
      uint64_t state = 0, palette = 0;
      if (it == hashes_.end() || !predictor.predicted_hashes(id_, t, state, palette)) continue;
      if (state == it->second.first && palette == it->second.second) {
        ++same;
      } else {
        ++different;
      }
    }
  }
  uint32_t newest() const { return hashes_.empty() ? 0 : hashes_.rbegin()->first; }

 private:
  LoopbackSession& session_;
  uint32_t id_;
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> hashes_;
};

protocol::ClientCommand command_for(const ClientEntity& entity, protocol::CommandOp op) {
  protocol::ClientCommand command;
  command.entity_id = entity.id;
  command.generation = entity.generation;
  command.op = op;
  return command;
}

// Connects a client behind the simulated link and gives it entity 1; returns once the client
// predicts it.
struct OwnedSession {
  explicit OwnedSession(uint64_t seed, SessionSetup setup = latency_setup()) : session(std::move(setup)) {
    if (!session.ok()) return;
    client = &session.add_client(latency_client(session, seed));
    session.run_until(1'000'000);
    if (!client->connected()) return;
    target = session.entities()[1];
    session.server().grant_ownership(client->client_id(), target);
    hashes = std::make_unique<ServerHashes>(session, target);
    run(2'000'000);
    entity = client->registry().find(target);
  }
  void run(int64_t until, const std::function<void()>& per_frame = {}) {
    session.run_until(until, [&] {
      hashes->record();
      if (per_frame) per_frame();
    });
  }
  const Predictor& predictor() const { return client->presenter().predictor(); }
  bool ready() const {
    return client != nullptr && client->connected() && client->owns(target) && entity != nullptr &&
           predictor().world(target) != nullptr;
  }

  LoopbackSession session;
  NetClient* client = nullptr;
  uint32_t target = 0;
  std::unique_ptr<ServerHashes> hashes;
  const ClientEntity* entity = nullptr;
};

// One clean run with the link's randomness drawn from `seed`.
void clean_run(uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  OwnedSession s(seed);
  ASSERT_TRUE(s.ready());
  const PresentedEntity* shown = s.client->find(s.target);
  ASSERT_NE(shown, nullptr);
  EXPECT_EQ(shown->mode, PresentMode::kPredicted);

  // Commands every 400 ms: crossfades, steering, a walk to a point, a speed change. After the
  // first frame that follows each, the prediction has applied it (its World's state shows it).
  struct Step {
    protocol::CommandOp op;
    int16_t clip = -1;
    float speed = 0, turn = 0, x = 0, z = 0;
    int32_t value = 0;
  };
  const Step steps[] = {
      {protocol::CommandOp::kCrossfade, 2},
      {protocol::CommandOp::kSetSpeed, -1, 0, 0, 0, 0, 3 << 15},
      {protocol::CommandOp::kMove, -1, 1.2f, 0.6f},
      {protocol::CommandOp::kMove, -1, 2.5f, -0.4f},
      {protocol::CommandOp::kCrossfade, 1},
      {protocol::CommandOp::kMoveTo, -1, 1.5f, 0, 4.0f, -3.0f},
      {protocol::CommandOp::kMove, -1, 0.0f, 0.0f},
  };
  int64_t at = s.session.now() + 100'000;
  int applied_next_frame = 0;
  int64_t worst_visible_us = 0;
  for (const Step& step : steps) {
    s.run(at);
    protocol::ClientCommand command = command_for(*s.entity, step.op);
    command.clip = step.clip;
    command.time_us = step.op == protocol::CommandOp::kCrossfade ? 250'000 : 0;
    command.speed = step.speed;
    command.turn_rate = step.turn;
    command.x = step.x;
    command.z = step.z;
    command.value = step.value;
    const std::vector<Transform> before(shown->locals.begin(), shown->locals.end());
    const protocol::RootValue root_before = shown->root;
    const int64_t issued = s.session.now();
    ASSERT_NE(s.client->send_command(command, issued), 0u);
    // The next frame: applied in the prediction.
    s.run(issued + kFrameUs);
    shown = s.client->find(s.target);
    ASSERT_NE(shown, nullptr);
    const sim::EntityState* predicted = s.predictor().world(s.target)->find_entity(s.target);
    ASSERT_NE(predicted, nullptr);
    bool applied = false;
    switch (step.op) {
      case protocol::CommandOp::kCrossfade:
        applied = predicted->layers[0].target.slots[0].clip == static_cast<uint16_t>(step.clip) &&
                  predicted->locomotion.mode == sim::LocomotionMode::kNone;
        break;
      case protocol::CommandOp::kMove:
        applied = predicted->locomotion.mode == sim::LocomotionMode::kMove && predicted->locomotion.speed == step.speed;
        break;
      case protocol::CommandOp::kMoveTo:
        applied = predicted->locomotion.mode == sim::LocomotionMode::kMoveTo && predicted->locomotion.target_x == step.x;
        break;
      default:
        applied = predicted->layers[0].target.speed == step.value;
        break;
    }
    if (applied) {
      ++applied_next_frame;
    } else {
      ADD_FAILURE() << "command " << protocol::to_string(step.op) << " not in the prediction the next frame";
    }
    // And the shown pose or root changes from the frames after (a crossfade starts at weight
    // 0 at its first tick; the frames until the shown pose differs are counted).
    int64_t visible_at = -1;
    s.run(issued + 150'000, [&] {
      const PresentedEntity* e = s.client->find(s.target);
      if (visible_at >= 0 || e == nullptr) return;
      const bool moved = e->root.x != root_before.x || e->root.z != root_before.z;
      bool posed = false;
      for (std::size_t i = 0; i < before.size() && i < e->locals.size(); ++i) {
        posed = posed || std::memcmp(&before[i], &e->locals[i], sizeof(Transform)) != 0;
      }
      if (moved || posed) visible_at = s.session.now();
    });
    worst_visible_us = std::max(worst_visible_us, visible_at < 0 ? 1'000'000 : visible_at - issued);
    at = issued + 400'000;
  }
  s.run(at + 1'500'000);
  const ClientStats stats = s.client->stats(s.session.now());
  int same = 0, different = 0;
  s.hashes->compare(s.predictor(), 0, s.hashes->newest(), same, different);
  std::printf("seed %llu: applied in the next frame: %d of %zu; shown changed within %.1f ms at worst; "
              "OwnerStates %llu (confirmed %llu, corrections %llu, dropped %llu); predicted frames %llu; "
              "server late commands %llu; ticks equal to the server's %d, different %d; rtt %.1f ms\n",
              static_cast<unsigned long long>(seed), applied_next_frame, std::size(steps),
              static_cast<double>(worst_visible_us) / 1000.0,
              static_cast<unsigned long long>(stats.owner_states),
              static_cast<unsigned long long>(stats.prediction_confirmed),
              static_cast<unsigned long long>(stats.prediction_corrections),
              static_cast<unsigned long long>(stats.owner_states_dropped),
              static_cast<unsigned long long>(stats.predicted_frames),
              static_cast<unsigned long long>(s.session.server().metrics().commands_late), same, different,
              stats.rtt_ms);
  EXPECT_EQ(applied_next_frame, static_cast<int>(std::size(steps)));
  // Within two ticks of the input the shown character differs (a fade's first tick is weight 0).
  EXPECT_LE(worst_visible_us, 2 * 16'667 + kFrameUs);
  EXPECT_EQ(stats.prediction_corrections, 0u);
  EXPECT_GT(stats.prediction_confirmed, 50u);
  EXPECT_EQ(s.session.server().metrics().commands_late, 0u);
  EXPECT_EQ(s.session.server().metrics().commands_applied, std::size(steps));
  EXPECT_GT(stats.predicted_frames, 1000u);
  // Every tick both ran: the same state bytes and the same palette, bit for bit.
  EXPECT_GT(same, 200);  // the ticks the predictor remembers (history_ticks)
  EXPECT_EQ(different, 0);
}

// Eight runs, each with its own draw of jitter and loss (5 % each way: about one command in
// ten loses its first copy, which the stamp's margin must cover).
TEST(Prediction, OwnerSeesEachCommandAtOnceAndACleanRunNeedsNoCorrection) {
  for (uint64_t seed = 51; seed < 59; ++seed) clean_run(seed);
}

// The demo's owned entity (server/scenarios/demo.json, entity 0) on a clean link: walking
// with turning (locomotion ramping idle/walk by speed, phase-synced) and an additive wave layer
// on the rest reference at weight 0, all set by the server before the client owns it. No input:
// no correction over seconds, through client frames that stall (the viewer's first frames take
// about 0.5 s, during which OwnerStates for ticks beyond its present pile up). Then a
// server-side change (the demo's set_layer_weight at tick 240) is a legitimate correction.
TEST(Prediction, TheDemosEntityNeedsNoCorrectionWithoutInputEvenThroughStalledFrames) {
  SessionSetup setup;
  setup.model_source = "gen-rig:24";  // the demo's rig
  setup.entities = 2;
  setup.frame_us = kFrameUs;
  setup.server.world_palettes = true;
  setup.server.world_hashes = true;
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  const uint32_t target = session.entities()[0];
  Result<Model> model = rig::load_model_source(setup.model_source);
  ASSERT_TRUE(model.ok());
  int wave = -1;
  for (std::size_t c = 0; c < model->rigs[0].clips.size(); ++c) {
    if (model->rigs[0].clips[c].name == "wave") wave = static_cast<int>(c);
  }
  ASSERT_GE(wave, 0);
  server::Server& server = session.server();
  server.submit(sim::Command{0, target, sim::MoveCommand{1.1f, 35.0f * 3.14159265f / 180.0f}});
  server.submit(sim::Command{0, target, sim::SetLayerModeCommand{1, sim::LayerMode::kAdditive, -1, 0}});
  sim::MotionSpec wave_motion;
  wave_motion.clips[0].clip = static_cast<uint16_t>(wave);
  server.submit(sim::Command{0, target, sim::PlayCommand{1, wave_motion}});
  server.submit(sim::Command{0, target, sim::SetLayerWeightCommand{1, 0.0f}});
  NetClient& client = session.add_client(session.client_options(71));  // plain loopback
  session.run_until(1'000'000);
  ASSERT_TRUE(client.connected());
  server.grant_ownership(client.client_id(), target);
  ServerHashes hashes(session, target);
  const auto run = [&](int64_t until) { session.run_until(until, [&] { hashes.record(); }); };
  run(2'000'000);
  const Predictor& predictor = client.presenter().predictor();
  ASSERT_NE(predictor.world(target), nullptr);
  const sim::EntityState* predicted = predictor.world(target)->find_entity(target);
  ASSERT_NE(predicted, nullptr);
  ASSERT_EQ(predicted->layers.size(), 2u);
  EXPECT_EQ(predicted->layers[1].mode, sim::LayerMode::kAdditive);
  EXPECT_EQ(predicted->locomotion.mode, sim::LocomotionMode::kMove);

  // Four seconds without input, with a 500 ms and a 200 ms client stall.
  const uint64_t confirmed_before = client.stats(session.now()).prediction_confirmed;
  run(2'500'000);
  session.stall_clients(3'000'000);
  run(4'000'000);
  session.stall_clients(4'200'000);
  run(6'000'000);
  ClientStats stats = client.stats(session.now());
  int same = 0, different = 0;
  hashes.compare(predictor, 0, hashes.newest(), same, different);
  std::printf("demo's entity, no input: OwnerStates %llu (confirmed %llu, corrections %llu, dropped %llu); "
              "ticks equal to the server's %d, different %d\n",
              static_cast<unsigned long long>(stats.owner_states),
              static_cast<unsigned long long>(stats.prediction_confirmed),
              static_cast<unsigned long long>(stats.prediction_corrections),
              static_cast<unsigned long long>(stats.owner_states_dropped), same, different);
  EXPECT_EQ(stats.prediction_corrections, 0u);
  EXPECT_GT(stats.prediction_confirmed, confirmed_before + 60);  // 4 s of OwnerStates at 20 Hz
  EXPECT_GT(same, 200);
  EXPECT_EQ(different, 0);

  // The server changes the wave layer's weight: one correction, then agreement again.
  const uint32_t change_tick = static_cast<uint32_t>(server.world().tick_index());
  server.submit(sim::Command{0, target, sim::SetLayerWeightCommand{1, 0.6f}});
  run(7'000'000);
  stats = client.stats(session.now());
  hashes.compare(predictor, change_tick + 30, hashes.newest(), same, different);
  EXPECT_EQ(stats.prediction_corrections, 1u);
  EXPECT_EQ(predictor.world(target)->find_entity(target)->layers[1].weight, 0.6f);
  EXPECT_GT(same, 20);
  EXPECT_EQ(different, 0);
}

// Largest per-frame change of the shown root (units) and of any palette translation (model
// units) over a window of frames.
struct Steps {
  float root = 0.0f;
  float palette = 0.0f;
};

TEST(Prediction, AServerSideChangeIsCorrectedWithinTheSmoothingTimeWithoutAPop) {
  OwnedSession s(53);
  ASSERT_TRUE(s.ready());
  protocol::ClientCommand walk = command_for(*s.entity, protocol::CommandOp::kMove);
  walk.speed = 1.2f;
  ASSERT_NE(s.client->send_command(walk, s.session.now()), 0u);
  s.run(s.session.now() + 800'000);
  ASSERT_EQ(s.client->stats(s.session.now()).prediction_corrections, 0u);

  // A command the shared translation refuses (clip out of range): not predicted, refused by the
  // server alike, so nothing to correct.
  protocol::ClientCommand bad = command_for(*s.entity, protocol::CommandOp::kCrossfade);
  bad.clip = 99;
  const uint64_t bad_before = s.session.server().metrics().drops[static_cast<std::size_t>(server::DropReason::kBadCommand)];
  ASSERT_NE(s.client->send_command(bad, s.session.now()), 0u);
  s.run(s.session.now() + 500'000);
  EXPECT_EQ(s.client->stats(s.session.now()).prediction_refused, 1u);
  EXPECT_EQ(s.session.server().metrics().drops[static_cast<std::size_t>(server::DropReason::kBadCommand)], bad_before + 1);
  EXPECT_EQ(s.client->stats(s.session.now()).prediction_corrections, 0u);

  // The server turns the entity and runs it faster: the client cannot have predicted that.
  Steps normal, correcting;
  protocol::RootValue last_root = s.client->find(s.target)->root;
  std::vector<glm::mat4> last_palette(s.client->find(s.target)->palette.begin(), s.client->find(s.target)->palette.end());
  const auto measure = [&](Steps& into) {
    const PresentedEntity* e = s.client->find(s.target);
    if (e == nullptr) return;
    into.root = std::max(into.root, std::hypot(e->root.x - last_root.x, e->root.z - last_root.z));
    for (std::size_t j = 0; j < e->palette.size() && j < last_palette.size(); ++j) {
      const glm::vec3 d = glm::vec3(e->palette[j][3]) - glm::vec3(last_palette[j][3]);
      into.palette = std::max(into.palette, std::sqrt(glm::dot(d, d)));
    }
    last_root = e->root;
    last_palette.assign(e->palette.begin(), e->palette.end());
  };
  s.run(s.session.now() + 300'000, [&] { measure(normal); });
  const uint32_t override_tick = static_cast<uint32_t>(s.session.server().world().tick_index());
  s.session.server().submit(sim::Command{0, s.target, sim::MoveCommand{3.0f, 1.5f}});
  const int64_t override_at = s.session.now();
  int64_t corrected_at = -1, converged_at = -1;
  s.run(override_at + 2'000'000, [&] {
    measure(s.client->stats(s.session.now()).prediction_corrections > 0 && converged_at < 0 ? correcting : normal);
    const ClientStats st = s.client->stats(s.session.now());
    if (corrected_at < 0 && st.prediction_corrections > 0) corrected_at = s.session.now();
    const PresentedEntity* e = s.client->find(s.target);
    if (corrected_at >= 0 && converged_at < 0 && e != nullptr && !e->correcting) converged_at = s.session.now();
  });
  const ClientStats stats = s.client->stats(s.session.now());
  int same = 0, different = 0;
  // After the reconciliation, every tick both ran agrees again.
  s.hashes->compare(s.predictor(), override_tick + 30, s.hashes->newest(), same, different);
  std::printf("override at tick %u: correction %.1f ms after it, shown converged %.1f ms after the correction; "
              "corrections %llu, blended away %.3f units; largest frame step root %.4f (normal %.4f), "
              "palette %.4f (normal %.4f); ticks equal after %d, different %d\n",
              override_tick, static_cast<double>(corrected_at - override_at) / 1000.0,
              static_cast<double>(converged_at - corrected_at) / 1000.0,
              static_cast<unsigned long long>(stats.prediction_corrections), stats.last_correction_m,
              static_cast<double>(correcting.root), static_cast<double>(normal.root),
              static_cast<double>(correcting.palette), static_cast<double>(normal.palette), same, different);
  ASSERT_GE(corrected_at, 0);
  ASSERT_GE(converged_at, 0);
  EXPECT_GE(stats.prediction_corrections, 1u);
  // Corrected once the server's state comes back (a round trip and a send interval, with
  // jitter), converged within the smoothing time (plus a frame).
  EXPECT_LE(corrected_at - override_at, 250'000);
  EXPECT_LE(converged_at - corrected_at, s.predictor().settings().smoothing_us + kFrameUs);
  // No pop: no frame's step while correcting exceeds the largest step of the frames without a
  // correction by more than the stated threshold, 2 cm (root, and any skinning matrix's
  // translation), where the correction unblended would have jumped by last_correction_m.
  EXPECT_LE(correcting.root, normal.root + 0.02f);
  EXPECT_LE(correcting.palette, normal.palette + 0.02f);
  // Without the blend it would have popped: the jump beyond the same threshold.
  EXPECT_GT(stats.last_correction_m, static_cast<double>(normal.root) + 0.02);
  EXPECT_GT(same, 30);
  EXPECT_EQ(different, 0);
}

// A server that takes commands at most 30 ms ahead refuses every stamped one (too early): the
// prediction applied a walk the server never did, and the server's state corrects it.
TEST(Prediction, ACommandTheServerRefusesIsCorrectedWithinTheSmoothingTimeWithoutAPop) {
  SessionSetup setup = latency_setup();
  setup.server.command_lead_us = 30'000;
  OwnedSession s(61, setup);
  ASSERT_TRUE(s.ready());
  protocol::ClientCommand walk = command_for(*s.entity, protocol::CommandOp::kMove);
  walk.speed = 2.5f;
  walk.turn_rate = 0.5f;
  const int64_t sent = s.session.now();
  ASSERT_NE(s.client->send_command(walk, sent), 0u);
  s.run(sent + kFrameUs);
  EXPECT_EQ(s.predictor().world(s.target)->find_entity(s.target)->locomotion.mode, sim::LocomotionMode::kMove);
  Steps correcting;
  protocol::RootValue last_root = s.client->find(s.target)->root;
  int64_t corrected_at = -1, converged_at = -1;
  s.run(sent + 1'000'000, [&] {
    const PresentedEntity* e = s.client->find(s.target);
    if (e == nullptr) return;
    const ClientStats st = s.client->stats(s.session.now());
    if (corrected_at < 0 && st.prediction_corrections > 0) corrected_at = s.session.now();
    if (corrected_at >= 0 && converged_at < 0) {
      correcting.root = std::max(correcting.root, std::hypot(e->root.x - last_root.x, e->root.z - last_root.z));
      if (!e->correcting) converged_at = s.session.now();
    }
    last_root = e->root;
  });
  const ClientStats stats = s.client->stats(s.session.now());
  std::printf("refused walk: corrected %.1f ms after sending, converged %.1f ms after the correction; blended away "
              "%.3f units, largest frame step while correcting %.4f\n",
              static_cast<double>(corrected_at - sent) / 1000.0, static_cast<double>(converged_at - corrected_at) / 1000.0,
              stats.last_correction_m, static_cast<double>(correcting.root));
  EXPECT_GE(s.session.server().metrics().drops[static_cast<std::size_t>(server::DropReason::kCommandTooEarly)], 1u);
  EXPECT_EQ(s.session.server().metrics().commands_applied, 0u);
  ASSERT_GE(corrected_at, 0);
  ASSERT_GE(converged_at, 0);
  EXPECT_LE(corrected_at - sent, 250'000);
  EXPECT_LE(converged_at - corrected_at, s.predictor().settings().smoothing_us + kFrameUs);
  // The walk had moved the prediction; the blend takes it back without a pop (2 cm over the
  // entity's own motion, which here is none: it stands where the server has it).
  EXPECT_GT(stats.last_correction_m, 0.05);
  EXPECT_LE(correcting.root, 0.02f + 2.5f * kFrameUs / 1e6f);
  EXPECT_EQ(s.predictor().world(s.target)->find_entity(s.target)->locomotion.mode, sim::LocomotionMode::kNone);
}

TEST(Prediction, BadOwnerStatesAndCommandsStampedFarAheadAreDroppedAndCounted) {
  OwnedSession s(57);
  ASSERT_TRUE(s.ready());
  Presenter& presenter = s.client->presenter();
  const uint64_t dropped = s.client->stats(s.session.now()).owner_states_dropped;
  const uint32_t tick = static_cast<uint32_t>(s.session.server().world().tick_index()) + 100;
  // Garbage state bytes, a truncated state, an entity not owned, the owned one no longer owned.
  const std::vector<uint8_t> garbage(64, 0xEE);
  std::vector<uint8_t> real = s.session.server().world().entity_snapshot(s.target);
  ASSERT_FALSE(real.empty());
  std::vector<uint8_t> truncated(real.begin(), real.end() - 3);
  EXPECT_FALSE(presenter.on_owner_state({tick, s.target, s.entity->generation, 0, garbage}, true, s.session.now()));
  EXPECT_FALSE(presenter.on_owner_state({tick + 1, s.target, s.entity->generation, 0, truncated}, true, s.session.now()));
  EXPECT_FALSE(presenter.on_owner_state({tick + 2, s.session.entities()[0], 0, 0, real}, false, s.session.now()));
  EXPECT_FALSE(presenter.on_owner_state({tick + 3, s.target, s.entity->generation, 0, real}, false, s.session.now()));
  // Another entity's state under the owned entity's id; an earlier generation arriving late.
  const std::vector<uint8_t> other = s.session.server().world().entity_snapshot(s.session.entities()[0]);
  EXPECT_FALSE(presenter.on_owner_state({tick + 4, s.target, s.entity->generation, 0, other}, true, s.session.now()));
  EXPECT_FALSE(presenter.on_owner_state({tick + 5, s.target, static_cast<uint16_t>(s.entity->generation - 1), 0, real},
                                        true, s.session.now()));
  EXPECT_EQ(s.client->stats(s.session.now()).owner_states_dropped, dropped + 6);
  EXPECT_EQ(s.client->stats(s.session.now()).prediction_corrections, 0u);

  // A command stamped a minute ahead: not predicted, refused by the server and counted.
  protocol::ClientCommand early = command_for(*s.entity, protocol::CommandOp::kMove);
  early.speed = 2.0f;
  early.apply_tick = tick + 3600;
  ASSERT_NE(s.client->send_command(early, s.session.now()), 0u);
  s.run(s.session.now() + 600'000);
  EXPECT_EQ(s.client->stats(s.session.now()).prediction_refused, 1u);
  EXPECT_GE(s.session.server().metrics().drops[static_cast<std::size_t>(server::DropReason::kCommandTooEarly)], 1u);
  EXPECT_EQ(s.session.server().metrics().commands_applied, 0u);
  EXPECT_EQ(s.session.server().world().find_entity(s.target)->locomotion.mode, sim::LocomotionMode::kNone);
  EXPECT_EQ(s.client->stats(s.session.now()).prediction_corrections, 0u);
}

}  // namespace
}  // namespace posecast::client::testing
