#include "posecast/protocol/quantization.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#if defined(__SSE__)
#include <xmmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "posecast/det_math.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"

namespace posecast::protocol {
namespace {

using detail::LinearBlock;
using detail::RotationGroup;
using detail::RotationGroupKind;

glm::quat conjugate(const glm::quat& q) { return glm::quat(q.w, -q.x, -q.y, -q.z); }

// The three component indices other than `axis`, in increasing order.
constexpr int kOthers[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};

// PoseQuantizer::quantize works on four nodes at a time, in GCC/Clang generic vectors (SSE on
// x86-64, NEON on aarch64). Lane i of every operation is the scalar operation the former
// per-node code performed, in the same order (det_mul's products and sums, the divisions, the
// rounding, dequantize_rotation), and the former branches are computed on every lane and
// selected per lane: IEEE +, -, *, / and sqrt round per lane as the scalar instructions do, so
// each node's codes and rotations are the same bits (tests/protocol/quantizer_reference_test.cpp
// compares with the former implementation over the sample assets and random poses).
using Lanes4f = float __attribute__((vector_size(16)));
using Lanes4i = int32_t __attribute__((vector_size(16)));

using Mask4 = Lanes4i;  // lane masks: all ones or all zeros

struct QuatLanes {
  Lanes4f x, y, z, w;
};

[[gnu::always_inline]] inline Lanes4f splat(float v) { return Lanes4f{v, v, v, v}; }
[[gnu::always_inline]] inline Lanes4i splat_int(int32_t v) { return Lanes4i{v, v, v, v}; }

[[gnu::always_inline]] inline Lanes4f load_lanes(const float* p) {
  Lanes4f r;
  std::memcpy(&r, p, sizeof r);
  return r;
}

[[gnu::always_inline]] inline Lanes4i load_lanes(const int32_t* p) {
  Lanes4i r;
  std::memcpy(&r, p, sizeof r);
  return r;
}

// Lanewise mask ? a : b (the vector conditional: a blend instruction where there is one).
[[gnu::always_inline]] inline Lanes4f select(Mask4 mask, Lanes4f a, Lanes4f b) {
  return mask ? a : b;
}

[[gnu::always_inline]] inline Lanes4i select(Mask4 mask, Lanes4i a, Lanes4i b) {
  return mask ? a : b;
}

// Keeps the lanes of `v` where `mask` is set, +0 elsewhere.
[[gnu::always_inline]] inline Lanes4f keep(Mask4 mask, Lanes4f v) {
  return std::bit_cast<Lanes4f>(std::bit_cast<Lanes4i>(v) & mask);
}

[[gnu::always_inline]] inline Lanes4f abs_lanes(Lanes4f v) {
  return std::bit_cast<Lanes4f>(std::bit_cast<Lanes4i>(v) & splat_int(0x7FFFFFFF));
}

// Lanewise correctly rounded square root (the same bits as std::sqrt per lane).
[[gnu::always_inline]] inline Lanes4f sqrt_lanes(Lanes4f v) {
#if defined(__SSE__)
  return std::bit_cast<Lanes4f>(_mm_sqrt_ps(std::bit_cast<__m128>(v)));
#elif defined(__ARM_NEON) && defined(__aarch64__)
  return std::bit_cast<Lanes4f>(vsqrtq_f32(std::bit_cast<float32x4_t>(v)));
#else
  for (int i = 0; i < 4; ++i) v[i] = std::sqrt(v[i]);
  return v;
#endif
}

// det_mul on four lanes (the same expression, so the same order of operations).
[[gnu::always_inline]] inline QuatLanes mul_lanes(const QuatLanes& a, const QuatLanes& b) {
  return {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
          a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
          a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}

// conjugate(): the signs of x, y, z flipped (exact).
[[gnu::always_inline]] inline QuatLanes conjugate_lanes(const QuatLanes& q) {
  return {-q.x, -q.y, -q.z, q.w};
}

// Lanes of `v` rounded half away from zero; `within` is false in the lanes where |v| exceeds
// `bound` or is NaN (their code is 0). The former scalar code was
// (int32_t)(v < 0 ? -floor(-v + 0.5f) : floor(v + 0.5f)): for v < 0, -v + 0.5f is |v| + 0.5f;
// |v| <= bound <= 2^30, so |v| + 0.5f is in [0, 2^31), where truncation (the conversion) is
// exact and equals floor (rotation limits, ceil(2 / step) + 1, are far smaller). No libm call
// (baseline x86-64 has no rounding instruction, so std::floor is one).
[[gnu::always_inline]] inline Lanes4i round_half_away(Lanes4f v, Lanes4f bound, Mask4& within) {
  const Lanes4f magnitude = abs_lanes(v);
  within = magnitude <= bound;  // false for NaN
  const Lanes4i rounded = __builtin_convertvector(keep(within, magnitude) + 0.5f, Lanes4i);
  // -1 in the lanes where v < 0: (x ^ -1) - (-1) == -x, (x ^ 0) - 0 == x.
  const Mask4 negative = v < splat(0.0f);
  return (rounded ^ negative) - negative;
}

// Four rows (x, y, z, w) to lanes, and back (the same transpose).
[[gnu::always_inline]] inline QuatLanes transpose(Lanes4f r0, Lanes4f r1, Lanes4f r2, Lanes4f r3) {
  const Lanes4f t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5);
  const Lanes4f t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
  const Lanes4f t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);
  const Lanes4f t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
  return {__builtin_shufflevector(t0, t2, 0, 1, 4, 5), __builtin_shufflevector(t0, t2, 2, 3, 6, 7),
          __builtin_shufflevector(t1, t3, 0, 1, 4, 5), __builtin_shufflevector(t1, t3, 2, 3, 6, 7)};
}

static_assert(sizeof(glm::quat) == 16, "glm::quat must be four packed floats");
#if defined(GLM_FORCE_QUAT_DATA_WXYZ)
#error "quantization.cpp loads glm::quat as (x, y, z, w)"
#endif

// Quaternion `node[i]` of `rows` in lane i (rows: glm::quat laid out x, y, z, w).
[[gnu::always_inline]] inline QuatLanes gather(const glm::quat* rows, const int32_t* node) {
  return transpose(load_lanes(&rows[node[0]].x), load_lanes(&rows[node[1]].x),
                   load_lanes(&rows[node[2]].x), load_lanes(&rows[node[3]].x));
}

// The rotation of pose[node[i]] in lane i.
[[gnu::always_inline]] inline QuatLanes gather_rotations(const Transform* pose, const int32_t* node) {
  return transpose(load_lanes(&pose[node[0]].rotation.x), load_lanes(&pose[node[1]].rotation.x),
                   load_lanes(&pose[node[2]].rotation.x), load_lanes(&pose[node[3]].rotation.x));
}

// Lane i of q into rows[node[i]] (lanes that repeat a node write the same value twice).
[[gnu::always_inline]] inline void scatter(const QuatLanes& q, const int32_t* node, glm::quat* rows) {
  const QuatLanes r = transpose(q.x, q.y, q.z, q.w);
  std::memcpy(&rows[node[0]].x, &r.x, sizeof r.x);
  std::memcpy(&rows[node[1]].x, &r.y, sizeof r.y);
  std::memcpy(&rows[node[2]].x, &r.z, sizeof r.z);
  std::memcpy(&rows[node[3]].x, &r.w, sizeof r.w);
}

[[gnu::always_inline]] inline QuatLanes load_quat_lanes(const float (&q)[4][4]) {
  return {load_lanes(q[0]), load_lanes(q[1]), load_lanes(q[2]), load_lanes(q[3])};
}


// Correctly rounded square root, the same bits as std::sqrt. On x86-64 the sqrtss
// instruction directly: GCC compiled std::sqrt here as a call into libm (errno handling), a
// measurable part of quantising. The argument below is >= 1, so errno never mattered.
[[gnu::always_inline]] inline float sqrt_exact(float x) {
#if defined(__SSE__)
  return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x)));
