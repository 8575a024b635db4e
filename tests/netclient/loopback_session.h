#pragma once
// LoopbackSession: a real posecast server and NetClients on 127.0.0.1 ephemeral ports, driven
// in simulated time (the server ticks at its rate, clients update every frame_us), recording
// what the server quantised (and, optionally, every entity's exact pose per tick) so tests can
// compare what clients show against the truth.

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "posecast/client/net_client.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/error_metric.h"
#include "posecast/rig/model_source.h"
#include "posecast/server/server.h"
#include "posecast/sim/playback_time.h"

namespace posecast::client::testing {

struct SessionSetup {
  std::string model_source = "gen-rig:24";
  uint32_t entities = 6;
  bool capture_exact = false;  // keep every entity's exact local pose per tick
  int64_t frame_us = 4'000;    // client update period
  server::ServerOptions server;
};

class LoopbackSession {
 public:
  explicit LoopbackSession(SessionSetup setup) : setup_(std::move(setup)) {
    Result<Model> loaded = rig::load_model_source(setup_.model_source);
    if (!loaded) {
      ADD_FAILURE() << loaded.error().message;
      return;
    }
    model_ = std::make_shared<const Model>(std::move(loaded).value());
    library_ = std::make_shared<AssetLibrary>();
    EXPECT_TRUE(library_->add(model_).ok());
    server::ServerOptions options = setup_.server;
    options.listen = net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    options.cookie_key = std::array<uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    options.threads = 1;
    Result<std::unique_ptr<server::Server>> created = server::Server::create(io_, options, {model_});
    if (!created) {
      ADD_FAILURE() << created.error().message;
      return;
    }
    server_ = std::move(created).value();
    tick_us_ = 1'000'000 / options.tick_rate_hz;
    server_->on_pose_quantized([this](uint32_t tick, sim::EntityId id, uint16_t,
                                      const protocol::QuantizedPose& pose) {
      std::vector<glm::mat4>& palette = server_palettes_[key(tick, id)];
      palette.resize(skeleton().joint_count());
      EXPECT_TRUE(protocol::quantized_palette(skeleton(), format(), pose, scratch_, palette));
    });
    for (uint32_t i = 0; i < setup_.entities; ++i) {
      const sim::EntityId id = server_->spawn(0, 0, server::Vec3{static_cast<float>(i), 0, 0});
      sim::MotionSpec motion;
      motion.clips[0].clip = static_cast<uint16_t>(1 + i % 2);  // walk, run
      motion.start_offset_us = static_cast<int64_t>(i) * 97'000;
      server_->play(id, 0, motion);
      entities_.push_back(id);
    }
    ok_ = true;
  }

  bool ok() const { return ok_; }
  asio::io_context& io() { return io_; }
  server::Server& server() { return *server_; }
  const Skeleton& skeleton() const { return model_->rigs[0].skeleton; }
  const protocol::PoseFormat& format() const { return *server_->pose_format(0, 0); }
  std::shared_ptr<AssetLibrary> library() const { return library_; }
  const std::vector<sim::EntityId>& entities() const { return entities_; }
  int64_t now() const { return now_; }
  int64_t tick_time(uint32_t tick) const {
    return static_cast<int64_t>(tick) * 1'000'000 / setup_.server.tick_rate_hz;
  }

  NetClientOptions client_options(uint64_t nonce) const {
    NetClientOptions o;
    o.server = server_->local_endpoint();
    o.local = net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    o.assets = library_;
    o.load_missing_assets = false;
    o.nonce = nonce;
    // Simulated time over plain sockets: the kernel's real-time receive timestamps do not
    // belong on this clock (tests that add a simulator may turn it back on).
    o.channel_arrival_times = false;
    return o;
  }
  NetClient& add_client(NetClientOptions options) {
    clients_.push_back(std::make_unique<NetClient>(io_, std::move(options)));
    NetClient& c = *clients_.back();
    const Status s = c.connect(now_);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return c;
  }
  std::vector<std::unique_ptr<NetClient>>& clients() { return clients_; }

  // Advances simulated time to `end_us`: server ticks on its schedule, every client updates
  // every frame_us, then `per_frame` runs. Datagrams cross loopback within the sending call.
  void run_until(int64_t end_us, const std::function<void()>& per_frame = {}) {
    while (true) {
      const int64_t next_tick = tick_time(static_cast<uint32_t>(server_->world().tick_index()));
      const int64_t next_frame = next_frame_;
      const int64_t t = std::min(next_tick, next_frame);
      if (t > end_us) break;
      now_ = t;
      if (t == next_tick) {
        if (setup_.capture_exact) capture_exact();
        server_->tick(now_);
      }
      if (t == next_frame) {
        for (auto& c : clients_) c->update(now_);
        if (per_frame) per_frame();
        next_frame_ += setup_.frame_us;
      }
    }
  }

  // No client updates before `until_us` (a client frame that takes that long): the server
  // keeps ticking and sending, and the clients take what arrived at their next update.
  void stall_clients(int64_t until_us) { next_frame_ = std::max(next_frame_, until_us); }

