#include "posecast/replay/divergence.h"

#include <glm/geometric.hpp>
#include <glm/matrix.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "posecast/hash.h"
#include "posecast/replay/replayer.h"
#include "decimal_text.h"

namespace posecast::replay {
namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
// Floats widen exactly (clang's -Wdouble-promotion asks for it to be said).
std::string fmt(float v) { return fmt(static_cast<double>(v)); }

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// NaN compares as the worst possible difference.
float worse(float current, float candidate) {
  if (std::isnan(candidate)) return std::numeric_limits<float>::infinity();
  return candidate > current ? candidate : current;
}

template <class T>
std::string diff(const std::string& path, const T& a, const T& b) {
  return path + ": " + std::to_string(a) + " vs " + std::to_string(b);
}

std::string motion_difference(const std::string& path, const sim::Motion& a, const sim::Motion& b) {
  if (a.count != b.count) return diff(path + ".count", int{a.count}, int{b.count});
  if (a.wrap != b.wrap) return diff(path + ".wrap", int(a.wrap), int(b.wrap));
  if (a.speed != b.speed) return diff(path + ".speed_q16", a.speed, b.speed);
  for (std::size_t i = 0; i < std::min<std::size_t>(a.count, a.slots.size()); ++i) {
    const std::string slot = path + ".slots[" + num(i) + "]";
    const sim::ClipSlot& x = a.slots[i];
    const sim::ClipSlot& y = b.slots[i];
    if (x.clip != y.clip) return diff(slot + ".clip", int{x.clip}, int{y.clip});
    if (!same_bits(x.weight, y.weight)) return slot + ".weight: " + fmt(x.weight) + " vs " + fmt(y.weight);
    if (x.phase != y.phase) return diff(slot + ".phase", x.phase, y.phase);
  }
  return {};
}

}  // namespace

JointDifference compare_palettes(const Skeleton& skeleton, std::span<const glm::mat4> current,
                                 std::span<const glm::mat4> reference) {
  JointDifference d;
  const std::size_t n = skeleton.joint_count();
  if (current.size() != n || reference.size() != n) {
    d.differing_joints = std::max(current.size(), reference.size());
    return d;
  }
  float worst = -1.0f;
  for (std::size_t j = 0; j < n; ++j) {
    const glm::mat4& a = current[j];
    const glm::mat4& b = reference[j];
    if (std::memcmp(&a, &b, sizeof a) == 0) continue;
    ++d.differing_joints;
    // Diagnostic arithmetic only (not the pose path): glm::inverse is fine here.
    const glm::mat4 bind = glm::inverse(skeleton.inverse_bind[j]);
    const glm::mat4 ma = a * bind;
    const glm::mat4 mb = b * bind;
    float displacement = 0.0f;
    const glm::vec4 points[4] = {{0, 0, 0, 1}, {1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}};
    for (const glm::vec4& p : points) {
      displacement = worse(displacement, glm::length(glm::vec3(ma * p) - glm::vec3(mb * p)));
    }
    float element = 0.0f;
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) element = worse(element, std::fabs(a[c][r] - b[c][r]));
    }
    if (displacement > worst) {
      worst = displacement;
      d.joint = static_cast<int>(j);
      d.displacement = displacement;
      d.translation = glm::length(glm::vec3(ma[3]) - glm::vec3(mb[3]));
      d.max_element = element;
    }
  }
  if (d.joint >= 0) {
    const uint16_t node = skeleton.joint_nodes[static_cast<std::size_t>(d.joint)];
    if (node < skeleton.names.size()) d.joint_name = skeleton.names[node];
  }
  return d;
}

std::string first_state_difference(const sim::EntityState& a, const sim::EntityState& b) {
  if (a.id != b.id) return diff("id", a.id, b.id);
  if (a.model != b.model) return diff("model", a.model, b.model);
  if (a.rig != b.rig) return diff("rig", int{a.rig}, int{b.rig});
  if (a.layers.size() != b.layers.size()) return diff("layers.size", a.layers.size(), b.layers.size());
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const std::string path = "layers[" + num(i) + "]";
    const sim::Layer& x = a.layers[i];
    const sim::Layer& y = b.layers[i];
    if (x.mode != y.mode) return diff(path + ".mode", int(x.mode), int(y.mode));
    if (!same_bits(x.weight, y.weight)) return path + ".weight: " + fmt(x.weight) + " vs " + fmt(y.weight);
    if (x.mask != y.mask) return diff(path + ".mask", x.mask, y.mask);
    if (x.reference != y.reference) return diff(path + ".reference", x.reference, y.reference);
    if (x.fade_source != y.fade_source) return diff(path + ".fade_source", int(x.fade_source), int(y.fade_source));
    if (x.fade_elapsed_us != y.fade_elapsed_us) return diff(path + ".fade_elapsed_us", x.fade_elapsed_us, y.fade_elapsed_us);
    if (x.fade_duration_us != y.fade_duration_us) return diff(path + ".fade_duration_us", x.fade_duration_us, y.fade_duration_us);
    if (std::string d = motion_difference(path + ".target", x.target, y.target); !d.empty()) return d;
    if (x.fade_source == sim::FadeSource::kMotion) {
      if (std::string d = motion_difference(path + ".source", x.source, y.source); !d.empty()) return d;
    }
    if (x.fade_source == sim::FadeSource::kFrozenPose) {
      if (x.frozen.size() != y.frozen.size()) return diff(path + ".frozen.size", x.frozen.size(), y.frozen.size());
      for (std::size_t n = 0; n < x.frozen.size(); ++n) {
        if (std::memcmp(&x.frozen[n], &y.frozen[n], sizeof(Transform)) != 0) {
          return path + ".frozen[" + num(n) + "]: the frozen pose differs";
        }
      }
    }
  }
  return {};
}

