#pragma once
// The server's clip recipe at a render time, derived from the recipes of two snapshots
// (docs/client.md, "Render-time recipes").
//
// The server attaches a PoseRecipe (clips, clip times, weights) to the records of entities
// showing a plain blend of their rig's clips (ServerOptions::attach_recipes). Between two
// ticks the server's state moves linearly: each clip's phase advances by dt * speed, exactly
// (sim/playback_time.h), and a weight the server changes is a step, not a curve. So the
// recipe at any time between two snapshots is the linear interpolation of theirs, minding the
// loop wrap; past the newest snapshot, the continuation of the newest two. The client holds
// the same clips and evaluates them with the server's jobs, so the pose it shows is the
// server's pose at the render time, not an interpolation of two poses 50 ms apart.
//
// Pure functions: no allocation, no state.

#include <cstdint>
#include <span>

#include "posecast/sim/pose_recipe.h"

namespace posecast::sim {

enum class RecipeTiming : uint8_t {
  kOk,
  kMissing,         // a neighbour carries no recipe (count 0): not a plain blend of clips
  kClipSetChanged,  // the neighbours name other clips, in another order or number (a command,
                    // a crossfade's start or end): no recipe describes what lies between
  kInvalid,         // a clip index beyond `clip_durations_us`, a time out of range, an
                    // invalid recipe shape, times not ordered (a_us >= b_us), a span too long
                    // (> kMaxRecipeSpanUs), all weights (of a motion) 0
  kNotDerivable,    // across a change, a ping-pong motion would have to be continued from one
                    // record (its direction is unknown)
};
const char* to_string(RecipeTiming timing);

// Longest distance from `a_us` to `b_us` or to the render time the derivation accepts (the
// products of times stay far inside int64; a snapshot buffer spans 4.8 s).
inline constexpr int64_t kMaxRecipeSpanUs = int64_t{1} << 30;

// The recipe at server time `render_us` from recipe `a` at server time `a_us` and `b` at
// `b_us` (a_us < b_us). `render_us` in [a_us, b_us] interpolates; render_us > b_us
// extrapolates from the two (the caller bounds how far), and render_us < a_us backwards
// (PoseTrack uses it for the last frame's render time when a correction starts).
// render_us == a_us gives `a`, render_us == b_us gives `b` exactly.
//
// Same motions, no change between (b.steady_us >= b_us - a_us; same clips in the same order
// on the same sides of a crossfade, the same fade): per input, the clip time moves by the
// signed difference b.time - a.time taken modulo the clip's duration to the shortest way
// round (|delta| <= duration / 2: a loop wrap between the two is a small step forwards, a
// reversed clip a small step backwards), pro rata in integer microseconds, rounded down as
// the server's sample_time_us rounds its phase. A time the step carries past either end of
// the clip, or onto its end, wraps into [0, duration) (a looping clip); a clip held still
// (delta 0) keeps its time, so a clamped clip held at its end stays there. A zero-length clip
// keeps time 0. The weight is lerped in float (equal weights stay bit-equal) and clamped at 0
// when extrapolated. A crossfade's elapsed time moves with world time; past its end the
// recipe is the target motion alone. A fade from a frozen pose keeps its frozen inputs and
// their fade state (they must be equal at both records); before its start it is the frozen
// pose (the fade at alpha 0).
//
// A change between the records: a command (b.steady_us < b_us - a_us: at b_us - b.steady_us;
// a speed, weights, another clip set, a crossfade's start) or the end of a's crossfade (b is
// a's target motion). Before the change the motion is a's continued at a's playback (each
// clip time moves by speed x dt, wrapped by the motion's wrap mode; a fade's elapsed time
// with world time), from it on b's continued backwards (or forwards past b_us) at b's:
// the server's motion on each side, up to the sub-microsecond phase the records' times round
// away. A ping-pong motion cannot be continued from one record (kNotDerivable).
//
// Limits (docs/client.md): a clip advancing by more than half its duration between a and b
// (|speed| x (b_us - a_us) > duration / 2) is taken the short way round; clamp and ping-pong
// motions that reach a clip end between a and b are shown going linearly through it; with two
// commands between a and b, the motion between them is a's continued.
// `out` is written only on kOk.
RecipeTiming recipe_at_time(const PoseRecipe& a, int64_t a_us,
                            const PoseRecipe& b, int64_t b_us, int64_t render_us,
                            std::span<const int64_t> clip_durations_us,
                            PoseRecipe& out);

}  // namespace posecast::sim
