// The generated rig's container: joint-count contract, determinism, GLB framing, buffer
// layout, size budget, and a golden hash of the bytes.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "glb_test_reader.h"
#include "posecast/hash.h"
#include "posecast/rig/rig_generator.h"

namespace posecast::rig {
namespace {

using test::parse_glb;
using test::rig_bytes;
using test::rig_file;

const uint32_t kSampleCounts[] = {2, 24, 128, 512};

TEST(RigGenerator, RejectsJointCountsOutsideTheRangeWithAClearMessage) {
  for (uint32_t joints : {0u, 1u, 513u, 100000u}) {
    Result<std::vector<uint8_t>> glb = generate_rig_glb(RigOptions{joints});
    ASSERT_FALSE(glb.ok()) << joints;
    const std::string& message = glb.error().message;
    EXPECT_NE(message.find("joints"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(joints)), std::string::npos) << message;
    EXPECT_NE(message.find("2..512"), std::string::npos) << message;
  }
}

TEST(RigGenerator, AcceptsTheRangeEnds) {
  EXPECT_TRUE(generate_rig_glb(RigOptions{kMinJoints}).ok());
  EXPECT_TRUE(generate_rig_glb(RigOptions{kMaxJoints}).ok());
}

TEST(RigGenerator, SameOptionsGiveIdenticalBytes) {
  for (uint32_t joints : {2u, 24u, 128u, 512u}) {
    Result<std::vector<uint8_t>> first = generate_rig_glb(RigOptions{joints});
    Result<std::vector<uint8_t>> second = generate_rig_glb(RigOptions{joints});
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_EQ(first.value(), second.value()) << joints << " joints";
  }
}

TEST(RigGlb, HeaderAndChunksAreWellFormed) {
  for (uint32_t joints : kSampleCounts) {
    SCOPED_TRACE(joints);
    const std::vector<uint8_t>& bytes = rig_bytes(joints);
    EXPECT_EQ(bytes.size() % 4, 0u);
    test::GlbFile file;
    ASSERT_NO_THROW(file = parse_glb(bytes));  // magic, version, lengths, chunk types, padding
    ASSERT_FALSE(file.bin.empty());
    const auto& buffers = file.json.at("buffers");
    ASSERT_EQ(buffers.size(), 1u);
    EXPECT_FALSE(buffers[0].contains("uri"));  // the GLB-stored buffer
    const auto byte_length = buffers[0].at("byteLength").get<std::size_t>();
    EXPECT_LE(byte_length, file.bin.size());
    EXPECT_GE(byte_length + 3, file.bin.size());
    EXPECT_EQ(file.json.at("asset").at("version"), "2.0");
  }
}

TEST(RigGlb, ParserRejectsBrokenFraming) {
  // Guards the format checks above: they must notice the faults they look for.
  std::vector<uint8_t> bytes = rig_bytes(2);
  std::vector<uint8_t> bad_magic = bytes;
  bad_magic[0] = 'x';
  EXPECT_THROW(parse_glb(bad_magic), std::runtime_error);
  std::vector<uint8_t> truncated(bytes.begin(), bytes.end() - 4);
  EXPECT_THROW(parse_glb(truncated), std::runtime_error);
}

TEST(RigGlb, BufferViewsAndAccessorsStayInsideTheBuffer) {
  for (uint32_t joints : kSampleCounts) {
    SCOPED_TRACE(joints);
    const test::GlbFile& file = rig_file(joints);
    const std::size_t buffer_length = file.json.at("buffers")[0].at("byteLength").get<std::size_t>();
    for (const auto& view : file.json.at("bufferViews")) {
      const std::size_t offset = test::size_or(view, "byteOffset", 0);
      EXPECT_EQ(offset % 4, 0u);
      EXPECT_LE(offset + view.at("byteLength").get<std::size_t>(), buffer_length);
    }
    const auto& accessors = file.json.at("accessors");
    for (std::size_t a = 0; a < accessors.size(); ++a) {
      if (accessors[a].at("componentType") == 5126) {
        EXPECT_NO_THROW(test::read_floats(file, static_cast<int>(a))) << "accessor " << a;
      } else {
        EXPECT_NO_THROW(test::read_uints(file, static_cast<int>(a))) << "accessor " << a;
      }
    }
  }
}

TEST(RigGlb, SizeStaysWithinBudget) {
  EXPECT_LT(rig_bytes(24).size(), 200u * 1024u);
  EXPECT_LT(rig_bytes(512).size(), 4u * 1024u * 1024u);
}

// The exact bytes are part of the contract (golden scenarios hash palettes of this rig, and the
// server and client compare the asset's content hash). A deliberate change to the generator
// updates these values; an accidental one (platform, compiler, iteration order) fails here.
TEST(RigGlb, BytesMatchGoldenHashes) {
  const std::pair<uint32_t, uint64_t> golden[] = {
      {2, 0x9843ab1ff67951baull},
      {24, 0x91fd0f574ce1e9dbull},
      {128, 0xf9108ba975060829ull},
      {512, 0xb7fba7587fce9613ull}};
  for (const auto& [joints, hash] : golden) {
    const std::vector<uint8_t>& bytes = rig_bytes(joints);
    EXPECT_EQ(hash_bytes(bytes), hash) << joints << " joints: 0x" << std::hex << hash_bytes(bytes);
  }
}

}  // namespace
}  // namespace posecast::rig