#else
  return std::sqrt(x);
#endif
}

glm::vec3 dequantize_linear(const glm::vec3& rest, const int32_t* codes, float step) {
  return glm::vec3(rest.x + static_cast<float>(codes[0]) * step,
                   rest.y + static_cast<float>(codes[1]) * step,
                   rest.z + static_cast<float>(codes[2]) * step);
}

bool is_rest_rotation(const int32_t* codes) {
  return codes[0] == 3 && codes[1] == 0 && codes[2] == 0 && codes[3] == 0;
}

// dequantize_rotation's body, inlined into the per-node loops of quantize and
// dequantize_pose (the call and its stack round trip were a measurable part of decoding);
// the same operations in the same order, so the same bits.
[[gnu::always_inline]] inline glm::quat dequantize_rotation_inline(const Transform& rest,
                                                                   const int32_t* codes,
                                                                   float step) {
  const int axis = codes[0] & 3;
  const float g0 = static_cast<float>(codes[1]) * step;
  const float g1 = static_cast<float>(codes[2]) * step;
  const float g2 = static_cast<float>(codes[3]) * step;
  const float n = 1.0f / sqrt_exact(((1.0f + g0 * g0) + g1 * g1) + g2 * g2);
  float c[4];
  c[axis] = n;
  c[kOthers[axis][0]] = g0 * n;
  c[kOthers[axis][1]] = g1 * n;
  c[kOthers[axis][2]] = g2 * n;
  return det_mul(rest.rotation, glm::quat(c[3], c[0], c[1], c[2]));
}

}  // namespace

