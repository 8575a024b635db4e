#version 330 core
// Lit, optionally textured surface: base colour factor x base colour texture (sRGB texture,
// sampled as linear), a hemisphere ambient and one directional light, gamma-encoded output.

in vec3 v_world_position;
in vec3 v_world_normal;
in vec2 v_uv;

uniform vec4 u_base_color;                // material baseColorFactor (linear)
uniform sampler2D u_base_color_texture;   // texture unit 0
uniform bool u_has_texture;
uniform vec3 u_light_direction;           // unit, world space, pointing towards the light
uniform vec3 u_camera_position;

out vec4 o_color;

// Gamma 2.2 encoding: the same fit of x^(1/2.2) as grid.frag.glsl's (see there), so surfaces,
// grid and clear colour encode alike.
vec3 gamma_encode(vec3 linear) {
  vec3 root2 = sqrt(linear);
  return 0.955040 * root2 + 0.095503 * sqrt(root2) - 0.051163 * linear;
}

void main() {
  vec3 n = v_world_normal;
  float n_length = length(n);
  // Meshes without normals: face normal from screen-space derivatives.
  n = n_length > 0.0 ? n / n_length
                     : normalize(cross(dFdx(v_world_position), dFdy(v_world_position)));
  if (!gl_FrontFacing) n = -n;

  vec4 base = u_base_color;
  if (u_has_texture) base *= texture(u_base_color_texture, v_uv);

  vec3 sky = vec3(0.42, 0.46, 0.52);
  vec3 ground = vec3(0.22, 0.20, 0.18);
  vec3 ambient = mix(ground, sky, 0.5 + 0.5 * n.y);
  float diffuse = max(dot(n, u_light_direction), 0.0);
  vec3 view = normalize(u_camera_position - v_world_position);
  vec3 half_vector = normalize(view + u_light_direction);
  // pow(h, 32) as five squarings (pow is log2 + exp2 on llvmpipe).
  float h2 = max(dot(n, half_vector), 0.0);
  h2 *= h2;
  h2 *= h2;
  h2 *= h2;
  h2 *= h2;
  h2 *= h2;
  float specular = diffuse > 0.0 ? h2 * 0.15 : 0.0;

  vec3 linear = base.rgb * (ambient + vec3(0.85) * diffuse) + vec3(specular);
  o_color = vec4(gamma_encode(clamp(linear, 0.0, 1.0)), 1.0);
}
