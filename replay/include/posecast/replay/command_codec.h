#pragma once
// Stable binary encoding of sim::Command (every variant) for recordings
// (docs/recording-format.md, "Commands"). It is faithful: every field's value is kept as it was,
// valid or not, because a replay must make the World accept and reject exactly what the live
// World did (the World validates every command it applies). Decoding checks the structure:
// a known command kind, well-formed varints, values that fit their fields.
//
// One command, little-endian:
//   u8 kind  varint submitter  varint entity  varint lateness  body
// kind codes are fixed by this file (not by the variant's order), lateness is the apply tick
// minus the command's own tick (> 0 for a command that arrived late). Each body's fields, in
// stored order, are one entry of the command table in command_codec.cpp (CommandFormat), which
// encoding, decoding and same_command all follow: a new command kind is a CommandKind code here
// and one entry there.

#include <cstdint>

#include "posecast/byte_io.h"
#include "posecast/sim/commands.h"

namespace posecast::replay {

// Command kind codes as stored; never renumber (append new ones).
enum class CommandKind : uint8_t {
  kSpawn = 1,
  kDespawn = 2,
  kPlay = 3,
  kCrossfade = 4,
  kSetSpeed = 5,
  kSetLayerWeight = 6,
  kSetMask = 7,
  kSetBlendWeights = 8,
  kSetLayerMode = 9,
  kTeleport = 10,
  kMove = 11,
  kMoveTo = 12,
};

// A command as a recording keeps it: who submitted it and at which tick the World applied it.
struct RecordedCommand {
  uint32_t submitter = 0;
  sim::Command command;  // command.tick: the command's own tick (apply tick - lateness)
};

// Appends one command applied at `apply_tick` (command.tick must be <= apply_tick).
void encode_command(ByteWriter& out, uint32_t submitter, const sim::Command& command,
                    uint64_t apply_tick);

// Reads one command applied at `apply_tick`. On failure the reader holds the error ("kind: 77
// is not a command kind", "body.motion.count: truncated", ...) and `out` is unspecified.
bool decode_command(ByteReader& in, uint64_t apply_tick, RecordedCommand& out);

// Bitwise equality of two commands (floats compared by their bits), for tests and checks.
bool same_command(const sim::Command& a, const sim::Command& b);

}  // namespace posecast::replay
