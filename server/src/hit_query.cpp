#include "hit_query.h"

#include <algorithm>

#include "posecast/local_to_model.h"
#include "posecast/pose_interpolation.h"
#include "posecast/protocol/root_coding.h"
#include "posecast/sim/playback_time.h"
#include "posecast/sim/recipe_at_time.h"

namespace posecast::server {
namespace {

// The session tick whose interval holds `us` (tick_start_us(k) <= us < tick_start_us(k + 1)).
int64_t hit_tick_at(int64_t us, uint32_t rate_hz) {
  int64_t k = (us / 1'000'000) * rate_hz + ((us % 1'000'000) * rate_hz) / 1'000'000;  // us >= 0
  while (k > 0 && sim::tick_start_us(static_cast<uint64_t>(k), rate_hz) > us) --k;
  while (sim::tick_start_us(static_cast<uint64_t>(k + 1), rate_hz) <= us) ++k;
  return k;
}

// The root between two entries, as a client interpolates the held roots of two snapshots
// (protocol::lerp_root, the client's own function).
sim::RootTransform hit_lerp_root(const sim::RootTransform& a, const sim::RootTransform& b, float t) {
  const protocol::RootValue v = protocol::lerp_root({a.x, a.y, a.z, a.yaw}, {b.x, b.y, b.z, b.yaw}, t);
  return {v.x, v.y, v.z, v.yaw};
}

}  // namespace

Result<std::unique_ptr<HitQuery>> HitQuery::create(const PoseFormats& formats, const HitRigOptions& options) {
  auto query = std::unique_ptr<HitQuery>(new HitQuery());
  query->rigs_.resize(formats.formats.size());
  std::size_t nodes = 0, capsules = 0;
  for (std::size_t f = 0; f < formats.formats.size(); ++f) {
    RigData& data = query->rigs_[f];
    data.rig = formats.rig_of[f];
    Result<HitRig> built = build_hit_rig(*data.rig, options);
    if (!built.ok()) return Error{"hit queries: format " + std::to_string(f) + ": " + built.error().message};
    data.hit = std::move(built).value();
    data.durations = formats.formats[f]->clip_durations_us;
    data.evaluator.reset(data.rig->skeleton.node_count(), sim::max_clip_tracks(data.rig->clips));
    nodes = std::max(nodes, data.rig->skeleton.node_count());
    capsules = std::max(capsules, data.hit.capsules.size());
  }
  query->locals_.resize(nodes);
  query->other_.resize(nodes);
  query->models_.resize(nodes);
  query->posed_.resize(capsules);
  return query;
}

bool HitQuery::pose_at(RigData& data, const HitHistoryEntry& a, const HitHistoryEntry& b, int64_t a_us,
                       int64_t b_us, int64_t view_us) {
  const Rig& rig = *data.rig;
  const std::size_t n = rig.skeleton.node_count();
  const std::span<Transform> out(locals_.data(), n);
  if (a.recipe.count == 0 || b.recipe.count == 0) return false;
  if (&a == &b || view_us == a_us || b_us <= a_us) return data.evaluator.evaluate(rig.skeleton, rig.clips, true, a.recipe, out);
  const sim::RecipeTiming timing =
      sim::recipe_at_time(a.recipe, a_us, b.recipe, b_us, view_us, data.durations, recipe_);
  if (view_us >= b_us) return data.evaluator.evaluate(rig.skeleton, rig.clips, true, b.recipe, out);
  if (timing == sim::RecipeTiming::kOk) return data.evaluator.evaluate(rig.skeleton, rig.clips, true, recipe_, out);
  // No recipe between the two: both ticks' poses, interpolated as a client interpolates.
  const std::span<Transform> other(other_.data(), n);
  if (!data.evaluator.evaluate(rig.skeleton, rig.clips, true, a.recipe, out) ||
      !data.evaluator.evaluate(rig.skeleton, rig.clips, true, b.recipe, other)) {
    return false;
  }
  const float t = static_cast<float>(view_us - a_us) / static_cast<float>(b_us - a_us);
  return InterpolatePosesJob{out, other, t, out}.Run();
}

HitAnswer HitQuery::run(const HitHistory& history, const HitRay& ray, int64_t view_us, SnapshotGrid grid) {
  HitAnswer answer;
  const uint32_t rate = history.tick_rate_hz();
  const uint32_t newest = history.newest_tick();
  if (newest == protocol::kNoTick) return answer;
  const uint32_t oldest = newest + 1 > history.capacity() ? newest + 1 - history.capacity() : 0;
  const int64_t lo = sim::tick_start_us(oldest, rate), hi = sim::tick_start_us(newest, rate);
  answer.clamped = view_us < lo || view_us > hi;
  view_us = std::clamp(view_us, lo, hi);
  answer.view_us = view_us;
  const int64_t interval = std::max<uint32_t>(grid.interval, 1);
  const int64_t tick = hit_tick_at(view_us, rate);
  const int64_t a_tick = tick - (tick + grid.phase) % interval;  // the grid tick at or before
  for (const EntityHitHistory& e : history.entities()) {
    if (e.count == 0) continue;
    const int64_t newest_tick = e.at(0).tick;
    const int64_t back = newest_tick - a_tick;
    if (back < 0 || back >= e.count) continue;  // the entity was not there at the view time
    const HitHistoryEntry& a = e.at(static_cast<uint32_t>(back));
    const HitHistoryEntry& b = e.at(static_cast<uint32_t>(std::max<int64_t>(back - interval, 0)));
    const int64_t a_us = sim::tick_start_us(a.tick, rate), b_us = sim::tick_start_us(b.tick, rate);
    // On an entry, or past the newest: that entry's root (a client shows a snapshot's root
    // on its time, and the view time is clamped to the newest tick).
    const sim::RootTransform root = b_us <= a_us || view_us == a_us ? a.root
                                    : view_us >= b_us              ? b.root
                                      : hit_lerp_root(a.root, b.root, protocol::root_lerp_fraction(a_us, b_us, view_us));
    RigData& data = rigs_[e.format];
    float enter = 0.0f;
    if (!ray_sphere(ray, glm::vec3(root.x, root.y, root.z), data.hit.bound_radius, enter)) continue;
    if (answer.hit && enter > answer.distance) continue;  // cannot beat the nearest hit so far
    ++answer.broad_passed;
    if (!pose_at(data, a, b, a_us, b_us, view_us)) {
      ++answer.unevaluable;
      continue;
    }
    const std::size_t n = data.rig->skeleton.node_count();
    LocalToModelJob job{&data.rig->skeleton, std::span<const Transform>(locals_.data(), n),
                        std::span<glm::mat4>(models_.data(), n), true};
    const std::span<PosedCapsule> posed(posed_.data(), data.hit.capsules.size());
    if (!job.Run() || !pose_capsules(data.hit, std::span<const glm::mat4>(models_.data(), n),
                                     entity_matrix(root.x, root.y, root.z, root.yaw), posed)) {
      ++answer.unevaluable;
      continue;
    }
    std::size_t index = 0;
    float distance = 0.0f;
    if (!ray_capsules(ray, posed, index, distance)) continue;
    if (answer.hit && distance >= answer.distance) continue;  // ties: the lower id, met first
    answer.hit = true;
    answer.entity = e.id;
    answer.joint = data.hit.capsules[index].joint;
    answer.distance = distance;
  }
  return answer;
}

}  // namespace posecast::server
