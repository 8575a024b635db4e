#include "gltf_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace posecast::test {
namespace {

bool keep_images_encoded(tinygltf::Image*, const int, std::string*, std::string*, int, int,
                         const unsigned char*, int, void*) {
  return true;
}

tinygltf::TinyGLTF make_loader() {
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(keep_images_encoded, nullptr);
  return loader;
}

void check_loaded(bool ok, const std::string& name, const std::string& error) {
  if (!ok) throw std::runtime_error(name + ": tinygltf: " + error);
}

// One float component of type `type` at p, decoded as the spec says (normalised integers for
// the types an animation output may use).
double component(const unsigned char* p, int type, bool normalized) {
  switch (type) {
    case TINYGLTF_COMPONENT_TYPE_FLOAT: {
      float f;
      std::memcpy(&f, p, sizeof f);
      return f;
    }
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
      const double v = static_cast<int8_t>(*p);
      return normalized ? std::max(v / 127.0, -1.0) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE:
      return normalized ? *p / 255.0 : *p;
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
      int16_t s;
      std::memcpy(&s, p, sizeof s);
      return normalized ? std::max(s / 32767.0, -1.0) : s;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      uint16_t s;
      std::memcpy(&s, p, sizeof s);
      return normalized ? s / 65535.0 : s;
    }
    default:
      throw std::runtime_error("reference: unsupported accessor component type");
  }
}

// Accessor `index` as count * components doubles (no sparse accessors in the test models).
std::vector<double> read_accessor(const tinygltf::Model& m, int index) {
  const tinygltf::Accessor& a = m.accessors.at(static_cast<std::size_t>(index));
  if (a.sparse.isSparse) throw std::runtime_error("reference: sparse accessor");
  const int comps = tinygltf::GetNumComponentsInType(static_cast<uint32_t>(a.type));
  const int size = tinygltf::GetComponentSizeInBytes(static_cast<uint32_t>(a.componentType));
  const tinygltf::BufferView& view = m.bufferViews.at(static_cast<std::size_t>(a.bufferView));
  const std::vector<unsigned char>& data = m.buffers.at(static_cast<std::size_t>(view.buffer)).data;
  const std::size_t stride = view.byteStride != 0 ? view.byteStride : static_cast<std::size_t>(comps * size);
  std::vector<double> out;
  out.reserve(a.count * static_cast<std::size_t>(comps));
  for (std::size_t i = 0; i < a.count; ++i) {
    const std::size_t at = view.byteOffset + a.byteOffset + i * stride;
    if (at + static_cast<std::size_t>(comps * size) > data.size())
      throw std::runtime_error("reference: accessor outside its buffer");
    for (int c = 0; c < comps; ++c)
      out.push_back(component(data.data() + at + static_cast<std::size_t>(c * size), a.componentType, a.normalized));
  }
  return out;
}

struct Trs {
  double t[3] = {0, 0, 0};
  double r[4] = {0, 0, 0, 1};  // x, y, z, w
  double s[3] = {1, 1, 1};
};

Mat4d identity() { return {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}; }

Mat4d multiply(const Mat4d& a, const Mat4d& b) {
  Mat4d r{};
  for (int c = 0; c < 4; ++c)
    for (int row = 0; row < 4; ++row) {
      double sum = 0.0;
      for (int k = 0; k < 4; ++k) sum += a[k * 4 + row] * b[c * 4 + k];
      r[c * 4 + row] = sum;
    }
  return r;
}

// Inverse of an affine matrix (3x3 part by cofactors, then the translation).
Mat4d affine_inverse(const Mat4d& m) {
  const double a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2], h = m[6], i = m[10];
  const double co00 = e * i - f * h, co01 = f * g - d * i, co02 = d * h - e * g;
  const double det = a * co00 + b * co01 + c * co02;
  if (det == 0.0) throw std::runtime_error("reference: singular mesh node matrix");
  Mat4d r = identity();
  r[0] = co00 / det, r[1] = co01 / det, r[2] = co02 / det;
  r[4] = (c * h - b * i) / det, r[5] = (a * i - c * g) / det, r[6] = (b * g - a * h) / det;
  r[8] = (b * f - c * e) / det, r[9] = (c * d - a * f) / det, r[10] = (a * e - b * d) / det;
  for (int row = 0; row < 3; ++row)
    r[12 + row] = -(r[row] * m[12] + r[4 + row] * m[13] + r[8 + row] * m[14]);
  return r;
}

// T * R * S for a unit (normalised here) quaternion.
Mat4d trs_matrix(const Trs& p) {
  const double n = std::sqrt(p.r[0] * p.r[0] + p.r[1] * p.r[1] + p.r[2] * p.r[2] + p.r[3] * p.r[3]);
  const double x = p.r[0] / n, y = p.r[1] / n, z = p.r[2] / n, w = p.r[3] / n;
  Mat4d m = identity();
  m[0] = (1 - 2 * (y * y + z * z)) * p.s[0], m[1] = 2 * (x * y + w * z) * p.s[0], m[2] = 2 * (x * z - w * y) * p.s[0];
  m[4] = 2 * (x * y - w * z) * p.s[1], m[5] = (1 - 2 * (x * x + z * z)) * p.s[1], m[6] = 2 * (y * z + w * x) * p.s[1];
  m[8] = 2 * (x * z + w * y) * p.s[2], m[9] = 2 * (y * z - w * x) * p.s[2], m[10] = (1 - 2 * (x * x + y * y)) * p.s[2];
  m[12] = p.t[0], m[13] = p.t[1], m[14] = p.t[2];
  return m;
}

