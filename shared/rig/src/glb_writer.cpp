#include "glb_writer.h"

#include <cstring>

namespace posecast::rig::detail {

namespace {

void put_u16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v & 0xFFu));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<uint8_t>((v >> shift) & 0xFFu));
}

constexpr uint32_t kGlbMagic = 0x46546C67u;      // "glTF"
constexpr uint32_t kGlbVersion = 2u;
constexpr uint32_t kChunkJson = 0x4E4F534Au;     // "JSON"
constexpr uint32_t kChunkBin = 0x004E4942u;      // "BIN\0"

std::size_t padded4(std::size_t n) { return (n + 3u) & ~static_cast<std::size_t>(3u); }

}  // namespace

void GlbBuilder::align() {
  while (bin_.size() % 4u != 0u) bin_.push_back(0u);
}

void GlbBuilder::begin_view() {
  align();
  view_start_ = bin_.size();
}

std::size_t GlbBuilder::append(std::span<const float> values) {
  align();
  const std::size_t offset = bin_.size() - view_start_;
  for (float f : values) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    put_u32(bin_, bits);
  }
  return offset;
}

std::size_t GlbBuilder::append(std::span<const uint16_t> values) {
  align();
  const std::size_t offset = bin_.size() - view_start_;
  for (uint16_t v : values) put_u16(bin_, v);
  return offset;
}

std::size_t GlbBuilder::append(std::span<const uint32_t> values) {
  align();
  const std::size_t offset = bin_.size() - view_start_;
  for (uint32_t v : values) put_u32(bin_, v);
  return offset;
}

std::size_t GlbBuilder::append(std::span<const uint8_t> bytes) {
  align();
  const std::size_t offset = bin_.size() - view_start_;
  bin_.insert(bin_.end(), bytes.begin(), bytes.end());
  return offset;
}

int GlbBuilder::end_view(int target) {
  Json view = {{"buffer", 0}, {"byteOffset", view_start_}, {"byteLength", bin_.size() - view_start_}};
  if (target != 0) view["target"] = target;
  views_.push_back(std::move(view));
  return static_cast<int>(views_.size()) - 1;
}

int GlbBuilder::add_view(std::span<const float> values, int target) {
  begin_view();
  append(values);
  return end_view(target);
}

int GlbBuilder::add_accessor(int view, std::size_t byte_offset, int component_type, std::size_t count,
                             const char* type, Json extra) {
  Json accessor = std::move(extra);
  accessor["bufferView"] = view;
  if (byte_offset != 0) accessor["byteOffset"] = byte_offset;
  accessor["componentType"] = component_type;
  accessor["count"] = count;
  accessor["type"] = type;
  accessors_.push_back(std::move(accessor));
  return static_cast<int>(accessors_.size()) - 1;
}

std::vector<uint8_t> pack_glb(const std::string& json, const std::vector<uint8_t>& bin) {
  const std::size_t json_length = padded4(json.size());
  const std::size_t bin_length = padded4(bin.size());
  const std::size_t total = 12u + 8u + json_length + (bin.empty() ? 0u : 8u + bin_length);
  std::vector<uint8_t> out;
  out.reserve(total);
  put_u32(out, kGlbMagic);
  put_u32(out, kGlbVersion);
  put_u32(out, static_cast<uint32_t>(total));
  put_u32(out, static_cast<uint32_t>(json_length));
  put_u32(out, kChunkJson);
  out.insert(out.end(), json.begin(), json.end());
  out.resize(out.size() + (json_length - json.size()), static_cast<uint8_t>(' '));
  if (!bin.empty()) {
    put_u32(out, static_cast<uint32_t>(bin_length));
    put_u32(out, kChunkBin);
    out.insert(out.end(), bin.begin(), bin.end());
    out.resize(out.size() + (bin_length - bin.size()), 0u);
  }
  return out;
}

}  // namespace posecast::rig::detail