glm::quat dequantize_rotation(const Transform& rest, const int32_t* codes, float step) {
  return dequantize_rotation_inline(rest, codes, step);
}

void QuantizedPose::reset(const PoseFormat& format) {
  values.assign(format.node_count() * kValuesPerNode, 0);
  for (std::size_t n = 0; n < format.node_count(); ++n) values[n * kValuesPerNode + kRotationAxis] = 3;
  off_layout = false;
  recipe = PoseRecipe{};
  root = QuantizedRoot{};
}

PoseQuantizer::PoseQuantizer(const PoseFormat& format)
    : format_(format),
      coded_local_(format.node_count(), glm::quat(1.0f, 0.0f, 0.0f, 0.0f)),
      true_world_(format.compensated ? format.node_count() : 0, glm::quat(1.0f, 0.0f, 0.0f, 0.0f)),
      coded_world_(format.compensated ? format.node_count() : 0, glm::quat(1.0f, 0.0f, 0.0f, 0.0f)) {
  const std::size_t count = format.node_count();
  valid_format_ = format.rest.size() == count && format.precision.size() == count &&
                  format.channels.size() == count;
  for (std::size_t n = 0; n < count && valid_format_; ++n) {
    valid_format_ = format.parents[n] < static_cast<int>(n);
  }
  if (!valid_format_ || count == 0) return;

  // Translations and scales: the nodes in order, four to a block.
  for (std::size_t first = 0; first < count; first += 4) {
    detail::LinearBlock b;
    for (std::size_t lane = 0; lane < 4; ++lane) {
      const std::size_t n = std::min(first + lane, count - 1);
      const Transform& rest = format.rest[n];
      for (int c = 0; c < 3; ++c) {
        b.rest_translation[c][lane] = rest.translation[c];
        b.rest_scale[c][lane] = rest.scale[c];
        b.rest_translation_row[lane][c] = rest.translation[c];
        b.rest_scale_row[lane][c + 1] = rest.scale[c];
      }
      b.rest_translation_row[lane][3] = 0.0f;
      b.rest_scale_row[lane][0] = 0.0f;
      b.translation_step[lane] = format.precision[n].translation_step;
      b.scale_step[lane] = format.precision[n].scale_step;
      b.translation_unanimated[lane] = (format.channels[n] & kChannelTranslation) != 0 ? 0 : -1;
      b.scale_unanimated[lane] = (format.channels[n] & kChannelScale) != 0 ? 0 : -1;
      b.node[lane] = static_cast<int32_t>(n);
    }
    linear_blocks_.push_back(b);
  }

  // Rotations: list scheduling. A node is ready once its parent is in an earlier group; each
  // group takes up to four ready nodes of one kind, the first kind and nodes by priority:
  // the longest chain of descendants below the node first (it bounds how soon the last
  // group can start), then depth, then index. Deterministic (indices only).
  std::vector<int> depth(count, 0), height(count, 0);
  for (std::size_t n = 0; n < count; ++n) {
    const int parent = format.parents[n];
    depth[n] = parent < 0 ? 0 : depth[static_cast<std::size_t>(parent)] + 1;
  }
  for (std::size_t n = count; n-- > 0;) {
    const int parent = format.parents[n];
    if (parent >= 0) {
      int& h = height[static_cast<std::size_t>(parent)];
      h = std::max(h, height[n] + 1);
    }
  }
  using detail::RotationGroupKind;
  auto kind_of = [&](std::size_t n) {
    if (format.parents[n] < 0) return RotationGroupKind::kRoot;
    const bool compensated = format.compensated && (format.channels[n] & kChannelRotation) != 0;
    return compensated ? RotationGroupKind::kCompensated : RotationGroupKind::kChild;
  };
  auto before = [&](std::size_t a, std::size_t b) {
    if (height[a] != height[b]) return height[a] > height[b];
    if (depth[a] != depth[b]) return depth[a] < depth[b];
    return a < b;
  };
  std::vector<bool> scheduled(count, false);
  std::vector<std::size_t> ready;
  for (std::size_t placed = 0; placed < count;) {
    ready.clear();
    for (std::size_t n = 0; n < count; ++n) {
      const int parent = format.parents[n];
      if (!scheduled[n] && (parent < 0 || scheduled[static_cast<std::size_t>(parent)])) {
        ready.push_back(n);
      }
    }
    std::sort(ready.begin(), ready.end(), before);
    const RotationGroupKind kind = kind_of(ready.front());
    std::vector<std::size_t> members;
    for (const std::size_t n : ready) {
      if (members.size() < 4 && kind_of(n) == kind) members.push_back(n);
    }
    detail::RotationGroup g;
    g.kind = kind;
    g.all_unanimated = true;
    for (std::size_t lane = 0; lane < 4; ++lane) {
      const std::size_t n = members[std::min(lane, members.size() - 1)];
      const glm::quat& rest = format.rest[n].rotation;
      const glm::quat conj_rest = conjugate(rest);
      const float rest_lanes[4] = {rest.x, rest.y, rest.z, rest.w};
      const float conj_lanes[4] = {conj_rest.x, conj_rest.y, conj_rest.z, conj_rest.w};
      for (int c = 0; c < 4; ++c) {
        g.rest[c][lane] = rest_lanes[c];
        g.conj_rest[c][lane] = conj_lanes[c];
      }
      g.step[lane] = format.precision[n].rotation_step;
      g.bound[lane] = static_cast<float>(format.precision[n].rotation_limit);
      const bool animated = (format.channels[n] & kChannelRotation) != 0;
      g.unanimated[lane] = animated ? 0 : -1;
      g.all_unanimated = g.all_unanimated && !animated;
      g.node[lane] = static_cast<int32_t>(n);
      g.parent[lane] = format.parents[n] < 0 ? static_cast<int32_t>(n) : format.parents[n];
    }
    // Marked after the group is complete: a node's child never shares its group.
    for (const std::size_t n : members) scheduled[n] = true;
    placed += members.size();
    groups_.push_back(g);
  }
}