  // The server's palette of the quantised pose of `id` at `tick`, or nullptr.
  const std::vector<glm::mat4>* server_palette(uint32_t tick, uint32_t id) const {
    auto it = server_palettes_.find(key(tick, id));
    return it == server_palettes_.end() ? nullptr : &it->second;
  }
  // The exact local pose of `id` at `tick` (capture_exact), or nullptr.
  const std::vector<Transform>* exact_pose(uint32_t tick, uint32_t id) const {
    auto it = exact_.find(key(tick, id));
    return it == exact_.end() ? nullptr : &it->second;
  }
  // The server's pose of `id` at any server time `time_us` (capture_exact): its state at the
  // tick starting at or before time_us (the World's own clip phases, speed and weights, not
  // anything sent), each phase advanced by the time since that tick with the animator's integer
  // law (advance_phase), a crossfade's elapsed time by the same time, evaluated with the
  // server's jobs. At a tick's start this is that tick's exact pose bit for bit (tests check it
  // against exact_pose()). A crossfade from a frozen pose evaluates the chain it froze
  // (sim::FrozenStage) at fixed phases under the new target. False when the pose is not
  // layer 0's alone (layers, masks), a frozen pose without a chain, or was not captured.
  bool server_pose_at(uint32_t id, int64_t time_us, std::span<Transform> out) {
    if (time_us < 0) return false;
    const uint32_t tick = static_cast<uint32_t>(time_us * setup_.server.tick_rate_hz / 1'000'000);
    auto it = motions_.find(key(tick, id));
    if (it == motions_.end() || !it->second.layer_only) return false;
    const sim::Layer& layer = it->second.layer;
    const Rig& rig = model_->rigs[0];
    const int64_t dt = time_us - tick_time(tick);
    protocol::PoseRecipe recipe;
    // A motion's contributing clips, each phase advanced by dt with the animator's law.
    const auto append = [&](const sim::Motion& m, int64_t advance_us) {
      const uint8_t first = recipe.count;
      for (uint8_t i = 0; i < m.count && i < sim::kMaxBlendClips; ++i) {
        const sim::ClipSlot& slot = m.slots[i];
        if (!(slot.weight > 0.0f)) continue;
        const int64_t duration = rig.clips[slot.clip].duration_us;
        const int64_t phase = sim::advance_phase(slot.phase, advance_us, m.speed, duration, m.wrap);
        recipe.inputs[recipe.count++] =
            protocol::PoseRecipe::Input{slot.clip, sim::sample_time_us(phase, duration, m.wrap), slot.weight};
      }
      return recipe.count > first;
    };
    const bool running = layer.fade_elapsed_us + dt < layer.fade_duration_us;
    if (layer.fade_source == sim::FadeSource::kMotion && running) {
      // A crossfade still running at time_us (its end within the tick shows the target alone).
      if (!append(layer.source, dt)) return false;
      recipe.source_count = recipe.count;
      recipe.fade_elapsed_us = layer.fade_elapsed_us + dt;
      recipe.fade_duration_us = layer.fade_duration_us;
    } else if (layer.fade_source == sim::FadeSource::kFrozenPose && running) {
      // The frozen pose from the chain it froze (sim::FrozenStage: each stage's phases at its
      // interrupt, not advanced; the rest pose for a base without a motion), then the new
      // target over it.
      const std::vector<sim::FrozenStage>& chain = layer.frozen_chain;
      if (chain.empty()) return false;
      if (chain[0].motion.count == 0) {
        recipe.inputs[recipe.count++] = protocol::kRestInput;
      } else if (!append(chain[0].motion, 0)) {
        return false;
      }
      if (chain.size() > 1) recipe.frozen_source_count = recipe.count;
      for (std::size_t k = 1; k < chain.size(); ++k) {
        if (!append(chain[k].motion, 0)) return false;
        recipe.frozen_mixes[recipe.frozen_mix_count++] = protocol::PoseRecipe::FrozenMix{
            chain[k].fade_elapsed_us, chain[k].fade_duration_us, recipe.count};
      }
      recipe.source_count = recipe.count;
      recipe.source_speed = 0;
      recipe.fade_elapsed_us = layer.fade_elapsed_us + dt;
      recipe.fade_duration_us = layer.fade_duration_us;
    }
    if (!append(layer.target, dt)) return false;
    if (!dictionary_) dictionary_ = std::make_unique<protocol::ClipDictionary>(rig.skeleton, rig.clips, format());
    return dictionary_->evaluate(recipe, out);
  }
  // True when the server's state of `id` at the tick starting at or before `time_us` (captured)
  // is a crossfade from a frozen pose still running at time_us.
  bool frozen_fade_at(uint32_t id, int64_t time_us) const {
    if (time_us < 0) return false;
    const uint32_t tick = static_cast<uint32_t>(time_us * setup_.server.tick_rate_hz / 1'000'000);
    auto it = motions_.find(key(tick, id));
    if (it == motions_.end()) return false;
    const sim::Layer& layer = it->second.layer;
    return layer.fade_source == sim::FadeSource::kFrozenPose &&
           layer.fade_elapsed_us + (time_us - tick_time(tick)) < layer.fade_duration_us;
  }
  // Marks the next tick as changed by a command (its pre-tick exact capture is wrong).
  void mark_command_tick() { dirty_.push_back(static_cast<uint32_t>(server_->world().tick_index())); }