std::string describe(const JointDifference& d) {
  if (d.joint < 0) {
    return d.differing_joints == 0 ? "no joint differs" : "palette sizes differ (" + num(d.differing_joints) + " joints)";
  }
  std::string s = "joint " + num(static_cast<uint64_t>(d.joint));
  if (!d.joint_name.empty()) s += " '" + d.joint_name + "'";
  s += ": " + fmt(d.displacement) + " model units (translation " + fmt(d.translation) +
       ", max palette element " + fmt(d.max_element) + "; " + num(d.differing_joints) +
       (d.differing_joints == 1 ? " joint differs)" : " joints differ)");
  return s;
}

std::string DivergenceReport::to_text() const {
  std::string s = "tick " + num(tick) + ": world hash " + hash_hex(replayed_hash) +
                  (replayed_hash == recorded_hash ? " as recorded (the tick check differs)"
                   : recorded_hash == 0         ? ", none recorded (the tick check differs)"
                                                : ", recorded " + hash_hex(recorded_hash)) +
                  "\n";
  if (entity) {
    s += "  entity " + num(*entity);
    if (!entity_note.empty()) s += " (" + entity_note + ")";
    s += "\n";
  }
  if (joint) {
    s += "  " + describe(*joint);
    if (!joint_reference.empty()) s += "\n    compared with " + joint_reference;
    s += "\n";
  }
  if (!state_difference.empty()) s += "  state: " + state_difference + "\n";
  if (!limits.empty()) s += "  note: " + limits + "\n";
  return s;
}

std::vector<glm::mat4> sample_palette(const PaletteSample::Entity& entity) {
  std::vector<glm::mat4> palette(entity.matrices.size() / 16);
  for (std::size_t j = 0; j < palette.size(); ++j) {
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) palette[j][c][r] = entity.matrices[j * 16 + static_cast<std::size_t>(c * 4 + r)];
    }
  }
  return palette;
}

