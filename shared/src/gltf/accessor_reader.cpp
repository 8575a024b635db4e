#include "gltf/accessor_reader.h"

#include <algorithm>
#include <bit>
#include <span>

namespace posecast::gltf {
namespace {

int component_size(int component_type) {
  switch (component_type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return 1;
    case TINYGLTF_COMPONENT_TYPE_SHORT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return 2;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return 4;
    default: return 0;  // INT and DOUBLE are not glTF 2.0 component types
  }
}

int component_count(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR: return 1;
    case TINYGLTF_TYPE_VEC2: return 2;
    case TINYGLTF_TYPE_VEC3: return 3;
    case TINYGLTF_TYPE_VEC4: return 4;
    case TINYGLTF_TYPE_MAT4: return 16;
    default: return 0;  // MAT2/MAT3 (column padding) are never read by posecast
  }
}

const char* type_name(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR: return "SCALAR";
    case TINYGLTF_TYPE_VEC2: return "VEC2";
    case TINYGLTF_TYPE_VEC3: return "VEC3";
    case TINYGLTF_TYPE_VEC4: return "VEC4";
    case TINYGLTF_TYPE_MAT2: return "MAT2";
    case TINYGLTF_TYPE_MAT3: return "MAT3";
    case TINYGLTF_TYPE_MAT4: return "MAT4";
    default: return "an unknown type";
  }
}

uint32_t storage_of(int component_type, bool normalized) {
  switch (component_type) {
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return normalized ? 0u : kFloat;
    case TINYGLTF_COMPONENT_TYPE_BYTE: return normalized ? kByteNorm : kByte;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return normalized ? kUByteNorm : kUByte;
    case TINYGLTF_COMPONENT_TYPE_SHORT: return normalized ? kShortNorm : kShort;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return normalized ? kUShortNorm : kUShort;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: return normalized ? 0u : kUInt;
    default: return 0u;
  }
}

// Little-endian loads, byte by byte: no alignment needs, same result on every host.
uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

// The spec's decoding (glTF 2.0, "Animation samplers" / KHR_mesh_quantization tables); float
// divisions round once, so the result is the same everywhere.
float decode_float(const uint8_t* p, int component_type, bool normalized) {
  switch (component_type) {
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return std::bit_cast<float>(load_u32(p));
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
      const auto c = static_cast<float>(static_cast<int8_t>(p[0]));
      return normalized ? std::max(c / 127.0f, -1.0f) : c;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: {
      const auto c = static_cast<float>(p[0]);
      return normalized ? c / 255.0f : c;
    }
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
      const auto c = static_cast<float>(static_cast<int16_t>(load_u16(p)));
      return normalized ? std::max(c / 32767.0f, -1.0f) : c;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      const auto c = static_cast<float>(load_u16(p));
      return normalized ? c / 65535.0f : c;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: return static_cast<float>(load_u32(p));
    default: return 0.0f;
  }
}

uint32_t decode_uint(const uint8_t* p, int component_type, bool /*normalized*/) {
  switch (component_type) {
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return p[0];
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return load_u16(p);
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: return load_u32(p);
    default: return 0u;
  }
}

std::string used_by(const AccessorUse& use) { return " (used by " + use.path + ")"; }

}  // namespace

Result<std::span<const uint8_t>> buffer_view_bytes(const ImportContext& ctx, int view,
                                            const std::string& ref_path) {
  const tinygltf::Model& m = ctx.gltf();
  if (view < 0 || static_cast<std::size_t>(view) >= m.bufferViews.size())
    return ctx.error(ref_path, "bufferView index " + std::to_string(view) + " out of range (" +
                                   std::to_string(m.bufferViews.size()) + " buffer views)");
  const tinygltf::BufferView& bv = m.bufferViews[static_cast<std::size_t>(view)];
  const std::string vpath = at("bufferViews", static_cast<std::size_t>(view));
  if (bv.buffer < 0 || static_cast<std::size_t>(bv.buffer) >= m.buffers.size())
    return ctx.error(vpath + ".buffer", "buffer index " + std::to_string(bv.buffer) + " out of range");
  const std::vector<unsigned char>& data = m.buffers[static_cast<std::size_t>(bv.buffer)].data;
  if (bv.byteOffset > data.size() || bv.byteLength > data.size() - bv.byteOffset)
    return ctx.error(vpath, "byteOffset " + std::to_string(bv.byteOffset) + " + byteLength " +
                                std::to_string(bv.byteLength) + " exceeds " +
                                at("buffers", static_cast<std::size_t>(bv.buffer)) + " of " +
                                std::to_string(data.size()) + " bytes");
  return std::span<const uint8_t>(data.data() + bv.byteOffset, bv.byteLength);
}

