#include "posecast/render/image_io.h"

#include <stb_image.h>
#include <stb_image_write.h>

namespace posecast::render {

Status write_png(const std::string& path, const RgbaImage& image) {
  const std::size_t expected =
      static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 4;
  if (image.width < 1 || image.height < 1 || image.pixels.size() != expected) {
    return Error{path + ": image size does not match its pixel data"};
  }
  if (!stbi_write_png(path.c_str(), image.width, image.height, 4, image.pixels.data(),
                      image.width * 4)) {
    return Error{path + ": cannot write PNG (missing directory or no permission?)"};
  }
  return {};
}

Result<RgbaImage> read_png(const std::string& path) {
  RgbaImage image;
  int channels = 0;
  stbi_uc* data = stbi_load(path.c_str(), &image.width, &image.height, &channels, 4);
  if (!data) {
    const char* why = stbi_failure_reason();
    return Error{path + ": cannot read PNG (" + (why ? why : "unknown reason") + ")"};
  }
  image.pixels.assign(data, data + static_cast<std::size_t>(image.width) *
                                       static_cast<std::size_t>(image.height) * 4);
  stbi_image_free(data);
  return image;
}

}  // namespace posecast::render
