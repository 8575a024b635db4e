#include "posecast/blending.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#include "posecast/det_math.h"
#include "simd4.h"
#include "slerp_lanes.h"

namespace posecast {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

bool finite_non_negative(float w) { return std::isfinite(w) && w >= 0.0f; }

bool mask_ok(std::span<const float> mask, std::size_t nodes) {
  if (mask.empty()) return true;
  if (mask.size() != nodes) return false;
  for (float m : mask) {
    if (!std::isfinite(m)) return false;
  }
  return true;
}

void copy_pose(std::span<const Transform> from, std::span<Transform> to) {
  // Transform is padding-free (transform.h), so a byte copy is a bit-exact copy.
  if (!from.empty()) std::memcpy(to.data(), from.data(), from.size() * sizeof(Transform));
}

// Exact value comparison (no epsilon), written out rather than relying on glm's operators.
bool equal(const glm::vec3& a, const glm::vec3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
bool equal(const glm::quat& a, const glm::quat& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
}

// Four float lanes as a GCC/Clang generic vector (SSE on x86-64, NEON on aarch64). Each lane
// of +, * is the one IEEE operation the scalar expression performs, so the results below are
// the bits of the scalar formulas in the comments, on every compiler and CPU.
//
// A Transform is 10 floats: t.xyz (0..2), r.xyzw (3..6), s.xyz (7..9). Three overlapping
// 4-float windows cover it: [0..3] for t, [3..6] for r, [6..9] for s. Lanes 3 of the first and
// 0 of the last belong to the rotation; the rotation window is stored last, so they end up
// right.
using Float4 = float __attribute__((vector_size(16)));

Float4 load4(const float* p) {
  Float4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store4(float* p, Float4 v) { std::memcpy(p, &v, sizeof v); }
Float4 splat(float v) { return Float4{v, v, v, v}; }

const float* floats(const Transform& t) { return &t.translation.x; }
float* floats(Transform& t) { return &t.translation.x; }
static_assert(offsetof(Transform, rotation) == 3 * sizeof(float) &&
                  offsetof(Transform, scale) == 7 * sizeof(float),
              "the lane windows assume Transform = t.xyz, r.xyzw (glm order), s.xyz");

// ((a.x*b.x + a.y*b.y) + (a.z*b.z + a.w*b.w)): det_dot's order, on a rotation window.
float dot4(Float4 a, Float4 b) {
  const Float4 p = a * b;
  return (p[0] + p[1]) + (p[2] + p[3]);
}

// det_normalize on a rotation window (x, y, z, w): identity for a zero quaternion.
Float4 normalize4(Float4 q) {
  const float len2 = dot4(q, q);
  if (!(len2 > 0.0f)) return Float4{0.0f, 0.0f, 0.0f, 1.0f};
  return q * splat(1.0f / std::sqrt(len2));
}

// Writes the three windows of one node (rotation last, see above).
void store_node(Transform& out, Float4 t, Float4 r, Float4 s) {
  float* o = floats(out);
  store4(o, t);
  store4(o + 6, s);
  store4(o + 3, r);
}

// The rotations of a two-input blend as lanes (x, y, z, w of eight quaternions): lane by
// lane, the operations of BlendJob's general loop below, in its order:
//   d = (a.x*b.x + a.y*b.y) + (a.z*b.z + a.w*b.w)          (det_dot: dot4's order)
//   r = a * k_first + b * (d < 0 ? -k_second : k_second)
//   len2 = (r.x*r.x + r.y*r.y) + (r.z*r.z + r.w*r.w)
//   r = len2 > 0 ? r * (1 / sqrt(len2)) : identity        (det_normalize)
using RotationLanes8 = detail::QuatLanes<detail::Float8>;
POSECAST_INLINE RotationLanes8 blend_two_rotation_lanes(const RotationLanes8& a,
                                                        const RotationLanes8& b, float k_first,
                                                        float k_second) {
  using detail::Float8;
  const Float8 zero = detail::splat8(0.0f);
  const Float8 d = (a.x * b.x + a.y * b.y) + (a.z * b.z + a.w * b.w);
  const Float8 ka = detail::splat8(k_first);
  const Float8 kb = detail::select(d < zero, detail::splat8(-k_second), detail::splat8(k_second));
  const RotationLanes8 r = {a.x * ka + b.x * kb, a.y * ka + b.y * kb, a.z * ka + b.z * kb,
                            a.w * ka + b.w * kb};
  const Float8 len2 = (r.x * r.x + r.y * r.y) + (r.z * r.z + r.w * r.w);
  const detail::Int8 nonzero = len2 > zero;
  const Float8 inv = 1.0f / detail::sqrt4(len2);
  return {detail::select(nonzero, r.x * inv, zero), detail::select(nonzero, r.y * inv, zero),
          detail::select(nonzero, r.z * inv, zero),
          detail::select(nonzero, r.w * inv, detail::splat8(1.0f))};
}

// The two-input blend: out = a * ka + b * kb per node, the rotation flipped to a's hemisphere
// and normalised (BlendJob::Run's common case, and OverrideBlendJob's unmasked mix with
// ka = 1 - t, kb = t: the same formulas). Each lane does the scalar loops' operations in
// their order, so the bits are theirs. Groups of eight nodes, each in three steps:
//   1. the group's rotations loaded as rows (x, y, z, w), from a and b;
//   2. every float of the group as a * ka + b * kb, eight floats at a time over the flat
//      arrays (a Transform is 10 padding-free floats): the translation and scale formula;
//      the rotations it writes are overwritten by step 3;
//   3. the rotations as lanes (blend_two_rotation_lanes), stored.
// Each float is read before it is written and groups do not overlap, so `output` may be `a`
// (OverrideBlendJob blends in place). Full groups compile to straight-line code without a
// bounds test per node: Fox (26 nodes) takes 1,093 instructions per call against 1,220 with
// per-node windows (callgrind, bench_animator).
// (Vectors never cross the call into the target clones below: clang rejects vector arguments
// between functions compiled for different ISAs, see simd4.h.)
POSECAST_INLINE void blend_two_floats(const float* a, const float* b, float ka, float kb,
                                      float* out, std::size_t count) {
  const detail::Float8 ka8 = detail::splat8(ka);
  const detail::Float8 kb8 = detail::splat8(kb);
  std::size_t f = 0;
  for (; f + 8 <= count; f += 8) {
    detail::store8(out + f, detail::load8(a + f) * ka8 + detail::load8(b + f) * kb8);
  }
  for (; f < count; ++f) out[f] = a[f] * ka + b[f] * kb;
}

// Nodes [first, first + count), count <= 8.
POSECAST_INLINE void blend_two_group(const Transform* a, const Transform* b, float ka, float kb,
                                     Transform* output, std::size_t first, std::size_t count) {
  constexpr std::size_t kLanes = 8;
  constexpr std::size_t kFloats = sizeof(Transform) / sizeof(float);
  // Lanes past `count` blend identity rotations (then dropped).
  const Float4 identity = {0.0f, 0.0f, 0.0f, 1.0f};
  Float4 rows_a[kLanes], rows_b[kLanes], rows[kLanes];
  for (std::size_t i = 0; i < kLanes; ++i) {
    rows_a[i] = i < count ? load4(floats(a[first + i]) + 3) : identity;
    rows_b[i] = i < count ? load4(floats(b[first + i]) + 3) : identity;
  }
  blend_two_floats(floats(a[first]), floats(b[first]), ka, kb, floats(output[first]),
                   count * kFloats);
  const RotationLanes8 unit = blend_two_rotation_lanes(
      detail::rows_to_lanes8(rows_a), detail::rows_to_lanes8(rows_b), ka, kb);
  detail::lanes8_to_rows(unit, rows);
  for (std::size_t i = 0; i < count; ++i) store4(floats(output[first + i]) + 3, rows[i]);
}

POSECAST_HOT_CLONES
void blend_two(const Transform* a, const Transform* b, float ka, float kb, Transform* output,
               std::size_t nodes) {
  constexpr std::size_t kLanes = 8;
  std::size_t first = 0;
  for (; first + kLanes <= nodes; first += kLanes) {
    blend_two_group(a, b, ka, kb, output, first, kLanes);
  }
  if (first < nodes) blend_two_group(a, b, ka, kb, output, first, nodes - first);
}

}  // namespace

bool BlendJob::Validate() const {
  const std::size_t nodes = output.size();
  if (rest.size() != nodes) return false;
  for (const BlendInput& input : inputs) {
    if (input.pose.size() != nodes || !finite_non_negative(input.weight)) return false;
  }
  return true;
}

bool BlendJob::Run() const {
  if (!Validate()) return false;
  std::size_t first = kNone;
  std::size_t contributing = 0;
  float total = 0.0f;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].weight > 0.0f) {
      if (first == kNone) first = i;
      total += inputs[i].weight;
      ++contributing;
    }
  }
  if (contributing == 0) {
    copy_pose(rest, output);
    return true;
  }
  if (contributing == 1) {
    copy_pose(inputs[first].pose, output);
    return true;
  }
  // Weights are normalised once per call; every node uses the same factors. Per node:
  //   t = t_first * k_first + t_i * k_i + ...      (in input order; the same for s)
  //   r = r_first * k_first + r_i * (+-k_i) + ...  (sign: the side of r_first, det_dot < 0)
  //   r = det_normalize(r)
  // The contributing inputs are gathered into local arrays first (a chunk at a time), so the
  // node loop reads nothing the output stores could alias.
  const float inv_total = 1.0f / total;
  if (contributing == 2) {
    // The common case (a two-clip blend), in straight-line form: the same operations in the
    // same order as the general loop below, so the same bits.
    std::size_t second = first + 1;
    while (!(inputs[second].weight > 0.0f)) ++second;
    blend_two(inputs[first].pose.data(), inputs[second].pose.data(),
              inputs[first].weight * inv_total, inputs[second].weight * inv_total,
              output.data(), output.size());
    return true;
  }
  constexpr std::size_t kChunk = 8;
  const Transform* first_pose = inputs[first].pose.data();
  const float k_first = inputs[first].weight * inv_total;
  std::size_t next = first + 1;
  bool first_chunk = true;
  while (first_chunk || next < inputs.size()) {
    const Transform* poses[kChunk];
    float ks[kChunk];
    std::size_t count = 0;
    for (; next < inputs.size() && count < kChunk; ++next) {
      if (!(inputs[next].weight > 0.0f)) continue;
      poses[count] = inputs[next].pose.data();
      ks[count] = inputs[next].weight * inv_total;
      ++count;
    }
    const bool more = next < inputs.size();
    for (std::size_t n = 0; n < output.size(); ++n) {
      const Float4 reference = load4(floats(first_pose[n]) + 3);
      Float4 t, r, s;
      if (first_chunk) {
        const float* f = floats(first_pose[n]);
        const Float4 k = splat(k_first);
        t = load4(f) * k;
        r = reference * k;
        s = load4(f + 6) * k;
      } else {
        // Later chunks continue from the partial sums left in `output` (not yet normalised).
        const float* o = floats(output[n]);
        t = load4(o);
        r = load4(o + 3);
        s = load4(o + 6);
      }
      for (std::size_t i = 0; i < count; ++i) {
        const float* x = floats(poses[i][n]);
        const Float4 xr = load4(x + 3);
        // q and -q are the same rotation: take the one on the reference's side.
        const float kq = dot4(reference, xr) < 0.0f ? -ks[i] : ks[i];
        t = t + load4(x) * splat(ks[i]);
        r = r + xr * splat(kq);
        s = s + load4(x + 6) * splat(ks[i]);
      }
      store_node(output[n], t, more ? r : normalize4(r), s);
    }
    first_chunk = false;
  }
  return true;
}