 private:
  static uint64_t key(uint32_t tick, uint32_t id) { return (uint64_t{tick} << 32) | id; }

  struct CapturedMotion {
    bool layer_only = false;  // the pose is layer 0's (sim::shows_base_layer_only)
    sim::Layer layer;         // layer 0 at the tick's start
  };

  bool is_dirty(uint32_t tick) const {
    for (uint32_t d : dirty_) {
      if (d == tick) return true;
    }
    return false;
  }

  // Layer 0 one tick (dt_us) earlier: every phase moved back by dt x speed (exact integer
  // arithmetic, the inverse of advance_phase for loop and ping-pong cycles), a fade's elapsed
  // time by dt. False when that cannot be known from the later state: a clamped clip at an
  // end, a fade that might have ended during the tick (`earlier`, the state a tick before the
  // command tick, says whether one was running).
  bool rewind_layer(sim::Layer& layer, int64_t dt_us, const CapturedMotion* earlier) const {
    const Rig& rig = model_->rigs[0];
    const auto rewind = [&](sim::Motion& m) {
      for (uint8_t i = 0; i < m.count && i < sim::kMaxBlendClips; ++i) {
        sim::ClipSlot& slot = m.slots[i];
        const int64_t duration = rig.clips[slot.clip].duration_us;
        if (m.wrap == sim::WrapMode::kClamp &&
            (slot.phase <= 0 || slot.phase >= sim::cycle_length(duration, m.wrap))) {
          return false;
        }
        slot.phase = sim::wrap_phase(slot.phase - dt_us * m.speed, duration, m.wrap);
      }
      return true;
    };
    if (earlier != nullptr && earlier->layer.fade_source != sim::FadeSource::kNone &&
        layer.fade_source == sim::FadeSource::kNone) {
      return false;  // a fade running before may have ended at the command tick
    }
    if (!rewind(layer.target)) return false;
    if (layer.fade_source == sim::FadeSource::kMotion && !rewind(layer.source)) return false;
    if (layer.fade_source != sim::FadeSource::kNone) {
      layer.fade_elapsed_us -= dt_us;
      if (layer.fade_elapsed_us < 0) return false;
    }
    return true;
  }

  void capture_exact() {
    const uint32_t tick = static_cast<uint32_t>(server_->world().tick_index());
    if (is_dirty(tick)) return;
    // The tick before was changed by a command: its state (after the command) is this state
    // moved back by one tick, for server_pose_at (no exact pose for it).
    if (tick > 0 && is_dirty(tick - 1)) {
      const int64_t dt = tick_time(tick) - tick_time(tick - 1);
      for (sim::EntityId id : entities_) {
        const sim::EntityState* state = server_->world().find_entity(id);
        if (state == nullptr || state->layers.empty()) continue;
        CapturedMotion m{sim::shows_base_layer_only(*state), state->layers[0]};
        auto earlier = tick > 1 ? motions_.find(key(tick - 2, id)) : motions_.end();
        if (rewind_layer(m.layer, dt, earlier == motions_.end() ? nullptr : &earlier->second)) {
          motions_[key(tick - 1, id)] = std::move(m);
        }
      }
    }
    for (sim::EntityId id : entities_) {
      std::vector<Transform> locals(skeleton().node_count());
      if (server_->world().evaluate_local_pose(id, locals)) exact_[key(tick, id)] = std::move(locals);
      if (const sim::EntityState* state = server_->world().find_entity(id)) {
        motions_[key(tick, id)] = CapturedMotion{sim::shows_base_layer_only(*state), state->layers.empty() ? sim::Layer{} : state->layers[0]};
      }
    }
  }


  SessionSetup setup_;
  asio::io_context io_;
  std::shared_ptr<const Model> model_;
  std::shared_ptr<AssetLibrary> library_;
  std::unique_ptr<server::Server> server_;
  std::vector<sim::EntityId> entities_;
  std::vector<std::unique_ptr<NetClient>> clients_;
  std::map<uint64_t, std::vector<glm::mat4>> server_palettes_;
  std::map<uint64_t, std::vector<Transform>> exact_;
  std::map<uint64_t, CapturedMotion> motions_;
  std::unique_ptr<protocol::ClipDictionary> dictionary_;
  std::vector<uint32_t> dirty_;
  protocol::PaletteScratch scratch_;
  int64_t tick_us_ = 16'667;
  int64_t now_ = 0;
  int64_t next_frame_ = 0;
  bool ok_ = false;
};

// Conditions of the integration test, on both directions of a client's link.
inline net::SimulatorConfig lossy_link(uint64_t seed) {
  net::SimulatorConfig c;
  c.seed = seed;
  net::LinkConditions link;
  link.latency_us = 50'000;
  link.jitter_us = 20'000;
  link.loss_percent = 10.0;
  link.reorder_percent = 5.0;
  c.inbound = link;
  c.outbound = link;
  return c;
}

}  // namespace posecast::client::testing
