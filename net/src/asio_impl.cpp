// The one translation unit that compiles standalone Asio's implementation
// (ASIO_SEPARATE_COMPILATION, set on posecast_asio for every user). Besides saving build time,
// it keeps Asio's inlined internals -- which trip gcc's -Wnull-dereference after inlining --
// out of every other file, so the project's warnings stay on everywhere else.
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wnull-dereference"
#endif
#include <asio/impl/src.hpp>
