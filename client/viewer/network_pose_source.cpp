#include "network_pose_source.h"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <thread>

#include "posecast/net/endpoint.h"
#include "prediction_panel.h"

namespace posecast::viewer {

namespace {

// How far Left/Right seek a replay, and how long the 1-4 crossfades take.
constexpr int64_t kReplaySeekUs = 5'000'000;
constexpr int64_t kFadeUs = 250'000;

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Turn rate per A/D step (radians per second) and the steps each way.
constexpr float kTurnStep = 0.6f;
constexpr int kMaxTurnSteps = 3;

// The walk and run speeds of a rig: its locomotion clips' ground speeds (docs/movement.md),
// or 1 and 2.5 units/s when it names none.
float gait_speed(const Rig& rig, int gait) {
  if (gait <= 0) return 0.0f;
  const int role = gait == 1 ? 1 : 2;  // LocomotionRole: idle 0, walk 1, run 2
  const int clip = rig.motion_config.locomotion_clips[static_cast<std::size_t>(role)];
  if (clip >= 0 && static_cast<std::size_t>(clip) < rig.root_motion.size()) {
    const float speed = rig.root_motion[static_cast<std::size_t>(clip)].ground_speed;
    if (speed > 0.0f) return speed;
  }
  return gait == 1 ? 1.0f : 2.5f;
}

}  // namespace

Result<std::unique_ptr<NetworkPoseSource>> NetworkPoseSource::create(NetworkSourceOptions options) {
  Result<net::Endpoint> endpoint = net::parse_endpoint(options.server);
  if (!endpoint) return Error{"--connect '" + options.server + "': " + endpoint.error().message};
  std::unique_ptr<NetworkPoseSource> source(new NetworkPoseSource());
  source->address_ = options.server;
  source->first_frame_timeout_us_ = options.first_frame_timeout_us;
  source->assets_ = std::make_shared<client::AssetLibrary>();
  client::NetClientOptions client_options;
  client_options.server = endpoint.value();
  client_options.name = "posecast-viewer";
  client_options.assets = source->assets_;
  client_options.asset_dirs = std::move(options.models_dirs);
  client_options.load_missing_assets = true;
  client_options.present.evaluate_recipes = options.evaluate_recipes;
  source->client_ = std::make_unique<client::NetClient>(source->io_, std::move(client_options));
  return source;
}

NetworkPoseSource::~NetworkPoseSource() {
  if (client_ && client_->connected()) client_->disconnect(clock_us());
}

int64_t NetworkPoseSource::clock_us() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               start_)
      .count();
}

Status NetworkPoseSource::fail(const std::string& what) const {
  const std::string reason = client_->error().empty()
                                 ? std::string("state ") + client::to_string(client_->state())
                                 : client_->error();
  return Error{"server " + address_ + ": " + what + ": " + reason};
}

void NetworkPoseSource::bind_models() {
  const std::vector<protocol::AssetInfo>& assets = client_->welcome().assets;
  for (std::size_t i = models_.size(); i < assets.size(); ++i) {
    const client::ClientModel* local = assets_->find(assets[i].content_hash);
    if (local == nullptr) break;  // cannot happen once connected (the binding succeeded)
    models_.push_back(local->model);
    manifest_ids_.push_back(assets[i].model_id);
  }
}

glm::mat4 NetworkPoseSource::placement(const client::PresentedEntity& entity) {
  const protocol::RootValue& root = entity.root;
  const glm::mat4 at = glm::translate(glm::mat4(1.0f), glm::vec3(root.x, root.y, root.z));
  return glm::rotate(at, root.yaw, glm::vec3(0.0f, 1.0f, 0.0f));
}

std::optional<glm::vec3> NetworkPoseSource::follow_target() const { return follow_ ? follow_target_ : std::nullopt; }

