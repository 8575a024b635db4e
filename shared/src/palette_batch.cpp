#include "posecast/palette_batch.h"

#include <cstdint>
#include <cstring>

#include "simd4.h"

namespace posecast {
namespace {

using detail::Float8;
using detail::Int8;
constexpr std::size_t kBatchLanes = kPaletteBatchSize;
static_assert(kBatchLanes == 8, "one entity per lane of a Float8");

// An affine matrix per lane: m[c][r] for columns c = 0..3 and rows r = 0..2; row 3 is exactly
// (0, 0, 0, 1), as to_matrix() and affine_mul() write it, and is never stored.
struct Lanes12 {
  Float8 m[4][3];
};
// Floats of one node's world matrices in the scratch: 12 entries x 8 lanes, entry-major.
constexpr std::size_t kFloatsPerNode = 12 * kBatchLanes;

POSECAST_INLINE void load12(const float* p, Lanes12& out) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 3; ++r) out.m[c][r] = detail::load8(p + (c * 3 + r) * kBatchLanes);
}

POSECAST_INLINE void store12(float* p, const Lanes12& m) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 3; ++r) detail::store8(p + (c * 3 + r) * kBatchLanes, m.m[c][r]);
}

// affine_mul(a, b) lane by lane: transform.cpp's expressions, in its order. `B` is Lanes12
// (a matrix per lane) or glm::mat4 (the same matrix in every lane: vector * scalar is the
// splat's product, lane by lane). Written out: GCC keeps loops over vector arrays rolled,
// through the stack.
POSECAST_INLINE Float8 entry(const Lanes12& b, int c, int r) { return b.m[c][r]; }
POSECAST_INLINE float entry(const glm::mat4& b, int c, int r) { return b[c][r]; }

template <class B>
POSECAST_INLINE Float8 product_entry(const Lanes12& a, const B& b, int c, int row) {
  return a.m[0][row] * entry(b, c, 0) + a.m[1][row] * entry(b, c, 1) + a.m[2][row] * entry(b, c, 2);
}

template <class B>
POSECAST_INLINE Lanes12 mul12(const Lanes12& a, const B& b) {
  return Lanes12{{{product_entry(a, b, 0, 0), product_entry(a, b, 0, 1), product_entry(a, b, 0, 2)},
                  {product_entry(a, b, 1, 0), product_entry(a, b, 1, 1), product_entry(a, b, 1, 2)},
                  {product_entry(a, b, 2, 0), product_entry(a, b, 2, 1), product_entry(a, b, 2, 2)},
                  {product_entry(a, b, 3, 0) + a.m[3][0], product_entry(a, b, 3, 1) + a.m[3][1],
                   product_entry(a, b, 3, 2) + a.m[3][2]}}};
}

POSECAST_INLINE Lanes12 select12(Int8 mask, const Lanes12& a, const Lanes12& b) {
  Lanes12 r;
  for (int c = 0; c < 4; ++c)
    for (int row = 0; row < 3; ++row) r.m[c][row] = detail::select(mask, a.m[c][row], b.m[c][row]);
  return r;
}