namespace {

// Rounds v / step half away from zero where v != rest is wanted: codes of `value - rest` in
// steps (quantize_linear and round_codes3 lane by lane), 0 where the whole vector equals rest
// (the former shortcut: no arithmetic, never a failure). Sets `failed` lanes beyond
// kMaxLinearCode or NaN.
[[gnu::always_inline]] inline void linear_codes(const Lanes4f (&value)[3], const float (&rest)[3][4],
                                                const float (&step)[4], Lanes4i (&codes)[3],
                                                Mask4& failed) {
  const Lanes4f rest_x = load_lanes(rest[0]), rest_y = load_lanes(rest[1]),
                rest_z = load_lanes(rest[2]);
  const Mask4 at_rest = (value[0] == rest_x) & (value[1] == rest_y) & (value[2] == rest_z);
  const Lanes4f steps = load_lanes(step);
  const Lanes4f bound = splat(static_cast<float>(kMaxLinearCode));
  const Lanes4f rests[3] = {rest_x, rest_y, rest_z};
  Mask4 beyond = splat_int(0);
  for (int c = 0; c < 3; ++c) {
    Mask4 within;
    codes[c] = round_half_away((value[c] - rests[c]) / steps, bound, within) & ~at_rest;
    beyond |= ~within;
  }
  failed |= beyond & ~at_rest;
}

// Mask of the lanes where any of the four lanes of `bits_of` has an all-ones exponent
// (infinity or NaN).
[[gnu::always_inline]] inline Mask4 non_finite(Lanes4f v) {
  const Lanes4i exponent = splat_int(0x7F800000);
  return (std::bit_cast<Lanes4i>(v) & exponent) == exponent;
}

// Translations, scales and the finiteness of four nodes (the former per-node code lane by
// lane). Codes go to `values`; `failed` and `off_layout` collect lane masks.
[[gnu::always_inline]] inline void quantize_linear_block(const LinearBlock& b, const Transform* pose,
                                                         int32_t* values, Mask4& failed,
                                                         Mask4& off_layout) {
  // Three overlapping 16-byte rows per node cover its ten floats: (tx, ty, tz, rx),
  // (rx, ry, rz, rw) and (rw, sx, sy, sz).
  Lanes4f translation_rows[4], scale_rows[4];
  Mask4 bad = splat_int(0);
  // Lanes of the rows that hold the rotation (not compared with rest here).
  const Mask4 rotation_in_translation_row = {0, 0, 0, -1};
  const Mask4 rotation_in_scale_row = {-1, 0, 0, 0};
  Mask4 at_rest = splat_int(-1);
  for (int lane = 0; lane < 4; ++lane) {
    const Transform& t = pose[b.node[lane]];
    translation_rows[lane] = load_lanes(&t.translation.x);
    scale_rows[lane] = load_lanes(&t.rotation.w);
    bad |= non_finite(translation_rows[lane]) | non_finite(load_lanes(&t.rotation.x)) |
           non_finite(scale_rows[lane]);
    at_rest &= ((translation_rows[lane] == load_lanes(b.rest_translation_row[lane])) |
                rotation_in_translation_row) &
               ((scale_rows[lane] == load_lanes(b.rest_scale_row[lane])) | rotation_in_scale_row);
  }
  failed |= bad;
  if (at_rest[0] & at_rest[1] & at_rest[2] & at_rest[3]) {
    // Every translation and scale holds its rest value exactly (the common case: nodes
    // without such tracks): all codes 0, as the former shortcut gave, no arithmetic.
    const int32_t zeros[3] = {0, 0, 0};
    for (int lane = 0; lane < 4; ++lane) {
      int32_t* codes = &values[b.node[lane] * kValuesPerNode];
      std::memcpy(codes + kTranslationCode, zeros, sizeof zeros);
      std::memcpy(codes + kScaleCode, zeros, sizeof zeros);
    }
    return;
  }
  const QuatLanes t = transpose(translation_rows[0], translation_rows[1], translation_rows[2],
                                translation_rows[3]);
  const QuatLanes s = transpose(scale_rows[0], scale_rows[1], scale_rows[2], scale_rows[3]);
  Lanes4i translation_codes[3], scale_codes[3];
  linear_codes({t.x, t.y, t.z}, b.rest_translation, b.translation_step, translation_codes, failed);
  linear_codes({s.y, s.z, s.w}, b.rest_scale, b.scale_step, scale_codes, failed);
  off_layout |= load_lanes(b.translation_unanimated) &
                ((translation_codes[0] | translation_codes[1] | translation_codes[2]) != 0);
  off_layout |= load_lanes(b.scale_unanimated) &
                ((scale_codes[0] | scale_codes[1] | scale_codes[2]) != 0);
  // Rows of three codes into the node's slots (12 bytes: the rotation slots are untouched).
  const QuatLanes t_rows =
      transpose(std::bit_cast<Lanes4f>(translation_codes[0]), std::bit_cast<Lanes4f>(translation_codes[1]),
                std::bit_cast<Lanes4f>(translation_codes[2]), splat(0.0f));
  const QuatLanes s_rows =
      transpose(std::bit_cast<Lanes4f>(scale_codes[0]), std::bit_cast<Lanes4f>(scale_codes[1]),
                std::bit_cast<Lanes4f>(scale_codes[2]), splat(0.0f));
  const Lanes4f t_row[4] = {t_rows.x, t_rows.y, t_rows.z, t_rows.w};
  const Lanes4f s_row[4] = {s_rows.x, s_rows.y, s_rows.z, s_rows.w};
  for (int lane = 0; lane < 4; ++lane) {
    int32_t* codes = &values[b.node[lane] * kValuesPerNode];
    std::memcpy(codes + kTranslationCode, &t_row[lane], 3 * sizeof(int32_t));
    std::memcpy(codes + kScaleCode, &s_row[lane], 3 * sizeof(int32_t));
  }
}

// One group of rotations (the former per-node code, lane by lane):
//   world     = parent's world * rotation                       (compensated formats)
//   target    = conj(parent's coded world) * world              (kCompensated), else rotation
//   d         = conj(rest) * target
//   axis      = the largest |d| component (w, then x, y, z on ties), or the reference's axis
//               while |d[axis]| >= half the largest; fails for a zero/NaN d
//   codes     = round(d[others] / d[axis] / step), |code| <= limit
//   unanimated rotations equal to rest take the rest codes without arithmetic
//   coded     = rest, or rest * dequantised Gibbs rotation; coded world = parent's * coded
// A group whose lanes are all unanimated and at rest (common: nodes above the animated
// skeleton) skips the arithmetic. Codes go to `values`; `failed` and `off_layout` collect
// lane masks.
template <RotationGroupKind kKind, bool kWorlds>
[[gnu::always_inline]] inline void quantize_rotation_group(
    const RotationGroup& g, const Transform* pose, const int32_t* reference, int32_t* values,
    glm::quat* coded_local, glm::quat* true_world, glm::quat* coded_world, Mask4& failed,
    Mask4& off_layout) {
  const QuatLanes rotation = gather_rotations(pose, g.node);
  QuatLanes target = rotation;
  QuatLanes parent_coded_world{};
  if constexpr (kWorlds) {
    QuatLanes world = rotation;
    if constexpr (kKind != RotationGroupKind::kRoot) {
      world = mul_lanes(gather(true_world, g.parent), rotation);
      parent_coded_world = gather(coded_world, g.parent);
    }
    scatter(world, g.node, true_world);
    if constexpr (kKind == RotationGroupKind::kCompensated) {
      target = mul_lanes(conjugate_lanes(parent_coded_world), world);
    }
  }
  const QuatLanes rest = load_quat_lanes(g.rest);

  Mask4 at_rest = splat_int(0);  // unanimated and exactly at rest: the rest codes
  if constexpr (kKind != RotationGroupKind::kCompensated) {
    at_rest = load_lanes(g.unanimated) & (rotation.x == rest.x) & (rotation.y == rest.y) &
              (rotation.z == rest.z) & (rotation.w == rest.w);
    if (g.all_unanimated && (at_rest[0] & at_rest[1] & at_rest[2] & at_rest[3])) {
      const int32_t rest_codes[4] = {3, 0, 0, 0};
      for (int lane = 0; lane < 4; ++lane) {
        std::memcpy(&values[g.node[lane] * kValuesPerNode + kRotationAxis], rest_codes,
                    sizeof rest_codes);
      }
      scatter(rest, g.node, coded_local);
      if constexpr (kWorlds) {
        if constexpr (kKind == RotationGroupKind::kRoot) {
          scatter(rest, g.node, coded_world);
        } else {
          scatter(mul_lanes(parent_coded_world, rest), g.node, coded_world);
        }
      }
      return;
    }
  }

  const QuatLanes d = mul_lanes(load_quat_lanes(g.conj_rest), target);

  // Largest component, preferring w, then x, y, z on ties.
  const Lanes4f ax = abs_lanes(d.x), ay = abs_lanes(d.y), az = abs_lanes(d.z), aw = abs_lanes(d.w);
  // (m > largest ? m : largest is one max instruction on SSE and NEON.)
  Lanes4f largest = aw;
  Lanes4i axis = splat_int(3);
  Mask4 bigger = ax > largest;
  largest = bigger ? ax : largest;
  axis = axis & ~bigger;  // 0 where bigger
  bigger = ay > largest;
  largest = bigger ? ay : largest;
  axis = select(bigger, splat_int(1), axis);
  bigger = az > largest;
  largest = bigger ? az : largest;
  axis = select(bigger, splat_int(2), axis);
  Mask4 ok = largest > splat(0.0f);  // false for a zero or NaN quaternion

  // The reference's axis while still well conditioned.
  Lanes4i reference_axis = splat_int(-1);
  if (reference != nullptr) {
    for (int lane = 0; lane < 4; ++lane) {
      reference_axis[lane] = reference[g.node[lane] * kValuesPerNode + kRotationAxis];
    }
  }
  const Lanes4f reference_magnitude =
      select(reference_axis == 0, ax,
             select(reference_axis == 1, ay, select(reference_axis == 2, az, aw)));
  const Mask4 keep_reference = (reference_axis >= 0) & (reference_axis <= 3) &
                               (reference_axis != axis) &
                               (reference_magnitude >= splat(0.5f) * largest);
  axis = select(keep_reference, reference_axis, axis);

  // Gibbs coordinates: the other components (in increasing order) over the pivot, in steps.
  const Mask4 axis0 = axis == 0, axis1 = axis == 1, axis2 = axis == 2, axis3 = axis == 3;
  const Lanes4f pivot = select(axis0, d.x, select(axis1, d.y, select(axis2, d.z, d.w)));
  const Lanes4f others[3] = {select(axis0, d.y, d.x), select(axis0 | axis1, d.z, d.y),
                             select(axis3, d.z, d.w)};
  const Lanes4f step = load_lanes(g.step);
  const Lanes4f bound = load_lanes(g.bound);
  Lanes4i codes[3];
  for (int k = 0; k < 3; ++k) {
    // (component / pivot) / step, as the former scalar expression grouped it.
    Mask4 within;
    codes[k] = round_half_away((others[k] / pivot) / step, bound, within);
    ok &= within;
  }
  if constexpr (kKind != RotationGroupKind::kCompensated) {
    axis = select(at_rest, splat_int(3), axis);
    for (Lanes4i& c : codes) c = c & ~at_rest;
    ok |= at_rest;
  }
  failed |= ~ok;
  const Mask4 rest_codes = (axis == 3) & (codes[0] == 0) & (codes[1] == 0) & (codes[2] == 0);
  if constexpr (kKind != RotationGroupKind::kCompensated) {
    off_layout |= load_lanes(g.unanimated) & ~rest_codes;
  }

  // The codes into `values`: (axis, g0, g1, g2) of lane i at node[i]'s kRotationAxis.
  {
    const QuatLanes rows = transpose(std::bit_cast<Lanes4f>(axis), std::bit_cast<Lanes4f>(codes[0]),
                                     std::bit_cast<Lanes4f>(codes[1]), std::bit_cast<Lanes4f>(codes[2]));
    const Lanes4f row[4] = {rows.x, rows.y, rows.z, rows.w};
    for (int lane = 0; lane < 4; ++lane) {
      std::memcpy(&values[g.node[lane] * kValuesPerNode + kRotationAxis], &row[lane], sizeof row[lane]);
    }
  }

  // dequantize_rotation_inline lane by lane.
  const Lanes4f g0 = __builtin_convertvector(codes[0], Lanes4f) * step;
  const Lanes4f g1 = __builtin_convertvector(codes[1], Lanes4f) * step;
  const Lanes4f g2 = __builtin_convertvector(codes[2], Lanes4f) * step;
  const Lanes4f n = splat(1.0f) / sqrt_lanes(((splat(1.0f) + g0 * g0) + g1 * g1) + g2 * g2);
  const Lanes4f g0n = g0 * n, g1n = g1 * n, g2n = g2 * n;
  const Mask4 new_axis0 = axis == 0, new_axis1 = axis == 1, new_axis2 = axis == 2,
              new_axis3 = axis == 3;
  const QuatLanes gibbs{select(new_axis0, n, g0n),
                        select(new_axis1, n, select(new_axis0, g0n, g1n)),
                        select(new_axis2, n, select(new_axis0 | new_axis1, g1n, g2n)),
                        select(new_axis3, n, g2n)};
  const QuatLanes dequantised = mul_lanes(rest, gibbs);
  const QuatLanes coded{select(rest_codes, rest.x, dequantised.x),
                        select(rest_codes, rest.y, dequantised.y),
                        select(rest_codes, rest.z, dequantised.z),
                        select(rest_codes, rest.w, dequantised.w)};
  scatter(coded, g.node, coded_local);
  if constexpr (kWorlds) {
    if constexpr (kKind == RotationGroupKind::kRoot) {
      scatter(coded, g.node, coded_world);
    } else {
      scatter(mul_lanes(parent_coded_world, coded), g.node, coded_world);
    }
  }
}

// POSECAST_QUANTIZER_CLONES: on x86-64, quantize_schedule is compiled twice, for AVX2 and for
// the baseline, and one is picked at load time (GCC/Clang target_clones, glibc ifunc), as
// posecast_core's hot kernels are (shared/src/simd4.h, POSECAST_HOT_CLONES). The AVX2 clone
// gets VEX encodings and blend instructions only: AVX2 does not imply FMA, and
// -ffp-contract=off forbids contraction anyway, so both clones give the same bits.
#if defined(__x86_64__) && !defined(POSECAST_NO_TARGET_CLONES)
#define POSECAST_QUANTIZER_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define POSECAST_QUANTIZER_CLONES
#endif

// The whole schedule over one pose: false when any lane failed (see PoseQuantizer::quantize).
POSECAST_QUANTIZER_CLONES
bool quantize_schedule(std::span<const LinearBlock> linear_blocks,
                       std::span<const RotationGroup> groups, bool compensated,
                       const Transform* poses, const int32_t* reference_values, int32_t* values,
                       glm::quat* coded_local, glm::quat* true_world, glm::quat* coded_world,
                       bool& any_off_layout) {
  // Linear blocks are interleaved with the rotation groups: they depend on nothing, so the
  // processor can run them while a group waits for its parents' results. Each group reads
  // its reference axes before writing its codes and linear blocks never write an axis, so
  // `reference_values` may be `values` (the former code allowed reference == &out).
  Mask4 failed = splat_int(0);
  Mask4 off_layout = splat_int(0);
  const std::size_t steps = std::max(linear_blocks.size(), groups.size());
  for (std::size_t i = 0; i < steps; ++i) {
    if (i < linear_blocks.size()) {
      quantize_linear_block(linear_blocks[i], poses, values, failed, off_layout);
    }
    if (i >= groups.size()) continue;
    const RotationGroup& g = groups[i];
    if (!compensated) {
      quantize_rotation_group<RotationGroupKind::kChild, false>(
          g, poses, reference_values, values, coded_local, nullptr, nullptr, failed, off_layout);
      continue;
    }
    switch (g.kind) {
      case RotationGroupKind::kRoot:
        quantize_rotation_group<RotationGroupKind::kRoot, true>(
            g, poses, reference_values, values, coded_local, true_world, coded_world, failed,
            off_layout);
        break;
      case RotationGroupKind::kChild:
        quantize_rotation_group<RotationGroupKind::kChild, true>(
            g, poses, reference_values, values, coded_local, true_world, coded_world, failed,
            off_layout);
        break;
      case RotationGroupKind::kCompensated:
        quantize_rotation_group<RotationGroupKind::kCompensated, true>(
            g, poses, reference_values, values, coded_local, true_world, coded_world, failed,
            off_layout);
        break;
    }
  }
  if ((failed[0] | failed[1] | failed[2] | failed[3]) != 0) return false;
  any_off_layout = (off_layout[0] | off_layout[1] | off_layout[2] | off_layout[3]) != 0;
  return true;
}

}  // namespace

