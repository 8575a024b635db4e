#version 330 core
// Linear-blend skinning: four influences on position and normal, palette from a std140
// uniform block. The renderer inserts "#define POSECAST_MAX_JOINTS N" after the #version line,
// N = min(512, GL_MAX_UNIFORM_BLOCK_SIZE / 64) (at least 256 on any GL 3.3 driver with a 16 KB
// block, 512 on Mesa's 64 KB). Each entity's palette is a range of one shared buffer bound with
// glBindBufferRange; entries past the entity's joint count are never read.
//
// The skinned position and normal in palette space (the rig's mesh node) are outputs too, so a
// transform-feedback program built from this same file can read them back (render tests compare
// them with the CPU reference, client/render/src/cpu_skinning.cpp).
#ifndef POSECAST_MAX_JOINTS
#define POSECAST_MAX_JOINTS 256
#endif

layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_uv;
layout(location = 3) in uvec4 a_joints;   // glVertexAttribIPointer: integer palette indices
layout(location = 4) in vec4 a_weights;   // sum to 1

layout(std140) uniform Palette {
  mat4 u_bones[POSECAST_MAX_JOINTS];
};

uniform mat4 u_model;            // palette space -> world (entity placement * mesh node world)
uniform mat4 u_view_projection;

out vec3 v_skinned_position;     // palette space
out vec3 v_skinned_normal;       // palette space, unit length (zero when the mesh has no normal)
out vec3 v_world_position;
out vec3 v_world_normal;
out vec2 v_uv;

void main() {
  // Same order as the CPU reference: weighted sum of the four matrices, then one product.
  mat4 skin = a_weights.x * u_bones[a_joints.x] + a_weights.y * u_bones[a_joints.y] +
              a_weights.z * u_bones[a_joints.z] + a_weights.w * u_bones[a_joints.w];
  vec4 position = skin * vec4(a_position, 1.0);
  vec3 normal = mat3(skin) * a_normal;
  float normal_length = length(normal);
  normal = normal_length > 0.0 ? normal / normal_length : vec3(0.0);

  v_skinned_position = position.xyz;
  v_skinned_normal = normal;
  vec4 world = u_model * vec4(position.xyz, 1.0);
  v_world_position = world.xyz;
  // Placements are rotation + uniform scale, so mat3(u_model) keeps normals perpendicular.
  v_world_normal = mat3(u_model) * normal;
  v_uv = a_uv;
  gl_Position = u_view_projection * world;
}
