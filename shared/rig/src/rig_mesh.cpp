#include "rig_mesh.h"

#include <algorithm>

namespace posecast::rig::detail {

namespace {

// Tessellation: vertices around, latitude rings per hemispherical cap, rings along the body.
struct Tessellation {
  int around;
  int cap_rings;
  int body_rings;
};
constexpr Tessellation kBodyPart{8, 2, 2};   // core body parts
constexpr Tessellation kChainLink{6, 1, 1};  // links of extra chains (there can be 490 of them)

constexpr int kWeightUnits = 256;  // weights are multiples of 1/256: exact float sums

// One latitude ring of a capsule: its centre on the axis, the sine and cosine of its latitude
// (-1/0 at the start pole ... 0/1 on the body ... 1/0 at the end pole) and its v coordinate.
struct Ring {
  Vec3 center;
  double sin_lat;
  double cos_lat;
  double v;
};

std::vector<Ring> capsule_rings(const Capsule& c, Vec3 u, double len, const Tessellation& t) {
  const double quarter_arc = c.radius * (kPi / 2.0);
  const double total_arc = 2.0 * quarter_arc + len;
  std::vector<Ring> rings;
  for (int i = 0; i <= t.cap_rings; ++i) {  // start cap, pole first
    const double lat = -0.25 + 0.25 * static_cast<double>(i) / static_cast<double>(t.cap_rings);
    const double arc = quarter_arc * static_cast<double>(i) / static_cast<double>(t.cap_rings);
    rings.push_back({c.a, sin_turns(lat), cos_turns(lat), arc / total_arc});
  }
  for (int j = 1; j <= t.body_rings; ++j) {
    const double s = static_cast<double>(j) / static_cast<double>(t.body_rings + 1);
    rings.push_back({c.a + u * (len * s), 0.0, 1.0, (quarter_arc + len * s) / total_arc});
  }
  for (int i = 0; i <= t.cap_rings; ++i) {  // end cap, pole last
    const double lat = 0.25 * static_cast<double>(i) / static_cast<double>(t.cap_rings);
    const double arc =
        quarter_arc + len + quarter_arc * static_cast<double>(i) / static_cast<double>(t.cap_rings);
    rings.push_back({c.b, sin_turns(lat), cos_turns(lat), arc / total_arc});
  }
  return rings;
}

// Up to three influences of one vertex, merged, sorted by weight (then joint), zeros dropped.
void skin_vertex(const Capsule& c, double along, double len, std::array<uint16_t, 4>& joints,
                 std::array<float, 4>& weights) {
  const double blend_length = std::min(0.5 * len, 1.2 * c.radius);
  const auto fade = [&](double distance) {
    const double w = 0.5 * (1.0 - smoothstep(distance / blend_length));
    return static_cast<int>(std::floor(w * kWeightUnits + 0.5));
  };
  const double d = std::clamp(along, 0.0, len);
  std::array<std::pair<int, int>, 3> influences{};  // (weight units, joint)
  int count = 0;
  int owner_units = kWeightUnits;
  const auto add = [&](int joint, int units) {
    if (joint < 0 || units == 0) return;
    for (int i = 0; i < count; ++i) {
      if (influences[static_cast<std::size_t>(i)].second == joint) {
        influences[static_cast<std::size_t>(i)].first += units;
        return;
      }
    }
    influences[static_cast<std::size_t>(count++)] = {units, joint};
  };
  if (c.blend_a >= 0 && c.blend_a != c.owner) {
    const int units = fade(d);
    add(c.blend_a, units);
    owner_units -= units;
  }
  if (c.blend_b >= 0 && c.blend_b != c.owner) {
    const int units = fade(len - d);
    add(c.blend_b, units);
    owner_units -= units;
  }
  add(c.owner, owner_units);
  // Insertion sort of at most three entries (std::sort trips a gcc 12 -Warray-bounds false
  // positive here).
  const auto before = [](const std::pair<int, int>& x, const std::pair<int, int>& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  };
  for (int i = 1; i < count; ++i) {
    for (int k = i; k > 0; --k) {
      auto& lo = influences[static_cast<std::size_t>(k - 1)];
      auto& hi = influences[static_cast<std::size_t>(k)];
      if (!before(hi, lo)) break;
      std::swap(lo, hi);
    }
  }
  joints = {0, 0, 0, 0};
  weights = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int i = 0; i < count; ++i) {
    joints[static_cast<std::size_t>(i)] = static_cast<uint16_t>(influences[static_cast<std::size_t>(i)].second);
    weights[static_cast<std::size_t>(i)] =
        static_cast<float>(influences[static_cast<std::size_t>(i)].first) / static_cast<float>(kWeightUnits);
  }
}

std::array<float, 3> to_float3(Vec3 v) {
  return {static_cast<float>(v.x), static_cast<float>(v.y), static_cast<float>(v.z)};
}

void add_capsule(const Capsule& c, RigMesh& mesh) {
  const Tessellation& t = c.detailed ? kBodyPart : kChainLink;
  const Vec3 axis = c.b - c.a;
  const double len = length(axis);
  const Vec3 u = axis * (1.0 / len);
  // A right-handed frame (u, v, w) around the axis; any helper not parallel to u will do.
  const Vec3 helper = (u.y < 0.9 && u.y > -0.9) ? Vec3{0.0, 1.0, 0.0} : Vec3{1.0, 0.0, 0.0};
  const Vec3 v = normalize(cross(helper, u));
  const Vec3 w = cross(u, v);

  const std::vector<Ring> rings = capsule_rings(c, u, len, t);
  const uint32_t first = static_cast<uint32_t>(mesh.positions.size());
  const uint32_t per_ring = static_cast<uint32_t>(t.around + 1);  // seam vertex repeated for UVs
  for (const Ring& ring : rings) {
    for (int k = 0; k <= t.around; ++k) {
      const double turn = static_cast<double>(k) / static_cast<double>(t.around);
      const Vec3 radial = v * cos_turns(turn) + w * sin_turns(turn);
      const Vec3 normal = normalize(u * ring.sin_lat + radial * ring.cos_lat);
      const Vec3 position = ring.center + normal * c.radius;
      mesh.positions.push_back(to_float3(position));
      mesh.normals.push_back(to_float3(normal));
      mesh.uvs.push_back({static_cast<float>(turn), static_cast<float>(ring.v)});
      std::array<uint16_t, 4> joints{};
      std::array<float, 4> weights{};
      skin_vertex(c, dot(position - c.a, u), len, joints, weights);
      mesh.joints.push_back(joints);
      mesh.weights.push_back(weights);
    }
  }
  // Quads between neighbouring rings, as two counter-clockwise triangles seen from outside;
  // at a pole one of the two is degenerate and left out.
  const uint32_t ring_count = static_cast<uint32_t>(rings.size());
  for (uint32_t r = 0; r + 1 < ring_count; ++r) {
    const bool start_pole = r == 0;
    const bool end_pole = r + 2 == ring_count;
    for (uint32_t k = 0; k < static_cast<uint32_t>(t.around); ++k) {
      const uint32_t a0 = first + r * per_ring + k, a1 = a0 + 1;
      const uint32_t b0 = a0 + per_ring, b1 = b0 + 1;
      if (!start_pole) mesh.indices.insert(mesh.indices.end(), {a0, a1, b1});
      if (!end_pole) mesh.indices.insert(mesh.indices.end(), {a0, b1, b0});
    }
  }
}

}  // namespace

RigMesh build_rig_mesh(const RigLayout& layout) {
  RigMesh mesh;
  for (const Capsule& capsule : layout.capsules) add_capsule(capsule, mesh);
  return mesh;
}

}  // namespace posecast::rig::detail
