// NetworkPoseSource's hit queries (docs/viewer.md, "Hit queries"): firing along the view,
// each answer compared with the viewer's own query on the frame it fired at, and the marks
// drawn on the joints hit.

#include <glm/geometric.hpp>

#include <algorithm>
#include <cstdio>

#include "network_pose_source.h"

namespace posecast::viewer {

const HitRig* NetworkPoseSource::hit_rig(const client::PresentedEntity& entity) {
  if (entity.model == nullptr || entity.rig_index >= entity.model->rigs.size()) return nullptr;
  const Rig* rig = &entity.model->rigs[entity.rig_index];
  auto it = hit_rigs_.find(rig);
  if (it == hit_rigs_.end()) {
    // The server's capsules: the same model (its content hash was checked) and options.
    Result<HitRig> built = build_hit_rig(*rig);
    it = hit_rigs_.emplace(rig, built.ok() ? std::optional<HitRig>(std::move(built).value()) : std::nullopt).first;
  }
  return it->second ? &*it->second : nullptr;
}

std::string NetworkPoseSource::fire(const glm::vec3& eye, const glm::vec3& forward) {
  if (!client_->connected() || client_->entities().empty()) return "fire: nothing shown yet";
  HitRay sent{eye, forward, kFireRange};
  std::string from = "the camera";
  // Following the owned entity, the screen centre is its feet: shoot level along the view
  // from its chest instead, starting outside its own capsules (its broad-phase sphere).
  const client::PresentedEntity* owned = follow_ ? controlled() : nullptr;
  const glm::vec3 level(forward.x, 0.0f, forward.z);
  if (owned != nullptr && owned->skeleton != nullptr && glm::length(level) > 1e-3f) {
    const glm::vec3 along = glm::normalize(level);
    const HitRig* rig = hit_rig(*owned);
    const float height = rest_height(*owned->skeleton);
    const float clear = rig != nullptr ? rig->bound_radius : height;
    sent.origin = glm::vec3(owned->root.x, owned->root.y + 0.7f * height, owned->root.z) + clear * along;
    sent.direction = along;
    from = "entity " + std::to_string(owned->id);
  }
  // The server normalises the ray it is sent; the same check on the same floats here.
  HitRay ray = sent;
  if (check_ray(ray, kFireRange) != RayCheck::kOk) return "fire: the view has no direction";
  const int64_t view_us = client_->render_time_us();
  const client::PresentedHit seen =
      presented_hits_.run(client_->entities(), ray, [this](const client::PresentedEntity& e) { return hit_rig(e); });
  const uint32_t sequence = client_->fire_hit_query(sent, view_us, clock_us());
  if (sequence == 0) return "fire: not sent (not connected)";
  shots_.push_back(Shot{sequence, seen});
  if (shots_.size() > kMaxShotsInFlight) shots_.pop_front();  // its answer will not be compared
  char line[200];
  std::snprintf(line, sizeof line, "fire: shot %u from %s at server time %.3f s (this frame shows %s)", sequence,
                from.c_str(), static_cast<double>(view_us) / 1e6,
                seen.hit ? ("entity " + std::to_string(seen.entity) + " joint " + std::to_string(seen.joint) + " hit")
                               .c_str()
                         : "a miss");
  return line;
}

std::string NetworkPoseSource::describe_answer(const protocol::HitResult& result) const {
  if (result.outcome == protocol::HitOutcome::kRefused) {
    return std::string("refused (") + protocol::hit_refusal_name(result.refusal) + ")";
  }
  if (result.outcome != protocol::HitOutcome::kHit) return "miss";
  std::string joint = std::to_string(result.joint);
  if (const client::PresentedEntity* e = client_->find(result.entity_id); e != nullptr && e->skeleton != nullptr &&
                                                                          result.joint < e->skeleton->joint_count()) {
    const uint16_t node = e->skeleton->joint_nodes[result.joint];
    if (node < e->skeleton->names.size() && !e->skeleton->names[node].empty()) {
      joint += " (" + e->skeleton->names[node] + ")";
    }
  }
  char line[160];
  std::snprintf(line, sizeof line, "hit entity %u joint %s at %.3f", result.entity_id, joint.c_str(),
                static_cast<double>(result.distance));
  return line;
}

void NetworkPoseSource::collect_hit_results() {
  for (const protocol::HitResult& result : client_->take_hit_results()) {
    std::string line = "shot " + std::to_string(result.sequence) + ": " + describe_answer(result);
    if (result.clamped) line += ", view time clamped";
    if (result.outcome == protocol::HitOutcome::kHit) {
      // A joint hit again restarts its mark (two marks' lines on one capsule would overlap).
      std::erase_if(marks_, [&](const HitMark& m) { return m.entity == result.entity_id && m.joint == result.joint; });
      marks_.push_back(HitMark{result.entity_id, result.joint, clock_us()});
    }
    const auto shot = std::find_if(shots_.begin(), shots_.end(),
                                   [&](const Shot& s) { return s.sequence == result.sequence; });
    if (shot != shots_.end()) {
      if (result.outcome != protocol::HitOutcome::kRefused) {
        const client::PresentedHit& seen = shot->seen;
        const bool hit = result.outcome == protocol::HitOutcome::kHit;
        const bool same = seen.hit == hit && (!hit || (seen.entity == result.entity_id && seen.joint == result.joint &&
                                                       seen.distance == result.distance));
        ++(same ? panel_.hits.agreed : panel_.hits.disagreed);
        line += same ? ", as this viewer's frame showed" : ", where this viewer's frame showed " +
                                                               (seen.hit ? "entity " + std::to_string(seen.entity) +
                                                                               " joint " + std::to_string(seen.joint)
                                                                         : std::string("a miss"));
      }
      shots_.erase(shot);
    }
    panel_.hits.last = line;
    notices_.push_back(std::move(line));
  }
}

std::vector<std::string> NetworkPoseSource::take_notices() {
  std::vector<std::string> out;
  out.swap(notices_);
  return out;
}

void NetworkPoseSource::append_marks(const float background[3], std::vector<float>& out) {
  const int64_t now = clock_us();
  std::erase_if(marks_, [&](const HitMark& m) { return now - m.answered_us >= kHitMarkLifetimeUs; });
  for (const HitMark& mark : marks_) {
    const client::PresentedEntity* entity = client_->find(mark.entity);
    const HitRig* rig = entity != nullptr ? hit_rig(*entity) : nullptr;
    if (rig == nullptr) continue;
    const std::span<const PosedCapsule> posed = presented_hits_.pose(*entity, *rig);
    const float fade = hit_mark_fade(now - mark.answered_us);
    const float bright[3] = {1.0f, 0.95f, 0.1f};  // yellow: no rig, grid or ring colour
    float color[3];
    for (int i = 0; i < 3; ++i) color[i] = bright[i] + (background[i] - bright[i]) * fade;
    for (std::size_t k = 0; k < posed.size(); ++k) {
      if (rig->capsules[k].joint != mark.joint) continue;
      PosedCapsule shown = posed[k];
      shown.radius *= 1.05f;  // just outside the skin the capsule encloses, so the depth test keeps it
      append_capsule_lines(shown, color, out);
    }
  }
}

}  // namespace posecast::viewer
