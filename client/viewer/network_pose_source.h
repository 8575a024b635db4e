#pragma once
// NetworkPoseSource: --connect HOST:PORT. Entities come from a live posecast-server through
// posecast::client::NetClient: decoded palettes, and between snapshots either the server's clip
// recipes evaluated at the render time (the default: the server's own pose, exact) or the
// decoded poses interpolated (evaluate_recipes = false: no clip is ever sampled).
//
// Time: the server streams in real time, so this source ignores the viewer's frame clock and
// drives the client with std::chrono::steady_clock. Headless network runs are therefore paced
// to real time: wait_for_next_frame() sleeps so consecutive updates are at least 1/60 s apart
// (N frames take at least N/60 s, and two runs never produce the same image).
//
// Placement: each entity stands where the server puts it (PresentedEntity::root: position on
// the ground and yaw about +Y, interpolated at the render time), on the renderer's ground grid.
//
// Control: act() turns keys into ClientCommands for the selected entity this client owns (the
// server's SessionStatus lists them; posecast-server --grant N hands them out): crossfades and
// speeds, and steering (W/S: stand, walk, run; A/D: turn in steps, Move commands), and into
// ReplayControls when the server serves a recording. follow_target() is the owned entity
// while following is on (the default; C toggles it).
//
// Hit queries: fire() sends a HitQuery at the render time of the frame on screen, along the
// camera's line of sight (from the owned entity while the camera follows it), and answers the
// same ray on that frame itself (client::PresentedHitQuery); each answer is printed (a notice),
// counted in the overlay with whether it matched, and a hit's joint is drawn highlighted for
// kHitMarkLifetimeUs (append_marks).

#include <asio/io_context.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <deque>
#include <optional>

#include "hit_marks.h"
#include "pose_source.h"
#include "posecast/client/net_client.h"
#include "posecast/client/presented_hits.h"

namespace posecast::viewer {

struct NetworkSourceOptions {
  std::string server;                   // "HOST:PORT" (net::parse_endpoint)
  std::vector<std::string> models_dirs; // where manifest models not generated are looked for
  int64_t first_frame_timeout_us = 5'000'000;  // connect + first entity, else update() fails
  bool evaluate_recipes = true;  // PresentSettings::evaluate_recipes of the client
};

class NetworkPoseSource final : public PoseSource {
 public:
  static constexpr int64_t kMinFrameIntervalUs = 16'667;  // 1/60 s

  // Parses the address and builds the client; does not touch the network (the first update()
  // connects). Errors: a malformed address (the message names it).
  static Result<std::unique_ptr<NetworkPoseSource>> create(NetworkSourceOptions options);
  ~NetworkPoseSource() override;

  // Model ids are the Welcome manifest's entries in manifest order, appended once connected.
  std::size_t model_count() const override { return models_.size(); }
  const Model& model(std::size_t id) const override { return *models_[id]; }

  // now_us is ignored (see the header comment). The first call connects and blocks (polling
  // every millisecond, at most first_frame_timeout_us) until at least one entity is presented;
  // failing that, or a later disconnect, is an Error naming the address and the client's reason.
  Status update(int64_t now_us) override;
  // Sleeps until 1/60 s after the last update (not before the first).
  void wait_for_next_frame() override;
  std::span<const render::RenderEntity> entities() const override { return entities_; }
  std::string describe() const override;
  std::string act(ViewerAction action) override;
  const NetworkPanel* network_panel() const override { return &panel_; }
  std::span<const ViewerEvent> recent_events() const override { return events_; }
  int64_t event_clock_us() const override { return last_update_us_; }
  std::optional<glm::vec3> follow_target() const override;
  std::string fire(const glm::vec3& eye, const glm::vec3& forward) override;
  std::vector<std::string> take_notices() override;
  void append_marks(const float background[3], std::vector<float>& out) override;

  // A shot's ray: the units a fired ray reaches (the server's default longest ray).
  static constexpr float kFireRange = 1000.0f;

  const client::NetClient& client() const { return *client_; }

 private:
  NetworkPoseSource() = default;
  int64_t clock_us() const;
  Status fail(const std::string& what) const;
  void bind_models();
  void build_entities();
  static glm::mat4 placement(const client::PresentedEntity& entity);
  void update_panel(double decode_ms);
  // The owned entity keys act on (the selected one, kept valid as the owned list changes);
  // null when this client owns nothing presented.
  const client::PresentedEntity* controlled();
  std::string command_entity(ViewerAction action, const client::PresentedEntity& entity);
  std::string steer_entity(ViewerAction action, const client::PresentedEntity& entity);
  std::string control_replay(ViewerAction action);

  std::string address_;
  int64_t first_frame_timeout_us_ = 0;
  asio::io_context io_;
  std::unique_ptr<client::NetClient> client_;
  std::shared_ptr<client::AssetLibrary> assets_;
  std::chrono::steady_clock::time_point start_{};
  bool started_ = false;
  int64_t last_update_us_ = 0;

  std::vector<std::shared_ptr<const Model>> models_;  // manifest order
  std::vector<uint32_t> manifest_ids_;                // server model id of models_[i]
  bool follow_ = true;
  std::optional<glm::vec3> follow_target_;  // the owned entity's root at the last update

  std::vector<render::RenderEntity> entities_;
  std::vector<ViewerEvent> events_;  // recent_events(), oldest first
  // Takes the events the client fired at its last update into events_.
  void collect_events();
  // The skeleton's rest-pose height (its joints' vertical extent), computed once per skeleton.
  float rest_height(const Skeleton& skeleton);
  std::map<const Skeleton*, float> rest_heights_;

  // Hit queries: the capsules per rig (built on first use; nullopt when the rig has none), the
  // shots awaiting an answer with this viewer's own answer on the frame fired at, the joints
  // to highlight, and the answers' lines not yet printed.
  const HitRig* hit_rig(const client::PresentedEntity& entity);
  void collect_hit_results();
  std::string describe_answer(const protocol::HitResult& result) const;
  struct Shot {
    uint32_t sequence = 0;
    client::PresentedHit seen;
  };
  static constexpr std::size_t kMaxShotsInFlight = 64;
  std::map<const Rig*, std::optional<HitRig>> hit_rigs_;
  client::PresentedHitQuery presented_hits_;
  std::deque<Shot> shots_;
  std::vector<HitMark> marks_;
  std::vector<std::string> notices_;

  NetworkPanel panel_;
  // Entities presented, and of them shown from a render-time recipe, summed over the frames
  // after the first (describe() reports them; with evaluate_recipes off the second stays 0).
  uint64_t entity_frames_ = 0;
  uint64_t recipe_frames_ = 0;
  uint32_t selected_owned_ = 0;             // index into the owned list
  std::map<uint32_t, int32_t> speed_q16_;   // speed last sent per owned entity (16.16)
  std::map<uint32_t, std::string> clip_;    // clip last sent per owned entity
  // Steering per owned entity: gait 0 stand, 1 walk, 2 run; turn in steps of kTurnStep.
  struct Steering {
    int gait = 0;
    int turn = 0;
  };
  std::map<uint32_t, Steering> steering_;
};

}  // namespace posecast::viewer