namespace {

// Checks the accessor index, type and storage for `use`; returns the accessor.
Result<const tinygltf::Accessor*> checked_accessor(const ImportContext& ctx,
                                                   const AccessorUse& use) {
  const tinygltf::Model& m = ctx.gltf();
  if (use.accessor < 0 || static_cast<std::size_t>(use.accessor) >= m.accessors.size())
    return ctx.error(use.path, "accessor index " + std::to_string(use.accessor) +
                                   " out of range (" + std::to_string(m.accessors.size()) +
                                   " accessors)");
  const tinygltf::Accessor& a = m.accessors[static_cast<std::size_t>(use.accessor)];
  const std::string apath = at("accessors", static_cast<std::size_t>(use.accessor));
  if (a.type != use.type)
    return ctx.error(use.path, apath + " is " + type_name(a.type) + ", expected " +
                                   type_name(use.type));
  const uint32_t storage = storage_of(a.componentType, a.normalized);
  if ((storage & use.storages) == 0)
    return ctx.error(use.path, apath + " stores " + storage_name(a.componentType, a.normalized) +
                                   ", which is not allowed here");
  if (a.count == 0) return ctx.error(apath + ".count", "must be at least 1" + used_by(use));
  return &a;
}

template <class T, class Decode>
Result<std::vector<T>> read_all(const ImportContext& ctx, const AccessorUse& use, Decode decode) {
  Result<const tinygltf::Accessor*> checked = checked_accessor(ctx, use);
  if (!checked) return checked.error();
  const tinygltf::Accessor& a = *checked.value();
  const std::string apath = at("accessors", static_cast<std::size_t>(use.accessor));
  const int csize = component_size(a.componentType);
  const int comps = component_count(a.type);
  const std::size_t elem = static_cast<std::size_t>(csize) * static_cast<std::size_t>(comps);
  const std::size_t count = a.count;

  std::vector<T> out;
  if (a.bufferView < 0) {
    if (count > kMaxUnbackedAccessorCount)
      return ctx.error(apath + ".count", std::to_string(count) +
                                             " elements without a bufferView, more than " +
                                             std::to_string(kMaxUnbackedAccessorCount) + used_by(use));
    out.assign(count * static_cast<std::size_t>(comps), T{});
  } else {
    Result<std::span<const uint8_t>> bytes = buffer_view_bytes(ctx, a.bufferView, apath + ".bufferView");
    if (!bytes) return bytes.error();
    const std::span<const uint8_t> view = bytes.value();
    const tinygltf::BufferView& bv = ctx.gltf().bufferViews[static_cast<std::size_t>(a.bufferView)];
    const std::size_t stride = bv.byteStride != 0 ? bv.byteStride : elem;
    if (stride < elem || stride % static_cast<std::size_t>(csize) != 0)
      return ctx.error(at("bufferViews", static_cast<std::size_t>(a.bufferView)) + ".byteStride",
                       std::to_string(stride) + " does not fit elements of " +
                           std::to_string(elem) + " bytes of " + apath);
    if (a.byteOffset % static_cast<std::size_t>(csize) != 0 ||
        (bv.byteOffset + a.byteOffset) % static_cast<std::size_t>(csize) != 0)
      return ctx.error(apath + ".byteOffset",
                       "not a multiple of the component size " + std::to_string(csize) + used_by(use));
    // Last element's end = byteOffset + (count - 1) * stride + elem, computed without overflow.
    const bool fits = a.byteOffset <= view.size() && elem <= view.size() - a.byteOffset &&
                      count - 1 <= (view.size() - a.byteOffset - elem) / stride;
    if (!fits)
      return ctx.error(apath, std::to_string(count) + " elements of " + std::to_string(elem) +
                                  " bytes (stride " + std::to_string(stride) + ") from byteOffset " +
                                  std::to_string(a.byteOffset) + " exceed " +
                                  at("bufferViews", static_cast<std::size_t>(a.bufferView)) + " of " +
                                  std::to_string(view.size()) + " bytes" + used_by(use));
    out.resize(count * static_cast<std::size_t>(comps));
    const uint8_t* base = view.data() + a.byteOffset;
    for (std::size_t i = 0; i < count; ++i)
      for (int c = 0; c < comps; ++c)
        out[i * static_cast<std::size_t>(comps) + static_cast<std::size_t>(c)] =
            decode(base + i * stride + static_cast<std::size_t>(c * csize), a.componentType,
                   a.normalized);
  }

  if (!a.sparse.isSparse) return out;

  // Sparse substitution: `count` (index, element) pairs replace elements of the base data.
  const std::string spath = apath + ".sparse";
  if (a.sparse.count < 1 || static_cast<std::size_t>(a.sparse.count) > count)
    return ctx.error(spath + ".count", std::to_string(a.sparse.count) + " is not in [1, " +
                                           std::to_string(count) + "]" + used_by(use));
  const auto scount = static_cast<std::size_t>(a.sparse.count);
  const int icomp = a.sparse.indices.componentType;
  const int isize = component_size(icomp);
  if (icomp != TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE &&
      icomp != TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT && icomp != TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT)
    return ctx.error(spath + ".indices.componentType",
                     std::to_string(icomp) + " is not UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT");
  Result<std::span<const uint8_t>> ibytes =
      buffer_view_bytes(ctx, a.sparse.indices.bufferView, spath + ".indices.bufferView");
  if (!ibytes) return ibytes.error();
  Result<std::span<const uint8_t>> vbytes =
      buffer_view_bytes(ctx, a.sparse.values.bufferView, spath + ".values.bufferView");
  if (!vbytes) return vbytes.error();
  const long long ioff = a.sparse.indices.byteOffset;
  const long long voff = a.sparse.values.byteOffset;
  if (ioff < 0 || static_cast<std::size_t>(ioff) % static_cast<std::size_t>(isize) != 0 ||
      static_cast<std::size_t>(ioff) > ibytes.value().size() ||
      scount > (ibytes.value().size() - static_cast<std::size_t>(ioff)) / static_cast<std::size_t>(isize))
    return ctx.error(spath + ".indices", std::to_string(scount) + " indices from byteOffset " +
                                             std::to_string(ioff) + " do not fit their bufferView of " +
                                             std::to_string(ibytes.value().size()) + " bytes");
  if (voff < 0 || static_cast<std::size_t>(voff) % static_cast<std::size_t>(csize) != 0 ||
      static_cast<std::size_t>(voff) > vbytes.value().size() ||
      scount > (vbytes.value().size() - static_cast<std::size_t>(voff)) / elem)
    return ctx.error(spath + ".values", std::to_string(scount) + " values from byteOffset " +
                                            std::to_string(voff) + " do not fit their bufferView of " +
                                            std::to_string(vbytes.value().size()) + " bytes");
  const uint8_t* ip = ibytes.value().data() + ioff;
  const uint8_t* vp = vbytes.value().data() + voff;
  uint64_t previous = 0;
  for (std::size_t k = 0; k < scount; ++k) {
    const uint32_t index = decode_uint(ip + k * static_cast<std::size_t>(isize), icomp, false);
    if (index >= count)
      return ctx.error(spath + ".indices", "index " + std::to_string(index) + " (entry " +
                                               std::to_string(k) + ") out of range for " +
                                               std::to_string(count) + " elements");
    if (k > 0 && index <= previous)
      return ctx.error(spath + ".indices", "indices are not strictly increasing at entry " +
                                               std::to_string(k));
    previous = index;
    for (int c = 0; c < comps; ++c)
      out[static_cast<std::size_t>(index) * static_cast<std::size_t>(comps) + static_cast<std::size_t>(c)] =
          decode(vp + k * elem + static_cast<std::size_t>(c * csize), a.componentType, a.normalized);
  }
  return out;
}

}  // namespace

