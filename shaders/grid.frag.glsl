#version 330 core
// Anti-aliased grid lines every u_grid_cell units (every tenth line stronger), red X and blue
// Z axes, fading out towards the edge of the quad.

in vec3 v_world_position;

uniform float u_grid_cell;
uniform float u_grid_extent;
uniform vec3 u_grid_center;
uniform vec3 u_background;

out vec4 o_color;

// Gamma 2.2 encoding, x^(1/2.2) on [0, 1], as 0.955040 sqrt(x) + 0.095503 x^(1/4) - 0.051163 x:
// two square roots instead of pow's log2 and exp2, which were most of the grid's cost on
// llvmpipe. Least-squares fit; within 0.0041 of x^(1/2.2), so an 8-bit channel is off by at
// most 1 (in 7.6 % of values). The renderer's clear colour uses the same formula.
vec3 gamma_encode(vec3 linear) {
  vec3 root2 = sqrt(linear);
  return 0.955040 * root2 + 0.095503 * sqrt(root2) - 0.051163 * linear;
}

float line_coverage(vec2 coord) {
  vec2 width = fwidth(coord);
  vec2 distance_to_line = abs(fract(coord - 0.5) - 0.5) / max(width, vec2(1e-6));
  return 1.0 - min(min(distance_to_line.x, distance_to_line.y), 1.0);
}

void main() {
  vec2 coord = v_world_position.xz / u_grid_cell;
  float minor = line_coverage(coord);
  float major = line_coverage(coord / 10.0);
  vec3 color = u_background * 1.15;
  color = mix(color, vec3(0.55), minor * 0.5);
  color = mix(color, vec3(0.70), major * 0.8);
  vec2 axis_width = fwidth(v_world_position.xz);
  float x_axis = 1.0 - min(abs(v_world_position.z) / max(axis_width.y, 1e-6), 1.0);
  float z_axis = 1.0 - min(abs(v_world_position.x) / max(axis_width.x, 1e-6), 1.0);
  color = mix(color, vec3(0.80, 0.25, 0.25), x_axis);
  color = mix(color, vec3(0.25, 0.35, 0.85), z_axis);
  float radius = length(v_world_position.xz - u_grid_center.xz) / u_grid_extent;
  float fade = 1.0 - smoothstep(0.6, 1.0, radius);
  o_color = vec4(gamma_encode(mix(u_background, color, fade)), 1.0);
}