// Shortest-path slerp of the rotations of two quaternions (x, y, z, w), t in [0, 1]. glTF
// rotations are unit quaternions; keys stored unit only to a few decimals (SimpleSkin's, 2e-4
// off) are normalised first, which is the rotation they stand for.
void slerp(const double* a_in, const double* b_in, double t, double* out) {
  const double na = std::sqrt(a_in[0] * a_in[0] + a_in[1] * a_in[1] + a_in[2] * a_in[2] + a_in[3] * a_in[3]);
  const double nb = std::sqrt(b_in[0] * b_in[0] + b_in[1] * b_in[1] + b_in[2] * b_in[2] + b_in[3] * b_in[3]);
  const double a[4] = {a_in[0] / na, a_in[1] / na, a_in[2] / na, a_in[3] / na};
  double b[4] = {b_in[0] / nb, b_in[1] / nb, b_in[2] / nb, b_in[3] / nb};
  double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  if (d < 0.0) {
    for (double& v : b) v = -v;
    d = -d;
  }
  double wa = 1.0 - t, wb = t;
  const double theta = std::acos(std::min(d, 1.0));
  if (theta > 1e-9) {
    wa = std::sin((1.0 - t) * theta) / std::sin(theta);
    wb = std::sin(t * theta) / std::sin(theta);
  }
  for (int c = 0; c < 4; ++c) out[c] = a[c] * wa + b[c] * wb;
}

// Channel value at `seconds`: `comps` doubles into out.
void sample_channel(const std::vector<double>& times, const std::vector<double>& values, int interpolation,
                    int comps, double seconds, double* out) {
  const bool cubic = interpolation == 2;
  const std::size_t n = times.size();
  const auto value = [&](std::size_t k) { return values.data() + (cubic ? (3 * k + 1) : k) * static_cast<std::size_t>(comps); };
  if (seconds <= times.front() || n == 1) return std::copy(value(0), value(0) + comps, out), void();
  if (seconds >= times.back()) return std::copy(value(n - 1), value(n - 1) + comps, out), void();
  const std::size_t k = static_cast<std::size_t>(std::upper_bound(times.begin(), times.end(), seconds) - times.begin()) - 1;
  const double dt = times[k + 1] - times[k];
  const double s = (seconds - times[k]) / dt;
  if (interpolation == 0) return std::copy(value(k), value(k) + comps, out), void();
  if (cubic) {
    const double* p0 = value(k);
    const double* m0 = p0 + comps;           // out-tangent of key k
    const double* p1 = value(k + 1);
    const double* m1 = p1 - comps;           // in-tangent of key k + 1
    const double s2 = s * s, s3 = s2 * s;
    for (int c = 0; c < comps; ++c)
      out[c] = (2 * s3 - 3 * s2 + 1) * p0[c] + (s3 - 2 * s2 + s) * dt * m0[c] + (-2 * s3 + 3 * s2) * p1[c] +
               (s3 - s2) * dt * m1[c];
    return;
  }
  if (comps == 4) return slerp(value(k), value(k + 1), s, out);
  for (int c = 0; c < comps; ++c) out[c] = value(k)[c] * (1.0 - s) + value(k + 1)[c] * s;
}

}  // namespace

tinygltf::Model load_gltf_file(const std::string& path) {
  tinygltf::TinyGLTF loader = make_loader();
  tinygltf::Model model;
  std::string error, warning;
  const bool binary = path.size() >= 4 && path.compare(path.size() - 4, 4, ".glb") == 0;
  const bool ok = binary ? loader.LoadBinaryFromFile(&model, &error, &warning, path)
                         : loader.LoadASCIIFromFile(&model, &error, &warning, path);
  check_loaded(ok, path, error);
  return model;
}

tinygltf::Model load_glb_bytes(const std::vector<uint8_t>& bytes, const std::string& name) {
  tinygltf::TinyGLTF loader = make_loader();
  tinygltf::Model model;
  std::string error, warning;
  check_loaded(loader.LoadBinaryFromMemory(&model, &error, &warning, bytes.data(),
                                           static_cast<unsigned int>(bytes.size())),
               name, error);
  return model;
}

