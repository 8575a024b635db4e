#include "posecast/replay/zstd_frame.h"

#include <zstd.h>
#include <zstd_errors.h>

#include <cstdio>
#include <cstdlib>

namespace posecast::replay {
namespace {

// RFC 8878: a frame starts with the magic number, then the Frame_Header_Descriptor, whose bit 2
// is the Content_Checksum_flag.
constexpr uint32_t kFrameMagic = 0xFD2FB528u;
constexpr uint8_t kChecksumFlagBit = 1u << 2;

// Every block that produces output takes at least 4 bytes (a 3-byte header and one byte of
// content) and produces at most 128 KiB: an upper bound on what `frame_size` bytes can hold.
uint64_t content_bound(std::size_t frame_size) {
  return uint64_t{frame_size} / 4 * ZSTD_BLOCKSIZE_MAX;
}

}  // namespace

void FrameCompressor::Free::operator()(ZSTD_CCtx_s* ctx) const { ZSTD_freeCCtx(ctx); }
void FrameDecompressor::Free::operator()(ZSTD_DCtx_s* ctx) const { ZSTD_freeDCtx(ctx); }

FrameCompressor::FrameCompressor(int level) : ctx_(ZSTD_createCCtx()), level_(level) {
  if (!ctx_) std::abort();
}

FrameCompressor::~FrameCompressor() = default;

void FrameCompressor::compress(std::span<const uint8_t> raw, std::vector<uint8_t>& out) {
  ZSTD_CCtx* ctx = ctx_.get();
  ZSTD_CCtx_reset(ctx, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, level_);
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_contentSizeFlag, 1);
  const std::size_t start = out.size();
  out.resize(start + ZSTD_compressBound(raw.size()));
  const std::size_t n = ZSTD_compress2(ctx, out.data() + start, out.size() - start, raw.data(), raw.size());
  if (ZSTD_isError(n)) {
    // Only an invalid parameter or a too-small buffer can fail here, and neither can happen.
    std::fprintf(stderr, "zstd compression failed: %s\n", ZSTD_getErrorName(n));
    std::abort();
  }
  out.resize(start + n);
}

FrameDecompressor::FrameDecompressor() : ctx_(ZSTD_createDCtx()) {
  if (!ctx_) std::abort();
}

FrameDecompressor::~FrameDecompressor() = default;

FrameError FrameDecompressor::decompress(std::span<const uint8_t> frame, std::size_t max_size,
                                         std::vector<uint8_t>& out, std::string& why) {
  const auto malformed = [&why](std::string reason) {
    why = "zstd frame: " + std::move(reason);
    return FrameError::kMalformed;
  };
  if (frame.size() < 5) return malformed("too short");
  const uint32_t magic = uint32_t{frame[0]} | uint32_t{frame[1]} << 8 | uint32_t{frame[2]} << 16 | uint32_t{frame[3]} << 24;
  if (magic != kFrameMagic) return malformed("bad magic number");
  if ((frame[4] & kChecksumFlagBit) == 0) return malformed("no content checksum");
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_UNKNOWN) return malformed("no content size");
  if (size == ZSTD_CONTENTSIZE_ERROR) return malformed("bad frame header");
  const std::size_t compressed = ZSTD_findFrameCompressedSize(frame.data(), frame.size());
  if (ZSTD_isError(compressed)) return malformed(ZSTD_getErrorName(compressed));
  if (compressed != frame.size()) return malformed(std::to_string(frame.size() - compressed) + " bytes after the frame");
  if (size > max_size) {
    why = "zstd frame: content size " + std::to_string(size) + " exceeds the " + std::to_string(max_size) + "-byte limit";
    return FrameError::kTooLarge;
  }
  if (size > content_bound(frame.size())) {
    return malformed("content size " + std::to_string(size) + " cannot come from " + std::to_string(frame.size()) + " bytes");
  }
  out.resize(static_cast<std::size_t>(size));
  const std::size_t n = ZSTD_decompressDCtx(ctx_.get(), out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n)) {
    out.clear();
    if (ZSTD_getErrorCode(n) == ZSTD_error_checksum_wrong) {
      why = "zstd frame: checksum mismatch (damaged bytes)";
      return FrameError::kChecksum;
    }
    return malformed(ZSTD_getErrorName(n));
  }
  if (n != out.size()) return malformed("content size differs from the declared size");
  return FrameError::kNone;
}

}  // namespace posecast::replay
