#pragma once
// PNG files for screenshots and golden images (stb_image / stb_image_write).

#include <cstdint>
#include <string>
#include <vector>

#include "posecast/result.h"

namespace posecast::render {

struct RgbaImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // width*height*4, first row = top
};

// Writes an RGBA8 PNG. Errors name the path (unwritable directory, size mismatch).
Status write_png(const std::string& path, const RgbaImage& image);
// Reads any PNG as RGBA8. Errors name the path and stb's reason.
Result<RgbaImage> read_png(const std::string& path);

}  // namespace posecast::render