namespace {

void add_limit(DivergenceReport& report, const std::string& limit) {
  report.limits += (report.limits.empty() ? "" : "; ") + limit;
}

// The entity: palette hashes of tick `at`, replay vs the checkpoint's (both in id order).
void find_entity_by_hashes(const sim::World& world, const Checkpoint& cp, uint64_t at, DivergenceReport& report) {
  if (cp.entity_hashes.empty()) return;
  std::size_t i = 0, k = 0;
  const auto& recorded = cp.entity_hashes;
  while (i < world.entity_count() || k < recorded.size()) {
    const bool has_w = i < world.entity_count();
    const bool has_r = k < recorded.size();
    if (has_w && (!has_r || world.entity_id_at(i) < recorded[k].first)) {
      report.entity = world.entity_id_at(i);
      report.entity_note = "exists in the replay at tick " + num(at) + " but not in the recording";
      return;
    }
    if (has_r && (!has_w || recorded[k].first < world.entity_id_at(i))) {
      report.entity = recorded[k].first;
      report.entity_note = "exists in the recording at tick " + num(at) + " but not in the replay";
      return;
    }
    if (world.palette_hash_at(i) != recorded[k].second) {
      report.entity = recorded[k].first;
      report.entity_note = "palette hash differs at tick " + num(at);
      return;
    }
    ++i;
    ++k;
  }
  report.limits = "every entity's palette matches the recording again at tick " + num(at) +
                  ": the divergence did not last";
}

// The joint: the entity's palette against the recorded palettes of tick `at`.
void find_joint_in_sample(const sim::World& world, const Recording& rec, uint64_t at, DivergenceReport& report) {
  const PaletteSample* sample = rec.palettes_at(at);
  if (sample == nullptr || !report.entity) return;
  for (const PaletteSample::Entity& e : sample->entities) {
    if (e.id != *report.entity) continue;
    const Rig* rig = world.entity_rig(e.id);
    if (rig == nullptr) return;
    report.joint = compare_palettes(rig->skeleton, world.palette(e.id), sample_palette(e));
    report.joint_reference = "the recorded palettes of tick " + num(at);
  }
}

// The state: the first entity whose state differs between the replay's world and the
// checkpoint's (`ref`) at tick `boundary`, described in report.state_difference.
std::optional<uint32_t> find_state_difference(const sim::World& world, const sim::World& ref, uint64_t boundary,
                                              DivergenceReport& report) {
  for (std::size_t i = 0, k = 0; i < world.entity_count() || k < ref.entity_count();) {
    const bool has_w = i < world.entity_count();
    const bool has_r = k < ref.entity_count();
    const uint32_t wid = has_w ? world.entity_id_at(i) : 0;
    const uint32_t rid = has_r ? ref.entity_id_at(k) : 0;
    if (has_w && (!has_r || wid < rid)) {
      report.state_difference = "entity " + num(wid) + " exists in the replay but not in the checkpoint of tick " + num(boundary);
      return wid;
    }
    if (has_r && (!has_w || rid < wid)) {
      report.state_difference = "entity " + num(rid) + " exists in the checkpoint of tick " + num(boundary) + " but not in the replay";
      return rid;
    }
    const std::string d = first_state_difference(*world.find_entity(wid), *ref.find_entity(rid));
    if (!d.empty()) {
      report.state_difference = "entity " + num(wid) + ": " + d + " (replay vs the recording's checkpoint at tick " + num(boundary) + ")";
      return wid;
    }
    ++i;
    ++k;
  }
  return std::nullopt;
}

// The joint a state difference causes: both states evaluated by this build at tick
// `boundary` with the recorded commands, entity `e`'s palettes compared.
void joint_from_states(const Recording& rec, uint64_t boundary, uint32_t e, sim::World& world, sim::World& ref,
                       DivergenceReport& report) {
  replay_tick(rec, boundary, world);
  replay_tick(rec, boundary, ref);
  const Rig* rig = world.entity_rig(e) != nullptr ? world.entity_rig(e) : ref.entity_rig(e);
  if (rig != nullptr && world.entity_rig(e) != nullptr && ref.entity_rig(e) != nullptr) {
    report.joint = compare_palettes(rig->skeleton, world.palette(e), ref.palette(e));
    report.joint_reference = "the recording's checkpoint state, both evaluated by this build at tick " + num(boundary);
  } else {
    add_limit(report, "entity " + num(e) + " exists on one side only: no joints to compare");
  }
}

}  // namespace

DivergenceReport diagnose_divergence(Replayer& replayer, uint64_t tick, uint64_t replayed_hash,
                                     uint64_t recorded_hash) {
  DivergenceReport report;
  report.tick = tick;
  report.replayed_hash = replayed_hash;
  report.recorded_hash = recorded_hash;
  const Recording& rec = replayer.recording();
  const Checkpoint* cp = rec.checkpoint_at_or_after(tick + 1);
  if (cp == nullptr) {
    report.limits = "no checkpoint after tick " + num(tick) + " (the recording ends at tick " + num(rec.end_tick()) +
                    "): no per-entity reference to name the entity and joint";
    return report;
  }
  const uint64_t boundary = cp->tick;
  while (replayer.next_tick() < boundary) replayer.step();
  sim::World& world = replayer.world();
  report.located_at = boundary - 1;
  find_entity_by_hashes(world, *cp, boundary - 1, report);
  find_joint_in_sample(world, rec, boundary - 1, report);

  Result<std::unique_ptr<sim::World>> reference = replayer.world_at_checkpoint(*cp);
  if (!reference) {
    add_limit(report, reference.error().message);
    return report;
  }
  sim::World& ref = *reference.value();
  const std::optional<uint32_t> state_entity = find_state_difference(world, ref, boundary, report);
  if (!report.entity && state_entity) {
    report.entity = state_entity;
    report.entity_note = "its state differs from the checkpoint";
  }
  if (report.joint) return report;
  if (!state_entity) {
    if (report.entity) {
      report.limits = "the replay's state equals the recording's checkpoint at tick " + num(boundary) +
                      ", so this build (or CPU) computes different palettes from the same state than the one that "
                      "recorded; the recording holds no palettes to name the joint (record with palettes)";
    }
    return report;
  }
  if (boundary >= rec.end_tick()) {
    add_limit(report, "the recording ends at the checkpoint: no tick to evaluate the states");
    return report;
  }
  joint_from_states(rec, boundary, report.entity ? *report.entity : *state_entity, world, ref, report);
  return report;
}

}  // namespace posecast::replay
