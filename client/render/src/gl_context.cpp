#include "posecast/render/gl_context.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "posecast/render/gl.h"
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

namespace posecast::render {

namespace {

// ---- GLFW -------------------------------------------------------------------------------

std::string g_glfw_error;  // last GLFW error text; GLFW reports through a C callback
int g_glfw_windows = 0;    // glfwTerminate when the last window closes

void on_glfw_error(int code, const char* description) {
  g_glfw_error = "GLFW error " + std::to_string(code) + ": " + (description ? description : "?");
}

bool have_display() {
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  return (display && *display) || (wayland && *wayland);
}

class GlfwContext final : public GlContext {
 public:
  explicit GlfwContext(GLFWwindow* window) : window_(window) {}
  ~GlfwContext() override {
    glfwDestroyWindow(window_);
    if (--g_glfw_windows == 0) glfwTerminate();
  }
  void make_current() override { glfwMakeContextCurrent(window_); }
  const char* backend() const override { return "glfw"; }
  GLFWwindow* window() const override { return window_; }

 private:
  GLFWwindow* window_;
};

// ---- EGL surfaceless ----------------------------------------------------------------------

std::string egl_error(const char* what) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (EGL error 0x%04x)", static_cast<unsigned>(eglGetError()));
  return std::string(what) + buf;
}

bool has_extension(const char* list, const char* name) {
  if (!list) return false;
  const std::size_t length = std::strlen(name);
  for (const char* p = list; (p = std::strstr(p, name)) != nullptr; p += length) {
    const bool starts = p == list || p[-1] == ' ';
    const bool ends = p[length] == ' ' || p[length] == '\0';
    if (starts && ends) return true;
  }
  return false;
}

class EglContext final : public GlContext {
 public:
  EglContext(EGLDisplay display, EGLContext context) : display_(display), context_(context) {}
  ~EglContext() override {
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(display_, context_);
    eglTerminate(display_);
  }
  void make_current() override {
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_);
  }
  const char* backend() const override { return "egl-surfaceless"; }
  GLFWwindow* window() const override { return nullptr; }

 private:
  EGLDisplay display_;
  EGLContext context_;
};

}  // namespace

Result<std::unique_ptr<GlContext>> create_window_context(const WindowOptions& options) {
  if (!have_display()) return Error{kNoDisplayMessage};
  glfwSetErrorCallback(on_glfw_error);
  g_glfw_error.clear();
  if (g_glfw_windows == 0 && !glfwInit()) {
    return Error{"cannot initialise GLFW: " + g_glfw_error};
  }
  glfwDefaultWindowHints();
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, options.visible ? GLFW_TRUE : GLFW_FALSE);
  glfwWindowHint(GLFW_SAMPLES, 0);
  GLFWwindow* window =
      glfwCreateWindow(options.width, options.height, options.title.c_str(), nullptr, nullptr);
  if (!window) {
    if (g_glfw_windows == 0) glfwTerminate();
    return Error{"cannot create an OpenGL 3.3 core window: " + g_glfw_error};
  }
  ++g_glfw_windows;
  auto context = std::make_unique<GlfwContext>(window);
  context->make_current();
  glfwSwapInterval(options.vsync ? 1 : 0);
  return std::unique_ptr<GlContext>(std::move(context));
}

Result<std::unique_ptr<GlContext>> create_surfaceless_context() {
  const char* client_extensions = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!has_extension(client_extensions, "EGL_MESA_platform_surfaceless")) {
    return Error{"EGL: no EGL_MESA_platform_surfaceless (Mesa's libEGL is needed)"};
  }
  auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
      eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (!get_platform_display) return Error{"EGL: no eglGetPlatformDisplayEXT"};
  EGLDisplay display = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY,
                                            nullptr);
  if (display == EGL_NO_DISPLAY) return Error{egl_error("EGL: no surfaceless display")};
  EGLint major = 0;
  EGLint minor = 0;
  if (!eglInitialize(display, &major, &minor)) {
    return Error{egl_error("EGL: eglInitialize failed on the surfaceless platform")};
  }
  auto fail = [&](const char* what) -> Result<std::unique_ptr<GlContext>> {
    Error error{egl_error(what)};
    eglTerminate(display);
    return error;
  };
  const char* extensions = eglQueryString(display, EGL_EXTENSIONS);
  if (!has_extension(extensions, "EGL_KHR_surfaceless_context")) {
    return fail("EGL: no EGL_KHR_surfaceless_context");
  }
  if (!eglBindAPI(EGL_OPENGL_API)) return fail("EGL: cannot bind the OpenGL API");

  const EGLint config_attributes[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
  EGLConfig config = nullptr;
  EGLint config_count = 0;
  const bool no_config = has_extension(extensions, "EGL_KHR_no_config_context");
  if (!no_config &&
      (!eglChooseConfig(display, config_attributes, &config, 1, &config_count) ||
       config_count < 1)) {
    return fail("EGL: no OpenGL config");
  }
  const EGLint context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3,
                                       EGL_CONTEXT_MINOR_VERSION, 3,
                                       EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                       EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                       EGL_NONE};
  EGLContext context = eglCreateContext(display, no_config ? EGL_NO_CONFIG_KHR : config,
                                        EGL_NO_CONTEXT, context_attributes);
  if (context == EGL_NO_CONTEXT) return fail("EGL: cannot create an OpenGL 3.3 core context");
  if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
    eglDestroyContext(display, context);
    return fail("EGL: cannot make the surfaceless context current");
  }
  return std::unique_ptr<GlContext>(std::make_unique<EglContext>(display, context));
}

Result<std::unique_ptr<GlContext>> create_offscreen_context() {
  WindowOptions hidden;
  hidden.visible = false;
  hidden.vsync = false;
  hidden.width = 64;  // the window is never drawn to; rendering goes to an OffscreenTarget
  hidden.height = 64;
  if (have_display()) {
    Result<std::unique_ptr<GlContext>> window = create_window_context(hidden);
    if (window) return window;
    Result<std::unique_ptr<GlContext>> egl = create_surfaceless_context();
    if (egl) return egl;
    return Error{std::string(kNoDisplayMessage) + " (GLFW: " + window.error().message +
                 "; " + egl.error().message + ")"};
  }
  Result<std::unique_ptr<GlContext>> egl = create_surfaceless_context();
  if (egl) return egl;
  return Error{std::string(kNoDisplayMessage) + " (DISPLAY unset; " + egl.error().message + ")"};
}

std::string describe_current_context() {
  const auto* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const auto* version = reinterpret_cast<const char*>(glGetString(GL_VERSION));
  return std::string(renderer ? renderer : "?") + " | " + (version ? version : "?");
}

}  // namespace posecast::render