ReferenceEvaluator::ReferenceEvaluator(const tinygltf::Model& model) : model_(model) {
  const std::size_t n = model.nodes.size();
  parent_.assign(n, -1);
  for (std::size_t p = 0; p < n; ++p)
    for (const int child : model.nodes[p].children) parent_.at(static_cast<std::size_t>(child)) = static_cast<int>(p);
  // Depth-first from the roots: parents before children.
  std::vector<int> stack;
  for (std::size_t i = n; i-- > 0;)
    if (parent_[i] == -1) stack.push_back(static_cast<int>(i));
  while (!stack.empty()) {
    const int node = stack.back();
    stack.pop_back();
    order_.push_back(node);
    const std::vector<int>& children = model.nodes[static_cast<std::size_t>(node)].children;
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
  }
}

std::size_t ReferenceEvaluator::rig_count() const { return model_.skins.empty() ? 1 : model_.skins.size(); }

std::size_t ReferenceEvaluator::joint_count(std::size_t rig) const {
  return model_.skins.empty() ? model_.nodes.size() : model_.skins.at(rig).joints.size();
}

std::vector<double> ReferenceEvaluator::key_times(std::size_t a) const {
  std::vector<double> times;
  for (const tinygltf::AnimationSampler& sampler : model_.animations.at(a).samplers) {
    const std::vector<double> input = read_accessor(model_, sampler.input);
    times.insert(times.end(), input.begin(), input.end());
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return times;
}

std::vector<Mat4d> ReferenceEvaluator::world_matrices(std::size_t a, double seconds, bool float_locals) const {
  const std::size_t n = model_.nodes.size();
  std::vector<Trs> pose(n);
  std::vector<bool> animated(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const tinygltf::Node& node = model_.nodes[i];
    for (std::size_t c = 0; c < node.translation.size(); ++c) pose[i].t[c] = node.translation[c];
    for (std::size_t c = 0; c < node.rotation.size(); ++c) pose[i].r[c] = node.rotation[c];
    for (std::size_t c = 0; c < node.scale.size(); ++c) pose[i].s[c] = node.scale[c];
  }
  for (const tinygltf::AnimationChannel& channel : model_.animations.at(a).channels) {
    if (channel.target_node < 0) continue;
    const tinygltf::AnimationSampler& sampler =
        model_.animations[a].samplers.at(static_cast<std::size_t>(channel.sampler));
    const int interpolation = sampler.interpolation == "STEP" ? 0 : sampler.interpolation == "CUBICSPLINE" ? 2 : 1;
    const std::vector<double> times = read_accessor(model_, sampler.input);
    const std::vector<double> values = read_accessor(model_, sampler.output);
    Trs& p = pose.at(static_cast<std::size_t>(channel.target_node));
    animated[static_cast<std::size_t>(channel.target_node)] = true;
    if (channel.target_path == "translation") sample_channel(times, values, interpolation, 3, seconds, p.t);
    if (channel.target_path == "rotation") sample_channel(times, values, interpolation, 4, seconds, p.r);
    if (channel.target_path == "scale") sample_channel(times, values, interpolation, 3, seconds, p.s);
  }
  std::vector<Mat4d> world(n);
  for (const int node_index : order_) {
    const auto i = static_cast<std::size_t>(node_index);
    const tinygltf::Node& node = model_.nodes[i];
    if (float_locals) {
      Trs& p = pose[i];
      const double length = std::sqrt(p.r[0] * p.r[0] + p.r[1] * p.r[1] + p.r[2] * p.r[2] + p.r[3] * p.r[3]);
      for (double& v : p.r) v = static_cast<float>(v / length);
      for (double& v : p.t) v = static_cast<float>(v);
      for (double& v : p.s) v = static_cast<float>(v);
    }
    Mat4d local = trs_matrix(pose[i]);
    if (node.matrix.size() == 16 && !animated[i]) std::copy(node.matrix.begin(), node.matrix.end(), local.begin());
    world[i] = parent_[i] == -1 ? local : multiply(world[static_cast<std::size_t>(parent_[i])], local);
  }
  return world;
}

std::vector<Mat4d> ReferenceEvaluator::palette(std::size_t rig, std::size_t a, double seconds,
                                               bool float_locals) const {
  const std::vector<Mat4d> world = world_matrices(a, seconds, float_locals);
  if (model_.skins.empty()) return world;
  const tinygltf::Skin& skin = model_.skins.at(rig);
  std::vector<double> inverse_bind;
  if (skin.inverseBindMatrices >= 0) inverse_bind = read_accessor(model_, skin.inverseBindMatrices);
  Mat4d mesh_inverse = identity();
  for (std::size_t i = 0; i < model_.nodes.size(); ++i) {
    if (model_.nodes[i].skin == static_cast<int>(rig)) {
      mesh_inverse = affine_inverse(world[i]);
      break;
    }
  }
  std::vector<Mat4d> out;
  for (std::size_t j = 0; j < skin.joints.size(); ++j) {
    Mat4d bind = identity();
    if (!inverse_bind.empty()) std::copy_n(inverse_bind.begin() + static_cast<std::ptrdiff_t>(16 * j), 16, bind.begin());
    out.push_back(multiply(multiply(mesh_inverse, world.at(static_cast<std::size_t>(skin.joints[j]))), bind));
  }
  return out;
}

}  // namespace posecast::test