bool PoseQuantizer::quantize(std::span<const Transform> pose, const QuantizedPose* reference,
                             QuantizedPose& out) {
  const std::size_t count = format_.node_count();
  if (pose.size() != count || !valid_format_) return false;
  if (reference != nullptr && reference->values.size() != count * kValuesPerNode) {
    reference = nullptr;
  }
  if (out.values.size() != count * kValuesPerNode) out.values.resize(count * kValuesPerNode);
  bool off_layout = false;
  if (!quantize_schedule(linear_blocks_, groups_, format_.compensated, pose.data(),
                         reference != nullptr ? reference->values.data() : nullptr,
                         out.values.data(), coded_local_.data(), true_world_.data(),
                         coded_world_.data(), off_layout)) {
    return false;
  }
  out.off_layout = off_layout;
  return true;
}

namespace {

// Node n's transform from its codes; the rotation is `known_rotation` when given (the caller
// knows the same codes' dequantised rotation), else dequantised.
[[gnu::always_inline]] inline void dequantize_node(const PoseFormat& format, const int32_t* codes,
                                                   std::size_t n, const glm::quat* known_rotation,
                                                   Transform& t) {
  const Transform& rest = format.rest[n];
  const NodePrecision& precision = format.precision[n];
  t.translation = dequantize_linear(rest.translation, codes + kTranslationCode,
                                    precision.translation_step);
  if (known_rotation != nullptr) {
    t.rotation = *known_rotation;
  } else {
    t.rotation = is_rest_rotation(codes + kRotationAxis)
                     ? rest.rotation
                     : dequantize_rotation_inline(rest, codes + kRotationAxis, precision.rotation_step);
  }
  t.scale = dequantize_linear(rest.scale, codes + kScaleCode, precision.scale_step);
}

}  // namespace