// 8x8 transpose: out[k] lane e = rows[e] lane k (unpacks, then pair and half swaps).
POSECAST_INLINE void transpose8(const Float8* rows, Float8* out) {
  Float8 t[8], u[8];
  for (int p = 0; p < 4; ++p) {
    t[2 * p] = __builtin_shufflevector(rows[2 * p], rows[2 * p + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[2 * p + 1] = __builtin_shufflevector(rows[2 * p], rows[2 * p + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int h = 0; h < 2; ++h) {  // rows 0-3 (h = 0) and 4-7 (h = 1)
    const Float8 a0 = t[4 * h], a1 = t[4 * h + 1], b0 = t[4 * h + 2], b1 = t[4 * h + 3];
    u[4 * h + 0] = __builtin_shufflevector(a0, b0, 0, 1, 8, 9, 4, 5, 12, 13);
    u[4 * h + 1] = __builtin_shufflevector(a0, b0, 2, 3, 10, 11, 6, 7, 14, 15);
    u[4 * h + 2] = __builtin_shufflevector(a1, b1, 0, 1, 8, 9, 4, 5, 12, 13);
    u[4 * h + 3] = __builtin_shufflevector(a1, b1, 2, 3, 10, 11, 6, 7, 14, 15);
  }
  for (int k = 0; k < 4; ++k) {
    out[k] = __builtin_shufflevector(u[k], u[4 + k], 0, 1, 2, 3, 8, 9, 10, 11);
    out[k + 4] = __builtin_shufflevector(u[k], u[4 + k], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// to_matrix() of node `node` of every lane's entity, lane by lane in transform.cpp's order.
POSECAST_INLINE Lanes12 local_matrices(const Transform* const* locals, std::size_t node) {
  // A Transform is 10 floats: t.xyz, r.xyzw, s.xyz. Floats 0-7 of each entity, transposed,
  // give t, r and s.x as lanes; floats 2-9 give s.y and s.z as their lanes 6 and 7.
  Float8 head[kBatchLanes], tail[kBatchLanes];
  for (std::size_t e = 0; e < kBatchLanes; ++e) {
    const float* f = &locals[e][node].translation.x;
    head[e] = detail::load8(f);
    tail[e] = detail::load8(f + 2);
  }
  Float8 h[kBatchLanes], t[kBatchLanes];
  transpose8(head, h);
  transpose8(tail, t);
  const Float8 x = h[3], y = h[4], z = h[5], w = h[6];
  const Float8 sx = h[7], sy = t[6], sz = t[7];
  const Float8 x2 = x + x, y2 = y + y, z2 = z + z;
  const Float8 xx = x * x2, yy = y * y2, zz = z * z2;
  const Float8 xy = x * y2, xz = x * z2, yz = y * z2;
  const Float8 wx = w * x2, wy = w * y2, wz = w * z2;
  const Float8 one = detail::splat8(1.0f);
  Lanes12 m;
  m.m[0][0] = (one - (yy + zz)) * sx;
  m.m[0][1] = (xy + wz) * sx;
  m.m[0][2] = (xz - wy) * sx;
  m.m[1][0] = (xy - wz) * sy;
  m.m[1][1] = (one - (xx + zz)) * sy;
  m.m[1][2] = (yz + wx) * sy;
  m.m[2][0] = (xz + wy) * sz;
  m.m[2][1] = (yz - wx) * sz;
  m.m[2][2] = (one - (xx + yy)) * sz;
  m.m[3][0] = h[0];
  m.m[3][1] = h[1];
  m.m[3][2] = h[2];
  return m;
}

// Stores 16 floats (one matrix) at `out`, 16-byte aligned, past the caches: four 16-byte
// non-temporal stores (SSE, so every clone has them; the matrix's cache line fills in the
// write-combining buffer and goes to memory whole, without first being read).
POSECAST_INLINE void stream_matrix(float* out, Float8 lo, Float8 hi) {
#if defined(__SSE__)
  _mm_stream_ps(out, POSECAST_SHUFFLE(lo, 0, 1, 2, 3));
  _mm_stream_ps(out + 4, POSECAST_SHUFFLE(lo, 4, 5, 6, 7));
  _mm_stream_ps(out + 8, POSECAST_SHUFFLE(hi, 0, 1, 2, 3));
  _mm_stream_ps(out + 12, POSECAST_SHUFFLE(hi, 4, 5, 6, 7));
#else
  detail::store8(out, lo);
  detail::store8(out + 8, hi);
#endif
}

// Writes lane e of `m` as the full matrix palettes[e][joint], for the lanes e < count whose bit
// is set in `written`; with non-temporal stores when `stream` (then every palette is 16-byte
// aligned).
POSECAST_INLINE void store_palettes(const Lanes12& m, glm::mat4* const* palettes, std::size_t joint,
                                    std::size_t count, uint32_t written, bool stream) {
  const Float8 zero = detail::splat8(0.0f);
  const Float8 one = detail::splat8(1.0f);
  // Column-major 4x4 per entity: floats 0-7 are columns 0-1, floats 8-15 columns 2-3.
  const Float8 first[kBatchLanes] = {m.m[0][0], m.m[0][1], m.m[0][2], zero,
                                     m.m[1][0], m.m[1][1], m.m[1][2], zero};
  const Float8 second[kBatchLanes] = {m.m[2][0], m.m[2][1], m.m[2][2], zero,
                                      m.m[3][0], m.m[3][1], m.m[3][2], one};
  Float8 lo[kBatchLanes], hi[kBatchLanes];
  transpose8(first, lo);
  transpose8(second, hi);
  const auto store = [&](std::size_t e) {
    float* out = &palettes[e][joint][0].x;
    detail::store8(out, lo[e]);
    detail::store8(out + 8, hi[e]);
  };
  if (stream) {
    for (std::size_t e = 0; e < count; ++e) {
      if ((written & (1u << e)) != 0) stream_matrix(&palettes[e][joint][0].x, lo[e], hi[e]);
    }
    return;
  }
  if (count == kBatchLanes && written == 0xffu) {  // the usual case, straight from registers
    store(0), store(1), store(2), store(3), store(4), store(5), store(6), store(7);
    return;
  }
  for (std::size_t e = 0; e < count; ++e) {
    if ((written & (1u << e)) != 0) store(e);
  }
}

// Lane e of the scratch matrices of `node` as a glm::mat4 (row 3 exactly (0, 0, 0, 1)).
glm::mat4 lane_matrix(const float* node_floats, std::size_t e) {
  glm::mat4 m(1.0f);
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 3; ++r) m[c][r] = node_floats[(c * 3 + r) * kBatchLanes + e];
  for (int c = 0; c < 3; ++c) m[c][3] = 0.0f;
  return m;
}

// Bit e set when lane e's matrix of `node_floats` is exactly the identity, bit for bit:
// is_exact_identity(lane_matrix(node_floats, e)) for every lane at once (row 3 is always
// (0, 0, 0, 1)). Compared as integers, as is_exact_identity's memcmp does, so -0.0f is not
// 0.0f. Read straight from the scratch: a glm::mat4 built from scalar stores and compared
// with wide loads right after stalls on store-to-load forwarding, which took about 5 % of
// bench_sampling's Fox profile.
// (Four lanes at a time: this function is not one of the AVX2 clones, and GCC compares
// eight-lane vectors on the baseline target one lane at a time.)
uint32_t identity_lanes(const float* node_floats) {
  using detail::Int4;
  Int4 low = Int4{} == 0, high = low;  // all lanes set
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 3; ++r) {
      const float* entry = node_floats + (c * 3 + r) * kBatchLanes;
      Int4 bits_low, bits_high;
      std::memcpy(&bits_low, entry, sizeof bits_low);
      std::memcpy(&bits_high, entry + 4, sizeof bits_high);
      const int32_t expected = c == r ? 0x3f800000 : 0;  // the bits of 1.0f and of +0.0f
      low &= bits_low == expected;
      high &= bits_high == expected;
    }
  }
  uint32_t mask = 0;
  for (int e = 0; e < 4; ++e) {
    if (low[e] != 0) mask |= 1u << e;
    if (high[e] != 0) mask |= 1u << (e + 4);
  }
  return mask;
}

struct BatchArgs {
  const int16_t* parents;
  std::size_t nodes;
  const uint16_t* joint_nodes;
  const glm::mat4* inverse_bind;
  std::size_t joints;
  const Transform* const* locals;  // kBatchLanes pointers (unused lanes repeat entity 0)
  glm::mat4* const* palettes;      // `count` pointers
  std::size_t count;
  uint32_t written;                // bit e: write lane e's palette (e < count)
  float* models;                   // nodes * kFloatsPerNode floats
  // Per lane: the inverse of the mesh node's world matrix, when the lane has one (has_mesh).
  const glm::mat4* mesh_inverse;   // kBatchLanes matrices, or null when no lane has a mesh node
  const int32_t* has_mesh;         // kBatchLanes lane masks (0 or -1), or null
  bool stream;                     // non-temporal stores (every palette 16-byte aligned)
};

POSECAST_INLINE void local_to_model_lanes(const BatchArgs& a) {
  for (std::size_t i = 0; i < a.nodes; ++i) {
    const Lanes12 local = local_matrices(a.locals, i);
    const int parent = a.parents[i];
    if (parent == kNoParent) {
      store12(a.models + i * kFloatsPerNode, local);
    } else {
      Lanes12 parent_model;
      load12(a.models + static_cast<std::size_t>(parent) * kFloatsPerNode, parent_model);
      store12(a.models + i * kFloatsPerNode, mul12(parent_model, local));
    }
  }
}

// palette[j] = affine_mul(affine_mul(mesh_inverse, world(joint j)), inverse_bind[j]) in lanes
// with a mesh node, affine_mul(world(joint j), inverse_bind[j]) in the others (PaletteJob).
POSECAST_INLINE void palettes_lanes(const BatchArgs& a) {
  if (a.mesh_inverse == nullptr) {
    for (std::size_t j = 0; j < a.joints; ++j) {
      Lanes12 world;
      load12(a.models + std::size_t{a.joint_nodes[j]} * kFloatsPerNode, world);
      store_palettes(mul12(world, a.inverse_bind[j]), a.palettes, j, a.count, a.written, a.stream);
    }
    return;
  }
  Lanes12 mesh;
  Int8 has_mesh;
  {
    float entries[4][3][kBatchLanes];
    for (std::size_t e = 0; e < kBatchLanes; ++e)
      for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 3; ++r) entries[c][r][e] = a.mesh_inverse[e][c][r];
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 3; ++r) mesh.m[c][r] = detail::load8(entries[c][r]);
    std::memcpy(&has_mesh, a.has_mesh, sizeof has_mesh);
  }
  for (std::size_t j = 0; j < a.joints; ++j) {
    Lanes12 world;
    load12(a.models + std::size_t{a.joint_nodes[j]} * kFloatsPerNode, world);
    world = select12(has_mesh, mul12(mesh, world), world);
    store_palettes(mul12(world, a.inverse_bind[j]), a.palettes, j, a.count, a.written, a.stream);
  }
}

// The target clones (simd4.h) pass no vectors: clang refuses vector arguments and returns in
// a function compiled for another ISA than its callee, even an inlined one.
POSECAST_HOT_CLONES
void local_to_model_batch(const BatchArgs& args) { local_to_model_lanes(args); }

POSECAST_HOT_CLONES
void palettes_batch(const BatchArgs& args) { palettes_lanes(args); }

}  // namespace

std::size_t PaletteBatchJob::scratch_floats(std::size_t node_count) {
  return node_count * kFloatsPerNode;
}

std::size_t PaletteBatchJob::scratch_floats(const Skeleton& skeleton) {
  return scratch_floats(skeleton.node_count());
}

bool PaletteBatchJob::Validate() const {
  if (skeleton == nullptr) return false;
  const std::size_t nodes = skeleton->node_count();
  const std::size_t joints = skeleton->joint_count();
  if (locals.empty() || locals.size() > kBatchLanes || palettes.size() != locals.size()) return false;
  for (std::size_t e = 0; e < locals.size(); ++e) {
    if (locals[e].size() != nodes || palettes[e].size() != joints) return false;
  }
  if (scratch.size() < scratch_floats(*skeleton)) return false;
  if (!mesh_models.empty() && mesh_models.size() != locals.size()) return false;
  if (skeleton->inverse_bind.size() != joints) return false;
  if (skeleton->mesh_node < -1 || skeleton->mesh_node >= static_cast<int64_t>(nodes)) return false;
  if (assets_validated) return true;  // Skeleton::validate checked the loops below
  for (std::size_t i = 0; i < nodes; ++i) {
    const int parent = skeleton->parents[i];
    if (parent < kNoParent || parent >= static_cast<int>(i)) return false;
  }
  for (const uint16_t node : skeleton->joint_nodes)
    if (node >= nodes) return false;
  return true;
}

uint32_t PaletteBatchJob::Run() const {
  if (!Validate()) return 0;
  const std::size_t count = locals.size();
  const Transform* lane_locals[kBatchLanes];
  for (std::size_t e = 0; e < kBatchLanes; ++e) lane_locals[e] = locals[e < count ? e : 0].data();
  glm::mat4* lane_palettes[kBatchLanes];
  for (std::size_t e = 0; e < count; ++e) lane_palettes[e] = palettes[e].data();

  BatchArgs args{skeleton->parents.data(), skeleton->node_count(), skeleton->joint_nodes.data(),
                 skeleton->inverse_bind.data(), skeleton->joint_count(), lane_locals,
                 lane_palettes, count, 0u, scratch.data(), nullptr, nullptr, false};
  local_to_model_batch(args);
  if (!mesh_models.empty()) {
    const float* mesh_floats =
        skeleton->mesh_node == -1
            ? nullptr
            : scratch.data() + static_cast<std::size_t>(skeleton->mesh_node) * kFloatsPerNode;
    for (std::size_t e = 0; e < count; ++e) {
      mesh_models[e] = mesh_floats == nullptr ? glm::mat4(1.0f) : lane_matrix(mesh_floats, e);
    }
  }

  // The mesh node, per lane as PaletteJob decides it: a world matrix that is exactly the
  // identity takes the path without the product (see PaletteJob::Run).
  uint32_t written = (1u << count) - 1u;
  glm::mat4 mesh_inverse[kBatchLanes];
  int32_t has_mesh[kBatchLanes] = {};
  bool any_mesh = false;
  if (skeleton->mesh_node != -1) {
    const float* mesh_floats = scratch.data() + static_cast<std::size_t>(skeleton->mesh_node) * kFloatsPerNode;
    const uint32_t identity = identity_lanes(mesh_floats);
    // The usual case (Fox, the generated rig): every lane's mesh node is exactly the identity.
    for (std::size_t e = 0; e < kBatchLanes && identity != 0xffu; ++e) {
      mesh_inverse[e] = glm::mat4(1.0f);
      if ((identity & (1u << e)) != 0) continue;
      if (!affine_inverse(lane_matrix(mesh_floats, e), mesh_inverse[e])) {
        written &= ~(1u << e);
        continue;
      }
      has_mesh[e] = -1;
      any_mesh = true;
    }
  }
  if (any_mesh) {
    args.mesh_inverse = mesh_inverse;
    args.has_mesh = has_mesh;
  }
  args.written = written;
#if defined(__SSE__)
  args.stream = streaming_stores;
  for (std::size_t e = 0; e < count; ++e) {
    if (reinterpret_cast<std::uintptr_t>(lane_palettes[e]) % 16 != 0) args.stream = false;
  }
#endif
  palettes_batch(args);
#if defined(__SSE__)
  // Non-temporal stores are not ordered with later ones: the fence makes them visible before
  // whatever the caller does next (another thread's hand-over included).
  if (args.stream) _mm_sfence();
#endif
  return written;
}

}  // namespace posecast
