#version 330 core
// Dual-quaternion skinning: four influences on position and normal, each joint's palette
// matrix converted on the CPU to a unit dual quaternion (client/render/src/dual_quaternion.cpp)
// and uploaded as two vec4s (real, dual) per joint in a std140 uniform block. Same inputs,
// outputs and POSECAST_MAX_JOINTS as skinned.vert.glsl, so lit.frag.glsl and the
// transform-feedback capture take either; the CPU reference is skin_vertices_cpu_dq
// (client/render/src/cpu_skinning_dq.cpp), same formula and order.
#ifndef POSECAST_MAX_JOINTS
#define POSECAST_MAX_JOINTS 256
#endif

layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_uv;
layout(location = 3) in uvec4 a_joints;   // glVertexAttribIPointer: integer palette indices
layout(location = 4) in vec4 a_weights;   // sum to 1

layout(std140) uniform Palette {
  vec4 u_dual_quaternions[2 * POSECAST_MAX_JOINTS];  // joint j: [2j] real, [2j + 1] dual
};

uniform mat4 u_model;            // palette space -> world (entity placement * mesh node world)
uniform mat4 u_view_projection;

out vec3 v_skinned_position;     // palette space
out vec3 v_skinned_normal;       // palette space, unit length (zero when the mesh has no normal)
out vec3 v_world_position;
out vec3 v_world_normal;
out vec2 v_uv;

// Adds weight * dq[joint] to (real, dual), negated when its real part points away from the
// pivot's (q and -q are one rotation; blending across the sign would cancel).
void accumulate(uint joint, float weight, vec4 pivot, inout vec4 real, inout vec4 dual) {
  vec4 r = u_dual_quaternions[2u * joint];
  float s = dot(r, pivot) < 0.0 ? -weight : weight;
  real += s * r;
  dual += s * u_dual_quaternions[2u * joint + 1u];
}

vec3 rotate(vec4 q, vec3 v) {
  return v + 2.0 * cross(q.xyz, cross(q.xyz, v) + q.w * v);
}

void main() {
  // Pivot: the influence with the largest weight (the first of equal ones).
  uint pivot_joint = a_joints.x;
  float pivot_weight = a_weights.x;
  if (a_weights.y > pivot_weight) { pivot_joint = a_joints.y; pivot_weight = a_weights.y; }
  if (a_weights.z > pivot_weight) { pivot_joint = a_joints.z; pivot_weight = a_weights.z; }
  if (a_weights.w > pivot_weight) { pivot_joint = a_joints.w; pivot_weight = a_weights.w; }
  vec4 pivot = u_dual_quaternions[2u * pivot_joint];

  vec4 real = vec4(0.0);
  vec4 dual = vec4(0.0);
  accumulate(a_joints.x, a_weights.x, pivot, real, dual);
  accumulate(a_joints.y, a_weights.y, pivot, real, dual);
  accumulate(a_joints.z, a_weights.z, pivot, real, dual);
  accumulate(a_joints.w, a_weights.w, pivot, real, dual);
  float real_length = length(real);
  real /= real_length;
  dual /= real_length;

  vec3 translation = 2.0 * (real.w * dual.xyz - dual.w * real.xyz + cross(real.xyz, dual.xyz));
  vec3 position = rotate(real, a_position) + translation;
  vec3 normal = rotate(real, a_normal);
  float normal_length = length(normal);
  normal = normal_length > 0.0 ? normal / normal_length : vec3(0.0);

  v_skinned_position = position;
  v_skinned_normal = normal;
  vec4 world = u_model * vec4(position, 1.0);
  v_world_position = world.xyz;
  // Placements are rotation + uniform scale, so mat3(u_model) keeps normals perpendicular.
  v_world_normal = mat3(u_model) * normal;
  v_uv = a_uv;
  gl_Position = u_view_projection * world;
}