void dequantize_pose(const PoseFormat& format, const QuantizedPose& pose,
                     std::span<Transform> out) {
  const std::size_t count = format.node_count();
  for (std::size_t n = 0; n < count && n < out.size(); ++n) {
    dequantize_node(format, &pose.values[n * kValuesPerNode], n, nullptr, out[n]);
  }
}

void dequantize_pose_reusing(const PoseFormat& format, const QuantizedPose& pose,
                             const QuantizedPose& known,
                             std::span<const glm::quat> known_rotations,
                             std::span<Transform> out) {
  const std::size_t count = format.node_count();
  if (known.values.size() != count * kValuesPerNode || known_rotations.size() != count) {
    dequantize_pose(format, pose, out);
    return;
  }
  for (std::size_t n = 0; n < count && n < out.size(); ++n) {
    const int32_t* codes = &pose.values[n * kValuesPerNode];
    const int32_t* known_codes = &known.values[n * kValuesPerNode];
    const bool same_rotation = codes[kRotationAxis] == known_codes[kRotationAxis] &&
                               codes[kRotationCode] == known_codes[kRotationCode] &&
                               codes[kRotationCode + 1] == known_codes[kRotationCode + 1] &&
                               codes[kRotationCode + 2] == known_codes[kRotationCode + 2];
    dequantize_node(format, codes, n, same_rotation ? &known_rotations[n] : nullptr, out[n]);
  }
}

bool quantized_palette(const Skeleton& skeleton, const PoseFormat& format,
                       const QuantizedPose& pose, PaletteScratch& scratch,
                       std::span<glm::mat4> palette) {
  if (skeleton.node_count() != format.node_count() ||
      pose.values.size() != format.node_count() * kValuesPerNode) {
    return false;
  }
  scratch.locals.resize(format.node_count());
  scratch.models.resize(format.node_count());
  dequantize_pose(format, pose, scratch.locals);
  LocalToModelJob to_model{&skeleton, scratch.locals, scratch.models};
  if (!to_model.Run()) return false;
  PaletteJob palette_job{&skeleton, scratch.models, palette};
  return palette_job.Run();
}

}  // namespace posecast::protocol