void NetworkPoseSource::build_entities() {
  entities_.clear();
  follow_target_.reset();
  if (const client::PresentedEntity* owned = controlled()) {
    follow_target_ = glm::vec3(owned->root.x, owned->root.y, owned->root.z);
  }
  for (const client::PresentedEntity& presented : client_->entities()) {
    if (presented.skeleton == nullptr || presented.palette.empty()) continue;
    const auto found = std::find(manifest_ids_.begin(), manifest_ids_.end(), presented.model_id);
    if (found == manifest_ids_.end()) continue;  // a model the manifest did not list: not drawn
    render::RenderEntity entity;
    entity.model = static_cast<uint32_t>(found - manifest_ids_.begin());
    entity.rig = presented.rig_index;
    // The mesh node's transform, from the evaluation that made the palette.
    entity.world = placement(presented) * *presented.mesh_model;
    entity.palette = presented.palette;
    entities_.push_back(entity);
  }
}

Status NetworkPoseSource::update(int64_t /*now_us*/) {
  if (!started_) {
    started_ = true;
    start_ = std::chrono::steady_clock::now();
    if (Status status = client_->connect(clock_us()); !status) return fail("cannot connect");
    // Block until connected and something is shown: the first image should not be empty.
    const int64_t deadline = clock_us() + first_frame_timeout_us_;
    while (true) {
      client_->update(clock_us());
      collect_events();
      if (client_->connected()) bind_models();
      if (client_->connected() && !client_->entities().empty()) break;
      const client::ConnectionState state = client_->state();
      if (state == client::ConnectionState::kFailed ||
          state == client::ConnectionState::kDisconnected) {
        return fail("connection failed");
      }
      if (clock_us() >= deadline) {
        return fail(client_->connected() ? "no entity presented within " +
                                               std::to_string(first_frame_timeout_us_ / 1000) + " ms"
                                         : "not connected within " +
                                               std::to_string(first_frame_timeout_us_ / 1000) + " ms");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    last_update_us_ = clock_us();
    build_entities();
    return {};
  }
  last_update_us_ = clock_us();
  const auto decode_start = std::chrono::steady_clock::now();
  client_->update(last_update_us_);
  collect_events();
  collect_hit_results();
  const double decode_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - decode_start).count();
  if (!client_->connected()) return fail("connection lost");
  bind_models();
  update_panel(decode_ms);
  build_entities();
  return {};
}

float NetworkPoseSource::rest_height(const Skeleton& skeleton) {
  auto it = rest_heights_.find(&skeleton);
  if (it != rest_heights_.end()) return it->second;
  float low = 0.0f, high = 0.0f;
  bool any = false;
  for (const glm::mat4& m : rest_model_matrices(skeleton)) {
    low = any ? std::min(low, m[3].y) : m[3].y;
    high = any ? std::max(high, m[3].y) : m[3].y;
    any = true;
  }
  return rest_heights_[&skeleton] = high - low;
}

void NetworkPoseSource::collect_events() {
  const int64_t now = clock_us();
  for (const client::FiredEvent& fired : client_->fired_events()) {
    ViewerEvent e;
    e.fired_us = now;
    e.tick = fired.event.tick;
    e.entity = fired.event.entity_id;
    e.clip = fired.clip != nullptr ? fired.clip->name : "#" + std::to_string(fired.event.clip);
    e.marker = fired.marker != nullptr ? fired.marker->name : "#" + std::to_string(fired.event.marker);
    e.x = fired.event.x;
    e.z = fired.event.z;
    if (const client::PresentedEntity* shown = client_->find(e.entity); shown != nullptr && shown->skeleton != nullptr) {
      e.size = 0.12f * rest_height(*shown->skeleton);
    }
    events_.push_back(std::move(e));
  }
  if (events_.size() > kMaxRecentEvents) {
    events_.erase(events_.begin(), events_.end() - static_cast<std::ptrdiff_t>(kMaxRecentEvents));
  }
}

void NetworkPoseSource::wait_for_next_frame() {
  if (!started_) return;
  // Real-time pacing (see the header): at least 1/60 s between updates.
  const int64_t wait = last_update_us_ + kMinFrameIntervalUs - clock_us();
  if (wait > 0) std::this_thread::sleep_for(std::chrono::microseconds(wait));
}

void NetworkPoseSource::update_panel(double decode_ms) {
  const client::ClientStats stats = client_->stats(clock_us());
  panel_.kbit_in.push(static_cast<float>(stats.bytes_in_per_s * 8.0 / 1000.0));
  panel_.rtt_ms.push(static_cast<float>(std::max(0.0, stats.rtt_ms)));
  panel_.loss_percent.push(static_cast<float>(stats.loss_percent));
  panel_.jitter_ms.push(static_cast<float>(stats.jitter_ms));
  panel_.delay_ms.push(static_cast<float>(stats.delay_ms));
  panel_.buffer_depth.push(static_cast<float>(stats.buffer_depth));
  panel_.decode_ms.push(static_cast<float>(decode_ms));
  entity_frames_ += client_->entities().size();
  recipe_frames_ += stats.from_recipes;
  panel_.hits.fired = stats.hit_queries_fired;
  panel_.hits.hits = stats.hit_answers_hit;
  panel_.hits.misses = stats.hit_answers_miss;
  panel_.hits.refused = stats.hit_answers_refused;
  panel_.prediction = prediction_panel(stats);
  const std::vector<uint32_t>& owned = client_->session_status().owned;
  if (owned.empty()) {
    panel_.control = "owns no entity (start the server with --grant N to drive one)";
  } else {
    const uint32_t id = owned[selected_owned_ % owned.size()];
    const auto speed = speed_q16_.find(id);
    const auto clip = clip_.find(id);
    char line[160];
    std::snprintf(line, sizeof line, "drives entity %u of %zu owned (%s, %.2fx): WASD/arrows steer, C follow, 1-4 idle/walk/run/wave, -/= speed, Tab next",
                  id, owned.size(), clip == clip_.end() ? "as the server set it" : clip->second.c_str(),
                  speed == speed_q16_.end() ? 1.0 : speed->second / 65536.0);
    panel_.control = line;
  }
  const protocol::SessionStatus& status = client_->session_status();
  if (status.is_replay()) {
    char speed[32] = "paused";
    if (status.replay_speed_q16 != 0) {
      std::snprintf(speed, sizeof speed, "%.2fx", status.replay_speed_q16 / 65536.0);
    }
    char line[160];
    std::snprintf(line, sizeof line, "replay tick %u of %u..%u, %s: P pause, . step, Left/Right seek 5 s, [ ] speed",
                  status.replay_tick, status.replay_first_tick, status.replay_last_tick, speed);
    panel_.replay = line;
  } else {
    panel_.replay.clear();
  }
}

const client::PresentedEntity* NetworkPoseSource::controlled() {
  const std::vector<uint32_t>& owned = client_->session_status().owned;
  for (std::size_t tried = 0; tried < owned.size(); ++tried) {
    const uint32_t id = owned[(selected_owned_ + tried) % owned.size()];
    if (const client::PresentedEntity* entity = client_->find(id); entity && entity->model) {
      selected_owned_ = static_cast<uint32_t>((selected_owned_ + tried) % owned.size());
      return entity;
    }
  }
  return nullptr;
}

std::string NetworkPoseSource::act(ViewerAction action) {
  std::string result;
  switch (action) {
    case ViewerAction::kReplayToggle:
    case ViewerAction::kReplayStep:
    case ViewerAction::kReplayBack:
    case ViewerAction::kReplayForward:
    case ViewerAction::kReplaySlower:
    case ViewerAction::kReplayFaster:
      result = control_replay(action);
      break;
    case ViewerAction::kFire:
      result = "fire: needs the camera's view (the viewer calls PoseSource::fire)";
      break;
    case ViewerAction::kFollowToggle:
      follow_ = !follow_;
      result = follow_ ? "camera follows the owned entity" : "camera free";
      break;
    case ViewerAction::kSteerLeft:
    case ViewerAction::kSteerRight:
      if (client_->session_status().is_replay()) {  // the arrow keys seek in a replay
        result = control_replay(action == ViewerAction::kSteerLeft ? ViewerAction::kReplayBack
                                                                  : ViewerAction::kReplayForward);
        break;
      }
      [[fallthrough]];
    case ViewerAction::kSteerFaster:
    case ViewerAction::kSteerSlower: {
      const client::PresentedEntity* entity = controlled();
      result = entity ? steer_entity(action, *entity)
                      : std::string(to_string(action)) + ": this client owns no entity (server --grant N)";
      break;
    }
    case ViewerAction::kNextOwned: {
      const std::size_t owned = client_->session_status().owned.size();
      if (owned == 0) {
        result = "next-owned: this client owns no entity";
      } else {
        selected_owned_ = static_cast<uint32_t>((selected_owned_ + 1) % owned);
        const client::PresentedEntity* entity = controlled();
        result = entity ? "now driving entity " + std::to_string(entity->id) : "no owned entity is shown yet";
      }
      break;
    }
    default: {
      const client::PresentedEntity* entity = controlled();
      result = entity ? command_entity(action, *entity)
                      : std::string(to_string(action)) + ": this client owns no entity (server --grant N)";
      break;
    }
  }
  panel_.last_action = result;
  return result;
}

std::string NetworkPoseSource::command_entity(ViewerAction action, const client::PresentedEntity& entity) {
  protocol::ClientCommand command;
  command.entity_id = entity.id;
  command.generation = entity.generation;
  command.layer = 0;
  const std::string name(to_string(action));
  if (action == ViewerAction::kFaster || action == ViewerAction::kSlower) {
    int32_t& speed = speed_q16_.try_emplace(entity.id, 65536).first->second;
    // x1.25 or /1.25 in 16.16, kept within the server's 1/64..64 range.
    const int64_t next = action == ViewerAction::kFaster ? int64_t{speed} * 5 / 4 : int64_t{speed} * 4 / 5;
    speed = static_cast<int32_t>(std::clamp<int64_t>(next, 65536 / 64, 64 * 65536));
    command.op = protocol::CommandOp::kSetSpeed;
    command.value = speed;
  } else {
    const std::vector<Clip>& clips = entity.model->rigs[entity.rig_index].clips;
    const auto found = std::find_if(clips.begin(), clips.end(), [&](const Clip& c) { return same_name(c.name, name); });
    if (found == clips.end()) return name + ": entity " + std::to_string(entity.id) + "'s rig has no clip of that name";
    command.op = protocol::CommandOp::kCrossfade;
    command.clip = static_cast<int16_t>(found - clips.begin());
    command.time_us = kFadeUs;
    clip_[entity.id] = name;
    speed_q16_[entity.id] = 65536;  // a crossfade starts the new clip at 1x
  }
  const uint32_t sequence = client_->send_command(command, clock_us());
  if (sequence == 0) return name + ": not sent (not connected, or too many commands in flight)";
  return name + " -> entity " + std::to_string(entity.id) + " (command " + std::to_string(sequence) + ")";
}

std::string NetworkPoseSource::steer_entity(ViewerAction action, const client::PresentedEntity& entity) {
  Steering& steering = steering_[entity.id];
  switch (action) {
    case ViewerAction::kSteerFaster: steering.gait = std::min(steering.gait + 1, 2); break;
    case ViewerAction::kSteerSlower: steering.gait = std::max(steering.gait - 1, 0); break;
    // Positive yaw turns +Z towards +X: to the character's left.
    case ViewerAction::kSteerLeft: steering.turn = std::min(steering.turn + 1, kMaxTurnSteps); break;
    default: steering.turn = std::max(steering.turn - 1, -kMaxTurnSteps); break;
  }
  protocol::ClientCommand command;
  command.entity_id = entity.id;
  command.generation = entity.generation;
  command.op = protocol::CommandOp::kMove;
  command.speed = gait_speed(entity.model->rigs[entity.rig_index], steering.gait);
  command.turn_rate = kTurnStep * static_cast<float>(steering.turn);
  const uint32_t sequence = client_->send_command(command, clock_us());
  const std::string name(to_string(action));
  if (sequence == 0) return name + ": not sent (not connected, or too many commands in flight)";
  char line[160];
  std::snprintf(line, sizeof line, "%s -> entity %u: move at %.2f units/s turning %.2f rad/s (command %u)", name.c_str(),
                entity.id, static_cast<double>(command.speed), static_cast<double>(command.turn_rate), sequence);
  return line;
}

std::string NetworkPoseSource::control_replay(ViewerAction action) {
  const protocol::SessionStatus& status = client_->session_status();
  const std::string name(to_string(action));
  if (!status.is_replay()) return name + ": the server is live, not serving a recording";
  protocol::ReplayControl control;
  const int64_t tick_rate = std::max<int64_t>(1, client_->welcome().tick_rate_hz);
  const int64_t seek_ticks = kReplaySeekUs * tick_rate / 1'000'000;
  switch (action) {
    case ViewerAction::kReplayToggle:
      control.action = status.replay_speed_q16 == 0 ? protocol::ReplayAction::kResume : protocol::ReplayAction::kPause;
      break;
    case ViewerAction::kReplayStep:
      control.action = protocol::ReplayAction::kStep;
      control.ticks = 1;
      break;
    case ViewerAction::kReplayBack:
    case ViewerAction::kReplayForward: {
      const int64_t delta = action == ViewerAction::kReplayBack ? -seek_ticks : seek_ticks;
      control.action = protocol::ReplayAction::kSeek;
      control.tick = static_cast<uint32_t>(std::clamp<int64_t>(int64_t{status.replay_tick} + delta,
                                                               status.replay_first_tick, status.replay_last_tick));
      break;
    }
    case ViewerAction::kReplaySlower:
    case ViewerAction::kReplayFaster: {
      const int64_t current = status.replay_speed_q16 > 0 ? status.replay_speed_q16 : 65536;
      const int64_t next = action == ViewerAction::kReplayFaster ? current * 2 : current / 2;
      control.action = protocol::ReplayAction::kSetSpeed;
      control.speed_q16 = static_cast<int32_t>(std::clamp<int64_t>(next, 65536 / 4, protocol::kMaxReplaySpeedQ16));
      break;
    }
    default:
      return name + ": not a replay control";
  }
  const uint32_t sequence = client_->send_replay_control(control, clock_us());
  if (sequence == 0) return name + ": not sent (not connected)";
  return name + " sent (" + protocol::to_string(control.action) + ")";
}

std::string NetworkPoseSource::describe() const {
  const client::ClientStats stats = client_->stats(clock_us());
  char timing[96];
  std::snprintf(timing, sizeof timing, "rtt %.1f ms, delay %.1f ms", stats.rtt_ms, stats.delay_ms);
  std::string text = "server " + address_ + ", " + std::to_string(entities_.size()) + " entit" +
                     (entities_.size() == 1 ? "y" : "ies") + ", " + timing + ", " +
                     std::to_string(recipe_frames_) + " of " + std::to_string(entity_frames_) +
                     " entity-frames from clip recipes";
  if (stats.hit_queries_fired > 0) {
    const HitPanel& h = panel_.hits;
    char hits[200];
    std::snprintf(hits, sizeof hits,
                  "; hit queries: %llu fired, %llu hits, %llu misses, %llu refused, %llu of %llu answers as this "
                  "viewer's frame showed",
                  static_cast<unsigned long long>(stats.hit_queries_fired),
                  static_cast<unsigned long long>(stats.hit_answers_hit),
                  static_cast<unsigned long long>(stats.hit_answers_miss),
                  static_cast<unsigned long long>(stats.hit_answers_refused),
                  static_cast<unsigned long long>(h.agreed), static_cast<unsigned long long>(h.agreed + h.disagreed));
    text += hits;
  }
  return text;
}

}  // namespace posecast::viewer