bool OverrideBlendJob::Validate() const {
  return layer.size() == pose.size() && std::isfinite(weight) && mask_ok(mask, pose.size());
}

bool OverrideBlendJob::Run() const {
  if (!Validate()) return false;
  // Unmasked, 0 < t < 1 (a crossfade's mix): every node takes the formulas below with the same
  // t, which are the two-input blend's with weights (1 - t, t): its lanes, in place.
  if (mask.empty() && weight > 0.0f && weight < 1.0f) {
    blend_two(pose.data(), layer.data(), 1.0f - weight, weight, pose.data(), pose.size());
    return true;
  }
  // Per node with 0 < t < 1, the bits of det_lerp / det_nlerp (det_math.h):
  //   t' = p.t * (1 - t) + l.t * t (the same for s);
  //   r' = det_normalize(p.r * (1 - t) + l.r * (+-t)), the sign from det_dot(p.r, l.r) < 0.
  for (std::size_t n = 0; n < pose.size(); ++n) {
    const float t = mask.empty() ? weight : weight * mask[n];
    if (!(t > 0.0f)) continue;
    Transform& p = pose[n];
    const Transform& l = layer[n];
    if (t >= 1.0f) {
      p = l;
      continue;
    }
    const float* a = floats(p);
    const float* b = floats(l);
    const Float4 keep = splat(1.0f - t);
    const Float4 take = splat(t);
    const Float4 ar = load4(a + 3);
    const Float4 br = load4(b + 3);
    const Float4 take_r = splat(dot4(ar, br) < 0.0f ? -t : t);
    const Float4 t4 = load4(a) * keep + load4(b) * take;
    const Float4 s4 = load4(a + 6) * keep + load4(b + 6) * take;
    store_node(p, t4, normalize4(ar * keep + br * take_r), s4);
  }
  return true;
}

