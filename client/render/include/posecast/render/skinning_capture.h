#pragma once
// Runs a production skinning vertex shader (shaders/skinned.vert.glsl, or skinned_dq.vert.glsl
// for dual quaternions) over a mesh and reads the skinned positions and normals back through
// transform feedback (rasterizer discarded), so tests can compare GPU skinning with
// skin_vertices_cpu / skin_vertices_cpu_dq.

#include <glm/mat4x4.hpp>

#include <memory>
#include <span>
#include <vector>

#include "posecast/render/cpu_skinning.h"
#include "posecast/render/gpu_model.h"
#include "posecast/render/offscreen_target.h"
#include "posecast/render/shader_program.h"
#include "posecast/render/shader_sources.h"
#include "posecast/render/skinning_mode.h"
#include "posecast/result.h"

namespace posecast::render {

class SkinningCapture {
 public:
  // Needs a current context. max_joints: the palette block size the shader is built with;
  // `mode` chooses the shader.
  static Result<SkinningCapture> create(const ShaderSources& sources, uint32_t max_joints,
                                        SkinningMode mode = SkinningMode::kLinearBlend);

  // One SkinnedVertex per vertex of the SkinnedMesh `mesh` was uploaded from, in its vertex
  // order (welded vertices are captured once and copied to each source vertex). A
  // dual-quaternion capture converts `palette` with palette_to_dual_quaternions, as the
  // renderer's upload does. Errors: palette larger than max_joints, a palette that is not
  // rigid (dual quaternions), or a GL error during the capture.
  Result<std::vector<SkinnedVertex>> run(const GpuMesh& mesh,
                                         std::span<const glm::mat4> palette) const;
  // Same, reading the palette from whatever range is bound to uniform binding point 0 (e.g. a
  // PaletteBuffer range: tests the renderer's per-entity offsets).
  Result<std::vector<SkinnedVertex>> run_with_bound_palette(const GpuMesh& mesh) const;

 private:
  ShaderProgram program_;
  uint32_t max_joints_ = 0;
  SkinningMode mode_ = SkinningMode::kLinearBlend;
  // Draws need a complete framebuffer even with the rasterizer discarded, and an EGL
  // surfaceless context has no default one: a 1x1 target is bound during the capture.
  std::unique_ptr<OffscreenTarget> framebuffer_;
};

}  // namespace posecast::render
