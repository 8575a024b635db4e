#pragma once
// The compression of recording chunks (docs/recording-format.md): every chunk payload is one
// zstd frame (RFC 8878) that declares its content size and carries zstd's content checksum
// (the low 32 bits of XXH64). The checksum is the chunk's integrity check, so damage anywhere
// in a chunk's compressed bytes is caught when it is decompressed.
//
// Thread safety: each object keeps its own zstd context; use one per thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace posecast::replay {

// The level recordings are written with: chosen by measurement on bench_replay's 100-Fox
// recording (docs/performance.md, "Recording compression"); higher levels compress the TICK
// batches and snapshots only a few per cent smaller at several times the writer thread's time.
inline constexpr int kDefaultCompressionLevel = 3;

class FrameCompressor {
 public:
  // `level`: a zstd level (1..19 are the useful ones; out-of-range values are clamped by zstd).
  explicit FrameCompressor(int level = kDefaultCompressionLevel);
  ~FrameCompressor();
  FrameCompressor(const FrameCompressor&) = delete;
  FrameCompressor& operator=(const FrameCompressor&) = delete;

  // Appends one frame holding `raw` (content size and checksum included) to `out`. Never fails
  // for inputs below zstd's limits (far above a chunk's 256 MiB); aborts if zstd reports an error.
  void compress(std::span<const uint8_t> raw, std::vector<uint8_t>& out);

 private:
  struct Free {
    void operator()(ZSTD_CCtx_s* ctx) const;
  };
  std::unique_ptr<ZSTD_CCtx_s, Free> ctx_;
  int level_;
};

enum class FrameError : uint8_t {
  kNone,
  kChecksum,   // the frame decodes but its content checksum differs: damaged bytes
  kMalformed,  // not one complete, well-formed frame with a content size and a checksum
  kTooLarge,   // the declared content size exceeds the caller's limit
};

class FrameDecompressor {
 public:
  FrameDecompressor();
  ~FrameDecompressor();
  FrameDecompressor(const FrameDecompressor&) = delete;
  FrameDecompressor& operator=(const FrameDecompressor&) = delete;

  // Replaces `out` with the content of the single frame that fills `frame` exactly. The frame
  // must declare its content size (at most `max_size`) and carry a checksum. On failure returns
  // the kind and sets `why` to one line ("checksum mismatch (damaged bytes)", "...").
  // A hostile size allocates nothing: the declared size is checked against what the frame's
  // bytes can hold before any allocation.
  FrameError decompress(std::span<const uint8_t> frame, std::size_t max_size, std::vector<uint8_t>& out,
                        std::string& why);

 private:
  struct Free {
    void operator()(ZSTD_DCtx_s* ctx) const;
  };
  std::unique_ptr<ZSTD_DCtx_s, Free> ctx_;
};

}  // namespace posecast::replay
