#include "network_pose_source.h"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "posecast/local_to_model.h"
#include "posecast/net/endpoint.h"

namespace posecast::viewer {

namespace {

// Largest ground extent of a model's meshes at bind (mesh-space positions), as grid spacing.
float model_spacing(const Model& model) {
  glm::vec3 lo(1e30f);
  glm::vec3 hi(-1e30f);
  for (const Rig& rig : model.rigs)
    for (const SkinnedMesh& mesh : rig.meshes)
      for (const glm::vec3& p : mesh.positions) {
        lo = glm::min(lo, p);
        hi = glm::max(hi, p);
      }
  if (lo.x > hi.x) return 1.0f;
  const glm::vec3 size = hi - lo;
  return std::max({size.x, size.z, size.y * 0.5f, 1e-3f}) * 1.5f;
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
    spacing_ = std::max(spacing_, model_spacing(*local->model));
  }
}

glm::mat4 NetworkPoseSource::placement(uint32_t entity_id) const {
  const float x = static_cast<float>(entity_id % kGridColumns) * spacing_;
  const float z = static_cast<float>(entity_id / kGridColumns) * spacing_;
  return glm::translate(glm::mat4(1.0f), glm::vec3(x, 0.0f, z));
}

Status NetworkPoseSource::build_entities() {
  entities_.clear();
  for (const client::PresentedEntity& presented : client_->entities()) {
    if (presented.skeleton == nullptr || presented.palette.empty()) continue;
    const auto found = std::find(manifest_ids_.begin(), manifest_ids_.end(), presented.model_id);
    if (found == manifest_ids_.end()) continue;  // a model the manifest did not list: not drawn
    const Skeleton& skeleton = *presented.skeleton;
    glm::mat4 mesh_world(1.0f);
    if (skeleton.mesh_node >= 0) {
      scratch_models_.resize(skeleton.node_count());
      const LocalToModelJob job{&skeleton, presented.locals, scratch_models_};
      if (!job.Run()) {
        return Error{"server " + address_ + ": entity " + std::to_string(presented.id) +
                     ": local-to-model failed (locals do not match the skeleton)"};
      }
      mesh_world = scratch_models_[static_cast<std::size_t>(skeleton.mesh_node)];
    }
    render::RenderEntity entity;
    entity.model = static_cast<uint32_t>(found - manifest_ids_.begin());
    entity.rig = presented.rig_index;
    entity.world = placement(presented.id) * mesh_world;
    entity.palette = presented.palette;
    entities_.push_back(entity);
  }
  return {};
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
    return build_entities();
  }
  // Real-time pacing (see the header): at least 1/60 s between frames.
  const int64_t wait = last_update_us_ + kMinFrameIntervalUs - clock_us();
  if (wait > 0) std::this_thread::sleep_for(std::chrono::microseconds(wait));
  last_update_us_ = clock_us();
  client_->update(last_update_us_);
  if (!client_->connected()) return fail("connection lost");
  bind_models();
  return build_entities();
}

std::string NetworkPoseSource::describe() const {
  const client::ClientStats stats = client_->stats(clock_us());
  char timing[96];
  std::snprintf(timing, sizeof timing, "rtt %.1f ms, delay %.1f ms", stats.rtt_ms, stats.delay_ms);
  return "server " + address_ + ", " + std::to_string(entities_.size()) + " entit" +
         (entities_.size() == 1 ? "y" : "ies") + ", " + timing;
}

}  // namespace posecast::viewer
