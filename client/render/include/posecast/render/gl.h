#pragma once
// The one place posecast includes OpenGL. Core-profile entry points are declared by
// <GL/glcorearb.h> with GL_GLEXT_PROTOTYPES and resolved at link time from libOpenGL (glvnd),
// which exports every core function and dispatches to the current context, GLX or EGL alike;
// no loader library (glad/GLEW) is needed. Include GLFW after this with GLFW_INCLUDE_NONE.

#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES 1
#endif
#include <GL/glcorearb.h>