std::string storage_name(int component_type, bool normalized) {
  std::string s;
  switch (component_type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: s = "BYTE"; break;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: s = "UNSIGNED_BYTE"; break;
    case TINYGLTF_COMPONENT_TYPE_SHORT: s = "SHORT"; break;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: s = "UNSIGNED_SHORT"; break;
    case TINYGLTF_COMPONENT_TYPE_INT: s = "INT"; break;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: s = "UNSIGNED_INT"; break;
    case TINYGLTF_COMPONENT_TYPE_FLOAT: s = "FLOAT"; break;
    case TINYGLTF_COMPONENT_TYPE_DOUBLE: s = "DOUBLE"; break;
    default: s = "component type " + std::to_string(component_type); break;
  }
  if (normalized) s += " normalized";
  return s;
}

Result<std::size_t> accessor_count(const ImportContext& ctx, const AccessorUse& use) {
  Result<const tinygltf::Accessor*> checked = checked_accessor(ctx, use);
  if (!checked) return checked.error();
  return checked.value()->count;
}

Result<std::vector<float>> read_floats(const ImportContext& ctx, const AccessorUse& use) {
  return read_all<float>(ctx, use, decode_float);
}

Result<std::vector<uint32_t>> read_uints(const ImportContext& ctx, const AccessorUse& use) {
  return read_all<uint32_t>(ctx, use, decode_uint);
}

}  // namespace posecast::gltf