bool AdditiveBlendJob::Validate() const {
  return additive.size() == pose.size() && reference.size() == pose.size() &&
         std::isfinite(weight) && mask_ok(mask, pose.size());
}

bool AdditiveBlendJob::Run() const {
  if (!Validate()) return false;
  const glm::quat identity(1.0f, 0.0f, 0.0f, 0.0f);
  for (std::size_t n = 0; n < pose.size(); ++n) {
    const float t = mask.empty() ? weight : weight * mask[n];
    if (t == 0.0f) continue;
    Transform& p = pose[n];
    const Transform& a = additive[n];
    const Transform& r = reference[n];

    // Each part whose additive value equals its reference is skipped, so an additive pose equal
    // to its reference leaves the pose bit for bit unchanged (the general formulas would only
    // nearly cancel: conj(r) * r is the identity up to rounding).
    if (!equal(a.translation, r.translation)) {
      const glm::vec3 dt = a.translation - r.translation;
      p.translation = glm::vec3(p.translation.x + dt.x * t, p.translation.y + dt.y * t,
                                p.translation.z + dt.z * t);
    }
    if (!equal(a.scale, r.scale)) {
      const auto ratio = [](float add, float ref) { return ref == 0.0f ? 1.0f : add / ref; };
      const glm::vec3 ds(ratio(a.scale.x, r.scale.x), ratio(a.scale.y, r.scale.y),
                         ratio(a.scale.z, r.scale.z));
      p.scale = glm::vec3(p.scale.x * (1.0f + t * (ds.x - 1.0f)),
                          p.scale.y * (1.0f + t * (ds.y - 1.0f)),
                          p.scale.z * (1.0f + t * (ds.z - 1.0f)));
    }
    if (!equal(a.rotation, r.rotation)) {
      const glm::quat r_conj(r.rotation.w, -r.rotation.x, -r.rotation.y, -r.rotation.z);
      glm::quat dq = det_mul(r_conj, a.rotation);
      if (t != 1.0f) dq = det_nlerp(identity, dq, t);
      p.rotation = det_normalize(det_mul(p.rotation, dq));
    }
  }
  return true;
}

}  // namespace posecast
