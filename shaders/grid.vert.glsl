#version 330 core
// Ground grid: one large quad on the plane y = 0 (glTF's up axis is +Y), centred under the
// camera target; the lines are drawn procedurally by grid.frag.glsl.

layout(location = 0) in vec2 a_corner;   // (-1..1, -1..1)

uniform mat4 u_view_projection;
uniform vec3 u_grid_center;
uniform float u_grid_extent;             // half size of the quad, world units

out vec3 v_world_position;

void main() {
  vec3 world = vec3(u_grid_center.x + a_corner.x * u_grid_extent, 0.0,
                    u_grid_center.z + a_corner.y * u_grid_extent);
  v_world_position = world;
  gl_Position = u_view_projection * vec4(world, 1.0);
}
